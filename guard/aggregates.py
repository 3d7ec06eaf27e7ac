"""The aggregates a decision reads instead of the history files.

``Aggregates`` folds the history into per-tool and per-pattern counters (raw counts for
the seed's formulas, exponentially decayed counts for guard's), and, for guard's
hierarchical evidence, per-operation (the call's signature) and per-family
(:func:`guard.signature.family_of`) success and approval counters. It is caught up by
reading only the bytes appended since the last look (byte offsets), and persisted to a
small state file so that a new process starts without re-reading millions of lines.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from guard import workspace as ws
from guard.atomic import write_private_atomic
from guard.counters import Decayed, PatternStats, ToolStats, UserStats, count_answer, count_run
from guard.jsonl import JsonlLog
from guard.log import logger
from guard.memory.base import importance_of
from guard.model import Risk
from guard.outcomes import execution_ok, interaction_ok, parse_ts
from guard.redact import redact_text
from guard.signature import family_of
from guard.toolnames import canonical_tool

STATE_VERSION = 3
MAX_PATTERNS = 20_000
MAX_PERSISTED_PATTERNS = 5_000


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
        # what catch_up looks at on every decision, worked out once: (path as a string, file name, log)
        self._sources = (
            (str(self.executions.path), self.executions.path.name, self.executions),
            (str(self.interactions.path), self.interactions.path.name, self.interactions),
        )
        self._absent: set[str] = set()  # the sources missing at the last look (see ``catch_up``)
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

    def evidence(
        self, signature: str, family: str
    ) -> tuple[ToolStats | None, ToolStats | None, UserStats | None, UserStats | None]:
        """What the fused score weighs for one call, in one look: the operation's and its
        family's runs, then their answers (``op_tool``, ``family_tool``, ``op_user``, ``family_user``)."""
        return (
            self.op_tools.get(signature),
            self.family_tools.get(family),
            self.op_users.get(signature),
            self.family_users.get(family),
        )

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
        """Apply lines appended since the last look; returns how many.

        Called on every decision: a file that is still the inode read, at the size read, is
        unchanged (one ``stat`` each, the path's, so a file replaced or truncated by another
        process is noticed), and nothing more is done for it. A file that was missing is
        asked after with ``access`` until it appears (no exception per decision: a new
        workspace has no answers for a long while).
        """
        applied = 0
        with self._lock:
            offsets = self.offsets
            absent = self._absent
            for path, name, log in self._sources:
                if name in absent:
                    if not os.access(path, os.F_OK):
                        continue
                    absent.discard(name)
                try:
                    st = os.stat(path)
                except FileNotFoundError:
                    absent.add(name)
                    continue
                seen = offsets.get(name)
                if (st.st_size == 0) if seen is None else (seen[0] == st.st_ino and seen[1] == st.st_size):
                    continue
                applied += self._catch_up_one(log, name, st)
        return applied

    def _catch_up_one(self, log: JsonlLog, name: str, st: os.stat_result) -> int:
        inode, offset = self.offsets.get(name, [st.st_ino, 0])
        if inode != st.st_ino or st.st_size < offset:
            logger.warning(f"{log.path} was replaced or truncated; recounting history")
            self._reset()
            return self.catch_up()
        if st.st_size == offset:
            return 0
        apply = self._apply_execution if log is self.executions else self._apply_interaction
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
        count_run(stats, ok, ts, self.half_lives[0])
        sig = rec.get("signature")
        if isinstance(sig, str):
            sig = self._own(sig)
            count_run(_lru(self.op_tools, sig, ToolStats), ok, ts, self.half_lives[0])
            count_run(_lru(self.family_tools, family_of(sig), ToolStats), ok, ts, self.half_lives[0])
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
        count_answer(self.users.setdefault(canonical_tool(tool), UserStats()), ok, sat, ts, self.half_lives[1])
        sig = rec.get("signature")
        if isinstance(sig, str):
            sig = self._own(sig)
            count_answer(_lru(self.op_users, sig, UserStats), ok, sat, ts, self.half_lives[1])
            count_answer(_lru(self.family_users, family_of(sig), UserStats), ok, sat, ts, self.half_lives[1])

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
        for table in (self.tools, self.users, self.op_tools, self.op_users, self.family_tools, self.family_users):
            for stats in table.values():
                stats.decayed.t = min(stats.decayed.t, limit)
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
