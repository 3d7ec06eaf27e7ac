"""The workspace's history files and the aggregates a decision reads instead of them.

``JsonlLog`` appends one JSON line per record, safely across threads (a lock) and
processes (``flock`` around one ``write`` on an ``O_APPEND`` descriptor), so lines never
interleave or get lost. A writer that died mid-line leaves a torn fragment; the next
append starts on a fresh line, and readers skip the fragment with a warning.

``Aggregates`` folds the history into per-tool and per-pattern counters (raw counts for
the seed's formulas, exponentially decayed counts for guard's), and, for guard's
hierarchical evidence, per-operation (the call's signature) and per-family
(:func:`guard.signature.family_of`) success and approval counters. It is caught up by
reading only the bytes appended since the last look (byte offsets), and persisted to a
small state file so that a new process starts without re-reading millions of lines.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import attrs

from guard import workspace as ws
from guard.log import logger
from guard.memory.base import importance_of
from guard.model import Risk
from guard.redact import redact_text
from guard.signature import family_of
from guard.toolnames import canonical_tool

STATE_VERSION = 3
MAX_PATTERNS = 20_000
MAX_PERSISTED_PATTERNS = 5_000


class JsonlLog:
    """An append-only JSON-lines file, 0600."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._fd: int | None = None
        # (size, mtime_ns) right after our own last write: while the file still looks like
        # that, its last byte is our newline and need not be read back.
        self._after_ours: tuple[int, int] | None = None
        self._file: tuple[int, int] | None = None  # (st_dev, st_ino) of the open descriptor

    def _open(self) -> int:
        """The descriptor, reopened when the path no longer names the file it was opened on:
        after the log was moved away or replaced, appends must still land in the workspace."""
        if self._fd is not None:
            try:
                st = os.stat(self.path)
                if (st.st_dev, st.st_ino) == self._file:
                    return self._fd
            except FileNotFoundError:
                pass
            os.close(self._fd)
            self._fd = self._file = self._after_ours = None
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        st = os.fstat(fd)
        self._fd, self._file = fd, (st.st_dev, st.st_ino)
        return fd

    def append(self, record: Mapping[str, Any]) -> tuple[int, int, int] | None:
        """Write one record as one line; raises OSError (disk full, read-only) to the caller.

        Returns ``(inode, start, end)``, the bytes the line took, when nothing else was written
        in between (else None): a reader that had read up to ``start`` can count the record
        without reading it back.
        """
        return self.append_text(json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str))

    def append_text(self, text: str) -> tuple[int, int, int] | None:
        """:meth:`append` for a record already encoded as one JSON line (without its newline)."""
        text += "\n"
        # A lone surrogate (a "\ud800" escape, a file name decoded with surrogateescape) cannot
        # be UTF-8; written as its JSON escape it reads back as the same string.
        data = text.encode("utf-8", "backslashreplace")
        with self._lock:
            fd = self._open()
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                st = os.fstat(fd)
                start = st.st_size
                if st.st_size and (st.st_size, st.st_mtime_ns) != self._after_ours:
                    if _last_byte(self.path, st.st_size) != b"\n":
                        data = b"\n" + data  # a torn line before us: start clean
                        start += 1
                view = memoryview(data)
                self._after_ours = None
                try:
                    while view:
                        written = os.write(fd, view)
                        view = view[written:]
                except OSError:
                    _take_back(fd, st.st_size, len(data) - len(view))
                    raise
                end = os.fstat(fd)
                self._after_ours = (end.st_size, end.st_mtime_ns)
                if end.st_size != st.st_size + len(data):  # a writer without the lock came between
                    return None
                return end.st_ino, start, end.st_size
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = self._file = self._after_ours = None

    def read_from(self, offset: int) -> tuple[list[dict[str, Any]], int]:
        """Complete records after ``offset`` and the offset after the last complete line.

        A trailing fragment without its newline is left for the next call (it may still be
        being written); malformed complete lines are skipped with a warning.
        """
        try:
            with open(self.path, "rb") as f:
                f.seek(offset)
                chunk = f.read()
        except FileNotFoundError:
            return [], offset
        end = chunk.rfind(b"\n")
        if end < 0:
            return [], offset
        records = list(_parse_lines(chunk[: end + 1], self.path, offset))
        return records, offset + end + 1

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Every readable record, torn last line included in the warning count."""
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return
        if data and not data.endswith(b"\n"):
            logger.warning(f"{self.path}: torn last line skipped")
            data = data[: data.rfind(b"\n") + 1]
        yield from _parse_lines(data, self.path, 0)


def _take_back(fd: int, size_before: int, written: int) -> None:
    """Undo a partial line (disk full, file-size limit) so the file still ends on a whole line.

    Only when the file is exactly what we left: a writer that does not take the lock may
    have appended since, and its line must not be cut.
    """
    if written <= 0:
        return
    try:
        if os.fstat(fd).st_size == size_before + written:
            os.ftruncate(fd, size_before)
    except OSError:
        pass  # the torn fragment stays; readers skip it and the next append starts a new line


def _last_byte(path: Path, size: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(size - 1)
        return f.read(1)


def _parse_lines(data: bytes, path: Path, base: int) -> Iterator[dict[str, Any]]:
    pos = base
    for raw in data.split(b"\n"):
        line_at = pos
        pos += len(raw) + 1
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            logger.warning(f"{path}: unreadable line at byte {line_at} skipped")
            continue
        if isinstance(rec, dict):
            yield rec
        else:
            logger.warning(f"{path}: line at byte {line_at} is not a JSON object; skipped")


# What other programs may write for an outcome, beside the seed's own words.
SUCCESS, FAILED = "success", frozenset({"failure", "failed", "error"})
APPROVED, DENIED = "approved", frozenset({"denied", "rejected"})


def execution_ok(rec: Mapping[str, Any]) -> bool | None:
    """True/False for a readable execution line (``status``), None for one to skip."""
    status = rec.get("status")
    if not isinstance(rec.get("tool"), str) or not isinstance(status, str):
        return None
    return True if status == SUCCESS else False if status in FAILED else None


def interaction_ok(rec: Mapping[str, Any]) -> bool | None:
    """True/False for a readable interaction line (``action``), None for one to skip."""
    action = rec.get("action")
    if not isinstance(rec.get("tool"), str) or not isinstance(action, str):
        return None
    return True if action == APPROVED else False if action in DENIED else None


def parse_ts(value: Any, default: float) -> float:
    """Epoch seconds from an ISO timestamp or a number; ``default`` when unusable."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return default
    return default


@attrs.define
class Decayed:
    """A count and a sum that halve every ``half_life`` seconds (0 = never)."""

    n: float = 0.0
    s: float = 0.0
    t: float = 0.0

    def add(self, x: float, ts: float, half_life: float) -> None:
        if self.n == 0.0 and self.s == 0.0:
            self.t = ts
        if ts >= self.t:
            self._decay_to(ts, half_life)
            self.n += 1.0
            self.s += x
        else:  # an older event arriving late counts for less
            w = _factor(self.t - ts, half_life)
            self.n += w
            self.s += x * w

    def at(self, ts: float, half_life: float) -> tuple[float, float]:
        f = _factor(max(0.0, ts - self.t), half_life)
        return self.n * f, self.s * f

    def _decay_to(self, ts: float, half_life: float) -> None:
        f = _factor(ts - self.t, half_life)
        self.n *= f
        self.s *= f
        self.t = ts


def _factor(dt: float, half_life: float) -> float:
    return 1.0 if half_life <= 0 else 2.0 ** (-dt / half_life)


@attrs.define
class ToolStats:
    runs: int = 0
    successes: int = 0
    decayed: Decayed = attrs.field(factory=Decayed)


@attrs.define
class UserStats:
    interactions: int = 0
    approvals: int = 0
    satisfaction_sum: float = 0.0
    satisfaction_count: int = 0
    decayed: Decayed = attrs.field(factory=Decayed)


@attrs.define
class PatternStats:
    runs: int = 0
    successes: int = 0
    importance_sum: float = 0.0
    last: float = 0.0


class Aggregates:
    """Counters over the history files, caught up incrementally."""

    def __init__(self, root: Path, tool_half_life_s: float, user_half_life_s: float, max_skew_s: float = 300.0) -> None:
        self.root = root
        self.max_skew_s = max_skew_s  # a line dated later than now + this counts as now + this
        self.executions = JsonlLog(root / ws.EXECUTIONS)
        self.interactions = JsonlLog(root / ws.INTERACTIONS)
        self.half_lives = (tool_half_life_s, user_half_life_s)
        self.tools: dict[str, ToolStats] = {}
        self.users: dict[str, UserStats] = {}
        self.patterns: OrderedDict[str, PatternStats] = OrderedDict()
        # hierarchical evidence: operation (signature) and family, least recently used first
        self.op_tools: OrderedDict[str, ToolStats] = OrderedDict()
        self.op_users: OrderedDict[str, UserStats] = OrderedDict()
        self.family_tools: OrderedDict[str, ToolStats] = OrderedDict()
        self.family_users: OrderedDict[str, UserStats] = OrderedDict()
        self.offsets: dict[str, list[int]] = {}  # file name -> [inode, offset]
        self.lines_applied = 0
        self._lock = threading.RLock()
        self._dirty = False

    # -- reading ------------------------------------------------------------------------
    def tool(self, tool: str) -> ToolStats | None:
        return self.tools.get(canonical_tool(tool))

    def user(self, tool: str) -> UserStats | None:
        return self.users.get(canonical_tool(tool))

    def pattern(self, signature: str) -> PatternStats | None:
        return self.patterns.get(signature)

    def op_tool(self, signature: str) -> ToolStats | None:
        return self.op_tools.get(signature)

    def op_user(self, signature: str) -> UserStats | None:
        return self.op_users.get(signature)

    def family_tool(self, family: str) -> ToolStats | None:
        return self.family_tools.get(family)

    def family_user(self, family: str) -> UserStats | None:
        return self.family_users.get(family)

    # -- catching up ----------------------------------------------------------------------
    def add(self, log: JsonlLog, record: Mapping[str, Any]) -> None:
        """Append ``record`` to ``log`` (executions or interactions), count it, and catch up.

        When the aggregates had read up to exactly where the line landed, the record is
        applied as written instead of being read back: the fields the counters use are plain
        JSON values, so they read back the same. Otherwise catching up reads it with the rest.
        """
        span = log.append(record)
        apply = self._apply_execution if log is self.executions else self._apply_interaction
        with self._lock:
            if span is not None:
                inode, start, end = span
                name = log.path.name
                # (If the path now names another file, catching up below notices and recounts.)
                if self.offsets.get(name, [inode, 0]) == [inode, start]:
                    apply(record, time.time())
                    self.offsets[name] = [inode, end]
                    self.lines_applied += 1
                    self._dirty = True
            self.catch_up()

    def catch_up(self) -> int:
        """Apply lines appended since the last look; returns how many."""
        applied = 0
        with self._lock:
            for log, apply in ((self.executions, self._apply_execution), (self.interactions, self._apply_interaction)):
                applied += self._catch_up_one(log, apply)
        return applied

    def _catch_up_one(self, log: JsonlLog, apply: Any) -> int:
        name = log.path.name
        try:
            st = os.stat(log.path)
        except FileNotFoundError:
            return 0
        inode, offset = self.offsets.get(name, [st.st_ino, 0])
        if inode != st.st_ino or st.st_size < offset:
            logger.warning(f"{log.path} was replaced or truncated; recounting history")
            self._reset()
            return self.catch_up()
        if st.st_size == offset:
            return 0
        records, new_offset = log.read_from(offset)
        now = time.time()
        for rec in records:
            apply(rec, now)
        self.offsets[name] = [st.st_ino, new_offset]
        self.lines_applied += len(records)
        self._dirty = self._dirty or bool(records)
        return len(records)

    def _reset(self) -> None:
        self.tools.clear()
        self.users.clear()
        self.patterns.clear()
        for table in (self.op_tools, self.op_users, self.family_tools, self.family_users):
            table.clear()
        self.offsets.clear()

    def _when(self, rec: Mapping[str, Any], now: float) -> float:
        """The line's time, clamped to now + the allowed skew (a line from the future counts as now)."""
        return min(parse_ts(rec.get("timestamp"), now), now + self.max_skew_s)

    def _own(self, sig: str) -> str:
        """A signature as the state file may keep it. One seen for the first time may come from
        another program that wrote it unredacted: it must not be copied into the state file (once
        per signature, not per line; guard's own signatures come back unchanged)."""
        if sig in self.op_tools or sig in self.op_users or sig in self.patterns:
            return sig
        return redact_text(sig)

    def _apply_execution(self, rec: Mapping[str, Any], now: float) -> None:
        ok = execution_ok(rec)
        if ok is None:
            return
        tool = rec["tool"]
        ts = self._when(rec, now)
        stats = self.tools.setdefault(canonical_tool(tool), ToolStats())
        _count_run(stats, ok, ts, self.half_lives[0])
        sig = rec.get("signature")
        if isinstance(sig, str):
            sig = self._own(sig)
            _count_run(_lru(self.op_tools, sig, ToolStats), ok, ts, self.half_lives[0])
            _count_run(_lru(self.family_tools, family_of(sig), ToolStats), ok, ts, self.half_lives[0])
            try:
                risk = Risk.parse(rec.get("risk") or "medium")
            except ValueError:
                risk = Risk.MEDIUM
            p = self.patterns.get(sig)
            if p is None:
                p = self.patterns[sig] = PatternStats()
                if len(self.patterns) > MAX_PATTERNS:
                    self.patterns.popitem(last=False)
            else:
                self.patterns.move_to_end(sig)
            p.runs += 1
            p.successes += ok
            p.importance_sum += importance_of(ok, risk)
            p.last = ts

    def _apply_interaction(self, rec: Mapping[str, Any], now: float) -> None:
        ok = interaction_ok(rec)
        if ok is None:
            return
        tool = rec["tool"]
        ts = self._when(rec, now)
        raw = rec.get("satisfaction")
        sat = float(raw) if isinstance(raw, (int, float)) and not isinstance(raw, bool) and 1 <= raw <= 5 else None
        _count_answer(self.users.setdefault(canonical_tool(tool), UserStats()), ok, sat, ts, self.half_lives[1])
        sig = rec.get("signature")
        if isinstance(sig, str):
            sig = self._own(sig)
            _count_answer(_lru(self.op_users, sig, UserStats), ok, sat, ts, self.half_lives[1])
            _count_answer(_lru(self.family_users, family_of(sig), UserStats), ok, sat, ts, self.half_lives[1])

    # -- persistence ----------------------------------------------------------------------
    def load(self) -> None:
        """Start from the persisted state when it matches the files and settings."""
        path = self.root / ws.STATE
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            if not ws.note_write_failure(exc, self.root):
                logger.warning(f"{path}: unreadable state ({exc}); recounting history")
            return
        try:
            if raw.get("version") != STATE_VERSION or list(raw.get("half_lives", [])) != list(self.half_lives):
                return
            with self._lock:
                self.offsets = {k: [int(v[0]), int(v[1])] for k, v in raw["offsets"].items()}
                self.tools = {k: _tool_from(v) for k, v in raw["tools"].items()}
                self.users = {k: _user_from(v) for k, v in raw["users"].items()}
                self.patterns = OrderedDict((k, PatternStats(*v)) for k, v in raw["patterns"])
                self.op_tools = OrderedDict((k, _tool_from(v)) for k, v in raw["op_tools"])
                self.family_tools = OrderedDict((k, _tool_from(v)) for k, v in raw["family_tools"])
                self.op_users = OrderedDict((k, _user_from(v)) for k, v in raw["op_users"])
                self.family_users = OrderedDict((k, _user_from(v)) for k, v in raw["family_users"])
                self._clamp(time.time() + self.max_skew_s)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            logger.warning(f"{path}: state does not match this version ({exc}); recounting history")
            self._reset()

    def _clamp(self, limit: float) -> None:
        """A state file dated in the future (another writer, a clock that jumped) would freeze decay."""
        for t in (*self.tools.values(), *self.op_tools.values(), *self.family_tools.values()):
            t.decayed.t = min(t.decayed.t, limit)
        for u in (*self.users.values(), *self.op_users.values(), *self.family_users.values()):
            u.decayed.t = min(u.decayed.t, limit)
        for p in self.patterns.values():
            p.last = min(p.last, limit)

    def save(self) -> None:
        """Write the state atomically (tmp + rename), 0600. Errors are logged, not raised."""
        with self._lock:
            if not self._dirty:
                return
            patterns = list(self.patterns.items())[-MAX_PERSISTED_PATTERNS:]
            raw = {
                "version": STATE_VERSION,
                "half_lives": list(self.half_lives),
                "offsets": self.offsets,
                "tools": {k: _tool_to(v) for k, v in self.tools.items()},
                "users": {k: _user_to(v) for k, v in self.users.items()},
                "patterns": [[k, attrs.astuple(v)] for k, v in patterns],
                "op_tools": _recent(self.op_tools, _tool_to),
                "family_tools": _recent(self.family_tools, _tool_to),
                "op_users": _recent(self.op_users, _user_to),
                "family_users": _recent(self.family_users, _user_to),
            }
            self._dirty = False
        write_private_atomic(self.root / ws.STATE, json.dumps(raw, separators=(",", ":")))

    def close(self) -> None:
        self.executions.close()
        self.interactions.close()


def _count_run(stats: ToolStats, ok: bool, ts: float, half_life: float) -> None:
    stats.runs += 1
    stats.successes += ok
    stats.decayed.add(1.0 if ok else 0.0, ts, half_life)


def _count_answer(stats: UserStats, ok: bool, sat: float | None, ts: float, half_life: float) -> None:
    stats.interactions += 1
    stats.approvals += ok
    if sat is not None:
        stats.satisfaction_sum += sat
        stats.satisfaction_count += 1
    stats.decayed.add(1.0 if ok else 0.0, ts, half_life)


def _lru(table: OrderedDict[str, Any], key: str, make: Any) -> Any:
    """``table[key]``, created when absent, moved to the recent end; the oldest dropped past the cap."""
    value = table.get(key)
    if value is None:
        value = table[key] = make()
        if len(table) > MAX_PATTERNS:
            table.popitem(last=False)
    else:
        table.move_to_end(key)
    return value


def _recent(table: OrderedDict[str, Any], encode: Any) -> list[list[Any]]:
    return [[k, encode(v)] for k, v in list(table.items())[-MAX_PERSISTED_PATTERNS:]]


def _tool_to(v: ToolStats) -> dict[str, Any]:
    return {"runs": v.runs, "successes": v.successes, "decayed": attrs.astuple(v.decayed)}


def _tool_from(v: Mapping[str, Any]) -> ToolStats:
    return ToolStats(int(v["runs"]), int(v["successes"]), Decayed(*v["decayed"]))


def _user_to(v: UserStats) -> dict[str, Any]:
    return {
        "interactions": v.interactions,
        "approvals": v.approvals,
        "sat_sum": v.satisfaction_sum,
        "sat_count": v.satisfaction_count,
        "decayed": attrs.astuple(v.decayed),
    }


def _user_from(v: Mapping[str, Any]) -> UserStats:
    return UserStats(
        int(v["interactions"]), int(v["approvals"]), float(v["sat_sum"]), int(v["sat_count"]), Decayed(*v["decayed"])
    )


def write_private_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        if not ws.note_write_failure(exc, path.parent):
            logger.warning(f"{path}: cannot save ({exc})")
        try:
            tmp.unlink()
        except OSError:
            pass
