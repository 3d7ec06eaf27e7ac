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

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from guard.config import Config
from guard.layers.base import Context
from guard.layers.data import BehaviorData, Component, FusionData, Levels
from guard.memory.base import NO_SIMILAR
from guard.model import AUTO_ALLOW, BLOCK, COMPONENT_KEYS, REQUEST_CONFIRM, Decision, Reason, Risk, ToolCall, Verdict
from guard.signature import family_of

if TYPE_CHECKING:
    from guard.counters import ToolStats, UserStats
    from guard.memory.base import MemoryResult
    from guard.state import State
    from guard.system import SystemSample

__all__ = ["PRIORS", "Component", "Evaluators", "FusionData", "FusionLayer", "band", "effective_value"]

PRIORS = {Risk.SAFE: 90.0, Risk.LOW: 80.0, Risk.MEDIUM: 55.0, Risk.HIGH: 50.0, Risk.CRITICAL: 0.0}
_LOW, _MEDIUM = Risk.LOW, Risk.MEDIUM  # (a module's name is read faster than an enum's member)
NEUTRAL = 50.0
DAY = 86_400.0


Evaluator = Callable[[ToolCall, Context], Component]


def band(score: float, thresholds: Mapping[str, float]) -> Decision:
    if score >= thresholds["auto_allow"]:
        return AUTO_ALLOW
    if score >= thresholds["request_confirm"]:
        return REQUEST_CONFIRM
    return BLOCK


class Evaluators:
    """The default dimension evaluators, reading the shared state. Override any of them in a
    subclass. (The layer works this class's four dimensions out in one pass, ``_dimensions``;
    its instances have no ``__dict__``, so a method cannot be swapped on one behind its back.)"""

    __slots__ = ("_system", "m", "seed", "tool_half_life", "user_half_life")

    def __init__(self, config: Config) -> None:
        self.seed = config.get("fusion.mode") == "seed"
        self.m = float(config.get("fusion.prior_strength"))
        self.tool_half_life = float(config.get("fusion.tool_half_life_days")) * DAY
        self.user_half_life = float(config.get("fusion.user_half_life_days")) * DAY
        # (the system's last sample, its dimension): the sample is kept while it holds
        self._system: tuple[SystemSample | None, Component] = (None, _SYSTEM_LOW)

    def memory(self, call: ToolCall, ctx: Context) -> Component:
        state: State | None = ctx.state
        if state is None or state.memory is None:
            return _MEMORY_OFF
        sig = state.signature_of(call)
        res = state.memory.relevance(call, sig, ctx.static_risk, ctx.now)
        if self.seed:
            note = res.note or (
                f"{res.matched} similar past operation(s)" if res.matched else "no similar past operation"
            )
            return Component(res.score, 1.0, note, res.available, res.matched)
        return _memory_of(res, PRIORS[ctx.static_risk], state.aggregates.op_tool(sig))

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
        return self._evidence(
            _RunEvidence,
            PRIORS[ctx.static_risk],
            fam,
            ctx.timestamp,
            self.tool_half_life,
            agg.op_tool(sig),
            agg.family_tool(fam),
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
        return self._evidence(
            _AnswerEvidence,
            PRIORS[ctx.static_risk],
            fam,
            ctx.timestamp,
            self.user_half_life,
            agg.op_user(sig),
            agg.family_user(fam),
        )

    def _dimensions(
        self, call: ToolCall, ctx: Context, state: State, risk: Risk
    ) -> tuple[Component, Component, Component, Component, str | None]:
        """guard mode's four dimensions at once, each what its method answers (a failing one
        unavailable, as the layer's loop makes it), the lookups they share made once; then the
        family when neither the operation nor its family has any history (cmd_success and
        user_pref are then a function of the family and the prior alone), else None."""
        prior = PRIORS[risk]
        sig = state.signature_of(call)
        fam = family_of(sig)
        op_tool, family_tool, op_user, family_user = state.aggregates.evidence(sig, fam)
        timeless = fam if op_tool is None and family_tool is None and op_user is None and family_user is None else None
        memory = state.memory
        try:
            mem = (
                _MEMORY_OFF
                if memory is None
                else _memory_of(memory.relevance(call, sig, risk, ctx.now), prior, op_tool)
            )
        except Exception as exc:
            mem = _unavailable("memory", exc)
        if timeless is not None:  # (what _evidence answers without evidence, remembered)
            cmd, user = _NO_HISTORY.get((fam, prior)) or _no_history(fam, prior)
        else:
            ts = ctx.timestamp
            try:
                cmd = self._evidence(_RunEvidence, prior, fam, ts, self.tool_half_life, op_tool, family_tool)
            except Exception as exc:
                cmd = _unavailable("cmd_success", exc)
            try:
                user = self._evidence(_AnswerEvidence, prior, fam, ts, self.user_half_life, op_user, family_user)
            except Exception as exc:
                user = _unavailable("user_pref", exc)
        if risk < _MEDIUM:
            return mem, cmd, user, _SYSTEM_LOW, timeless
        try:
            sample = state.system.sample()
            seen, system = self._system
            if sample is not seen:
                system = (
                    Component(sample.score, 1.0, sample.detail)
                    if sample.available
                    else Component(NEUTRAL, 0.0, sample.detail, available=False)
                )
                self._system = (sample, system)
        except Exception as exc:
            system = _unavailable("system", exc)
        return mem, cmd, user, system, timeless

    def _evidence(
        self,
        evidence: type[_RunEvidence],
        prior: float,
        family_name: str,
        ts: float,
        half_life: float,
        op: Any,
        family: Any,
    ) -> Component:
        """guard mode's hierarchical evidence: operation → family → static prior.

        ``op`` and ``family`` are the operation's and its family's counters (``ToolStats`` for
        runs, ``UserStats`` for answers, as ``evidence`` says; None: never seen). Each level is
        its weight decayed to ``ts``, its raw value and counts (``_level``); a level whose weight
        has decayed to nothing has no evidence. The family is shrunk towards the prior; what the operation inherits from it is
        capped at the prior (neighbours' approvals never transfer, their refusals and failures
        do); the operation's own evidence is shrunk towards that. A shell's tool level mixes
        unrelated programs and is no parent (see docs/fusion.md). The note is written from the
        levels when read.
        """
        answers = evidence is _AnswerEvidence
        on, oraw, oh, ot = (op is not None and _level(op, ts, half_life, answers)) or _NO_LEVEL
        fn, fraw, fh, ft = (family is not None and _level(family, ts, half_life, answers)) or _NO_LEVEL
        if on is None and fn is None:
            # no evidence at all: a function of what, the family and the prior alone (the
            # common case for a new operation), remembered by them
            key = (evidence.what, family_name, prior)
            return _NO_EVIDENCE.get(key) or _no_evidence(key)
        label = _LABELS.get(family_name) or _label(family_name)
        m = self.m
        if fn is None:
            fam_eff = inherited = prior
        else:
            fam_eff = (fn * fraw + m * prior) / (fn + m)  # type: ignore[operator]  # (set with its weight)
            inherited = fam_eff if fam_eff < prior else prior
        if on is None:
            levels = _new(
                Levels, (None, None, None, None, inherited, fn, fraw, fh, ft, fam_eff, label, prior, inherited)
            )
            return _new(evidence, (NEUTRAL, 0.0, "", True, None, inherited, levels))
        op_eff = (on * oraw + m * inherited) / (on + m)  # type: ignore[operator]  # (set with its weight)
        levels = _new(Levels, (on, oraw, oh, ot, op_eff, fn, fraw, fh, ft, fam_eff, label, prior, inherited))
        return _new(evidence, (oraw, on / (on + m) if m else (1.0 if on else 0.0), "", True, ot, op_eff, levels))

    def system(self, call: ToolCall, ctx: Context) -> Component:
        state: State | None = ctx.state
        if state is None:
            return Component(NEUTRAL, 0.0, "system: unknown", available=False)
        # guard mode: an overloaded box makes heavy operations wait, not reads; so for safe and
        # low-risk calls the machine is not even measured (psutil costs a per-call hook ~20 ms).
        if not self.seed and ctx.static_risk < Risk.MEDIUM:
            return _SYSTEM_LOW
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
        # read-only: a layer is frozen once built (the scores it remembers were fused with these)
        self._weights = config.weights
        self.weights: MappingProxyType[str, float] = MappingProxyType(self._weights)
        self.thresholds: Mapping[str, float] = MappingProxyType(config.thresholds)
        self.low_health = float(config.get("fusion.low_health"))
        self.low_weights: Mapping[str, float] = MappingProxyType(
            {
                "user_pref": float(config.get("fusion.low_health_user_pref")),
                "memory": float(config.get("fusion.low_health_memory")),
            }
        )
        # the built-in evaluators in guard mode work the four dimensions out together
        ev = self.evaluators
        self._builtin = ev if type(ev) is Evaluators and not ev.seed and not self.seed else None
        self._memo: dict[tuple[Any, ...], _Fused] = {}
        # (the weights in COMPONENT_KEYS order and the two thresholds, read once: ``_fuse`` asks every call)
        w = self._weights
        self._w = (w["memory"], w["cmd_success"], w["user_pref"], w["system"])
        self._allow_at, self._confirm_at = self.thresholds["auto_allow"], self.thresholds["request_confirm"]

    def __call__(self, call: ToolCall, ctx: Context) -> Verdict:
        risk = ctx.static_risk
        behavior = ctx.verdict("behavior")
        if behavior is None:
            health = 100.0
        else:
            data = behavior.data
            health = float(data.health if type(data) is BehaviorData else data.get("health", 100.0))
        builtin, state = self._builtin, ctx.state
        key: tuple[Any, ...] | None = None
        if builtin is not None and builtin is self.evaluators and state is not None:
            try:
                mem, cmd, user, system, timeless = builtin._dimensions(call, ctx, state, risk)
            except Exception:  # what they share failed: each dimension then says so itself
                mem, cmd, user, system = self._evaluate(call, ctx)
            else:
                # No history for the operation or its family: the result is a function of the
                # risk, the family, memory's and the system's answers and (for a healthy
                # session) nothing else, so it is remembered by them. (A system value of 0 is
                # left out: -0.0 equals 0.0 but is written differently.)
                if timeless is not None and health >= self.low_health and system.value != 0.0:
                    key = (risk, timeless, mem, system)
                    fused = self._memo.get(key)
                    if fused is not None:
                        return _verdict(fused, health)
        else:
            mem, cmd, user, system = self._evaluate(call, ctx)
        fused = self._fuse(risk, health, mem, cmd, user, system)
        if key is None:
            return _verdict(fused, health)
        if len(self._memo) >= 4096:
            self._memo.clear()
        self._memo[key] = fused
        return _verdict(fused, health)

    def _evaluate(self, call: ToolCall, ctx: Context) -> tuple[Component, ...]:
        """The four dimensions from the evaluators, in ``COMPONENT_KEYS`` order."""
        evaluators = self.evaluators
        out = []
        for key in COMPONENT_KEYS:
            try:
                comp = getattr(evaluators, key)(call, ctx)
            except Exception as exc:  # one broken source must not break the decision
                comp = _unavailable(key, exc)
            out.append(comp)
        return tuple(out)

    def _fuse(
        self, risk: Risk, health: float, mem: Component, cmd: Component, user: Component, system: Component
    ) -> _Fused:
        """The dimensions weighted into the score, its band and its reasons (the health counts
        only below ``fusion.low_health``)."""
        prior = PRIORS[risk]
        # (read-only views: the verdict's data holds them as they are, its reader gets a copy)
        weights: MappingProxyType[str, float] = self.weights
        w_mem, w_cmd, w_user, w_sys = self._w
        reasons: list[Reason] = []
        if health < self.low_health:
            weights = MappingProxyType({**self._weights, **self.low_weights})
            w_mem, w_cmd, w_user, w_sys = (
                weights["memory"],
                weights["cmd_success"],
                weights["user_pref"],
                weights["system"],
            )
            reasons.append(
                Reason(
                    "G301",
                    f"session health {health:.0f} < {self.low_health:.0f}: "
                    f"user_pref weight {weights['user_pref']}, memory weight {weights['memory']}",
                )
            )
        parts = (mem, cmd, user, system)  # (COMPONENT_KEYS order, as the verdict's data holds them)
        seed = self.seed
        if seed:
            e_mem, e_cmd, e_user, e_sys = mem.value, cmd.value, user.value, system.value
        else:  # effective_value, inline (four times a call)
            c = mem.confidence
            e_mem = mem.effective if mem.effective is not None else c * mem.value + (1 - c) * prior
            c = cmd.confidence
            e_cmd = cmd.effective if cmd.effective is not None else c * cmd.value + (1 - c) * prior
            c = user.confidence
            e_user = user.effective if user.effective is not None else c * user.value + (1 - c) * prior
            c = system.confidence
            e_sys = system.effective if system.effective is not None else c * system.value + (1 - c) * prior
            if risk <= _LOW:
                # A low-risk call that failed before (a test run, a build, a lint) is the ordinary
                # development loop, not a risk: its failures never pull it below its prior. A real
                # loop is the session's business (G202/G203, the circuit breaker G210).
                # (Only measured outcomes, not a value an evaluator chose.)
                # (``max(e, prior)`` and below ``_clip``, as comparisons: the same value, a call less each)
                if mem.matched and prior > e_mem:
                    e_mem = prior
                if cmd.matched and prior > e_cmd:
                    e_cmd = prior
        total = sum((w_mem * e_mem, w_cmd * e_cmd, w_user * e_user, w_sys * e_sys))
        total = total if total < 100.0 else 100.0
        score = total if total > 0.0 else 0.0
        if score >= self._allow_at:
            decision = AUTO_ALLOW
        else:
            thresholds = self.thresholds
            decision = REQUEST_CONFIRM if score >= self._confirm_at else BLOCK
            effective = {"memory": e_mem, "cmd_success": e_cmd, "user_pref": e_user, "system": e_sys}
            if not seed and decision == BLOCK:
                decision = self._soften(score, weights, effective, prior, reasons)
            if decision == BLOCK:
                reasons.append(Reason("G302", f"fused score {score:.1f} is below {thresholds['request_confirm']:.0f}"))
            elif decision == REQUEST_CONFIRM and not reasons and self._history_asked(score, weights, effective, prior):
                # history, not the call itself, made it ask: say so, with the dimension that pulled it down most
                low = min(COMPONENT_KEYS, key=lambda k: weights[k] * (effective[k] - prior))
                why = parts[COMPONENT_KEYS.index(low)].note or low
                reasons.append(
                    _reason("G302", f"fused score {score:.1f} is below {thresholds['auto_allow']:.0f} ({low}: {why})")
                )
        # (a value at a prior that is a whole number is its own rounding: most dimensions of most calls)
        whole = prior if prior.is_integer() else None
        components = (  # COMPONENT_KEYS order
            e_mem if e_mem == whole else _round2(e_mem),
            e_cmd if e_cmd == whole else _round2(e_cmd),
            e_user if e_user == whole else _round2(e_user),
            e_sys if e_sys == whole else _round2(e_sys),
        )
        missing = (
            ()
            if mem.available and cmd.available and user.available and system.available
            else tuple(k for k, c in zip(COMPONENT_KEYS, parts, strict=True) if not c.available)
        )
        return (
            score,
            decision,
            tuple(reasons) if reasons else (),
            components,
            weights,
            "seed" if seed else "guard",
            prior,
            parts,
            missing,
        )

    def _history_asked(
        self, score: float, weights: Mapping[str, float], effective: dict[str, float], prior: float
    ) -> bool:
        """Would the call have run with every dimension at its prior? Then history asked, not the call."""
        neutral = score + sum(weights[k] * (prior - effective[k]) for k in COMPONENT_KEYS)
        return band(_clip(neutral), self.thresholds) == AUTO_ALLOW

    def _soften(
        self,
        score: float,
        weights: Mapping[str, float],
        effective: dict[str, float],
        prior: float,
        reasons: list[Reason],
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


# what the fused score comes to: score, decision, reasons, components, weights, mode, prior,
# the dimensions, the missing ones (components and dimensions in COMPONENT_KEYS order; the
# weights are the layer's, or the unhealthy session's made for this call: nobody changes them)
_Fused = tuple[
    float,
    Decision,
    tuple[Reason, ...],
    tuple[float, float, float, float],
    MappingProxyType[str, float],
    str,
    float,
    tuple[Component, Component, Component, Component],
    tuple[str, ...],
]


def _verdict(fused: _Fused, health: float) -> Verdict:
    """The layer's verdict: a new one every call (the chain stamps its time in place). Its data
    holds the fused score's tuples as they are (immutable, so a remembered score is shared by
    every call that uses it); the dicts a reader could change are made when first read."""
    score, decision, reasons, components, weights, mode, prior, parts, missing = fused
    # every field has its final type already (the decision is a Decision, the score is clipped)
    return Verdict.built(
        FusionLayer.name,
        score=score,
        decision=decision,
        reasons=reasons,
        data=FusionData(components, weights, health, mode, prior, parts),
        unavailable=missing,
    )


# A named tuple made from all its fields in order, without its Python-level ``__new__`` (the
# same object in a third of the time; the fused score makes up to nine a call).
_new = tuple.__new__

_MEMORY_OFF = Component(40.0, 0.0, "memory: off", available=False)
_SYSTEM_LOW = Component(NEUTRAL, 0.0, "system: not weighed for low-risk calls")


def _unavailable(key: str, exc: Exception) -> Component:
    return Component(NEUTRAL, 0.0, f"{key}: unavailable ({type(exc).__name__}: {exc})", available=False)


def _level(stats: Any, ts: float, half_life: float, answers: bool) -> tuple[float, float, int, int] | None:
    """One level of the hierarchical evidence: its weight decayed to ``ts``, its raw value (the
    preference, for answers) and its counts; None when the weight has decayed to nothing."""
    n, s = stats.decayed.at(ts, half_life)
    if n <= 0:
        return None
    if answers:
        return n, _preference(100.0 * s / n, stats), stats.approvals, stats.interactions
    return n, 100.0 * s / n, stats.successes, stats.runs


_NO_LEVEL: tuple[None, None, None, None] = (None, None, None, None)


def _memory_of(res: MemoryResult, prior: float, own: ToolStats | None) -> Component:
    """guard mode's memory dimension from the provider's answer (``own``: this operation's runs).

    A function of the answer, the prior and whether the operation ran before, remembered by
    them: providers hand the same (frozen) answer object for the same counts, so it is found
    by identity (the memo keeps the answer, so its id is not reused while it is there)."""
    if res is NO_SIMILAR:
        return _NO_SIMILAR
    key = (id(res), prior, own is not None and own.runs != 0)
    hit = _MEMORY_OF.get(key)
    if hit is not None and hit[0] is res:
        return hit[1]
    comp = _memory_component(res, prior, key[2])
    if len(_MEMORY_OF) >= 1024:
        _MEMORY_OF.clear()
    _MEMORY_OF[key] = (res, comp)
    return comp


def _memory_component(res: MemoryResult, prior: float, ran: bool) -> Component:
    """What ``_memory_of`` answers, worked out."""
    note = res.note or (f"{res.matched} similar past operation(s)" if res.matched else "no similar past operation")
    if not res.matched or res.success_rate is None:
        return _new(Component, (res.score, res.confidence, note, res.available, res.matched, None, None))
    # the neighbours' success rate, shrunk towards the static prior by the chain (the
    # provider's own score is shrunk towards 40 already; shrinking twice would bury it).
    value, conf = 100.0 * res.success_rate, res.confidence
    effective = conf * value + (1 - conf) * prior
    if not ran and effective > prior:
        # similar is not the same: neighbours may pull a new operation down, never lift it
        return _new(
            Component,
            (value, conf, note + "; not this operation: not above the prior", res.available, res.matched, prior, None),
        )
    return _new(Component, (value, conf, note, res.available, res.matched, None, None))


_MEMORY_OF: dict[tuple[int, float, bool], tuple[MemoryResult, Component]] = {}

_NO_SIMILAR = Component(
    NO_SIMILAR.score, NO_SIMILAR.confidence, NO_SIMILAR.note, NO_SIMILAR.available, NO_SIMILAR.matched
)


def _preference(rate: float, stats: UserStats) -> float:
    """The seed's ``approval_rate·0.6 + satisfaction·0.4`` (satisfaction 1-5 → 20·s; none given: the rate)."""
    sat = stats.satisfaction_sum / stats.satisfaction_count * 20.0 if stats.satisfaction_count else rate
    return rate * 0.6 + sat * 0.4


class _RunEvidence(Component):
    """A hierarchy's dimension (``_evidence``) whose note is written from its levels when read."""

    __slots__ = ()
    what = "runs succeeded"

    @property
    def note(self) -> str:
        lv: Levels = self.levels  # type: ignore[assignment]
        inherited, prior = lv.inherited, lv.prior
        key = (
            self.what,
            lv.label,
            (lv.op_hits, lv.op_total) if lv.op_n is not None else None,
            (lv.family_hits, lv.family_total) if lv.family_n is not None else None,
            f"{inherited:.1f}" if inherited < prior else None,
            prior,
        )
        return _NOTES.get(key) or _note(key)


class _AnswerEvidence(_RunEvidence):
    __slots__ = ()
    what = "approved"


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
_NO_EVIDENCE: dict[tuple[str, str, float], Component] = {}
_NO_HISTORY: dict[tuple[str, float], tuple[Component, Component]] = {}


def _no_history(family_name: str, prior: float) -> tuple[Component, Component]:
    """cmd_success and user_pref when neither the operation nor its family has any history
    (what ``_hierarchy`` answers then), remembered by the family and the prior."""
    pair = (
        _NO_EVIDENCE.get(("runs succeeded", family_name, prior))
        or _no_evidence(("runs succeeded", family_name, prior)),
        _NO_EVIDENCE.get(("approved", family_name, prior)) or _no_evidence(("approved", family_name, prior)),
    )
    if len(_NO_HISTORY) >= 4096:
        _NO_HISTORY.clear()
    _NO_HISTORY[(family_name, prior)] = pair
    return pair


def _no_evidence(key: tuple[str, str, float]) -> Component:
    """A hierarchy without any evidence, from ``(what, family, prior)``: neutral, the prior."""
    what, family_name, prior = key
    label = _label(family_name)
    note = _NOTES.get((what, label, None, None, None, prior)) or _note((what, label, None, None, None, prior))
    comp = Component(
        NEUTRAL, 0.0, note, effective=prior, levels=Levels.of(None, prior, None, prior, label, prior, prior)
    )
    if len(_NO_EVIDENCE) >= 4096:
        _NO_EVIDENCE.clear()
    _NO_EVIDENCE[key] = comp
    return comp


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


def _round2(x: float) -> float:
    """``round(x, 2)``, the same float, without its decimal conversion (a tenth of the fused
    score's work, up to four a call).

    ``y = 100·x`` is within 2⁻⁵³·10⁸ of the exact product for ``0 < x < 10⁶``; when it is
    farther than 10⁻⁴ from a half, ``r``, the nearest integer (``y + 1.5·2⁵²`` rounds there, ties
    to even, with nothing lost below 2⁵¹), is the nearest integer of the exact product as well,
    which is what ``round`` rounds to. ``r / 100.0`` is then the float nearest to that decimal,
    correctly rounded like the one ``round`` parses back. Anything else (a near tie, zero, a
    negative, a huge or non-finite value) is ``round`` itself.
    """
    y = x * 100.0
    r = (y + _TO_INTEGER) - _TO_INTEGER
    d = y - r
    if 0.0 < x < 1e6 and -0.4999 < d < 0.4999:
        return r / 100.0
    return round(x, 2)


_TO_INTEGER = 6755399441055744.0  # 1.5 * 2**52: added and taken away, rounds a float below 2**51 to an integer


def _clip(x: float) -> float:
    return max(0.0, min(100.0, x))
