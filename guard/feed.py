"""Apply a stream of hook events (the seed's three hooks) to a ``Guard``.

One JSON object per line:

    {"event": "tool_dispatch", "tool": "bash", "params": {...}, "session_id": "s1", "ts": "..."}
    {"event": "tool_result", "tool": "bash", "params": {...}, "status": "success", "duration_ms": 12, "error": null}
    {"event": "user_confirmation", "tool": "bash", "params": {...}, "action": "approved", "satisfaction": 5}

No ``event`` key means ``tool_dispatch``; the seed's names ``agent:tool_dispatch``,
``agent:tool_result`` and ``user:confirmation`` are accepted too; unknown keys are ignored.
Each dispatch yields exactly one decision record; a malformed line yields one error record
(decision ``block`` — never ``auto_allow``) and the stream goes on.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from guard.core import Guard
from guard.errors import InputError
from guard.model import BLOCK

_EVENTS = {
    "tool_dispatch": "tool_dispatch",
    "agent:tool_dispatch": "tool_dispatch",
    "dispatch": "tool_dispatch",
    "tool_result": "tool_result",
    "agent:tool_result": "tool_result",
    "result": "tool_result",
    "user_confirmation": "user_confirmation",
    "user:confirmation": "user_confirmation",
    "confirmation": "user_confirmation",
}


def error_record(line_no: int, message: str, raw: str | bytes | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "line": line_no,
        "error": message,
        "decision": BLOCK,
        "reasons": [{"id": "G003", "message": f"unreadable event: {message}"}],
    }
    if raw is not None:
        out["input"] = (raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw)[:200]
    return out


def apply_line(guard: Guard, line: str | bytes, line_no: int) -> dict[str, Any] | None:
    """Apply one line; a dict to print for dispatches and errors, None for recorded events.

    Bytes must be UTF-8: a line guard cannot decode is an error, never guessed at (a
    replacement character could turn a command into a harmless-looking one).
    """
    try:
        text = line.decode("utf-8") if isinstance(line, bytes) else line
    except UnicodeDecodeError as exc:
        return error_record(line_no, f"not UTF-8 ({exc.reason} at byte {exc.start})", line)
    try:
        event = json.loads(text)
    except RecursionError:
        return error_record(line_no, "not JSON (nested too deeply)", line)
    except ValueError as exc:  # JSONDecodeError, and numbers too long to convert
        return error_record(line_no, f"not JSON ({exc})", line)
    if not isinstance(event, dict):
        return error_record(line_no, f"expected a JSON object, got {type(event).__name__}", line)
    try:
        return apply_event(guard, event, line_no)
    except InputError as exc:
        return error_record(line_no, str(exc), line)
    except (TypeError, ValueError, RecursionError) as exc:
        return error_record(line_no, f"{type(exc).__name__}: {exc}", line)
    except OSError as exc:  # a read-only workspace or a full disk: say so, keep going
        return error_record(line_no, f"cannot record the event ({exc})", line)


def apply_event(guard: Guard, event: dict[str, Any], line_no: int = 0) -> dict[str, Any] | None:
    kind_raw = event.get("event", "tool_dispatch")
    kind = _EVENTS.get(kind_raw) if isinstance(kind_raw, str) else None
    if kind is None:
        raise InputError(f"unknown event {kind_raw!r}; expected tool_dispatch, tool_result or user_confirmation")
    tool = event.get("tool")
    if not isinstance(tool, str) or not tool.strip():
        raise InputError("missing 'tool' (a non-empty string)")
    params = event.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise InputError(f"'params' must be a JSON object, got {type(params).__name__}")
    session_id = event.get("session_id")
    if session_id is not None and not isinstance(session_id, (str, int)):
        raise InputError("'session_id' must be a string")
    sid = None if session_id is None else str(session_id)
    ts = _parse_ts(event.get("ts", event.get("timestamp")))
    if kind == "tool_dispatch":
        cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
        call = guard.make_call(tool, params, session_id=sid, cwd=cwd)
        if ts is not None:
            call = type(call)(call.tool, call.params, call.session_id, call.cwd, call.agent_id, ts)
        record = guard.decide_call(call)
        return record.to_dict() | {"line": line_no}
    if kind == "tool_result":
        status = event.get("status")
        if status not in ("success", "failure"):
            raise InputError(f'\'status\' must be "success" or "failure", got {status!r}')
        duration = event.get("duration_ms")
        if duration is not None and (isinstance(duration, bool) or not isinstance(duration, (int, float))):
            raise InputError("'duration_ms' must be a number")
        err = event.get("error")
        guard.record_result(
            tool,
            params,
            session_id=sid,
            success=status == "success",
            duration_ms=duration,
            error=None if err is None else str(err),
            timestamp=ts,
        )
        return _unrecorded(guard, line_no)
    action = event.get("action")
    if action not in ("approved", "denied"):
        raise InputError(f'\'action\' must be "approved" or "denied", got {action!r}')
    sat = event.get("satisfaction")
    if sat is not None and (isinstance(sat, bool) or not isinstance(sat, int) or not 1 <= sat <= 5):
        raise InputError(f"'satisfaction' must be an integer 1-5, got {sat!r}")
    guard.record_interaction(
        tool, params, session_id=sid, approved=action == "approved", satisfaction=sat, timestamp=ts
    )
    return _unrecorded(guard, line_no)


def _unrecorded(guard: Guard, line_no: int) -> dict[str, Any] | None:
    """A result or an answer the workspace refused (read-only, full): said on its line, feed goes on
    (``record_result`` itself does not raise, so a Python caller's tool is not failed by guard)."""
    if guard.unrecorded is None:
        return None
    return error_record(line_no, f"cannot record the event ({guard.unrecorded})")


def feed(guard: Guard, lines: Iterable[str | bytes]) -> Iterator[dict[str, Any]]:
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        out = apply_line(guard, line, n)
        if out is not None:
            yield out


def _parse_ts(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            ts = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise InputError(f"'ts' is not an ISO timestamp: {value!r}") from None
        return ts if ts.tzinfo else ts.astimezone()
    raise InputError(f"'ts' must be an ISO timestamp string, got {type(value).__name__}")
