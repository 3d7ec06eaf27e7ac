"""``MultiSourceFusionEngine``: the seed's API, unchanged, on top of ``Guard``.

    engine = MultiSourceFusionEngine()
    score = engine.fuse_decision_context("bash", {"command": "rm /tmp/test.txt"}, "session_123")
    score.final_score, score.decision        # 60.2, "request_confirm"
    engine.save_decision("bash", score, "session_123")
    engine.weights["memory"] = 0.40          # assignable, as in the seed
    engine.thresholds = {"auto_allow": 80, "request_confirm": 50, "block": 0}

A subclass that overrides ``_evaluate_memory_relevance`` (or ``_evaluate_command_success``,
``_evaluate_user_preference``, ``_evaluate_system_health``) changes the result: its number is
the value weighted for that dimension (the record's ``components``), used as is. ``super()``
returns exactly that value as guard computed it for the call being decided — the seed's raw
value in seed mode, the shrunk value in guard mode — so an override that returns ``super()``
changes nothing, and one that adds 10 raises the dimension by 10.

The engine runs guard's whole chain, so a call the static layer rates critical is blocked
whatever the fused score says; ``final_score`` is the fused score. Each
``fuse_decision_context`` is one dispatch for the session layer (loops, bursts, refusal
streaks); ``save_decision`` logs it without counting it again.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from guard.config import Config
from guard.core import Guard, decision_line
from guard.layers.base import Context
from guard.layers.fusion import PRIORS, Component, Evaluators, FusionLayer, effective_value
from guard.model import COMPONENT_KEYS, DecisionRecord, ToolCall
from guard.redact import redact_text

_METHODS = {
    "memory": "_evaluate_memory_relevance",
    "cmd_success": "_evaluate_command_success",
    "user_pref": "_evaluate_user_preference",
    "system": "_evaluate_system_health",
}
_NOTES = {
    "memory": "based on similar past operations (LanceDB memory)",
    "cmd_success": "based on the tool's execution history",
    "user_pref": "based on the user's past decisions",
    "system": "based on system resources",
}


@attrs.frozen
class FusionScore:
    """What ``fuse_decision_context`` returns: the seed's fields plus the full record."""

    final_score: float
    decision: str
    components: Mapping[str, float]
    reasoning: Mapping[str, Mapping[str, Any]]
    record: DecisionRecord

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.record.tool,
            "final_score": round(self.final_score, 2),
            "decision": self.decision,
            "reasoning": {k: dict(v) for k, v in self.reasoning.items()},
        }


class _WatchedDict(dict[str, float]):
    """A dict that tells the engine when it changes, so ``engine.weights["memory"] = 0.2`` works."""

    def __init__(self, data: Mapping[str, float], on_change: Any) -> None:
        super().__init__(data)
        self._on_change = on_change

    def __setitem__(self, key: str, value: float) -> None:
        super().__setitem__(key, value)
        self._on_change((key,))

    def update(self, *args: Any, **kw: Any) -> None:
        before = dict(self)
        super().update(*args, **kw)
        self._on_change(tuple(k for k in self if k not in before or before[k] != self[k]) + tuple(kw))


class _EngineEvaluators(Evaluators):
    """Default evaluators, except where the engine subclass overrides a seed method."""

    def __init__(self, config: Config, engine: MultiSourceFusionEngine) -> None:
        super().__init__(config)
        self._engine = engine

    def _dispatch(self, key: str, call: ToolCall, ctx: Context) -> Component:
        method = _METHODS[key]
        default: Component = getattr(Evaluators, key)(self, call, ctx)
        if getattr(type(self._engine), method) is getattr(MultiSourceFusionEngine, method):
            return default
        local = self._engine._local
        local.current = (key, call, ctx, default)  # what super() returns, for this call only
        try:
            value = float(getattr(self._engine, method)(call.tool, dict(call.params), call.session_id))
        finally:
            local.current = None
        value = max(0.0, min(100.0, value))
        return Component(value, 1.0, f"{method} (custom)", effective=value)

    def memory(self, call: ToolCall, ctx: Context) -> Component:
        return self._dispatch("memory", call, ctx)

    def cmd_success(self, call: ToolCall, ctx: Context) -> Component:
        return self._dispatch("cmd_success", call, ctx)

    def user_pref(self, call: ToolCall, ctx: Context) -> Component:
        return self._dispatch("user_pref", call, ctx)

    def system(self, call: ToolCall, ctx: Context) -> Component:
        return self._dispatch("system", call, ctx)


class MultiSourceFusionEngine:
    """The seed's fusion engine. ``workspace=`` and ``config=`` as for ``Guard``."""

    def __init__(
        self,
        workspace: str | Path | None = None,
        config: Config | Mapping[str, Any] | None = None,
        *,
        guard: Guard | None = None,
    ) -> None:
        self._guard = guard or Guard(workspace, config)
        cfg = self._base = self._guard.config
        self._explicit: set[str] = set()
        self._local = threading.local()
        self._weights = _WatchedDict(cfg.weights, self._rebuild)
        self._thresholds = _WatchedDict(cfg.thresholds, self._rebuild)
        self._rebuild()

    @property
    def guard(self) -> Guard:
        return self._guard

    @property
    def workspace(self) -> Path:
        return self._guard.workspace

    @property
    def weights(self) -> dict[str, float]:
        return self._weights

    @weights.setter
    def weights(self, value: Mapping[str, float]) -> None:
        self._weights = _WatchedDict({**self._guard.config.weights, **dict(value)}, self._rebuild)
        self._rebuild(tuple(value))

    @property
    def thresholds(self) -> dict[str, float]:
        return self._thresholds

    @thresholds.setter
    def thresholds(self, value: Mapping[str, float]) -> None:
        self._thresholds = _WatchedDict({**self._guard.config.thresholds, **dict(value)}, self._rebuild)
        self._rebuild(tuple(value))

    def _rebuild(self, changed: tuple[str, ...] = ()) -> None:
        # Only what the program changed is an override: a threshold left as it was keeps its
        # source ("default" lets the static floor apply; a threshold set in code does not).
        base = self._base
        self._explicit.update(f"{kind}.{k}" for k in changed for kind in ("weights", "thresholds"))
        overrides = {f"weights.{k}": v for k, v in self._weights.items() if k in COMPONENT_KEYS}
        overrides.update({f"thresholds.{k}": v for k, v in self._thresholds.items() if k != "block"})
        overrides = {k: v for k, v in overrides.items() if k in self._explicit or float(v) != base.get(k)}
        self._explicit.update(overrides)
        config = base.with_overrides(overrides)
        chain = self._guard.chain
        layers = [
            FusionLayer(config, _EngineEvaluators(config, self)) if name == chain.fusion else layer
            for name, layer in zip(chain.names, chain.layers, strict=True)
        ]
        self._guard.config = config
        self._guard.chain = type(chain)(layers, fusion=chain.fusion)

    # -- the seed's API ---------------------------------------------------------------------
    def fuse_decision_context(
        self, tool_name: str, params: Mapping[str, Any] | None = None, session_id: str | None = None
    ) -> FusionScore:
        # The seed fuses once per dispatch: count it in its session here (``save_decision`` only logs).
        record = self._guard.decide(tool_name, params or {}, session_id=session_id, save=False, track=True)
        fusion = record.layer("fusion")
        dims = fusion.data.get("dimensions", {}) if fusion is not None else {}
        reasoning = {
            k: {
                "score": round(float(record.components.get(k, 0.0)), 2),
                "note": dims.get(k, {}).get("note") or _NOTES[k],
            }
            for k in COMPONENT_KEYS
        }
        return FusionScore(record.final_score, record.decision, dict(record.components), reasoning, record)

    def save_decision(self, tool_name: str, score: FusionScore, session_id: str | None = None) -> None:
        """Append the decision to ``.fusion-decisions.jsonl`` (seed shape plus explanation)."""
        record = score.record
        if session_id is not None and session_id != record.session_id:
            record = attrs.evolve(record, call=attrs.evolve(record.call, session_id=session_id))
        line = decision_line(record)
        line["tool"] = redact_text(tool_name)
        self._guard.state.decisions.append(line)

    def _evaluate_memory_relevance(self, tool_name: str, params: Mapping[str, Any], session_id: str | None) -> float:
        return self._default("memory", tool_name, params, session_id)

    def _evaluate_command_success(self, tool_name: str, params: Mapping[str, Any], session_id: str | None) -> float:
        return self._default("cmd_success", tool_name, params, session_id)

    def _evaluate_user_preference(self, tool_name: str, params: Mapping[str, Any], session_id: str | None) -> float:
        return self._default("user_pref", tool_name, params, session_id)

    def _evaluate_system_health(self, tool_name: str, params: Mapping[str, Any], session_id: str | None) -> float:
        return self._default("system", tool_name, params, session_id)

    def _default(self, key: str, tool_name: str, params: Mapping[str, Any], session_id: str | None) -> float:
        """The built-in evaluator's weighted value, for subclasses calling ``super()``.

        During a decision it is the value guard computed for that very call (its static risk,
        its prior); called on its own it evaluates the call afresh, without the static layer.
        """
        current = getattr(self._local, "current", None)
        if current is not None and current[0] == key and current[1].tool == tool_name:
            _, call, ctx, comp = current
            return effective_value(comp, PRIORS[ctx.static_risk], self._guard.config.get("fusion.mode") == "seed")
        call = self._guard.make_call(tool_name, params, session_id=session_id)
        ctx = Context(config=self._guard.config, now=call.timestamp, state=self._guard.state)  # type: ignore[arg-type]
        comp = Evaluators(self._guard.config).__getattribute__(key)(call, ctx)
        return effective_value(comp, PRIORS[ctx.static_risk], self._guard.config.get("fusion.mode") == "seed")

    def close(self) -> None:
        self._guard.close()
