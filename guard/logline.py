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
from datetime import datetime
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
    layers = record.layers
    numbers: list[Any] = [
        round(record.final_score, 2),
        *[round(v.elapsed_us, 1) for v in layers],
        round(record.elapsed_us, 1),
    ]
    if not all([type(x) is float for x in numbers]) or not math.isfinite(sum(numbers)):
        numbers = [_number(x) for x in numbers]  # (a float's ``%s`` is its repr, as JSON writes it)
    text: str = _frame(record) % (
        _iso(record.timestamp),
        _text(call.tool),
        "null" if call.session_id is None else _text(call.session_id),
        numbers[0],
        _DECISIONS.get(record.decision) or dumps(record.decision),
        _components(record.components),
        *numbers[1:-1],
        _strings(record.unavailable),
        _strings(record.notes),
        numbers[-1],
        _params(logged_params(call)),
    )
    if extra:
        text = text[:-1] + "".join([f",{dumps(key)}:{dumps(value)}" for key, value in extra.items()]) + "}"
    return text


_LAST_SECOND: tuple[tuple[Any, ...], str] = ((), "")


def _iso(ts: datetime) -> str:
    """``ts.isoformat(timespec="seconds")``, remembered for the second it names (decisions come
    many a second; the text depends only on the fields below)."""
    global _LAST_SECOND
    key = (ts.second, ts.minute, ts.hour, ts.day, ts.month, ts.year, ts.utcoffset())
    last, text = _LAST_SECOND
    if key != last:
        text = ts.isoformat(timespec="seconds")  # digits, '-', ':', '+', 'T': nothing to escape
        _LAST_SECOND = (key, text)
    return text


# A decision's frame: the line as a %-format, everything but the call, the times, the scores,
# the components, the notes and the missing parts written out (risk, weights, the reasons, each
# layer's head and reasons). It recurs call after call (the same rules fire, the same layers
# decide), so it is written once per distinct frame.
_FRAMES: dict[tuple[Any, ...], str] = {}


def _frame(record: DecisionRecord) -> str:
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


def _frame_of(record: DecisionRecord, weights: tuple[tuple[str, Any], ...]) -> str:
    literal = [
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
    pieces: list[str] = []  # the text between the layers' times
    for i, v in enumerate(record.layers):
        if i:
            literal.append(",")
        literal += (_layer_head(v.layer, v.risk, v.decision), "[", _reason_list(v.reasons), '],"elapsed_us":')
        pieces.append("".join(literal))
        literal = [',"error":', dumps(redact(v.error)), "}"] if v.error else ["}"]
    literal.append('],"unavailable":')
    pieces.append("".join(literal))
    return (
        '{"timestamp":"%s","tool":%s,"session_id":%s,"fusion_score":%s,"decision":%s,"components":%s'
        + "%s".join([p.replace("%", "%%") for p in pieces])
        + '%s,"notes":%s,"elapsed_us":%s,"params":%s}'
    )


_DECISIONS = {d: dumps(d) for d in DECISIONS}


def logged_params(call: ToolCall) -> dict[str, Any]:
    """The call's parameters as every file guard writes holds them: redacted, once per call."""
    return call.redacted_params


def clear() -> None:
    """Forget the remembered pieces (the redaction key changed: placeholders read differently)."""
    for cached in (_reason_line, _reason_json, _short_text, _layer_head, _weights, _component_values, _short_strings):
        cached.cache_clear()
    _FRAMES.clear()


_string = json.encoder.encode_basestring  # what ``dumps`` writes a str with (ensure_ascii off)


def _params(params: Mapping[str, Any]) -> str:
    """``dumps(params)``; the usual call (``{"command": "..."}``: text only) written directly."""
    if all([type(k) is str and type(v) is str for k, v in params.items()]):
        return "{" + ",".join([_string(k) + ":" + _string(v) for k, v in params.items()]) + "}"
    return dumps(params)


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
