"""Session behavior layer: judge the session, not the call.

An agent that loops, keeps failing, keeps being refused, or has read untrusted content
and now reaches for secrets and the network loses trust, whatever each call looks like
alone. The layer reads the session's counters (``guard/behavior``), adds this call, and
returns:

- ``decision=block`` when this task's circuit breaker is open, or when the call sends
  data out of a session that read untrusted content and a secret (the lethal trifecta);
- ``ceiling=request_confirm`` for a loop, the denial limit, repeated refusals, egress
  after untrusted content, a write beyond the agent's trust tier, or health < 60;
- ``data``: ``health`` (0-100; the fusion layer lowers its weights below 40), ``signals``
  (rule ids), ``penalties``, ``tier``, ``breaker`` (this task's, or None), ``taint``.
"""

from __future__ import annotations

from typing import Any

from guard.behavior.settings import BehaviorSettings
from guard.behavior.signals import assess
from guard.behavior.tiers import Scorecard
from guard.behavior.tracker import SessionTracker
from guard.config import Config
from guard.layers.base import Context
from guard.model import ToolCall, Verdict

__all__ = ["BehaviorLayer", "SessionTracker"]

_NEUTRAL = {"health": 100.0, "signals": []}


class BehaviorLayer:
    name = "behavior"

    def __init__(self, config: Config | None = None) -> None:
        self.settings = BehaviorSettings.from_config(config)

    def __call__(self, call: ToolCall, ctx: Context) -> Verdict:
        state = ctx.state
        tracker: Any = getattr(state, "sessions", None)
        if not isinstance(tracker, SessionTracker):
            return Verdict(self.name, data=dict(_NEUTRAL))
        static = ctx.verdict("static")
        probe = tracker.probe(
            call, state.signature_of(call), ctx.tags, ctx.static_risk, static.data if static is not None else None
        )
        now = ctx.now.timestamp()
        settings = self.settings
        with tracker.session(call.session_id, now) as session:
            card = tracker.tiers.peek(probe.agent) if settings.tiers else None
            if card is None and settings.tiers:
                card = Scorecard(probe.agent)
            result = assess(session, probe, now, settings, card, session_id=call.session_id)
            taint = None
            if session.taint is not None or session.secret is not None:
                taint = {"untrusted": session.taint is not None, "secret": session.secret is not None}
        data: dict[str, Any] = {
            "health": result.health,
            "signals": result.ids,
            "breaker": result.breaker,
            "tier": None if card is None else {"agent": card.agent, "name": card.tier.name, "points": card.points},
        }
        if result.signals:
            data["penalties"] = {s.id: round(s.penalty, 1) for s in result.signals if s.penalty}
        if taint is not None:
            data["taint"] = taint
        return Verdict(
            self.name,
            decision=result.decision,
            ceiling=result.ceiling,
            reasons=tuple(s.reason() for s in result.signals),
            data=data,
        )
