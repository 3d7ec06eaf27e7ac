"""The middleware chain: static → behavior → fusion, a block short-circuits.

Each layer returns a ``Verdict``; ``combine`` folds them into one decision:

1. any layer's ``block`` → block (the chain stopped there);
2. otherwise the fused band: the scored verdict of the layer named ``fusion`` (none →
   request_confirm: nobody vouched for it; a score from any other layer is not the band);
3. a ``floor`` of auto_allow (the static layer's safe read-only) lifts a request_confirm
   whose score is still at or above the confirm threshold — so ``ls`` on a fresh install
   runs — unless a layer set a ceiling, ``fusion.static_floor`` is off, or the person set
   ``thresholds.auto_allow`` (G305 in the notes either way);
4. every ``ceiling`` caps the decision (high risk, a struggling session, a failed layer);
5. with no human present, request_confirm acts as block.

A layer that raises is recorded with its error and degrades the call towards caution:
request_confirm, or block when an earlier layer already rated the call high or worse.

The chain times each layer into its verdict's ``elapsed_us``: a copy of the verdict, since a
layer may hand out the same verdict twice (the static layer's cache), unless the layer says
``fresh_verdicts = True`` (a new verdict per call, kept nowhere): then the time is set in place.

Layers are found by name (``STATIC``, ``BEHAVIOR``, ``FUSION``), never by position or by the
shape of their verdicts, so a custom layer may stand anywhere; ``DEFAULT_ORDER`` is the one
declaration of the order ``Guard`` builds.
"""

from __future__ import annotations

import functools
import operator
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from guard import pauses
from guard.errors import ConfigError
from guard.layers.base import Context, Layer
from guard.layers.data import FusionData
from guard.model import (
    _DECISION_RANK,
    AUTO_ALLOW,
    BLOCK,
    REQUEST_CONFIRM,
    Decision,
    DecisionRecord,
    Reason,
    Risk,
    ToolCall,
    Verdict,
)

# The layers guard knows by name, and the one order ``Guard`` builds its chain in.
STATIC = "static"  # the parse: its risk is what a result is recorded with
BEHAVIOR = "behavior"
FUSION = "fusion"  # the scorer: its verdict's score and decision are the fused band
DEFAULT_ORDER = (STATIC, BEHAVIOR, FUSION)


def layer_name(layer: Layer) -> str:
    """The name a layer goes by: its ``name``, else its function or class name."""
    name = getattr(layer, "name", None)
    if name is None:
        name = getattr(layer, "__name__", None) or type(layer).__name__
    if not isinstance(name, str) or not name:
        raise ConfigError(f"layer {layer!r} has no usable name (name={name!r}); give it a non-empty str ``name``")
    return name


class Chain:
    """Runs its layers in order; frozen once built.

    Layers are found by name, never by position: the static layer is the one named
    ``static`` wherever it stands, the fused score is the verdict of the layer named
    ``fusion`` (``fusion=`` names another scorer). Two layers with one name are refused.
    """

    def __init__(self, layers: Sequence[Layer], *, fusion: str = FUSION) -> None:
        self.layers = tuple(layers)
        self.names = tuple(layer_name(layer) for layer in self.layers)
        self._by_name = dict(zip(self.names, self.layers, strict=True))
        if len(self._by_name) != len(self.layers):
            twice = sorted({n for n in self.names if self.names.count(n) > 1})
            raise ConfigError(
                f"two layers named {', '.join(map(repr, twice))} in the chain {list(self.names)}; "
                "layers are found by name, so each name must be unique (rename or drop one)"
            )
        self.fusion = fusion
        # read once: the chain is frozen once built
        self._fresh = tuple(getattr(layer, "fresh_verdicts", False) is True for layer in self.layers)
        self._steps = tuple(zip(self.layers, self._fresh, strict=True))  # what ``run`` walks
        self._budget: tuple[Any, float | None] = (None, None)  # (config, its decision.budget_ms)

    def layer(self, name: str) -> Layer | None:
        """The layer called ``name`` (``chain.layer("static")``), or None when the chain has none."""
        return self._by_name.get(name)

    def run(self, call: ToolCall, ctx: Context) -> DecisionRecord:
        clock = time.perf_counter
        start = clock()
        deadline, work = ctx.deadline, ctx.work_deadline
        if deadline is None:
            config, ms = self._budget
            if config is not ctx.config:  # a configuration does not change once loaded
                ms = _budget_ms(ctx)
                self._budget = (ctx.config, ms)
            if ms:  # (out of time when both have passed: see guard.pauses)
                deadline, work = ctx.deadline, ctx.work_deadline = pauses.deadlines(ms, start)
        append = ctx.verdicts.append
        for i, (layer, fresh) in enumerate(self._steps):
            t0 = clock()
            if i and deadline is not None and t0 > deadline and pauses.late(deadline, work):
                # the layers so far used the whole budget
                append(_out_of_time(ctx, self.names[i:], (t0 - start) * 1000))
                break
            try:
                verdict = layer(call, ctx)
            except Exception as exc:
                verdict = _stamped(_failed(self.names[i], exc, ctx), (clock() - t0) * 1e6)
            else:
                elapsed_us = (clock() - t0) * 1e6
                if fresh:  # (``_stamped``, inline)
                    object.__setattr__(verdict, "elapsed_us", elapsed_us)
                else:
                    verdict = _with_elapsed(verdict, elapsed_us)
            append(verdict)
            if verdict.decision is not None and verdict.decision == BLOCK:
                self._score_for_record(i, call, ctx)
                break
        return combine(call, ctx, (clock() - start) * 1e6, fusion=self.fusion)

    def _score_for_record(self, blocker: int, call: ToolCall, ctx: Context) -> None:
        """After a block, still run the layers that only score (``scores_for_record``: fusion)
        so the record carries the real components of a blocked call, not placeholders.
        Their verdicts are marked ``after_block`` and cannot lift the block (rule 1)."""
        later = self.layers[blocker + 1 :]
        for layer in later:
            if not getattr(layer, "scores_for_record", False):
                continue
            try:
                verdict = layer(call, ctx)
            except Exception:
                continue  # the call is blocked anyway; the record keeps no components
            # Scored, not judged: no decision and no reasons of its own (the blocker's stand).
            ctx.verdicts.append(
                attrs.evolve(verdict, decision=None, reasons=(), data={**verdict.data, "after_block": True})
            )


def _budget_ms(ctx: Context) -> float | None:
    """``decision.budget_ms``; None when it is 0 or less (no deadline)."""
    try:
        ms = float(ctx.config.get("decision.budget_ms"))
    except (KeyError, TypeError, ValueError):  # a config object without the key (a custom one)
        return None
    return ms if ms > 0 else None


def _out_of_time(ctx: Context, skipped: tuple[str, ...], elapsed_ms: float) -> Verdict:
    """The budget ran out before every layer ran: ask (a block found by then still stands)."""
    return Verdict(
        layer="budget",
        risk=Risk.MEDIUM,
        ceiling=REQUEST_CONFIRM,
        reasons=[
            Reason(
                "G420",
                f"The call is too complex to check in time ({elapsed_ms:.0f} ms; not run: {', '.join(skipped)}); asking.",
            )
        ],
        unavailable=skipped,
    )


def _stamped(verdict: Verdict, elapsed_us: float) -> Verdict:
    """A verdict made for this call alone (its layer says ``fresh_verdicts = True``: it keeps no
    reference to it, as a cache would) gets its time set in place, before anyone else sees it."""
    object.__setattr__(verdict, "elapsed_us", elapsed_us)
    return verdict


_COPIERS: dict[type, Callable[[Any, float], Any]] = {}


def _with_elapsed(verdict: Verdict, elapsed_us: float) -> Verdict:
    """``attrs.evolve(verdict, elapsed_us=...)`` without re-running converters and validators.

    The layer's verdict was validated when it was built and ``elapsed_us`` has no validator:
    a copier made once per class copies the fields as they are (about 0.6 µs instead of 6).
    """
    cls = type(verdict)
    copier = _COPIERS.get(cls)
    if copier is None:
        copier = _COPIERS[cls] = _make_copier(cls)
    out: Verdict = copier(verdict, elapsed_us)
    return out


def _make_copier(cls: type) -> Callable[[Any, float], Any]:
    names = [a.name for a in attrs.fields(cls) if a.name != "elapsed_us"]
    slots: list[Any] = [getattr(cls, name, None) for name in (*names, "elapsed_us")]
    if not all(hasattr(d, "__set__") and hasattr(d, "__get__") for d in slots):  # not slotted
        values = operator.attrgetter(*names)
        setters = [functools.partial(_set, name) for name in names]

        def copy(verdict: Any, elapsed_us: float) -> Any:
            new: Any = object.__new__(cls)
            for set_one, value in zip(setters, values(verdict), strict=True):
                set_one(new, value)
            _set("elapsed_us", new, elapsed_us)
            return new

        return copy
    # slotted: one line per field, each slot read as an attribute (the interpreter's own slot
    # read: the descriptor's ``__get__`` through a call costs twice as much) and set through its
    # own descriptor (what attrs' generated ``__init__`` does, without the converters and validators)
    env: dict[str, Any] = {"new": object.__new__, "cls": cls}
    lines = ["def copy(verdict, elapsed_us):", "    out = new(cls)"]
    for i, (name, d) in enumerate(zip((*names, "elapsed_us"), slots, strict=True)):
        if not name.isidentifier():
            raise TypeError(f"{cls.__name__}: field {name!r} is not an identifier")
        env[f"set{i}"] = d.__set__
        value = "elapsed_us" if name == "elapsed_us" else f"verdict.{name}"
        lines.append(f"    set{i}(out, {value})")
    lines.append("    return out")
    exec("\n".join(lines), env)  # fixed text built from the class's own field names
    made: Callable[[Any, float], Any] = env["copy"]
    return made


def _set(name: str, obj: Any, value: Any) -> None:
    object.__setattr__(obj, name, value)


def _failed(name: str, exc: BaseException, ctx: Context) -> Verdict:
    risky = any(v.risk is not None and v.risk >= Risk.HIGH for v in ctx.verdicts)
    return Verdict(
        layer=name,
        risk=Risk.MEDIUM,
        decision=BLOCK if risky else None,
        ceiling=REQUEST_CONFIRM,
        reasons=[Reason("G001", f"layer {name!r} failed ({type(exc).__name__}: {exc}); deciding with caution")],
        error=f"{type(exc).__name__}: {exc}",
        unavailable=(name,),
    )


def _floor(fusion: Verdict | None, ctx: Context, notes: list[str]) -> Decision:
    """The static floor (``fusion.static_floor``): a safe read-only call the fused score would
    confirm runs anyway, so ``ls`` on a fresh install does not ask. It never overrides an
    ``auto_allow`` threshold the person set (file, environment or code): that threshold is
    the person's word on what may run unasked.
    """
    config, thresholds = ctx.config, ctx.config.thresholds
    score = fusion.score if fusion is not None else None
    if not config.get("fusion.static_floor"):
        return REQUEST_CONFIRM
    source = config.source("thresholds.auto_allow")
    if source != "default":
        notes.append(
            f"G305 static floor not applied: thresholds.auto_allow {thresholds['auto_allow']:g} was set ({source})"
        )
        return REQUEST_CONFIRM
    if score is not None and score < thresholds["request_confirm"]:
        return REQUEST_CONFIRM
    shown = "no fused score" if score is None else f"score {score:.1f} < {thresholds['auto_allow']:g}"
    notes.append(f"G305 static floor (fusion.static_floor): safe read-only call allowed ({shown})")
    return AUTO_ALLOW


def combine(call: ToolCall, ctx: Context, elapsed_us: float = 0.0, *, fusion: str = FUSION) -> DecisionRecord:
    """Fold ``ctx.verdicts`` into one record; the fused band is the verdict named ``fusion``
    that carries a score (none: the call is asked, rule 2 above)."""
    verdicts = ctx.verdicts
    notes: list[str] = []
    # one pass over the verdicts: the scorer's, blocks, ceilings, floors, risk, gaps
    scored: Verdict | None = None
    blocked = floored = False
    ceilings: list[Verdict] | None = None
    risk: Risk | None = None
    gaps: list[str] | None = None
    for v in verdicts:
        if v.score is not None and scored is None and v.layer == fusion:
            scored = v
        if v.decision is not None and v.decision == BLOCK:  # (``None == BLOCK`` is the slow way to False)
            blocked = True
        if v.ceiling is not None:
            if ceilings is None:
                ceilings = [v]
            else:
                ceilings.append(v)
        if v.floor is not None and v.floor == AUTO_ALLOW:
            floored = True
        if v.risk is not None and (risk is None or v.risk > risk):
            risk = v.risk
        if v.unavailable:
            if gaps is None:
                gaps = [*v.unavailable]
            else:
                gaps += v.unavailable
    if blocked:
        decision = BLOCK
    elif scored is not None and scored.decision is not None:
        decision = scored.decision
    else:
        decision = REQUEST_CONFIRM
        notes.append("no layer scored the call; asking")
    if ceilings is None:
        if decision == REQUEST_CONFIRM and floored:
            decision = _floor(scored, ctx, notes)
    else:
        for v in ceilings:
            ceiling = v.ceiling or AUTO_ALLOW
            if _DECISION_RANK[ceiling] > _DECISION_RANK[decision]:  # (``stricter``, inline)
                notes.append(f"{v.layer}: capped at {v.ceiling}")
                decision = ceiling
    if decision == REQUEST_CONFIRM and not ctx.human_present:
        decision = BLOCK
        notes.append("no human present: request_confirm acts as block")
    if scored is None:
        notes.append("components not computed: no scoring layer ran")
    data = None if scored is None else scored.data
    if type(data) is FusionData:
        # the built-in scorer's: the values and weights it holds, not the dicts it makes for a reader
        memory, cmd_success, user_pref, system = data.component_values
        weights = data.layer_weights.copy()
    else:
        if data is None:
            components: Mapping[str, Any] = {}
            weights = dict(ctx.config.weights)
        else:
            components, weights = data.get("components", {}), dict(data.get("weights", {}))
        get = components.get
        memory, cmd_success, user_pref, system = (
            get("memory", 0.0),
            get("cmd_success", 0.0),
            get("user_pref", 0.0),
            get("system", 0.0),
        )
    # every field has its final type (the verdicts' scores and decisions were checked when made)
    return DecisionRecord.built(
        call,
        decision,
        scored.score if scored is not None and scored.score is not None else 0.0,
        Risk.MEDIUM if risk is None else risk,
        {  # COMPONENT_KEYS
            "memory": float(memory),
            "cmd_success": float(cmd_success),
            "user_pref": float(user_pref),
            "system": float(system),
        },
        weights,
        tuple(verdicts),
        tuple(dict.fromkeys(gaps)) if gaps else (),
        tuple(notes),
        ctx.now,
        elapsed_us,
    )
