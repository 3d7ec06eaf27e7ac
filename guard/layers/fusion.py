"""The fused score: four dimensions, weighted, mapped to a decision band.

Seed formulas (``fusion.mode = "seed"`` reproduces them exactly):

    memory      = 40 + avg_importance·40 + success_rate·20   (no similar memory: 40)
    cmd_success = min(100, successes / runs · 100)            (no runs: 50)
    user_pref   = approval_rate·0.6 + satisfaction·0.4        (satisfaction 1-5 → 20·s;
                                                                no satisfaction given: the
                                                                approval rate; no data: 50)
    system      = mean(100-cpu%, 100-mem%, 100-disk%)
    score       = Σ weight·dimension;  >= 75 auto_allow, >= 50 request_confirm, else block

guard mode (the default) keeps the formulas and fixes where they misbehave:

- *Small samples are shrunk towards a prior* set by the static risk (safe 90, low 80,
  medium 55, high 50): a dimension with n observations counts ``c = n/(n+m)`` of its own
  value and ``1-c`` of the prior (``fusion.prior_strength`` = m). One success out of one
  run no longer scores 100, and no history is not bad history.
- *Old history decays* (half-lives ``fusion.tool_half_life_days``, ``fusion.user_half_life_days``).
- *System health is smoothed and cached*, does not count for safe/low calls (an overloaded
  machine does not make ``cat README`` riskier), and can never by itself push a call that
  would otherwise be confirmed into block.
- *A low-risk call's failures are the development loop*: for safe and low calls (a test
  run, a build) memory and cmd_success never fall below the prior; loops and the circuit
  breaker catch a call that keeps failing.
- *Failures make guard ask, not refuse*: a block that only past failures (memory,
  cmd_success) and load would cause becomes request_confirm (G304); repeated failures are the
  circuit breaker's job, and the person's refusals still block.

Dynamic weights: session health below ``fusion.low_health`` (40) sets user_pref to 0.10 and
memory to 0.20 without renormalising (seed), so an unhealthy session scores lower.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from guard.config import Config
from guard.layers.base import Context
from guard.layers.data import Component, FusionData, Level, Levels
from guard.model import AUTO_ALLOW, BLOCK, COMPONENT_KEYS, REQUEST_CONFIRM, Decision, Reason, Risk, ToolCall, Verdict
from guard.signature import family_of

if TYPE_CHECKING:
    from guard.counters import ToolStats, UserStats
    from guard.state import State

__all__ = ["PRIORS", "Component", "Evaluators", "FusionData", "FusionLayer", "band", "effective_value"]

PRIORS = {Risk.SAFE: 90.0, Risk.LOW: 80.0, Risk.MEDIUM: 55.0, Risk.HIGH: 50.0, Risk.CRITICAL: 0.0}
NEUTRAL = 50.0
_OUTCOMES = ("memory", "cmd_success")
DAY = 86_400.0


Evaluator = Callable[[ToolCall, Context], Component]


def band(score: float, thresholds: dict[str, float]) -> Decision:
    if score >= thresholds["auto_allow"]:
        return AUTO_ALLOW
    if score >= thresholds["request_confirm"]:
        return REQUEST_CONFIRM
    return BLOCK


class Evaluators:
    """The default dimension evaluators, reading the shared state. Override any of them."""

    def __init__(self, config: Config) -> None:
        self.seed = config.get("fusion.mode") == "seed"
        self.m = float(config.get("fusion.prior_strength"))
        self.tool_half_life = float(config.get("fusion.tool_half_life_days")) * DAY
        self.user_half_life = float(config.get("fusion.user_half_life_days")) * DAY

    def memory(self, call: ToolCall, ctx: Context) -> Component:
        state: State | None = ctx.state
        if state is None or state.memory is None:
            return Component(40.0, 0.0, "memory: off", available=False)
        res = state.memory.relevance(call, state.signature_of(call), ctx.static_risk, ctx.now)
        note = res.note or (f"{res.matched} similar past operation(s)" if res.matched else "no similar past operation")
        if self.seed or not res.matched or res.success_rate is None:
            return Component(res.score, 1.0 if self.seed else res.confidence, note, res.available, res.matched)
        # guard mode: the neighbours' success rate, shrunk towards the static prior by the chain
        # (the provider's own score is shrunk towards 40 already; shrinking twice would bury it).
        value, conf = 100.0 * res.success_rate, res.confidence
        prior = PRIORS[ctx.static_risk]
        effective = conf * value + (1 - conf) * prior
        own = state.aggregates.op_tool(state.signature_of(call))
        if (own is None or own.runs == 0) and effective > prior:
            # similar is not the same: neighbours may pull a new operation down, never lift it
            return Component(
                value, conf, note + "; not this operation: not above the prior", res.available, res.matched, prior
            )
        return Component(value, conf, note, res.available, res.matched)

    def cmd_success(self, call: ToolCall, ctx: Context) -> Component:
        state: State | None = ctx.state
        if self.seed:
            stats = state.aggregates.tool(call.tool) if state is not None else None
            if stats is None or stats.runs == 0:
                return Component(NEUTRAL, 1.0, "no execution history: neutral 50")
            rate = stats.successes / stats.runs * 100
            return Component(
                min(100.0, rate), 1.0, f"{stats.successes}/{stats.runs} runs succeeded", matched=stats.runs
            )
        if state is None:
            return Component(NEUTRAL, 0.0, "no execution history")
        agg, sig = state.aggregates, state.signature_of(call)
        fam = family_of(sig)
        return self._hierarchy(
            ctx,
            "runs succeeded",
            _run_level(agg.op_tool(sig), ctx, self.tool_half_life),
            _run_level(agg.family_tool(fam), ctx, self.tool_half_life),
            fam,
        )

    def user_pref(self, call: ToolCall, ctx: Context) -> Component:
        state: State | None = ctx.state
        if self.seed:
            stats = state.aggregates.user(call.tool) if state is not None else None
            if stats is None or stats.interactions == 0:
                return Component(NEUTRAL, 1.0, "no interaction history: neutral 50")
            value = _preference(stats.approvals / stats.interactions * 100, stats)
            return Component(value, 1.0, f"{stats.approvals}/{stats.interactions} approved", matched=stats.interactions)
        if state is None:
            return Component(NEUTRAL, 0.0, "no interaction history: neutral 50")
        agg, sig = state.aggregates, state.signature_of(call)
        fam = family_of(sig)
        return self._hierarchy(
            ctx,
            "approved",
            _answer_level(agg.op_user(sig), ctx, self.user_half_life),
            _answer_level(agg.family_user(fam), ctx, self.user_half_life),
            fam,
        )

    def _hierarchy(
        self, ctx: Context, what: str, op: Level | None, family: Level | None, family_name: str
    ) -> Component:
        """guard mode's hierarchical evidence: operation → family → static prior.

        The family is shrunk towards the prior; what the operation inherits from it is capped
        at the prior (neighbours' approvals never transfer, their refusals and failures do);
        the operation's own evidence is shrunk towards that. A shell's tool level mixes
        unrelated programs and is no parent (see docs/fusion.md).
        """
        prior = PRIORS[ctx.static_risk]
        m = self.m
        fam_eff = _shrunk(family, prior, m)
        inherited = fam_eff if fam_eff < prior else prior
        op_eff = _shrunk(op, inherited, m)
        label = _label(family_name)
        # the note changes only when a count does: remembered by what it says
        key = (
            what,
            label,
            (op.hits, op.total) if op is not None else None,
            (family.hits, family.total) if family is not None else None,
            f"{inherited:.1f}" if inherited < prior else None,
            prior,
        )
        note = _NOTES.get(key)
        if note is None:
            note = _note(key)
        levels = Levels(op, op_eff, family, fam_eff, label, prior, inherited)
        if op is None:
            return Component(NEUTRAL, 0.0, note, effective=op_eff, levels=levels)
        n = op.n
        return Component(
            op.raw,
            n / (n + m) if m else (1.0 if n else 0.0),
            note,
            matched=op.total,
            effective=op_eff,
            levels=levels,
        )

    def system(self, call: ToolCall, ctx: Context) -> Component:
        state: State | None = ctx.state
        if state is None:
            return Component(NEUTRAL, 0.0, "system: unknown", available=False)
        # guard mode: an overloaded box makes heavy operations wait, not reads; so for safe and
        # low-risk calls the machine is not even measured (psutil costs a per-call hook ~20 ms).
        if not self.seed and ctx.static_risk < Risk.MEDIUM:
            return Component(NEUTRAL, 0.0, "system: not weighed for low-risk calls")
        sample = state.system.sample()
        if not sample.available:
            return Component(NEUTRAL, 0.0, sample.detail, available=False)
        return Component(sample.score, 1.0, sample.detail)


class FusionLayer:
    """Weighted fusion of the four dimensions into a 0-100 score and a band decision."""

    name = "fusion"
    scores_for_record = True  # the chain runs it after a block too, so blocks carry real components
    fresh_verdicts = True  # a new Verdict on every call: the chain may stamp its time in place

    def __init__(self, config: Config, evaluators: Any | None = None) -> None:
        self.config = config
        self.evaluators = evaluators or Evaluators(config)
        self.seed = config.get("fusion.mode") == "seed"
        self.weights = config.weights
        self.thresholds = config.thresholds
        self.low_health = float(config.get("fusion.low_health"))
        self.low_weights = {
            "user_pref": float(config.get("fusion.low_health_user_pref")),
            "memory": float(config.get("fusion.low_health_memory")),
        }

    def __call__(self, call: ToolCall, ctx: Context) -> Verdict:
        risk = ctx.static_risk
        prior = PRIORS[risk]
        weights = dict(self.weights)
        reasons: list[Reason] = []
        behavior = ctx.verdict("behavior")
        health = float(behavior.data.get("health", 100.0)) if behavior is not None else 100.0
        if health < self.low_health:
            weights.update(self.low_weights)
            reasons.append(
                Reason(
                    "G301",
                    f"session health {health:.0f} < {self.low_health:.0f}: "
                    f"user_pref weight {weights['user_pref']}, memory weight {weights['memory']}",
                )
            )
        parts: dict[str, Component] = {}
        unavailable: list[str] = []
        for key in COMPONENT_KEYS:
            try:
                comp = getattr(self.evaluators, key)(call, ctx)
            except Exception as exc:  # one broken source must not break the decision
                comp = Component(NEUTRAL, 0.0, f"{key}: unavailable ({type(exc).__name__}: {exc})", available=False)
            if not comp.available:
                unavailable.append(key)
            parts[key] = comp
        seed = self.seed
        effective: dict[str, float] = {}
        for k, c in parts.items():  # effective_value, inline (four times a call)
            if seed:
                effective[k] = c.value
            elif c.effective is not None:
                effective[k] = c.effective
            else:
                effective[k] = c.confidence * c.value + (1 - c.confidence) * prior
        if not self.seed and risk <= Risk.LOW:
            # A low-risk call that failed before (a test run, a build, a lint) is the ordinary
            # development loop, not a risk: its failures never pull it below its prior. A real
            # loop is the session's business (G202/G203, the circuit breaker G210).
            for k in _OUTCOMES:
                if parts[k].matched:  # measured outcomes, not a value an evaluator chose
                    effective[k] = max(effective[k], prior)
        score = _clip(sum([weights[k] * effective[k] for k in COMPONENT_KEYS]))
        decision = band(score, self.thresholds)
        if not self.seed and decision == BLOCK:
            decision = self._soften(score, weights, effective, prior, reasons)
        if decision == BLOCK:
            reasons.append(Reason("G302", f"fused score {score:.1f} is below {self.thresholds['request_confirm']:.0f}"))
        elif decision == REQUEST_CONFIRM and not reasons and self._history_asked(score, weights, effective, prior):
            # history, not the call itself, made it ask: say so, with the dimension that pulled it down most
            low = min(COMPONENT_KEYS, key=lambda k: weights[k] * (effective[k] - prior))
            why = parts[low].note or low
            reasons.append(
                _reason("G302", f"fused score {score:.1f} is below {self.thresholds['auto_allow']:.0f} ({low}: {why})")
            )
        data = FusionData(
            {k: round(effective[k], 2) for k in COMPONENT_KEYS},
            weights,
            health,
            "seed" if self.seed else "guard",
            prior,
            parts,
        )
        # every field has its final type already (``band`` answers a Decision, the score is clipped)
        return Verdict.built(
            self.name,
            score=score,
            decision=decision,
            reasons=tuple(reasons),
            data=data,
            unavailable=tuple(unavailable),
        )

    def _history_asked(
        self, score: float, weights: dict[str, float], effective: dict[str, float], prior: float
    ) -> bool:
        """Would the call have run with every dimension at its prior? Then history asked, not the call."""
        neutral = score + sum(weights[k] * (prior - effective[k]) for k in COMPONENT_KEYS)
        return band(_clip(neutral), self.thresholds) == AUTO_ALLOW

    def _soften(
        self, score: float, weights: dict[str, float], effective: dict[str, float], prior: float, reasons: list[Reason]
    ) -> Decision:
        """guard mode: outcomes and load make guard ask, they do not refuse.

        A block that system pressure alone, or past failures (memory, cmd_success) together
        with it, would cause is turned into request_confirm: a failing test run is not a
        dangerous one, and repeated failures are the circuit breaker's business. Only the
        person's refusals (user_pref), an unhealthy session's weights or the static prior
        can make the fused score block.
        """
        for keys, rule, why in (
            (("system",), "G303", "system pressure alone does not block; asking instead"),
            (
                ("system", "memory", "cmd_success"),
                "G304",
                "past failures make guard ask, not refuse (repeated failures open the circuit breaker)",
            ),
        ):
            neutral = score + sum(weights[k] * (prior - effective[k]) for k in keys)
            if band(_clip(neutral), self.thresholds) != BLOCK:
                reasons.append(Reason(rule, why))
                return REQUEST_CONFIRM
        return BLOCK


def _run_level(stats: ToolStats | None, ctx: Context, half_life: float) -> Level | None:
    if stats is None:
        return None
    n, s = stats.decayed.at(ctx.timestamp, half_life)
    if n <= 0:
        return None
    return Level(n, 100.0 * s / n, stats.successes, stats.runs)


def _answer_level(stats: UserStats | None, ctx: Context, half_life: float) -> Level | None:
    if stats is None:
        return None
    n, a = stats.decayed.at(ctx.timestamp, half_life)
    if n <= 0:
        return None
    return Level(n, _preference(100.0 * a / n, stats), stats.approvals, stats.interactions)


def _preference(rate: float, stats: UserStats) -> float:
    """The seed's ``approval_rate·0.6 + satisfaction·0.4`` (satisfaction 1-5 → 20·s; none given: the rate)."""
    sat = stats.satisfaction_sum / stats.satisfaction_count * 20.0 if stats.satisfaction_count else rate
    return rate * 0.6 + sat * 0.4


def _shrunk(level: Level | None, parent: float, m: float) -> float:
    """``(n·raw + m·parent) / (n + m)``: the level's own value, shrunk towards its parent."""
    if level is None or level.n <= 0:
        return parent
    return (level.n * level.raw + m * parent) / (level.n + m)


_REASONS: dict[tuple[str, str], Reason] = {}


def _reason(rule_id: str, message: str) -> Reason:
    """A reason, one object per distinct message: the same call asks for the same reason call
    after call, and the decision line's caches then find it by identity."""
    key = (rule_id, message)
    reason = _REASONS.get(key)
    if reason is None:
        if len(_REASONS) >= 1024:
            _REASONS.clear()
        reason = _REASONS[key] = Reason(rule_id, message)
    return reason


_LABELS: dict[str, str] = {}
_NOTES: dict[tuple[Any, ...], str] = {}


def _label(family_name: str) -> str:
    """The family as the note names it: ``git:`` reads ``git``, ``bash:git`` reads ``git``."""
    label = _LABELS.get(family_name)
    if label is None:
        label = family_name.rstrip(":") if family_name.endswith(":") else family_name.partition(":")[2]
        if len(_LABELS) >= 4096:
            _LABELS.clear()
        _LABELS[family_name] = label
    return label


def _note(key: tuple[Any, ...]) -> str:
    """A hierarchy's note, from ``(what, label, op counts, family counts, inherited, prior)``."""
    what, label, op, family, inherited, prior = key
    parts = [f"operation: {op[0]}/{op[1]} {what}" if op is not None else "operation: no history"]
    if family is not None:
        parts.append(f"family {label!r}: {family[0]}/{family[1]} {what}")
    if inherited is not None:
        parts.append(f"inherits {inherited} < prior {prior:.0f}")
    note = "; ".join(parts)
    if len(_NOTES) >= 4096:
        _NOTES.clear()
    _NOTES[key] = note
    return note


def effective_value(c: Component, prior: float, seed: bool) -> float:
    """The value weighted: the seed's raw value; guard's shrunk one."""
    if seed:
        return c.value
    if c.effective is not None:
        return c.effective
    return c.confidence * c.value + (1 - c.confidence) * prior


def _clip(x: float) -> float:
    return max(0.0, min(100.0, x))
