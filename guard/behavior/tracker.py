"""``SessionTracker``: the sessions a ``Guard`` has seen, kept in memory and in the workspace.

Each session has two files under ``<workspace>/sessions/`` (0600): ``<id>-<hash>.json``,
its counters and breakers (a few KB, what a decision reads), and ``<id>-<hash>.events.jsonl``,
its journal of events (redacted; trimmed to the last ``behavior.window``). So that a host
that starts one process per tool call still sees the session's past:

- a process reads a session's counters the first time it needs them, and again only when
  the file's stamp (inode, size, mtime) changed, i.e. another process wrote it;
- events are applied in memory at once (the in-process state is authoritative) and kept
  as *pending*; results, answers and dispatches that bring in untrusted content or a
  secret are saved at once; other dispatches at ``flush()``/``close()`` (a hook process
  closes right after deciding), with the next result, or once the oldest unsaved one is
  ``behavior.flush_seconds`` old;
- saving takes the sessions lock, re-reads the counters if someone else changed them,
  applies the pending events on top, appends them to the journal and replaces the
  counters atomically: nothing is lost between processes;
- a session idle longer than ``behavior.session_ttl_hours`` starts afresh; old files are
  swept at most once an hour;
- calls without a session id form one session per process that is never saved.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from guard import lazyre
from guard import workspace as ws
from guard.behavior import files
from guard.behavior.facts import SECRET, UNTRUSTED, Probe, difficulty_of, fallback_facts, probe_of, shown, task_id
from guard.behavior.session import SessionState, stored
from guard.behavior.settings import BehaviorSettings
from guard.behavior.tiers import TierBook
from guard.config import Config
from guard.digest import blake2b
from guard.log import logger
from guard.model import DecisionRecord, Risk, ToolCall
from guard.signature import signature

DEFAULT_SESSION = "-"
MAX_LIVE = 1000
LOCK = ".lock"
SWEPT = ".swept"
SWEEP_EVERY_S = 3600.0
JOURNAL_SUFFIX = ".events.jsonl"
_TAINTS = frozenset({UNTRUSTED, SECRET})
_LIMITS = frozenset({"G240", "G241"})
_UNSAFE = lazyre.compile(r"[^A-Za-z0-9._-]+")


def session_file(directory: Path, session_id: str | None) -> Path:
    """``sessions/<readable part>-<hash>.json``: any session id maps to one safe file name."""
    sid = session_id or DEFAULT_SESSION
    digest = blake2b(sid.encode("utf-8", "surrogatepass"), digest_size=5).hexdigest()
    safe = _UNSAFE.sub("_", sid)[:40].strip("._") or "session"
    return directory / f"{safe}-{digest}.json"


def journal_file(path: Path) -> Path:
    """The events journal next to a session's counters file."""
    return path.with_name(path.name[: -len(".json")] + JOURNAL_SUFFIX)


def sessions_dir(workspace: Path) -> Path:
    return workspace / ws.SESSIONS_DIR


class _Live:
    """A session as this process holds it: the state, its file, the events not yet written.
    (A plain class: one per session a process meets, never compared, never copied.)"""

    __slots__ = ("last_save", "loaded", "path", "pending", "stamp", "state", "where")

    def __init__(self, state: SessionState, path: Path | None = None, *, last_save: float = 0.0) -> None:
        self.state = state
        self.path = path
        self.pending: list[dict[str, Any]] = []
        self.stamp: files.Stamp = None
        self.loaded = False
        self.last_save = last_save
        self.where = None if path is None else os.fsencode(path)  # ``path`` encoded: what a stat takes


class SessionTracker:
    """The State's ``sessions``: hooks for the Guard, access for the behavior layer.

    ``workspace=None`` keeps everything in memory (pure use and tests of the fold).
    """

    def __init__(self, config: Config | None = None, workspace: Path | None = None) -> None:
        self.settings = BehaviorSettings.from_config(config)
        self.max_skew_s = float(config.get("guard.clock_skew_seconds")) if config is not None else 300.0
        self.dir = sessions_dir(workspace) if workspace is not None else None
        self.lock_path = self.dir / LOCK if self.dir is not None else None
        self.tiers = TierBook(workspace, self.settings.double_cooldown_s, self.lock_path, self.max_skew_s)
        # hold ``lock`` while reading a state from :meth:`view` or :meth:`look` (the hot path
        # avoids a context manager); ``_lock`` is the same lock
        self.lock: threading.RLock = threading.RLock()
        self._lock = self.lock
        self._live: dict[str, _Live] = {}  # oldest first; evicted beyond MAX_LIVE
        # from the layer to the dispatch that follows: the call, its probe, the decision's time
        self._probe: tuple[ToolCall, Probe, tuple[datetime, float] | None] | None = None
        self._persist = self.dir is not None
        self._swept = False

    # -- access ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def session(self, session_id: str | None, now: float) -> Iterator[SessionState]:
        """The session's live state, synced with its file, under the tracker's lock."""
        with self._lock:
            yield self._get(session_id or DEFAULT_SESSION, now).state

    def view(self, session_id: str | None, now: float) -> SessionState:
        """Like :meth:`session`, for a caller that already holds :attr:`lock`."""
        return self._get(session_id or DEFAULT_SESSION, now).state

    def get(self, session_id: str | None, now: float | None = None) -> SessionState:
        """The session's state (synced); read it, do not change it."""
        with self.session(session_id, time.time() if now is None else now) as state:
            return state

    def probe(
        self,
        call: ToolCall,
        sig: str,
        tags: frozenset[str],
        risk: Risk,
        data: Any,
        at: tuple[datetime, float] | None = None,
    ) -> Probe:
        """The call as the session sees it; remembered for the dispatch that follows (no second look
        at the file), with ``at``: the decision's time and its POSIX seconds, when worked out."""
        probe = probe_of(call, sig, tags, risk, data, self.settings.docs_hosts)
        self._probe = (call, probe, at)
        return probe

    def look(
        self, call: ToolCall, sig: str, tags: frozenset[str], risk: Risk, data: Any, at: tuple[datetime, float]
    ) -> tuple[Probe, SessionState]:
        """:meth:`probe` and :meth:`view` at ``at`` (the decision's time and its POSIX seconds) in one
        step, for a caller that holds :attr:`lock`: the behavior layer's reading of a call."""
        probe = probe_of(call, sig, tags, risk, data, self.settings.docs_hosts)
        self._probe = (call, probe, at)
        return probe, self._get(call.session_id or DEFAULT_SESSION, at[1]).state

    # -- hooks (called by Guard) ----------------------------------------------------------
    def on_dispatch(self, call: ToolCall, record: DecisionRecord) -> None:
        cached = self._probe
        self._probe = None
        settings = self.settings
        if cached is not None and cached[0] is call:
            _, probe, at = cached  # the probe and the decision's time the layer's look found
            synced = True
        else:
            at = None
            static = record.layer("static")
            tags = frozenset().union(*(v.tags for v in record.layers)) if record.layers else frozenset()
            risk = static.risk if static is not None and static.risk is not None else record.risk
            probe = probe_of(
                call,
                signature(call.tool, call.params),
                tags,
                risk,
                static.data if static else None,
                settings.docs_hosts,
            )
            synced = False
        decision = record.decision
        when = record.timestamp
        t = at[1] if at is not None and at[0] is when else when.timestamp()
        ev: dict[str, Any] = {
            "e": "d",
            "t": t,
            "task": probe.task,
            "kind": probe.kind,
            "dec": decision,
            "risk": probe.risk,
            "agent": probe.agent,
        }
        taints = False
        facts = probe.facts
        named: list[str] | tuple[()] = ()
        if facts:
            ev["facts"] = named = sorted(facts)
            taints = not facts.isdisjoint(_TAINTS)
            if taints:  # may become a taint source: named (redacted when used), and saved at once
                ev["raw"] = probe.sig
        path = probe.path
        local = None
        if path is not None:
            ev["path"] = path
            if probe.local:
                ev["local"] = local = 1
        limit = None
        if decision != "auto_allow":
            # any layer's reason (their order does not matter: ``record.reasons`` is not needed)
            for v in record.layers:
                for reason in v.reasons:
                    if reason.rule_id in _LIMITS:
                        ev["limit"] = limit = 1
                        break
                if limit:
                    break
        # what ``_add`` does, with the values at hand (a dispatch the layer has just looked at:
        # no second look at the file)
        sid = call.session_id or DEFAULT_SESSION
        with self._lock:
            live = self._get(sid, t, check=not synced)
            live.state.dispatched(
                ev, t, settings, probe.task, decision, probe.risk, probe.agent, named, path, local, limit
            )
            self._pend(sid, live, ev, t, taints)

    def on_result(self, call: ToolCall, success: bool, now: datetime) -> None:
        task = task_id(signature(call.tool, call.params))
        t = now.timestamp()
        ev: dict[str, Any] = {"e": "r", "t": t, "task": task, "call": shown(call), "ok": bool(success)}
        facts = fallback_facts(call, call.kind, self.settings.docs_hosts) & _TAINTS
        if facts:
            ev["facts"] = sorted(facts)
        with self._lock:  # the tier book shares the tracker's lock
            state = self._add(call.session_id, ev, save=True)
            if not self.settings.tiers:
                return
            risk = state.task_risk.get(task)
            agent = call.agent_id or state.agent
            difficulty = difficulty_of(risk if risk is not None else _default_risk(call.kind))
            promoted = self.tiers.record(agent, {"t": t, "ok": bool(success), "task": task, "difficulty": difficulty})
            if promoted or self.tiers.oldest_pending_age(t) >= self.settings.flush_s:
                try:
                    self.tiers.flush()
                except OSError as exc:
                    if not ws.note_write_failure(exc, self.dir or ws.SESSIONS_DIR):
                        logger.warning(f"trust tiers not saved: {exc}")

    def on_interaction(self, call: ToolCall, approved: bool, now: datetime) -> None:
        sig = signature(call.tool, call.params)
        ev = {"e": "i", "t": now.timestamp(), "task": task_id(sig), "call": shown(call), "ok": bool(approved)}
        self._add(call.session_id, ev, save=True)

    def flush(self) -> None:
        with self._lock:
            for sid, live in list(self._live.items()):
                if live.pending and self._persist:
                    self._save(sid, live)
            try:
                self.tiers.flush()
            except OSError as exc:
                if not ws.note_write_failure(exc, self.dir or ws.SESSIONS_DIR):
                    logger.warning(f"trust tiers not saved: {exc}")
            self._sweep()

    def close(self) -> None:
        self.flush()

    # -- resetting ------------------------------------------------------------------------
    def reset(self, session_id: str | None = None, task: str | None = None, *, everything: bool = False) -> list[str]:
        """Close breakers / forget sessions, here and on disk; what was reset, one line each."""
        from guard.behavior import reset as reset_mod

        with self._lock:
            self.flush()
            if self.dir is not None:
                done = reset_mod.reset(self.dir, session_id=session_id, task=task, everything=everything)
            else:
                done = []
            for sid in list(self._live):
                if everything or (task is None and sid == (session_id or DEFAULT_SESSION)):
                    del self._live[sid]
                    if self.dir is None:
                        done.append(f"session {sid}: cleared")
                elif task is not None and (session_id is None or sid == session_id):
                    self._live[sid].loaded = False  # re-read the file on next use
                    if self.dir is None:
                        done += reset_mod.close_in_state(self._live[sid].state, task)
            return done

    # -- internals ------------------------------------------------------------------------
    def _add(self, session_id: str | None, ev: dict[str, Any], *, save: bool) -> SessionState:
        sid = session_id or DEFAULT_SESSION
        t = float(ev["t"])
        with self._lock:
            live = self._get(sid, t)
            live.state.apply(ev, self.settings)
            self._pend(sid, live, ev, t, save)
            return live.state

    def _pend(self, sid: str, live: _Live, ev: dict[str, Any], t: float, save: bool) -> None:
        """Keep ``ev`` for the session's file, written now when ``save`` or the oldest kept event
        is ``flush_s`` old (caller holds the lock)."""
        if self._persist and live.path is not None:
            pending = live.pending
            pending.append(ev)
            if save or t - float(pending[0]["t"]) >= self.settings.flush_s:
                self._save(sid, live)

    def _get(self, sid: str, now: float, *, check: bool = True) -> _Live:
        live = self._live.get(sid)
        if live is None:
            # calls without a session id: one session per process, never saved (nothing ties
            # separate processes' session-less calls together)
            path = session_file(self.dir, sid) if self.dir is not None and sid != DEFAULT_SESSION else None
            live = self._live[sid] = _Live(self._fresh(sid, now), path, last_save=now)
            if len(self._live) > MAX_LIVE:
                self._evict()
        where = live.where
        if where is not None and self._persist and (check or not live.loaded):
            # (a stat per decision while loaded: another process may have written the file)
            if not live.loaded or not files.unchanged(where, live.stamp):
                self._load(sid, live, now)
        state = live.state
        ttl = self.settings.ttl_s
        if ttl > 0 and state.updated > 0 and now - state.updated > ttl:  # idle too long: start afresh
            live.pending = [ev for ev in live.pending if now - float(ev["t"]) <= ttl]
            live.state = self._fresh(sid, now)
            for ev in live.pending:
                live.state.apply(ev, self.settings)
        return live

    def _fresh(self, sid: str, now: float) -> SessionState:
        return SessionState(sid, started=now, updated=now)

    def _load(self, sid: str, live: _Live, now: float) -> None:
        assert live.path is not None
        doc, live.stamp = files.read_json(live.path)
        live.loaded = True
        live.state = self._base(sid, doc, now)
        for ev in live.pending:
            live.state.apply(ev, self.settings)

    def _base(self, sid: str, doc: dict[str, Any] | None, now: float) -> SessionState:
        if doc is not None:
            try:
                state = SessionState.from_json(doc, self.settings)
            except (KeyError, TypeError, ValueError, IndexError) as exc:
                logger.warning(f"session {sid}: saved state unreadable ({type(exc).__name__}: {exc}); starting afresh")
            else:
                state.clamp(max(now, time.time()) + self.max_skew_s)
                if state.session_id == sid and not state.expired(now, self.settings.ttl_s):
                    return state
        return self._fresh(sid, now)

    def _save(self, sid: str, live: _Live) -> None:
        assert live.path is not None and self.lock_path is not None
        path = live.path
        last_t = float(live.pending[-1]["t"]) if live.pending else live.last_save
        try:
            with files.locked(self.lock_path):
                if not live.loaded or files.stamp(path) != live.stamp:  # someone else wrote it: theirs, then ours
                    doc, live.stamp = files.read_json(path)
                    live.state = self._base(sid, doc, last_t)
                    for ev in live.pending:
                        live.state.apply(ev, self.settings)
                journal = journal_file(path)
                state = live.state
                if state.journal_lines == 0:
                    files.remove(journal)  # a fresh session: an old journal is not its history
                files.append_lines(journal, [stored(ev) for ev in live.pending])
                state.journal_lines += len(live.pending)
                if state.journal_lines > 2 * self.settings.window:
                    state.journal_lines = files.trim_lines(journal, self.settings.window)
                live.stamp = files.write_json(path, state.to_json())
                live.loaded = True
        except OSError as exc:
            if not ws.note_write_failure(exc, self.dir or ws.SESSIONS_DIR):
                logger.warning(f"session {sid} not saved ({exc}); keeping it in memory only")
            self._persist = False
        live.pending.clear()
        live.last_save = last_t

    def _evict(self) -> None:
        for sid in list(self._live)[: len(self._live) - MAX_LIVE]:
            live = self._live[sid]
            if live.pending and self._persist:
                self._save(sid, live)
            del self._live[sid]

    def _sweep(self) -> None:
        """Delete session files idle longer than the TTL, at most once an hour per workspace."""
        if self._swept or not self._persist or self.dir is None or self.settings.ttl_s <= 0:
            return
        self._swept = True
        marker = self.dir / SWEPT
        now = time.time()
        try:
            if now - marker.stat().st_mtime < SWEEP_EVERY_S:
                return
        except FileNotFoundError:
            pass
        except OSError:
            return
        try:
            self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            marker.touch(mode=0o600)
            os.utime(marker, (now, now))
            with files.locked(self.dir / LOCK):
                for path in self.dir.glob("*.json"):
                    if now - path.stat().st_mtime > self.settings.ttl_s:
                        files.remove(path)
                        files.remove(journal_file(path))
        except OSError as exc:
            if not ws.note_write_failure(exc, self.dir or ws.SESSIONS_DIR):
                logger.warning(f"sessions sweep failed: {exc}")


def _default_risk(kind: str) -> int:
    return int(Risk.LOW if kind in ("read", "glob", "grep") else Risk.MEDIUM)
