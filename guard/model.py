"""The records that flow through the chain: a call, a layer's verdict, the decision.

Every record is a frozen attrs class: layers never mutate what they are handed, they
return a new ``Verdict``; the chain folds verdicts into one ``DecisionRecord``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

import attrs

from guard.redact import redact, redact_text
from guard.signature import signature
from guard.toolnames import canonical_tool, declared_kind


class Decision(enum.StrEnum):
    """What guard answers for a call, in caution order (``block`` is the most cautious).

    A ``str``: ``Decision.BLOCK == "block"``, and logs, JSON and the seed API carry the plain
    string. Layers may hand plain strings; records hold the member.
    """

    AUTO_ALLOW = "auto_allow"
    REQUEST_CONFIRM = "request_confirm"
    BLOCK = "block"


AUTO_ALLOW = Decision.AUTO_ALLOW
REQUEST_CONFIRM = Decision.REQUEST_CONFIRM
BLOCK = Decision.BLOCK
DECISIONS: tuple[str, ...] = tuple(Decision)  # str-typed for callers that index with a log's strings

# Caution order: a larger index is more cautious (the keys also find plain strings).
_DECISION_RANK = {AUTO_ALLOW: 0, REQUEST_CONFIRM: 1, BLOCK: 2}
_DECISION_OF: dict[str, Decision] = {d.value: d for d in Decision}
_DECISION_VALUES = tuple(_DECISION_OF)  # for messages: ('auto_allow', 'request_confirm', 'block')


def stricter(a: Decision, b: Decision) -> Decision:
    """The more cautious of two decisions (``block`` > ``request_confirm`` > ``auto_allow``)."""
    return a if _DECISION_RANK[a] >= _DECISION_RANK[b] else b


def decision_at_most(decision: Decision, ceiling: Decision) -> Decision:
    """Lower ``decision`` to ``ceiling`` if it is *less* cautious than ``ceiling`` allows.

    ``decision_at_most(AUTO_ALLOW, REQUEST_CONFIRM)`` is ``REQUEST_CONFIRM``: a call capped at
    "confirm" can never be auto-allowed.
    """
    return stricter(decision, ceiling)


class Risk(enum.IntEnum):
    """Static risk levels, ordered: ``Risk.HIGH > Risk.LOW``."""

    SAFE = 0
    LOW = 1
    MEDIUM = 2
    HIGH = 3
    CRITICAL = 4

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, value: str | int | Risk) -> Risk:
        if isinstance(value, Risk):
            return value
        if isinstance(value, int):
            return cls(value)
        try:
            return cls[str(value).strip().upper()]
        except KeyError:
            raise ValueError(
                f"unknown risk level {value!r}; expected one of {', '.join(r.label for r in cls)}"
            ) from None


def _score_range(instance: object, attribute: attrs.Attribute[Any], value: float | None) -> None:
    if value is not None and not 0.0 <= value <= 100.0:
        raise ValueError(f"{attribute.name} must be within 0..100, got {value!r}")


def _as_decision(value: str | None) -> Any:
    """A decision string as its ``Decision`` member; anything else as is, for the validator to refuse."""
    if value is None:
        return None
    try:
        return _DECISION_OF.get(value, value)
    except TypeError:  # unhashable
        return value


def _decision_valid(instance: object, attribute: attrs.Attribute[Any], value: Decision | None) -> None:
    if value is not None and not isinstance(value, Decision):
        raise ValueError(f"{attribute.name} must be one of {_DECISION_VALUES}, got {value!r}")


def _reasons(value: Iterable[Reason]) -> tuple[Reason, ...]:
    return tuple(value)


def _strs(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


def _tags(value: Iterable[str]) -> frozenset[str]:
    return frozenset(value)


def _verdicts(value: Iterable[Verdict]) -> tuple[Verdict, ...]:
    return tuple(value)


def _freeze_params(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return dict(value or {})


@attrs.frozen
class ToolCall:
    """One tool call the agent wants to make.

    ``tool`` is the name as the host sent it; ``kind`` is the canonical family
    (``bash``, ``write``, ``edit``, ``read``, ``glob``, ``grep``, ``web_fetch`` or the
    lower-cased name for anything else), used by layers to pick their rules; ``declared`` is the kind
    the application said one of its own tools is (``@guarded(kind="read")``), which ``kind`` then is.
    """

    tool: str
    params: Mapping[str, Any] = attrs.field(factory=dict, converter=_freeze_params)
    session_id: str | None = None
    cwd: str | None = None
    agent_id: str | None = None
    timestamp: datetime | None = None
    declared: str | None = attrs.field(default=None, converter=declared_kind)  # ``@guarded(kind="read")``
    # the redacted forms, made on first read (plain slots: a cached_property on a slotted class
    # goes through ``__getattr__``, about a microsecond per first read)
    _redacted_params: dict[str, Any] | None = attrs.field(default=None, init=False, eq=False, repr=False)
    _redacted_signature: str | None = attrs.field(default=None, init=False, eq=False, repr=False)

    @classmethod
    def built(
        cls,
        tool: str,
        params: Mapping[str, Any],
        session_id: str | None,
        cwd: str | None,
        agent_id: str | None,
        timestamp: datetime | None,
        declared: str | None,
    ) -> ToolCall:
        """``ToolCall(...)`` for ``Guard.make_call``, which checked the fields, without attrs'
        ``__init__`` (params copied as the converter does, ``declared`` checked by it when set)."""
        new: ToolCall = object.__new__(cls)
        (
            set_tool,
            set_params,
            set_session_id,
            set_cwd,
            set_agent_id,
            set_timestamp,
            set_declared,
            set_redacted_params,
            set_redacted_signature,
        ) = _CALL_SLOTS  # (one unpacking, not a look-up per field)
        set_tool(new, tool)
        set_params(new, dict(params))
        set_session_id(new, session_id)
        set_cwd(new, cwd)
        set_agent_id(new, agent_id)
        set_timestamp(new, timestamp)
        set_declared(new, None if declared is None else declared_kind(declared))
        set_redacted_params(new, None)
        set_redacted_signature(new, None)
        return new

    @property
    def kind(self) -> str:
        return self.declared or canonical_tool(self.tool)

    @property
    def redacted_params(self) -> dict[str, Any]:
        """``params`` as guard writes them anywhere (decision log, history, pending questions):
        redacted once for the call, however many files it reaches. Treat it as read-only."""
        out = self._redacted_params
        if out is None:
            out = redact(self.params)
            object.__setattr__(self, "_redacted_params", out)
        return out

    @property
    def redacted_signature(self) -> str:
        """The call's signature (``bash:git status``) with secrets masked: the key history,
        memory and the session journal store it under; redacted once for the call."""
        out = self._redacted_signature
        if out is None:
            out = redact_text(signature(self.tool, self.params))
            object.__setattr__(self, "_redacted_signature", out)
        return out


# ``ToolCall``'s slot setters in field order (``ToolCall.built``; a test holds it equal to the constructor)
_CALL_SLOTS: tuple[Callable[[ToolCall, Any], None], ...] = tuple(
    getattr(ToolCall, a.name).__set__ for a in attrs.fields(ToolCall)
)


@attrs.frozen(cache_hash=True)  # reasons key the log line's caches: hashed once each
class Reason:
    """Why a layer judged as it did: a stable rule id and a sentence for a person."""

    rule_id: str
    message: str
    alternative: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.rule_id, "message": self.message}
        if self.alternative:
            out["alternative"] = self.alternative
        return out


@attrs.frozen
class Verdict:
    """What one layer found.

    - ``risk``: this layer's risk estimate (``None`` when it has no opinion on risk).
    - ``score``: a 0-100 trust score, when the layer computes one (fusion does).
    - ``decision``: a decision this layer *imposes*; ``block`` stops the chain.
    - ``ceiling``: the least cautious decision this layer permits (e.g. ``request_confirm``
      for a high-risk call): later layers may be stricter, never looser.
    - ``floor``: the most cautious decision this layer thinks is warranted *if nothing
      else objects* (the static layer's "safe read-only" allowance); ceilings still win.
    - ``tags``: facts other layers use (``read_only``, ``egress``, ``secret_read``,
      ``untrusted_input``, ``write``, ...).
    - ``data``: layer-specific details for the record (components, health, parse, ...).
    - ``error``: set when the layer failed; the chain degrades towards caution.
    """

    layer: str
    risk: Risk | None = None
    score: float | None = attrs.field(default=None, validator=_score_range)
    decision: Decision | None = attrs.field(default=None, converter=_as_decision, validator=_decision_valid)
    ceiling: Decision | None = attrs.field(default=None, converter=_as_decision, validator=_decision_valid)
    floor: Decision | None = attrs.field(default=None, converter=_as_decision, validator=_decision_valid)
    reasons: tuple[Reason, ...] = attrs.field(default=(), converter=_reasons)
    tags: frozenset[str] = attrs.field(default=frozenset(), converter=_tags)
    data: Mapping[str, Any] = attrs.field(factory=dict)
    elapsed_us: float = 0.0
    error: str | None = None
    unavailable: tuple[str, ...] = attrs.field(default=(), converter=_strs)

    @classmethod
    def built(
        cls,
        layer: str,
        *,
        risk: Risk | None = None,
        score: float | None = None,
        decision: Decision | None = None,
        ceiling: Decision | None = None,
        reasons: tuple[Reason, ...] = (),
        data: Mapping[str, Any],
        unavailable: tuple[str, ...] = (),
    ) -> Verdict:
        """A built-in layer's verdict, made without the converters and validators.

        For code whose fields already have their final types (``Decision`` members or None, a
        tuple of reasons, a score within 0..100, a tuple of missing parts): the behavior and
        fusion layers make one per call, and the checks cost as much as the rest of the record.
        Custom layers use the constructor, which converts plain strings and lists and refuses
        what does not fit.
        """
        new: Verdict = object.__new__(cls)
        (
            set_layer,
            set_risk,
            set_score,
            set_decision,
            set_ceiling,
            set_floor,
            set_reasons,
            set_tags,
            set_data,
            set_elapsed_us,
            set_error,
            set_unavailable,
        ) = _VERDICT_SLOTS  # (one unpacking, not a look-up per field)
        set_layer(new, layer)
        set_risk(new, risk)
        set_score(new, score)
        set_decision(new, decision)
        set_ceiling(new, ceiling)
        set_floor(new, None)
        set_reasons(new, reasons)
        set_tags(new, _NO_TAGS)
        set_data(new, data)
        set_elapsed_us(new, 0.0)
        set_error(new, None)
        set_unavailable(new, unavailable)
        return new

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "layer": self.layer,
            "risk": self.risk.label if self.risk is not None else None,
            "score": None if self.score is None else round(self.score, 2),
            "decision": self.decision,
            "ceiling": self.ceiling,
            "reasons": [r.to_dict() for r in self.reasons],
            "elapsed_us": round(self.elapsed_us, 1),
        }
        if self.floor:
            out["floor"] = self.floor
        if self.tags:
            out["tags"] = sorted(self.tags)
        if self.data:
            out["data"] = dict(self.data)
        if self.error:
            out["error"] = self.error
        if self.unavailable:
            out["unavailable"] = list(self.unavailable)
        return out


_NO_TAGS: frozenset[str] = frozenset()
# The slots' own setters in field order: ``Verdict.built`` fills a record without ``__init__``
# (every field: a test holds ``built`` equal to the constructor).
_VERDICT_SLOTS: tuple[Callable[[Verdict, Any], None], ...] = tuple(
    getattr(Verdict, a.name).__set__ for a in attrs.fields(Verdict)
)

# (``chain.combine`` and ``logline.decision_text`` spell them out in this order: change all three)
COMPONENT_KEYS = ("memory", "cmd_success", "user_pref", "system")


def lead_positions(decision: Decision, layers: tuple[Verdict, ...]) -> tuple[int, ...] | None:
    """``DecisionRecord.in_order`` as positions in ``layers`` (None: their own order).

    A block is decided by the layers that block; an ask by the layers that capped the call at
    ``request_confirm`` or, when none did, by the layer whose score asked. It reads only the
    decision and each layer's decision and ceiling, so records alike in those share it.
    """
    if decision == AUTO_ALLOW or len(layers) < 2:
        return None
    lead = [i for i, v in enumerate(layers) if v.decision == decision or v.ceiling == decision]
    if not lead and decision == BLOCK:
        lead = [i for i, v in enumerate(layers) if v.ceiling == REQUEST_CONFIRM or v.decision == REQUEST_CONFIRM]
    if not lead or lead == [0]:
        return None
    return (*lead, *[i for i in range(len(layers)) if i not in lead])


@attrs.frozen
class DecisionRecord:
    """The chain's answer for one call, with every layer's reasoning."""

    call: ToolCall
    decision: Decision = attrs.field(converter=_as_decision, validator=_decision_valid)
    final_score: float = attrs.field(validator=_score_range)
    risk: Risk
    components: Mapping[str, float] = attrs.field(factory=dict)
    weights: Mapping[str, float] = attrs.field(factory=dict)
    layers: tuple[Verdict, ...] = attrs.field(default=(), converter=_verdicts)
    unavailable: tuple[str, ...] = attrs.field(default=(), converter=_strs)
    notes: tuple[str, ...] = attrs.field(default=(), converter=_strs)
    timestamp: datetime = attrs.field(factory=lambda: datetime.now().astimezone())
    elapsed_us: float = 0.0
    # ``reasons``, worked out on first read (a plain slot: a cached_property on a slotted class
    # goes through ``__getattr__``, which costs as much as the work)
    _reasons: tuple[Reason, ...] | None = attrs.field(default=None, init=False, eq=False, repr=False)
    _order: tuple[Verdict, ...] | None = attrs.field(default=None, init=False, eq=False, repr=False)

    @classmethod
    def built(
        cls,
        call: ToolCall,
        decision: Decision,
        final_score: float,
        risk: Risk,
        components: Mapping[str, float],
        weights: Mapping[str, float],
        layers: tuple[Verdict, ...],
        unavailable: tuple[str, ...],
        notes: tuple[str, ...],
        timestamp: datetime,
        elapsed_us: float,
    ) -> DecisionRecord:
        """The chain's record, made without the converters and validators (``combine`` hands a
        ``Decision`` member, a score a verdict already had validated, and tuples)."""
        new: DecisionRecord = object.__new__(cls)
        (
            set_call,
            set_decision,
            set_final_score,
            set_risk,
            set_components,
            set_weights,
            set_layers,
            set_unavailable,
            set_notes,
            set_timestamp,
            set_elapsed_us,
            set_reasons,
            set_order,
        ) = _RECORD_SLOTS  # (one unpacking, not a look-up per field)
        set_call(new, call)
        set_decision(new, decision)
        set_final_score(new, final_score)
        set_risk(new, risk)
        set_components(new, components)
        set_weights(new, weights)
        set_layers(new, layers)
        set_unavailable(new, unavailable)
        set_notes(new, notes)
        set_timestamp(new, timestamp)
        set_elapsed_us(new, elapsed_us)
        set_reasons(new, None)
        set_order(new, None)
        return new

    @property
    def tool(self) -> str:
        return self.call.tool

    @property
    def session_id(self) -> str | None:
        return self.call.session_id

    @property
    def reasons(self) -> tuple[Reason, ...]:
        """Every layer's reasons, those of the layers that decided first (see :meth:`in_order`)."""
        out = self._reasons
        if out is None:
            out = ()
            for v in self._order or self.in_order():  # (the log line has usually worked out the order)
                said = v.reasons
                if said:
                    out = (*out, *said) if out else said  # one layer's reasons: that very tuple
            object.__setattr__(self, "_reasons", out)
        return out

    def in_order(self) -> tuple[Verdict, ...]:
        """The layers, the deciding ones first: a loop block leads with the loop, not the parse.

        A block is decided by the layers that block; an ask by the layers that capped the call
        at ``request_confirm`` or, when none did, by the layer whose score asked. Without a
        person present an ask becomes a block: the layers that asked still decided it.
        """
        if self._order is None:  # worked out once: the log line and the session read it
            self.remember_order(lead_positions(self.decision, self.layers))
        return self._order  # type: ignore[return-value]  # (set just above)

    def remember_order(
        self, at: tuple[int, ...] | None, pick: Callable[[tuple[Verdict, ...]], tuple[Verdict, ...]] | None = None
    ) -> None:
        """Take ``lead_positions(self.decision, self.layers)`` worked out elsewhere (the log line
        finds it by the decision and each layer's decision and ceiling, all it reads), and with
        it ``pick``, an ``operator.itemgetter(*at)`` (a tuple of the layers in that order)."""
        if self._order is None:
            layers = self.layers
            if at is None:
                order = layers
            elif pick is not None:
                order = pick(layers)
            else:
                order = tuple([layers[i] for i in at])
            object.__setattr__(self, "_order", order)

    @property
    def blocked(self) -> bool:
        return self.decision == BLOCK

    def layer(self, name: str) -> Verdict | None:
        for v in self.layers:
            if v.layer == name:
                return v
        return None

    def summary(self) -> str:
        """One line for a person: the decision and its first reasons."""
        why = "; ".join(f"[{r.rule_id}] {r.message}" for r in self.reasons[:3])
        return f"{self.decision} (score {self.final_score:.1f}, risk {self.risk.label})" + (f": {why}" if why else "")

    def to_dict(self) -> dict[str, Any]:
        """The seed's decision-log shape plus guard's explanation fields."""
        return {
            "timestamp": self.timestamp.isoformat(timespec="seconds"),
            "tool": self.call.tool,
            "session_id": self.call.session_id,
            "fusion_score": round(self.final_score, 2),
            "decision": self.decision,
            "components": {k: round(float(self.components.get(k, 0.0)), 2) for k in COMPONENT_KEYS},
            "risk": self.risk.label,
            "weights": {k: round(float(v), 4) for k, v in self.weights.items()},
            "reasons": [r.to_dict() for r in self.reasons],
            "layers": [v.to_dict() for v in self.layers],
            "unavailable": list(self.unavailable),
            "notes": list(self.notes),
            "elapsed_us": round(self.elapsed_us, 1),
        }


# The record's slot setters in field order (``DecisionRecord.built`` unpacks them: a test holds it
# equal to the constructor)
_RECORD_SLOTS: tuple[Callable[[DecisionRecord, Any], None], ...] = tuple(
    getattr(DecisionRecord, a.name).__set__ for a in attrs.fields(DecisionRecord)
)
