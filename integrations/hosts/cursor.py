"""Cursor's hook dialect (``.cursor/hooks.json``, flat entries, one event per command).

The before* gates answer ``{"permission": "allow"|"ask"|"deny", "user_message",
"agent_message"}`` (``beforeReadFile`` takes ``permission`` alone); ``beforeSubmitPrompt``
answers ``{"continue": bool, "user_message"}``. The conversation is ``conversation_id``;
calls carry no id, so an ask is paired with its after-event by the call's content.
``afterShellExecution`` does not say whether the command succeeded: it settles the ask
but records no result unless an exit code is present.

Known gap: in Cursor's Auto-review mode an ``ask`` was reported to let the command run
unprompted (deny is enforced in every mode). Run the hook with ``--no-ask`` there: calls
guard wants confirmed are then denied with an out-of-band approval (``guard approve ID``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from guard.integrations.hosts.base import (
    OTHER,
    POST,
    PRE,
    PROMPT,
    STOP,
    Event,
    Host,
    Reply,
    opt_number,
    opt_str,
    outcome_of,
    req_obj,
    req_str,
)

SHELL = "Shell"
READ = "Read"


class Cursor(Host):
    name = "cursor"
    events: ClassVar[Mapping[str, str]] = {
        "beforeShellExecution": PRE,
        "beforeMCPExecution": PRE,
        "beforeReadFile": PRE,
        "preToolUse": PRE,
        "afterShellExecution": POST,
        "afterMCPExecution": POST,
        "postToolUse": POST,
        "postToolUseFailure": POST,
        "beforeSubmitPrompt": PROMPT,
        "stop": STOP,
    }

    def parse(self, payload: Mapping[str, Any], env: Mapping[str, str]) -> Event:
        name = str(payload[self.event_key])
        kind = self.events.get(name, OTHER)
        roots = payload.get("workspace_roots")
        root = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None
        fields: dict[str, Any] = {
            "session_id": opt_str(payload, "conversation_id"),
            "cwd": opt_str(payload, "cwd") or root,
            "call_id": opt_str(payload, "tool_use_id"),
        }
        if name in ("beforeShellExecution", "afterShellExecution"):
            fields["tool"], fields["params"] = SHELL, {"command": req_str(payload, "command")}
        elif name == "beforeReadFile":
            fields["tool"], fields["params"] = READ, {"file_path": req_str(payload, "file_path")}
        elif kind in (PRE, POST):
            fields["tool"], fields["params"] = req_str(payload, "tool_name"), req_obj(payload, "tool_input")
        if kind == POST:
            fields["duration_ms"] = opt_number(payload, "duration")
            fields["success"], fields["error"] = self._outcome(name, payload)
        if kind == PROMPT:
            prompt = payload.get("prompt")
            fields["prompt"] = prompt if isinstance(prompt, str) else None
        return Event(host=self.name, name=name, kind=kind, **fields)

    def _outcome(self, name: str, payload: Mapping[str, Any]) -> tuple[bool | None, str | None]:
        if name == "postToolUseFailure":
            error = payload.get("error")
            return False, error[:500] if isinstance(error, str) else "the tool failed"
        if name == "afterShellExecution":
            for key in ("exit_code", "exitCode"):
                code = payload.get(key)
                if isinstance(code, int) and not isinstance(code, bool):
                    return code == 0, None if code == 0 else f"Exit code {code}"
            return None, None  # Cursor does not say; unknown is not success
        if name == "afterMCPExecution":
            result = payload.get("result_json")
            if isinstance(result, str):
                try:
                    result = json.loads(result)
                except ValueError:
                    return True, None
            return outcome_of(result)
        return outcome_of(payload.get("tool_output", payload.get("tool_response", {})))

    def can_ask(self, event: Event) -> bool:
        return event.name != "beforeReadFile"

    def allow(self, event: Event, reason: str) -> Reply:
        return Reply({"permission": "allow"})

    def ask(self, event: Event, reason: str, risk: str | None = None) -> Reply:
        return Reply(
            {
                "permission": "ask",
                "user_message": reason,
                "agent_message": "guard asked the user to confirm this call; wait for their answer and do not retry it.",
            }
        )

    def deny(self, event: Event, why: str, instead: str) -> Reply:
        if event.name == "beforeReadFile":
            return Reply({"permission": "deny"})
        return Reply({"permission": "deny", "user_message": why, "agent_message": f"{why} {instead}"})

    def quiet(self, event: Event) -> Reply:
        return Reply({"continue": True} if event.kind == PROMPT else {})

    def block_prompt(self, event: Event, reason: str) -> Reply:
        return Reply({"continue": False, "user_message": reason})

    def warn(self, event: Event, message: str) -> Reply:
        if event.kind == PROMPT:
            return Reply({"continue": True, "user_message": message})
        return Reply({})
