"""Typed ``Verdict.data`` for the built-in layers: what the chain reads is an attribute, what only
the record shows is built when first read.

A decision reads two things from the behavior and fusion verdicts: the session's ``health``
and the fused ``components`` and ``weights``. The rest (each dimension's value, confidence,
note and evidence levels; the signals' penalties, the trust tier) is for ``to_dict``,
``guard explain`` and tests, about twenty roundings and a dozen small dicts per call. These
records are read-only ``Mapping``s with the same keys, in the same order, as the dicts they
replace (``data["dimensions"]["memory"]["value"]``, ``dict(data)``, ``data == {...}`` all work),
and ``to_dict()`` is that dict. A custom layer's ``data`` stays any mapping.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from guard.model import COMPONENT_KEYS
from guard.namedtuple import NamedTuple

if TYPE_CHECKING:
    from guard.behavior.signals import Assessment


class Component(NamedTuple):
    """One dimension: its value 0-100, how much evidence stands behind it (0-1), a note.

    A named tuple, not an attrs record: four are made per decision, and a tuple is made in a
    third of the time (immutable all the same).
    """

    value: float
    confidence: float = 1.0
    note: str = ""
    available: bool = True
    matched: int | None = None
    # guard mode: the value after shrinkage, when the evaluator computed it (hierarchical
    # evidence); None lets the layer shrink ``value`` towards the prior by ``confidence``.
    effective: float | None = None
    # the evidence behind it, as the record shows it: any mapping, or the built-in evaluators'
    # ``Levels`` (turned into the same dict only when the record's data is read)
    levels: Mapping[str, Any] | Levels | None = None


class _Lazy(Mapping[str, Any]):
    """A read-only mapping whose dict is built on first read (``_build``); subclasses may answer
    the keys the hot path reads from attributes first."""

    __slots__ = ("_dict",)
    _dict: dict[str, Any]

    def _build(self) -> dict[str, Any]:
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        """The data as a plain dict (a fresh copy of its top level)."""
        return dict(self._built())

    def _built(self) -> dict[str, Any]:
        try:
            return self._dict
        except AttributeError:
            # two threads may both build it: equal dicts, either one stands
            out = self._dict = self._build()
            return out

    def __getitem__(self, key: str) -> Any:
        return self._built()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._built())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._built()!r})"


class Level(NamedTuple):
    """One level's evidence: decayed weight ``n``, raw value 0-100, raw counts for the note."""

    n: float
    raw: float
    hits: int  # successes or approvals
    total: int


class Levels(NamedTuple):
    """A hierarchy's evidence (operation → family → prior), as ``Component.levels`` holds it for
    the built-in evaluators, flat (a level's ``n`` is None when it has no evidence; the fused
    score makes two a call); ``to_dict()`` is what the record shows."""

    op_n: float | None
    op_raw: float | None
    op_hits: int | None  # successes or approvals
    op_total: int | None
    op_shrunk: float
    family_n: float | None
    family_raw: float | None
    family_hits: int | None
    family_total: int | None
    family_shrunk: float
    label: str
    prior: float
    inherited: float

    @classmethod
    def of(
        cls,
        op: Level | None,
        op_shrunk: float,
        family: Level | None,
        family_shrunk: float,
        label: str,
        prior: float,
        inherited: float,
    ) -> Levels:
        """The levels from two ``Level`` records (or None)."""
        o = op or _NO_LEVEL
        f = family or _NO_LEVEL
        return cls(
            o.n, o.raw, o.hits, o.total, op_shrunk, f.n, f.raw, f.hits, f.total, family_shrunk, label, prior, inherited
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "operation": _level_dict(self.op_n, self.op_raw, self.op_total, self.op_shrunk),
            "family": _level_dict(self.family_n, self.family_raw, self.family_total, self.family_shrunk, self.label),
            "prior": self.prior,
            "inherited": round(self.inherited, 2),
        }


class _NoLevel(NamedTuple):
    n: None = None
    raw: None = None
    hits: None = None
    total: None = None


_NO_LEVEL = _NoLevel()


def _level_dict(
    n: float | None, raw: float | None, total: int | None, shrunk: float, name: str | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {} if name is None else {"name": name}
    if n is None:
        out["n"] = 0
        out["shrunk"] = round(shrunk, 2)
    else:
        out["n"] = round(n, 3)
        out["raw"] = round(raw, 2)  # type: ignore[arg-type]
        out["shrunk"] = round(shrunk, 2)
        out["of"] = total
    return out


def dimension(c: Component) -> dict[str, Any]:
    """A dimension as the record shows it: value, confidence, note, and what it matched."""
    out: dict[str, Any] = {"value": round(c.value, 2), "confidence": round(c.confidence, 3), "note": c.note}
    if c.matched is not None:
        out["matched"] = c.matched
    levels = c.levels
    if levels is not None:
        out["levels"] = levels.to_dict() if isinstance(levels, Levels) else dict(levels)
    return out


class FusionData(_Lazy):
    """The fusion verdict's data: ``components`` (the weighted values, rounded), ``weights``,
    ``health``, ``mode``, ``prior``, and ``dimensions`` (built from the components when read).

    Made from what the fused score already holds, immutable or read-only, so it is copied for
    no one: ``component_values`` (the components in ``COMPONENT_KEYS`` order), ``layer_weights``
    (a read-only view of the weights) and ``parts`` (the four dimensions, same order). The dicts
    a reader could change, ``components`` and ``weights``, are this record's own, made on first
    read: the chain reads ``component_values`` and ``layer_weights`` (and makes the decision
    record's own dicts from them), so most decisions never make them, and a remembered fused
    score is not copied for every call that uses it.
    """

    __slots__ = ("_components", "_weights", "component_values", "health", "layer_weights", "mode", "parts", "prior")
    _components: dict[str, float]
    _weights: dict[str, float]

    def __init__(
        self,
        component_values: tuple[float, float, float, float],
        layer_weights: MappingProxyType[str, float],
        health: float,
        mode: str,
        prior: float,
        parts: tuple[Component, Component, Component, Component],
    ) -> None:
        self.component_values, self.layer_weights, self.health = component_values, layer_weights, health
        self.mode, self.prior, self.parts = mode, prior, parts

    @property
    def components(self) -> dict[str, float]:
        """The weighted values by dimension (this record's own dict, made on first read)."""
        try:
            return self._components
        except AttributeError:
            # (two threads may both make it: equal dicts, either one stands)
            out = self._components = dict(zip(COMPONENT_KEYS, self.component_values, strict=True))
            return out

    @property
    def weights(self) -> dict[str, float]:
        """The weights the score was fused with (this record's own copy, made on first read)."""
        try:
            return self._weights
        except AttributeError:
            out = self._weights = self.layer_weights.copy()
            return out

    def __getitem__(self, key: str) -> Any:
        if key == "components":
            return self.components
        if key == "weights":
            return self.weights
        if key == "health":
            return self.health
        return self._built()[key]

    def get(self, key: str, default: Any = None) -> Any:
        """``Mapping.get`` without its two Python calls (a custom reader may ask every decision)."""
        if key == "components":
            return self.components
        if key == "weights":
            return self.weights
        if key == "health":
            return self.health
        return self._built().get(key, default)

    def _build(self) -> dict[str, Any]:
        return {
            "components": self.components,
            "weights": self.weights,
            "health": self.health,
            "mode": self.mode,
            "prior": self.prior,
            "dimensions": {k: dimension(c) for k, c in zip(COMPONENT_KEYS, self.parts, strict=True)},
        }


class BehaviorData(_Lazy):
    """The behavior verdict's data: ``health``, ``signals`` (rule ids), ``breaker`` (this task's,
    or None), ``tier`` (agent, tier name, points; None without tiers), and when they apply
    ``penalties`` (by rule id) and ``taint`` (untrusted content / a secret read)."""

    __slots__ = ("agent", "health", "points", "result", "taint")

    def __init__(self, result: Assessment, agent: str | None, points: float, taint: tuple[bool, bool] | None) -> None:
        # the scorecard changes with later results: its agent and points are taken now
        self.result, self.health, self.agent, self.points, self.taint = result, result.health, agent, points, taint

    def __getitem__(self, key: str) -> Any:
        if key == "health":
            return self.health
        return self._built()[key]

    def _build(self) -> dict[str, Any]:
        from guard.behavior.tiers import tier_for

        result = self.result
        signals = result.signals
        out: dict[str, Any] = {
            "health": self.health,
            "signals": [x.id for x in signals],
            "breaker": result.breaker,
            "tier": None
            if self.agent is None
            else {"agent": self.agent, "name": tier_for(self.points).name, "points": self.points},
        }
        if signals:
            out["penalties"] = {x.id: round(x.penalty, 1) for x in signals if x.penalty}
        if self.taint is not None:
            out["taint"] = {"untrusted": self.taint[0], "secret": self.taint[1]}
        return out


class StaticData(_Lazy):
    """The static verdict's data: ``commands`` (up to 8, each cut at 120 characters), ``rules``
    (the rule ids that fired, sorted), and when they apply ``lines_written`` (a shell write the
    layer measured) and ``user_rules`` (the person's rules that matched, ``"action: rule"``).
    Made once per analysis (the layer caches its verdicts); ``lines_written`` is an attribute,
    the session's write facts read it on every write."""

    __slots__ = ("commands", "lines_written", "rules", "user_rules")

    def __init__(
        self,
        commands: tuple[str, ...],
        rules: tuple[str, ...],
        lines_written: int | None = None,
        user_rules: tuple[str, ...] = (),
    ) -> None:
        self.commands, self.rules, self.lines_written, self.user_rules = commands, rules, lines_written, user_rules

    def _build(self) -> dict[str, Any]:
        out: dict[str, Any] = {"commands": list(self.commands), "rules": list(self.rules)}
        if self.lines_written is not None:
            out["lines_written"] = self.lines_written
        if self.user_rules:
            out["user_rules"] = list(self.user_rules)
        return out
