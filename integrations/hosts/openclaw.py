"""OpenClaw's plugin hooks, as the guard plugin (``integrations/openclaw/``) forwards them.

The plugin sends ``{"hook", "event", "ctx"}``: ``before_tool_call`` (answered with nothing,
``{"block": true, "blockReason"}`` or ``{"requireApproval": {...}}``), ``after_tool_call``
(``result`` / ``error`` / ``durationMs``; neither means the outcome is unknown, not a
success; a call guard itself refused, flagged ``guardRefused`` by the plugin or carrying guard's
block reason as its error, is no tool failure: the refusal was counted once, as a denial) and ``approval_resolution`` with the person's ``resolution`` from
``requireApproval.onResolution`` (``allow-once`` / ``allow-always`` / ``deny`` are answers;
``timeout`` / ``cancelled`` are not). Without ``hook`` the kind is read from the event.
A cron run (``ctx.jobId``) has nobody to ask.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from guard.errors import InputError
from guard.integrations.hosts.base import POST, PRE, RESOLUTION, Event, Host, Reply, opt_number, outcome_of, req_str
from guard.toolnames import canonical_tool

HOOKS = {"before_tool_call": PRE, "after_tool_call": POST, "approval_resolution": RESOLUTION}
ANSWERS = {"allow-once": True, "allow-always": True, "deny": False}
APPROVAL_TIMEOUT_MS = 120_000
_TITLES = {
    "bash": "Run shell command",
    "write": "Write a file",
    "edit": "Edit a file",
    "read": "Read a file",
    "web_fetch": "Fetch from the web",
}


class OpenClaw(Host):
    name = "openclaw"
    events: ClassVar[Mapping[str, str]] = HOOKS

    def kind_of(self, payload: Mapping[str, Any]) -> str | None:
        event = payload.get("event")
        if not isinstance(event, Mapping):
            return None
        hook = payload.get("hook")
        if isinstance(hook, str):
            return HOOKS.get(hook)
        if "resolution" in payload:
            return RESOLUTION
        return POST if any(k in event for k in ("result", "error", "durationMs")) else PRE

    def parse(self, payload: Mapping[str, Any], env: Mapping[str, str]) -> Event:
        kind = self.kind_of(payload)
        name = next((h for h, k in HOOKS.items() if k == kind), "before_tool_call")
        event: Mapping[str, Any] = payload["event"]
        raw_ctx = payload.get("ctx")
        ctx: Mapping[str, Any] = raw_ctx if isinstance(raw_ctx, Mapping) else {}
        params = event.get("params", {})
        if not isinstance(params, Mapping):
            raise InputError(f"'event.params' must be a JSON object, got {type(params).__name__}")
        workdir = params.get("workdir", params.get("cwd"))
        fields: dict[str, Any] = {
            "tool": req_str(event, "toolName"),
            "params": dict(params),
            "session_id": _first_str(ctx, "sessionKey", "sessionId"),  # the conversation: on every hook
            "agent_id": _first_str(ctx, "agentId"),
            "call_id": _first_str(event, "toolCallId") or _first_str(ctx, "toolCallId"),
            "cwd": workdir if isinstance(workdir, str) else None,
            "headless": bool(_first_str(ctx, "jobId")),
        }
        if kind == POST:
            fields["duration_ms"] = opt_number(event, "durationMs")
            if event.get("guardRefused") is True or _refusal(event.get("error")):
                fields["refused"] = True  # guard's own refusal, already counted as one: not a failure of the tool
            elif event.get("error") is not None:
                fields["success"], fields["error"] = False, str(event["error"])[:500]
            elif "result" in event:
                fields["success"], fields["error"] = outcome_of(event["result"])
        if kind == RESOLUTION:
            resolution = payload.get("resolution")
            fields["answer"] = ANSWERS.get(resolution) if isinstance(resolution, str) else None
        return Event(host=self.name, name=name, kind=kind or PRE, **fields)

    def allow(self, event: Event, reason: str) -> Reply:
        return Reply({})

    def ask(self, event: Event, reason: str, risk: str | None = None) -> Reply:
        title = _TITLES.get(canonical_tool(event.tool or ""), f"Use the {event.tool} tool")
        return Reply(
            {
                "requireApproval": {
                    "title": title[:80],
                    "description": reason[:512],
                    "severity": "critical" if risk in ("high", "critical") else "warning",
                    "allowedDecisions": ["allow-once", "deny"],
                    "timeoutMs": APPROVAL_TIMEOUT_MS,
                }
            }
        )

    def deny(self, event: Event, why: str, instead: str) -> Reply:
        return Reply({"block": True, "blockReason": f"{why} {instead}"})

    def block_prompt(self, event: Event, reason: str) -> Reply:
        return Reply({"block": True, "blockReason": reason})

    def warn(self, event: Event, message: str) -> Reply:
        return Reply({}, stderr=message + "\n")


def _refusal(error: Any) -> bool:
    """The error OpenClaw reports for a call guard blocked: guard's own block reason."""
    return isinstance(error, str) and any(mark in error[:200] for mark in _REFUSAL_MARKS)


# Every block reason guard gives OpenClaw starts like one of these (words.py, the plugin).
_REFUSAL_MARKS = ("guard: this ", "guard: the ", "guard could not check", "guard: could not check", "guard: blocked")


def _first_str(obj: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = obj.get(key)
        if isinstance(value, str) and value:
            return value
    return None
