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

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from guard.integrations.hosts.base import ALLOW, DENY, PERMISSION, POST, PRE, PROMPT, STOP, Event, Reply
from guard.integrations.hosts.claude_code import ClaudeDialect

if TYPE_CHECKING:
    from guard.integrations.hosts.host_rules import RuleFile


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

    def rule_files(self, event: Event, home: str) -> Sequence[RuleFile]:
        """The user layer's ``~/.codex/rules/*.rules`` (a project's ``.codex/rules`` loads only when
        Codex trusts the project, which guard cannot see: not read)."""
        from guard.integrations.hosts.host_rules import RuleFile

        folder = os.path.join(home, ".codex", "rules")
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".rules"))
        except OSError:
            return ()
        return [RuleFile("Codex rules", os.path.join(folder, n), None, dialect="codex") for n in names]

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
