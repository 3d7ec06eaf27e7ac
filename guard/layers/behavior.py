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

from guard.behavior.facts import RISKY_PATH, SUBAGENT
from guard.behavior.settings import BehaviorSettings
from guard.behavior.signals import assess
from guard.behavior.tracker import SessionTracker
from guard.config import Config
from guard.layers.base import Context
from guard.layers.data import BehaviorData
from guard.model import Risk, ToolCall, Verdict

__all__ = ["BehaviorLayer", "SessionTracker"]

_NEUTRAL = {"health": 100.0, "signals": []}
_TIER_FACTS = frozenset({RISKY_PATH, SUBAGENT})


class BehaviorLayer:
    name = "behavior"
    fresh_verdicts = True  # a new Verdict on every call: the chain may stamp its time in place

    def __init__(self, config: Config | None = None) -> None:
        self.settings = BehaviorSettings.from_config(config)

    def __call__(self, call: ToolCall, ctx: Context) -> Verdict:
        state = ctx.state
        tracker = state.sessions if state is not None else None
        if state is None or not isinstance(tracker, SessionTracker):
            return Verdict(self.name, data=dict(_NEUTRAL))
        verdicts = ctx.verdicts
        if len(verdicts) == 1:  # the default chain: the static verdict alone
            first = verdicts[0]
            tags = first.tags
            risk = first.risk
            static: Verdict | None = first if first.layer == "static" else None
        else:  # ctx.tags and ctx.static_risk in one pass over the earlier verdicts
            tags = frozenset()
            risk = None
            static = None
            for v in verdicts:
                if v.tags:
                    tags = tags | v.tags
                if v.risk is not None and (risk is None or v.risk > risk):
                    risk = v.risk
                if v.layer == "static" and static is None:
                    static = v
        now = ctx.timestamp
        settings = self.settings
        card = None
        agent, points = None, 0.0
        with tracker.lock:
            probe, session = tracker.look(
                call,
                call.redacted_signature,  # what ``state.signature_of`` answers
                tags,
                Risk.MEDIUM if risk is None else risk,
                static.data if static is not None else None,
                (ctx.now, now),
            )
            if settings.tiers:
                # the tier matters for writes, risky paths and sub-agents: only then look for newer points on
                # disk, and only then does ``assess`` read the card; other calls show its agent and points
                if probe.lines is not None or probe.path is not None or not probe.facts.isdisjoint(_TIER_FACTS):
                    card = tracker.tiers.shown(probe.agent)
                    agent, points = card.agent, card.points
                else:
                    tiers = tracker.tiers  # (``tiers.peek(agent, sync=False)``, in line once the file was read)
                    known = tiers.cards.get(probe.agent) if tiers.loaded else tiers.peek(probe.agent, sync=False)
                    agent, points = (probe.agent, 0.0) if known is None else (known.agent, known.points)
            result = assess(session, probe, now, settings, card, call.session_id)
            taint = None
            if session.taint is not None or session.secret is not None:
                taint = (session.taint is not None, session.secret is not None)
        data = BehaviorData(result, agent, points, taint)
        if not result.signals:
            return Verdict.built(self.name, data=data)
        # every field has its final type already (``assess`` answers Decision members and the reasons)
        return Verdict.built(
            self.name, decision=result.decision, ceiling=result.ceiling, reasons=result.reasons, data=data
        )
