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
import operator
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from guard.model import COMPONENT_KEYS, DECISIONS, DecisionRecord, Reason, Risk, ToolCall, lead_positions
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
    tail = ""  # the extra fields' JSON (a hook's host, event, ...)
    if extra:
        for name, value in extra.items():  # (a loop: no generator, no list comprehension's frame)
            if type(name) is not str or name in _KEYS:
                # an extra field replaces one of the line's, or its name is no string: the plain way
                return dumps(decision_line(record) | dict(extra))
            tail += "," + _string(name) + ":" + (_string(value) if type(value) is str else dumps(value))
    call = record.call
    tool = call.tool
    session_id = call.session_id
    score = record.final_score
    get = record.components.get
    components = (get("memory", 0.0), get("cmd_success", 0.0), get("user_pref", 0.0), get("system", 0.0))
    args: list[Any] = [
        _iso(record.timestamp),
        # (``_text`` and ``_rounded``, inline: one Python call each the less)
        _short_text(tool) if len(tool) <= 200 else _text(tool),
        "null" if session_id is None else _short_text(session_id) if len(session_id) <= 200 else _text(session_id),
        f"{score:.2f}".removesuffix("0") if type(score) is float and -1e13 < score < 1e13 else _rounded(score),
        _COMPONENTS.get(components) or _components(components),
        "",  # the record's reasons, below
    ]
    weights = tuple(record.weights.items())
    key: list[Any] = [record.decision, record.risk, weights]
    reasons: list[str] = []  # each layer's reasons' JSON
    times = True  # every time a finite float below 1e14 (written with ``%.1f``)
    for v in record.layers:
        by_id = (id(v.layer), id(v.reasons), id(v.risk), v.decision)
        hit = _BY_ID.get(by_id)
        piece = _piece(v, by_id) if hit is None else hit[0]
        reasons.append(piece[1])
        key += (v.decision, v.ceiling)
        elapsed = v.elapsed_us
        if type(elapsed) is not float or not -1e14 < elapsed < 1e14:
            times = False
        args += (piece[0], elapsed, _error(v.error) if v.error else "}")
    frame = _FRAMES.get(tuple(key))
    if frame is None:
        frame = _frame(record, tuple(key), weights)
    fast, plain, where, order, pick = frame
    # every layer's reasons, the deciding layers' first (``record.reasons``)
    args[5] = ",".join(filter(None, reasons if pick is None else pick(reasons)))
    record.remember_order(order, pick)  # (the session reads ``record.reasons`` next)
    elapsed = record.elapsed_us
    unavailable = record.unavailable
    notes = record.notes
    args += (
        (_LISTS.get(unavailable) or _strings(unavailable)) if unavailable else "[]",
        (_LISTS.get(notes) or _strings(notes)) if notes else "[]",
        elapsed,
        _params_of(call),
        tail,
    )
    if times and type(elapsed) is float and -1e14 < elapsed < 1e14:
        return fast % tuple(args)
    for i in where:
        args[i] = dumps(round(args[i], 1))
    return plain % tuple(args)


# A layer's part of the line up to its time (``{"layer":…,"reasons":[…],"elapsed_us":``) and its
# reasons' JSON: one object per distinct (name, reasons, risk, decision), found by value
# (``_BY_VALUE``, which hashes each ``Reason``) and, for the objects a layer hands out again and
# again (the static layer's cache, a rule's constant reasons), by the identity of its name,
# reasons and risk and by its decision (a ``Decision``, which reads as its value) (``_BY_ID``:
# no ``Reason`` hashed). An identity entry keeps the objects its key names alive, so no other
# object can have their ids while it is kept: an equal key is the very same objects.
_Piece = tuple[str, str]
_BY_VALUE: dict[tuple[Any, ...], _Piece] = {}
_BY_ID: dict[tuple[Any, ...], tuple[_Piece, Any, Any, Any, Any]] = {}


def _piece(v: Any, by_id: tuple[Any, ...]) -> _Piece:
    value = (v.layer, v.reasons, v.risk, v.decision)
    piece = _BY_VALUE.get(value)
    if piece is None:
        said = _reason_list(v.reasons)
        piece = (_layer_head(v.layer, v.risk, v.decision) + "[" + said + '],"elapsed_us":', said)
        if len(_BY_VALUE) >= 2048:
            _BY_VALUE.clear()
        _BY_VALUE[value] = piece
    if len(_BY_ID) >= 4096:
        _BY_ID.clear()
    _BY_ID[by_id] = (piece, *value)
    return piece


def _rounded(x: Any) -> str:
    """``dumps(round(x, 2))``. For a float below 1e13 that is ``%.2f`` without its last digit when
    it is a 0 (the shortest text of the rounded double, which is the decimal itself), at a third
    of the cost; anything else (an int, a non-finite or huge float) the plain way."""
    if type(x) is float and -1e13 < x < 1e13:
        said = f"{x:.2f}"
        return said[:-1] if said[-1] == "0" else said
    return dumps(round(x, 2))


# The components' text (``{"memory":…,…}``) by their values, remembered when all are non-zero
# finite floats (0.0 and -0.0 are one key but read differently; a component is written as
# ``float(value)``, the same for every number equal to it). The fused score varies too finely to
# be remembered (history decays with time): ``_rounded`` writes it.
_COMPONENTS: dict[tuple[Any, ...], str] = {}


def _components(components: tuple[Any, ...]) -> str:
    memory, cmd_success, user_pref, system = [_rounded(float(c)) for c in components]  # COMPONENT_KEYS
    said = f'{{"memory":{memory},"cmd_success":{cmd_success},"user_pref":{user_pref},"system":{system}}}'
    if all([type(x) is float and x and math.isfinite(x) for x in components]):
        if len(_COMPONENTS) >= 4096:
            _COMPONENTS.clear()
        _COMPONENTS[components] = said
    return said


# A decision's frame: the line as a %-format with the decision, risk and weights written out,
# and the order of the record's reasons (the layers whose reasons come first: see
# ``DecisionRecord.in_order``), by the decision, risk, weights and each layer's decision and
# ceiling (all ``in_order`` reads). With ``%.1f`` where the times go (the usual line: for a
# finite float below 1e14 it is the text of ``round(t, 1)``, as JSON writes it) and with ``%s``
# (the times as ``dumps`` writes them rounded), the places of the times among the arguments, and
# an ``itemgetter`` of the order's positions (a tuple in that order, made in C).
_Frame = tuple[str, str, tuple[int, ...], tuple[int, ...] | None, Callable[[Sequence[Any]], tuple[Any, ...]] | None]
_FRAMES: dict[tuple[Any, ...], _Frame] = {}


def _frame(record: DecisionRecord, key: tuple[Any, ...], weights: tuple[tuple[str, Any], ...]) -> _Frame:
    layers = record.layers
    decision = (_DECISIONS.get(record.decision) or dumps(record.decision)).replace("%", "%%")
    weighed = dumps({k: round(float(w), 4) for k, w in weights}).replace("%", "%%")  # a custom scorer's names
    fast, plain = [
        "".join(
            [
                '{"timestamp":"%s","tool":%s,"session_id":%s,"fusion_score":%s,"decision":',
                decision,
                ',"components":%s,"risk":"' + record.risk.label + '","weights":',
                weighed,
                ',"reasons":[%s],"layers":[',
                ",".join(["%s" + time + "%s"] * len(layers)),
                '],"unavailable":%s,"notes":%s,"elapsed_us":' + time + ',"params":%s%s}',
            ]
        )
        for time in ("%.1f", "%s")
    ]
    n = len(layers)
    where = (*[6 + 3 * i + 1 for i in range(n)], 6 + 3 * n + 2)
    order = lead_positions(record.decision, layers)  # (None, or every position: two or more)
    frame: _Frame = (fast, plain, where, order, None if order is None else operator.itemgetter(*order))
    # 0.0 and -0.0 (and 1 and 1.0) are one key but read differently: only positive float weights
    if all([type(w) is float and w > 0.0 for _, w in weights]):
        if len(_FRAMES) >= 1024:
            _FRAMES.clear()
        _FRAMES[key] = frame
    return frame


_LAST_SECOND: tuple[tuple[Any, ...], str] = ((), "")


def _iso(ts: datetime) -> str:
    """``ts.isoformat(timespec="seconds")``, remembered for the second it names (decisions come
    many a second; the text depends only on the fields below). A fixed-offset ``timezone`` (what
    ``astimezone()`` gives) stands for its offset: it is its ``utcoffset`` at any time, and equal
    timezones are those of equal offsets (``ts.utcoffset()`` costs as much as the rest)."""
    global _LAST_SECOND
    tz = ts.tzinfo
    key = (ts.second, ts.minute, ts.hour, ts.day, ts.month, ts.year, tz if type(tz) is timezone else ts.utcoffset())
    last, text = _LAST_SECOND
    if key != last:
        text = ts.isoformat(timespec="seconds")  # digits, '-', ':', '+', 'T': nothing to escape
        _LAST_SECOND = (key, text)
    return text


def _error(error: str) -> str:
    return ',"error":' + dumps(redact(error)) + "}"  # an error's text is the call's: not kept


_DECISIONS = {d: dumps(d) for d in DECISIONS}


def logged_params(call: ToolCall) -> dict[str, Any]:
    """The call's parameters as every file guard writes holds them: redacted, once per call."""
    return call.redacted_params


def clear() -> None:
    """Forget the remembered pieces (the redaction key changed: placeholders read differently)."""
    for cached in (_reason_line, _reason_json, _short_text, _layer_head, _text_param, _text_params):
        cached.cache_clear()
    for remembered in (_FRAMES, _BY_ID, _BY_VALUE, _COMPONENTS, _LISTS):
        remembered.clear()


_string = json.encoder.encode_basestring  # what ``dumps`` writes a str with (ensure_ascii off)


def _params(params: Mapping[str, Any]) -> str:
    """``dumps(params)``; the usual call (``{"command": "..."}``: text only) written directly."""
    if all([type(k) is str and type(v) is str for k, v in params.items()]):
        return "{" + ",".join([_string(k) + ":" + _string(v) for k, v in params.items()]) + "}"
    return dumps(params)


def _params_of(call: ToolCall) -> str:
    """``_params(call.redacted_params)``; text-only params of a usual size remembered by value
    (the same commands come back: their redaction and JSON are one look-up)."""
    params = call.params
    if len(params) == 1:  # the usual call: {"command": "..."}
        ((key, value),) = params.items()
        if type(key) is str and type(value) is str and len(value) <= 2048:
            return _text_param(key, value)
    elif len(params) <= 8:
        size = 0
        for key, value in params.items():  # (a loop, not a list comprehension's frame: 0.3 → 0.1 µs)
            if type(key) is not str or type(value) is not str:
                break
            size += len(value)
        else:
            if size <= 2048:
                return _text_params(tuple(params.items()))
    return _params(call.redacted_params)


@functools.lru_cache(maxsize=512)
def _text_param(key: str, value: str) -> str:
    return _params(redact({key: value}))


@functools.lru_cache(maxsize=512)
def _text_params(items: tuple[tuple[str, str], ...]) -> str:
    return _params(redact(dict(items)))


def _reason_list(reasons: tuple[Reason, ...]) -> str:
    """The reasons as the items of a JSON list (no brackets)."""
    if not reasons:
        return ""
    if len(reasons) == 1:
        return _reason_json(reasons[0])
    return ",".join([_reason_json(r) for r in reasons])


def _strings(texts: tuple[str, ...]) -> str:
    """Notes or missing parts, redacted, as a JSON list; remembered when short (they recur:
    ``decision_text`` looks in ``_LISTS`` first)."""
    if not texts:
        return "[]"
    short = sum(map(len, texts)) <= 400
    said = dumps(redact(list(texts)))
    if short:
        if len(_LISTS) >= 1024:
            _LISTS.clear()
        _LISTS[texts] = said
    return said


_LISTS: dict[tuple[str, ...], str] = {}


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
