"""``SessionBehaviorAnalyzer``: the seed's analyzer shape, on a workspace's sessions.

    analyzer = SessionBehaviorAnalyzer()            # $GUARD_HOME or ~/.guard
    metrics = analyzer.analyze_session("session_123")
    if metrics.health_score < 40:
        ...                                          # the seed lowers the engine's weights

Usable on its own (no ``Guard`` needed): it reads the session file the guard layer keeps.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from guard import workspace as ws
from guard.behavior import files
from guard.behavior.signals import Signal, assess
from guard.behavior.timefmt import iso
from guard.behavior.tracker import SessionTracker, journal_file, session_file
from guard.config import Config

RECENT = 10
_KIND = {"d": "dispatch", "r": "result", "i": "answer"}


def _readable(ev: Mapping[str, Any]) -> dict[str, Any]:
    """A journal event for a person: its time, what it was, and what came of it."""
    t = ev.get("t")
    out: dict[str, Any] = {"at": iso(float(t)) if isinstance(t, (int, float)) else None}
    out["event"] = _KIND.get(str(ev.get("e")), str(ev.get("e")))
    out["task"] = ev.get("task")
    if "call" in ev:
        out["call"] = ev["call"]
    elif "kind" in ev:
        out["call"] = f"{ev['kind']}:…"
    if ev.get("e") == "d":
        out["decision"] = ev.get("dec")
    elif ev.get("e") == "r":
        out["outcome"] = "success" if ev.get("ok") else "failure"
    elif ev.get("e") == "i":
        out["outcome"] = "approved" if ev.get("ok") else "denied"
    if ev.get("facts"):
        out["facts"] = list(ev["facts"])
    return out


@attrs.frozen
class SessionMetrics:
    """A session's health 0-100, the signals behind it, its breakers, taint and tier."""

    session_id: str
    health_score: float
    signals: tuple[Signal, ...]
    breakers: tuple[Mapping[str, Any], ...] = ()
    tier: Mapping[str, Any] | None = None
    taint: Mapping[str, Any] | None = None
    counts: Mapping[str, int] = attrs.field(factory=dict)
    events: int = 0  # in the journal (the last ``behavior.window`` are kept)
    recent: tuple[Mapping[str, Any], ...] = ()  # the last few events, oldest first
    updated: str | None = None
    known: bool = False  # False: no event recorded for this session

    @property
    def signal_ids(self) -> list[str]:
        return [s.id for s in self.signals]

    @property
    def healthy(self) -> bool:
        return not self.signals

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "known": self.known,
            "health_score": self.health_score,
            "signals": [s.to_dict() for s in self.signals],
            "breakers": [dict(b) for b in self.breakers],
            "tier": None if self.tier is None else dict(self.tier),
            "taint": None if self.taint is None else dict(self.taint),
            "counts": dict(self.counts),
            "events": self.events,
            "recent": [dict(e) for e in self.recent],
            "updated": self.updated,
        }


class SessionBehaviorAnalyzer:
    """``SessionBehaviorAnalyzer(workspace=None, config=None).analyze_session(session_id)``."""

    def __init__(
        self,
        workspace: str | Path | None = None,
        config: Config | Mapping[str, Any] | None = None,
        *,
        tracker: SessionTracker | None = None,
    ) -> None:
        self.workspace = ws.resolve(workspace)
        if isinstance(config, Config):
            self.config = config
        else:
            self.config = Config.load(self.workspace if self.workspace.is_dir() else None, overrides=config)
        self.tracker = tracker or SessionTracker(self.config, self.workspace)

    def analyze_session(self, session_id: str | None, now: float | None = None) -> SessionMetrics:
        now = time.time() if now is None else now
        tracker = self.tracker
        settings = tracker.settings
        with tracker.session(session_id, now) as state:
            result = assess(state, None, now, settings)
            breakers = tuple(b.public(now, settings) for b in state.breakers.values())
            card = tracker.tiers.peek(state.agent)
            taint = {
                "untrusted": state.taint,
                "secret": state.secret,
            }
            counts = {
                "dispatches": state.dispatches,
                "blocked": state.blocked,
                "results": state.results,
                "failures": state.failures,
                "approvals": state.approvals,
                "denials": state.denials,
            }
            known = state.dispatches + state.results + state.approvals + state.denials > 0
            events = min(state.journal_lines, settings.window)
            updated = iso(state.updated) if known else None
            agent = state.agent
        from guard.behavior.tiers import Scorecard

        tier = (card or Scorecard(agent)).public()
        recent: tuple[Mapping[str, Any], ...] = ()
        if tracker.dir is not None and known:
            path = journal_file(session_file(tracker.dir, session_id))
            recent = tuple(_readable(e) for e in files.tail_lines(path, RECENT))
        return SessionMetrics(
            session_id=session_id or "-",
            health_score=result.health,
            signals=result.signals,
            breakers=breakers,
            tier=tier,
            taint=taint if state.taint or state.secret else None,
            counts=counts,
            events=events,
            recent=recent,
            updated=updated,
            known=known,
        )

    def close(self) -> None:
        self.tracker.close()
