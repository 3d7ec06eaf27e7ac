"""The one flow every host shares: read the event, ask the Guard, pair, record, answer.

    reply = run(get_host("claude-code"), stdin_bytes, lambda: Guard(...))
    sys.stdout.write(reply.stdout); sys.exit(reply.exit_code)

Before a call (``pre``): ``Guard.decide`` with the host's session, cwd and agent; the
decision goes to ``.fusion-decisions.jsonl`` with the host, event and call id. auto_allow →
allow; block → deny, saying what to do instead; request_confirm → ask where the host can
ask (and remember the question), else deny with an out-of-band approval (``guard approve
ID``). With nobody to answer (headless, or ``GUARD_HEADLESS=1``), request_confirm is a block
and the record says so. The ``pre`` decision is the dispatch the session layer counts (loops,
bursts, refusal streaks); a later ``permission`` event for the same call is not counted again.

After a call (``post``): the result goes to ``.command-execution.jsonl``; if guard had asked
about this call, the person evidently approved it (``.user-interactions.jsonl``) — unless the
host says the call did not run (OpenClaw reports refused calls too, before the approval's
outcome): then the question is closed with no answer. A new
prompt or the end of the turn while a question is still open means the person declined.

``run`` never raises: input it cannot read and errors inside guard become the host's
refusal (ask where someone can answer, deny otherwise), because most hosts let a call
through when a hook crashes or prints garbage.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from guard.errors import InputError
from guard.integrations.hosts import words
from guard.integrations.hosts.base import (
    ALLOW,
    DENY,
    PERMISSION,
    POST,
    PRE,
    PROMPT,
    RESOLUTION,
    STOP,
    Event,
    Host,
    Reply,
)
from guard.integrations.pending import APPROVED, ASKED, AWAITING, Pending
from guard.model import AUTO_ALLOW, BLOCK, DecisionRecord, ToolCall

if TYPE_CHECKING:
    from guard.core import Guard

# Set by the person for a run nobody watches (``gemini -p``, CI): every host's hook then denies
# what it would have asked about, with the reason, instead of waiting for an answer.
HEADLESS_ENV = "GUARD_HEADLESS"


def run(
    host: Host,
    raw: bytes | str,
    open_guard: Callable[[], Guard],
    *,
    headless: bool = False,
    may_ask: bool = True,
    env: Mapping[str, str] | None = None,
    via: str = "hook",
) -> Reply:
    """One hook invocation, failing closed; ``via`` (``hook``, ``daemon``) goes to the decision log."""
    env = os.environ if env is None else env
    payload = _load(raw)
    if isinstance(payload, str):
        return host.unreadable(
            f"guard: the {host.name} hook input {payload}; the call was not checked, so it is refused."
        )
    kind = host.kind_of(payload)
    if kind is None:
        return host.unreadable(
            f"guard: the {host.name} hook input names no event guard knows; the call was not checked, so it is refused."
        )
    try:
        event = host.parse(payload, env)
        if _truthy(env.get(HEADLESS_ENV)):
            event = attrs.evolve(event, headless=True)
    except Exception as exc:  # any payload guard cannot read is refused, never let through
        stub = Event(host=host.name, name=str(payload.get(host.event_key) or kind), kind=kind)
        why = exc if isinstance(exc, (InputError, TypeError, ValueError)) else f"{type(exc).__name__}: {exc}"
        return host.failed(stub, f"guard: cannot read this {stub.name} event ({why}).", may_ask=False)
    try:
        return handle(host, event, open_guard(), headless=headless, may_ask=may_ask, via=via)
    except Exception as exc:
        message = f"guard: could not check this call ({type(exc).__name__}: {exc})."
        return host.failed(event, message, may_ask=may_ask and not (headless or event.headless))


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def _load(raw: bytes | str) -> dict[str, Any] | str:
    """The payload object, or what is wrong with the input."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        return "is not UTF-8 text"
    if not text.strip():
        return "is empty"
    try:
        payload = json.loads(text)
    except RecursionError:
        return "is not JSON (nested too deeply)"
    except ValueError as exc:
        return f"is not JSON ({exc})"
    if not isinstance(payload, dict):
        return f"is a JSON {type(payload).__name__}, not an object"
    return payload


def handle(
    host: Host, event: Event, guard: Guard, *, headless: bool = False, may_ask: bool = True, via: str = "hook"
) -> Reply:
    """Apply one parsed event to ``guard`` and shape the answer; errors propagate to ``run``."""
    config = guard.config
    headless = headless or event.headless or bool(config.get("hooks.headless")) or bool(config.get("guard.headless"))
    guard.human_present = not headless
    pending = Pending(guard.workspace, float(config.get("hooks.pending_ttl_seconds")))
    event = attrs.evolve(event, via=via)
    if event.kind == PRE:
        return _before(host, event, guard, pending, may_ask=may_ask and not headless)
    if event.kind == PERMISSION:
        return _permission(host, event, guard, pending)
    if event.kind == POST:
        return _after(host, event, guard, pending)
    if event.kind in (PROMPT, STOP):
        return _turn(host, event, guard, pending)
    if event.kind == RESOLUTION:
        pending.take(event, (ASKED,))  # answered or dropped: the call's result must not answer it again
        if event.answer is not None:
            guard.record_interaction(event.tool or "", event.params, session_id=event.session_id, approved=event.answer)
        return host.quiet(event)
    return host.quiet(event)


def _decide(host: Host, event: Event, guard: Guard, *, track: bool = True) -> DecisionRecord:
    """Decide and log one call with the host's fields; ``track`` counts it in its session (the
    dispatch, once). A workspace that cannot take the line (read-only, full) keeps the static
    verdict instead of failing the hook."""
    from guard.integrations.hosts.host_rules import preference

    extra = {"host": host.name, "event": event.name, "via": event.via}
    if event.call_id:
        extra["call_id"] = event.call_id
    return guard.decide_call(
        _call(guard, event), save=True, track=track, log_extra=extra, prefer=preference(host, event, guard)
    )


def _call(guard: Guard, event: Event) -> ToolCall:
    """The event's call, made once: its parameters are redacted once (``redacted_params``) for
    every line the event writes (decision log, pending question, history)."""
    return guard.make_call(
        event.tool or "",
        event.params,
        session_id=event.session_id,
        cwd=event.cwd,
        agent_id=event.agent_id,
        kind=event.declared,
    )


def _remember(guard: Guard, step: Callable[[], Any], default: Any = None) -> Any:
    """A step on the open questions (``pending``), or ``default`` when the workspace cannot keep them."""
    from guard import workspace as ws

    try:
        return step()
    except OSError as exc:
        if not ws.note_write_failure(exc, guard.workspace):
            raise
        return default


def _before(host: Host, event: Event, guard: Guard, pending: Pending, *, may_ask: bool) -> Reply:
    record = _decide(host, event, guard)
    if record.decision == AUTO_ALLOW:
        return host.allow(event, words.allowed(record))
    if record.decision == BLOCK:
        why, instead = words.headless(record) if words.nobody_to_ask(record) else words.blocked(record)
        return host.deny(event, why, instead)
    approval = _remember(guard, lambda: pending.take(event, (APPROVED,)))
    if approval is not None:
        return host.allow(event, words.approved(approval.id))
    if may_ask and host.can_ask(event):
        # unkept, the answer is just not learned
        _remember(guard, lambda: pending.add(ASKED, event, record.call.redacted_params))
        return host.ask(event, words.confirm(record), record.risk.label)
    entry = _remember(guard, lambda: pending.add(AWAITING, event, record.call.redacted_params))
    if entry is None:  # no approval id can be kept: refuse, saying why
        why = next((r.message for r in record.reasons if r.rule_id == "G004"), "guard cannot write its workspace")
        return host.deny(
            event, f"guard: this call needs a confirmation, and {why}.", "Free or fix the workspace, then retry."
        )
    return host.deny(event, *words.out_of_band(record, entry.id))


def _permission(host: Host, event: Event, guard: Guard, pending: Pending) -> Reply:
    """The host's own approval dialog is about to show."""
    if _remember(guard, lambda: pending.find(event, (ASKED,))) is not None:
        return host.permission(event, None, "")  # this dialog is guard's ask: let the person answer
    # Installed hosts run PreToolUse first for the same call, and that hook counted it.
    record = _decide(host, event, guard, track=False)
    if record.decision == BLOCK:
        why, instead = words.headless(record) if words.nobody_to_ask(record) else words.blocked(record)
        return host.permission(event, DENY, f"{why} {instead}")
    if record.decision == AUTO_ALLOW:
        return host.permission(event, ALLOW if host.permission_allows else None, words.allowed(record))
    # the dialog asks for guard; its outcome is the answer
    _remember(guard, lambda: pending.add(ASKED, event, record.call.redacted_params))
    return host.permission(event, None, "")


def _after(host: Host, event: Event, guard: Guard, pending: Pending) -> Reply:
    if event.refused:  # it never ran: no result, and no "yes" to the question guard asked about it
        _remember(guard, lambda: pending.take(event, (ASKED,)))
        return host.quiet(event)
    call = _call(guard, event)  # one call, redacted once, for the answer and the result
    if _remember(guard, lambda: pending.take(event, (ASKED,))) is not None:
        guard.record_interaction_call(call, approved=True)
    if event.success is not None and not event.interrupted:
        guard.record_result_call(call, success=event.success, duration_ms=event.duration_ms, error=event.error)
        if guard.unrecorded is not None:  # record_result does not raise on a full disk: it says so here
            why = guard.unrecorded
            return host.warn(event, f"guard: cannot write its workspace ({why}); this result is not recorded.")
    return host.quiet(event)


def _turn(host: Host, event: Event, guard: Guard, pending: Pending) -> Reply:
    """A new prompt or the end of a turn: questions still open were declined."""
    for entry in _remember(guard, lambda: pending.take_session(host.name, event.session_id, (ASKED,)), []):
        guard.record_interaction(entry.tool, entry.params, session_id=entry.session_id, approved=False)
    if event.kind == PROMPT and event.prompt and guard.config.get("hooks.block_prompt_secrets"):
        from guard.redact import redact_text

        if redact_text(event.prompt) != event.prompt:
            return host.block_prompt(event, words.PROMPT_SECRET)
    return host.quiet(event)
