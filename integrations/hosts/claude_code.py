"""Claude Code's hook dialect, and Codex CLI's stricter copy of it.

Claude Code (``.claude/settings.json``): PreToolUse answers ``permissionDecision``
allow / ask / deny with a reason (ask: shown to the person; deny: shown to Claude);
PermissionRequest answers ``decision.behavior`` or nothing (the dialog shows);
UserPromptSubmit blocks with top-level ``decision: "block"``. Exit 0 with JSON is the
structured answer; exit 2 blocks with stderr as the reason and is the only refusal that
works whatever the event, so input guard cannot read gets both.

Nobody can answer an ask when ``permission_mode`` is ``dontAsk`` or when
``CLAUDE_CODE_SESSION_ATTENDED=0`` (``claude -p``; an attended terminal session sets ``1``).
``CLAUDE_CODE_CHILD_SESSION=1`` is set for every hook, interactive sessions included, so it
decides only when a Claude Code too old to set ``..._ATTENDED`` leaves nothing better.
A headless refusal leaves no pending question behind: nothing would ever answer it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from guard.integrations.hosts.base import (
    ALLOW,
    DENY,
    OTHER,
    PERMISSION,
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

if TYPE_CHECKING:
    from guard.integrations.hosts.host_rules import RuleFile

ATTENDED = "CLAUDE_CODE_SESSION_ATTENDED"  # 1: a person at the terminal; 0: headless (-p)


def project_root(
    cwd: str | None, home: str, markers: tuple[str, ...] = (".claude/settings.json", ".claude/settings.local.json")
) -> str | None:
    """The project whose host settings apply at ``cwd``: the nearest directory at or above it
    holding one of ``markers``, not above its git root, never the home directory itself (the
    home's files are the user's)."""
    if not cwd or not os.path.isabs(cwd):
        return None
    probe = os.path.normpath(cwd)
    home = os.path.normpath(home)
    for _ in range(32):
        if probe == home or probe == os.path.dirname(probe):
            return None
        if any(os.path.exists(os.path.join(probe, m)) for m in markers):
            return probe
        if os.path.exists(os.path.join(probe, ".git")):
            return None
        probe = os.path.dirname(probe)
    return None


class ClaudeDialect(Host):
    """Reading the payload fields Claude Code, Codex and Gemini CLI share."""

    tool_events = (PRE, PERMISSION, POST)

    def parse(self, payload: Mapping[str, Any], env: Mapping[str, str]) -> Event:
        name = str(payload[self.event_key])
        kind = self.events.get(name, OTHER)
        fields: dict[str, Any] = {
            "session_id": opt_str(payload, "session_id"),
            "cwd": opt_str(payload, "cwd"),
            "agent_id": opt_str(payload, "agent_id"),
            "call_id": opt_str(payload, "tool_use_id"),
            "headless": self.headless(payload, env),
        }
        if kind in self.tool_events:
            fields["tool"] = req_str(payload, "tool_name")
            fields["params"] = req_obj(payload, "tool_input")
        if kind == POST:
            fields.update(self.outcome(name, payload))
            fields["duration_ms"] = opt_number(payload, "duration_ms")
        if kind == PROMPT:
            prompt = payload.get("prompt")
            fields["prompt"] = prompt if isinstance(prompt, str) else None
        return Event(host=self.name, name=name, kind=kind, **fields)

    def outcome(self, name: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        response = payload.get("tool_response")
        if response is None:
            response = payload.get("tool_output")  # some Codex builds
        success, error = outcome_of(response)
        return {"success": success, "error": error}

    def headless(self, payload: Mapping[str, Any], env: Mapping[str, str]) -> bool:
        return payload.get("permission_mode") == "dontAsk"


class ClaudeCode(ClaudeDialect):
    name = "claude-code"
    events: ClassVar[Mapping[str, str]] = {
        "PreToolUse": PRE,
        "PermissionRequest": PERMISSION,
        "PostToolUse": POST,
        "PostToolUseFailure": POST,
        "UserPromptSubmit": PROMPT,
        "Stop": STOP,
    }

    def outcome(self, name: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        if name == "PostToolUseFailure":
            error = payload.get("error")
            return {
                "success": False,
                "error": error[:500] if isinstance(error, str) else "the tool failed",
                "interrupted": payload.get("is_interrupt") is True,
            }
        return super().outcome(name, payload)

    def headless(self, payload: Mapping[str, Any], env: Mapping[str, str]) -> bool:
        if super().headless(payload, env):
            return True
        attended = env.get(ATTENDED, "").strip()
        if attended in ("0", "1"):
            return attended == "0"
        return env.get("CLAUDE_CODE_CHILD_SESSION") == "1"

    def rule_files(self, event: Event, home: str) -> Sequence[RuleFile]:
        """User, project and local settings (where "Yes, don't ask again" lands), in that order."""
        from guard.integrations.hosts.host_rules import RuleFile

        files = [RuleFile("Claude Code user settings", os.path.join(home, ".claude", "settings.json"), None)]
        root = project_root(event.cwd, home)
        if root is not None:
            for name, label in (("settings.json", "project"), ("settings.local.json", "local")):
                path = os.path.join(root, ".claude", name)
                files.append(RuleFile(f"Claude Code {label} settings", path, root, project=True))
        return files

    def _pre(self, decision: str, reason: str) -> Reply:
        return Reply(
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": decision,
                    "permissionDecisionReason": reason,
                }
            }
        )

    def allow(self, event: Event, reason: str) -> Reply:
        return self._pre("allow", reason)

    def ask(self, event: Event, reason: str, risk: str | None = None) -> Reply:
        return self._pre("ask", reason)

    def deny(self, event: Event, why: str, instead: str) -> Reply:
        return self._pre("deny", f"{why} {instead}")

    def permission(self, event: Event, behavior: str | None, reason: str) -> Reply:
        if behavior == DENY:
            decision: dict[str, Any] = {"behavior": "deny", "message": reason, "interrupt": False}
        elif behavior == ALLOW:
            decision = {"behavior": "allow"}
        else:
            return self.quiet(event)
        return Reply({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}})

    def block_prompt(self, event: Event, reason: str) -> Reply:
        return Reply(
            {
                "decision": "block",
                "reason": reason,
                "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": ""},
            }
        )
