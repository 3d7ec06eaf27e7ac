"""The decision-log line: the seed's shape, redacted params, each layer's reasons.

``decision_line(record)`` is the line as a dict; ``decision_text(record, extra)`` is the same
line as the JSON text ``JsonlLog`` writes, built from pieces: a decision's reasons, layer
headers and weights recur on almost every call, so their JSON is encoded (and redacted)
once and remembered, and only what changes (times, scores, the call) is encoded per call.
The text is exactly ``json.dumps(decision_line(record) | extra)`` in the log's format (a
test holds them equal), at about a third of the cost.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping
from typing import Any

from guard.model import COMPONENT_KEYS, DECISIONS, DecisionRecord, Reason, Risk, ToolCall
from guard.redact import redact, redact_text

# The log's format (``JsonlLog``): compact, UTF-8 as is, anything else as its ``str``.
dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode

_KEYS = frozenset(
    (
        "timestamp",
        "tool",
        "session_id",
        "fusion_score",
        "decision",
        "components",
        "risk",
        "weights",
        "reasons",
        "layers",
        "unavailable",
        "notes",
        "elapsed_us",
        "params",
    )
)


def decision_line(record: DecisionRecord) -> dict[str, Any]:
    """The decision-log line as a dict.

    The same keys, in the same order, as ``record.to_dict()`` plus ``params``, built directly:
    each layer keeps only its risk, decision, reasons, timing and error (its ``data`` and
    ``tags`` stay in the record). Only fields that can carry text from the call are redacted
    (tool, session, params, reasons, notes, errors); the rest are numbers and guard's own labels.
    """
    call = record.call
    layers: list[dict[str, Any]] = []
    for v in record.layers:
        layer: dict[str, Any] = {
            "layer": v.layer,
            "risk": v.risk.label if v.risk is not None else None,
            "decision": v.decision,
            "reasons": [dict(_reason_line(r)) for r in v.reasons],
            "elapsed_us": round(v.elapsed_us, 1),
        }
        if v.error:
            layer["error"] = redact(v.error)
        layers.append(layer)
    components = record.components
    return {
        "timestamp": record.timestamp.isoformat(timespec="seconds"),
        "tool": redact(call.tool),
        "session_id": redact(call.session_id),
        "fusion_score": round(record.final_score, 2),
        "decision": record.decision,
        "components": {k: round(float(components.get(k, 0.0)), 2) for k in COMPONENT_KEYS},
        "risk": record.risk.label,
        "weights": {k: round(float(w), 4) for k, w in record.weights.items()},
        "reasons": [dict(_reason_line(r)) for r in record.reasons],  # the deciding layers' first
        "layers": layers,
        "unavailable": redact(list(record.unavailable)),
        "notes": redact(list(record.notes)),
        "elapsed_us": round(record.elapsed_us, 1),
        "params": logged_params(call),
    }


def decision_text(record: DecisionRecord, extra: Mapping[str, Any] | None = None) -> str:
    """``dumps(decision_line(record) | extra)``, built from remembered pieces."""
    if extra and (not _KEYS.isdisjoint(extra) or not all(type(k) is str for k in extra)):
        # an extra field replaces one of the line's, or its name is no string: the plain way
        return dumps(decision_line(record) | dict(extra))
    call = record.call
    frame = _frame(record)
    parts = [
        '{"timestamp":"',
        record.timestamp.isoformat(timespec="seconds"),  # digits, '-', ':', '+', 'T': nothing to escape
        '","tool":',
        _text(call.tool),
        ',"session_id":',
        "null" if call.session_id is None else _text(call.session_id),
        ',"fusion_score":',
        _number(round(record.final_score, 2)),
        ',"decision":',
        _DECISIONS.get(record.decision) or dumps(record.decision),
        ',"components":',
        _components(record.components),
    ]
    # the frame's pieces around each layer's time: risk, weights, reasons, layer heads
    for piece, v in zip(frame, record.layers, strict=False):
        parts += (piece, _number(round(v.elapsed_us, 1)))
    parts += (
        frame[-1],
        _strings(record.unavailable),
        ',"notes":',
        _strings(record.notes),
        ',"elapsed_us":',
        _number(round(record.elapsed_us, 1)),
        ',"params":',
        dumps(logged_params(call)),
    )
    for key, value in (extra or {}).items():
        parts += (",", dumps(key), ":", dumps(value))
    parts.append("}")
    return "".join(parts)


# A decision's frame: everything between its components and its missing parts except the
# layers' times (risk, weights, the reasons, each layer's head and reasons), as the pieces
# that go before each layer's time and one after the last. It recurs call after call (the
# same rules fire, the same layers decide), so it is written once per distinct frame.
_FRAMES: dict[tuple[Any, ...], tuple[str, ...]] = {}


def _frame(record: DecisionRecord) -> tuple[str, ...]:
    weights = tuple(record.weights.items())
    layers = record.layers
    if any([v.error for v in layers]):  # an error's text is the call's: not kept
        return _frame_of(record, weights)
    key = (
        record.decision,
        record.risk,
        weights,
        record.reasons,
        tuple([(v.layer, v.risk, v.decision, v.reasons) for v in layers]),
    )
    frame = _FRAMES.get(key)
    if frame is None:
        if len(_FRAMES) >= 1024:
            _FRAMES.clear()
        frame = _FRAMES[key] = _frame_of(record, weights)
    return frame


def _frame_of(record: DecisionRecord, weights: tuple[tuple[str, Any], ...]) -> tuple[str, ...]:
    out: list[str] = []
    piece = [
        ',"risk":"',
        record.risk.label,
        '","weights":',
        _weights(weights)
        if min([w for _, w in weights], default=0.0) > 0.0
        else dumps({k: round(float(w), 4) for k, w in weights}),
        # every layer's reasons, the deciding layers' first (``record.reasons``)
        ',"reasons":[',
        ",".join([_reason_json(r) for r in record.reasons]),
        '],"layers":[',
    ]
    for i, v in enumerate(record.layers):
        if i:
            piece.append(",")
        piece += (_layer_head(v.layer, v.risk, v.decision), "[", _reason_list(v.reasons), '],"elapsed_us":')
        out.append("".join(piece))
        piece = [',"error":', dumps(redact(v.error)), "}"] if v.error else ["}"]
    piece.append('],"unavailable":')
    out.append("".join(piece))
    return tuple(out)


_DECISIONS = {d: dumps(d) for d in DECISIONS}


def logged_params(call: ToolCall) -> dict[str, Any]:
    """The call's parameters as every file guard writes holds them: redacted, once per call."""
    return call.redacted_params


def clear() -> None:
    """Forget the remembered pieces (the redaction key changed: placeholders read differently)."""
    for cached in (_reason_line, _reason_json, _short_text, _layer_head, _weights, _component_values, _short_strings):
        cached.cache_clear()
    _FRAMES.clear()


def _number(x: float) -> str:
    return float.__repr__(x) if math.isfinite(x) else dumps(x)


def _components(components: Mapping[str, float]) -> str:
    get = components.get
    raw = tuple([get(k, 0.0) for k in COMPONENT_KEYS])
    if all([type(x) is float and x > 0.0 for x in raw]):
        # the fusion layer's components are rounded already and recur (priors, the same
        # history): remembered by value (0.0 and -0.0 are one key but read differently: not kept)
        return _component_values(raw)
    return _component_json(raw)


@functools.lru_cache(maxsize=1024)
def _component_values(raw: tuple[float, ...]) -> str:
    return _component_json(raw)


def _component_json(raw: tuple[Any, ...]) -> str:
    return dumps({k: round(float(x), 2) for k, x in zip(COMPONENT_KEYS, raw, strict=True)})


def _reason_list(reasons: tuple[Reason, ...]) -> str:
    """The reasons as the items of a JSON list (no brackets)."""
    if not reasons:
        return ""
    if len(reasons) == 1:
        return _reason_json(reasons[0])
    return ",".join([_reason_json(r) for r in reasons])


def _strings(texts: tuple[str, ...]) -> str:
    """Notes or missing parts, redacted, as a JSON list; remembered when short (they recur)."""
    if not texts:
        return "[]"
    if sum(map(len, texts)) <= 400:
        return _short_strings(texts)
    return dumps(redact(list(texts)))


@functools.lru_cache(maxsize=1024)
def _short_strings(texts: tuple[str, ...]) -> str:
    return dumps(redact(list(texts)))


@functools.lru_cache(maxsize=4096)
def _reason_line(reason: Reason) -> dict[str, Any]:
    """A reason as the log writes it, redacted; the same reasons recur on every decision."""
    out: dict[str, Any] = {"id": reason.rule_id, "message": redact_text(reason.message)}
    if reason.alternative:
        out["alternative"] = redact_text(reason.alternative)
    return out


@functools.lru_cache(maxsize=4096)
def _reason_json(reason: Reason) -> str:
    return dumps(_reason_line(reason))


def _text(value: str) -> str:
    """A tool or session name, redacted, as JSON (remembered when short, as redaction is)."""
    return _short_text(value) if len(value) <= 200 else dumps(redact(value))


@functools.lru_cache(maxsize=4096)
def _short_text(value: str) -> str:
    return dumps(redact(value))


@functools.lru_cache(maxsize=256)
def _layer_head(layer: str, risk: Risk | None, decision: str | None) -> str:
    head = dumps({"layer": layer, "risk": risk.label if risk is not None else None, "decision": decision})
    return head[:-1] + ',"reasons":'


@functools.lru_cache(maxsize=64)
def _weights(weights: tuple[tuple[str, float], ...]) -> str:
    return dumps({k: round(float(w), 4) for k, w in weights})
