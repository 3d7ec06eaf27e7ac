"""Session behavior layer (spine version): health from the session's recent events.

Replaced by the full analyzer in ``guard/behavior``. This version tracks, per session and
in memory, consecutive failures, consecutive denials and identical repeated calls, turns
them into a 0-100 health, and opens a breaker after 5 failures of the same call in a row.
"""

from __future__ import annotations

import threading
from collections import deque
from datetime import datetime
from typing import Any

import attrs

from guard.config import Config
from guard.layers.base import Context
from guard.model import BLOCK, REQUEST_CONFIRM, DecisionRecord, Reason, ToolCall, Verdict
from guard.signature import signature

BREAKER_FAILURES = 5


@attrs.define
class SessionState:
    failures: int = 0
    denials: int = 0
    last_sigs: deque[str] = attrs.field(factory=lambda: deque(maxlen=20))
    failing_sig: str | None = None
    failing_count: int = 0


class SessionTracker:
    def __init__(self, config: Config | None = None) -> None:
        self._sessions: dict[str, SessionState] = {}
        self._lock = threading.Lock()

    def get(self, session_id: str | None) -> SessionState:
        with self._lock:
            return self._sessions.setdefault(session_id or "-", SessionState())

    def on_dispatch(self, call: ToolCall, record: DecisionRecord) -> None:
        self.get(call.session_id).last_sigs.append(signature(call.tool, call.params))

    def on_result(self, call: ToolCall, success: bool, now: datetime) -> None:
        s = self.get(call.session_id)
        sig = signature(call.tool, call.params)
        if success:
            s.failures, s.failing_sig, s.failing_count = 0, None, 0
            return
        s.failures += 1
        s.failing_count = s.failing_count + 1 if s.failing_sig == sig else 1
        s.failing_sig = sig

    def on_interaction(self, call: ToolCall, approved: bool, now: datetime) -> None:
        s = self.get(call.session_id)
        s.denials = 0 if approved else s.denials + 1

    def close(self) -> None:
        return None


class BehaviorLayer:
    name = "behavior"

    def __init__(self, config: Config) -> None:
        self.config = config

    def __call__(self, call: ToolCall, ctx: Context) -> Verdict:
        tracker: Any = getattr(ctx.state, "sessions", None)
        if tracker is None:
            return Verdict(self.name, data={"health": 100.0})
        s = tracker.get(call.session_id)
        sig = signature(call.tool, call.params)
        reasons: list[Reason] = []
        health = 100.0
        if s.failures:
            health -= min(40.0, 10.0 * s.failures)
            reasons.append(Reason("G201", f"{s.failures} failure(s) in a row in this session"))
        repeats = sum(1 for x in s.last_sigs if x == sig)
        if repeats >= 3:
            health -= 20.0
            reasons.append(Reason("G202", f"the same call was made {repeats} times recently (a loop)"))
        ceiling = None
        if s.denials >= 3:
            health -= 30.0
            ceiling = REQUEST_CONFIRM
            reasons.append(Reason("G203", f"the user refused {s.denials} calls in a row"))
        health = max(0.0, health)
        if s.failing_sig == sig and s.failing_count >= BREAKER_FAILURES:
            reasons.append(Reason("G210", f"this call failed {s.failing_count} times in a row: circuit breaker open"))
            return Verdict(self.name, decision=BLOCK, reasons=reasons, data={"health": health})
        return Verdict(self.name, ceiling=ceiling, reasons=reasons, data={"health": health})
