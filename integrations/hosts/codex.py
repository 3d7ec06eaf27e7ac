"""Codex CLI's hook dialect: Claude Code's envelope with a strict schema and no "ask".

Codex validates hook output against schemas with ``additionalProperties: false`` and treats
anything it does not support as a failed hook, and a failed hook lets the call run. So:

- PreToolUse answers only ``deny`` (with a reason) or nothing: a plain ``allow`` and ``ask``
  are both "unsupported". A call guard wants confirmed is denied with instructions: the
  person approves it out of band (``guard approve ID``) and the agent retries.
- PermissionRequest (Codex's own approval prompt) is where guard can approve: ``allow`` for
  what guard would run anyway, ``deny`` for what it blocks, nothing to let the person answer.
- Every answer exits 0: a refusal by exit code was seen to reach Codex as a failed hook.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from integrations.hosts.base import ALLOW, DENY, PERMISSION, POST, PRE, PROMPT, STOP, Event, Reply
from integrations.hosts.claude_code import ClaudeDialect


class Codex(ClaudeDialect):
    name = "codex"
    events: ClassVar[Mapping[str, str]] = {
        "PreToolUse": PRE,
        "PermissionRequest": PERMISSION,
        "PostToolUse": POST,
        "UserPromptSubmit": PROMPT,
        "Stop": STOP,
    }
    permission_allows = True

    def can_ask(self, event: Event) -> bool:
        return False

    def headless(self, payload: Mapping[str, Any], env: Mapping[str, str]) -> bool:
        return payload.get("permission_mode") == "dontAsk"

    def quiet(self, event: Event) -> Reply:
        return Reply(None)

    def allow(self, event: Event, reason: str) -> Reply:
        return Reply(None)

    def ask(self, event: Event, reason: str, risk: str | None = None) -> Reply:  # never used: can_ask is False
        raise NotImplementedError("Codex hooks cannot ask")

    def deny(self, event: Event, why: str, instead: str) -> Reply:
        return self._deny(f"{why} {instead}")

    def _deny(self, reason: str, stderr: str = "") -> Reply:
        return Reply(
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": reason,
                }
            },
            stderr=stderr,
        )

    def permission(self, event: Event, behavior: str | None, reason: str) -> Reply:
        if behavior == DENY:
            decision: dict[str, Any] = {"behavior": "deny", "message": reason}
        elif behavior == ALLOW:
            decision = {"behavior": "allow"}
        else:
            return self.quiet(event)
        return Reply({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}})

    def block_prompt(self, event: Event, reason: str) -> Reply:
        return Reply({"decision": "block", "reason": reason})
