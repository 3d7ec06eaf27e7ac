"""Gemini CLI's hook dialect (``.gemini/settings.json``).

BeforeTool answers a top-level ``decision``: ``allow``, ``deny`` with a ``reason``, or
``ask`` (implemented in the CLI's scheduler, not yet in its reference docs; where a version
ignores it, run the hook with ``--no-ask``). AfterTool carries ``tool_response`` with an
``error`` when the tool failed; BeforeAgent is the prompt gate. Stdout that is not JSON
means *allow*, and exit 2 blocks with stderr as the reason, so unreadable input gets both
a JSON deny and exit 2. Tool names: ``run_shell_command``, ``write_file``, ``replace``,
``read_file``, ``mcp_<server>_<tool>``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from guard.integrations.hosts.base import POST, PRE, PROMPT, STOP, Event, Reply, exit_code_in
from guard.integrations.hosts.claude_code import ClaudeDialect, project_root

if TYPE_CHECKING:
    from guard.integrations.hosts.host_rules import RuleFile


class GeminiCli(ClaudeDialect):
    name = "gemini"
    events: ClassVar[Mapping[str, str]] = {
        "BeforeTool": PRE,
        "AfterTool": POST,
        "BeforeAgent": PROMPT,
        "AfterAgent": STOP,
    }

    def rule_files(self, event: Event, home: str) -> Sequence[RuleFile]:
        """``settings.json`` (``tools.allowed`` / ``tools.exclude``) and the policy engine's
        ``policies/*.toml``, the user's (``~/.gemini``) then the project's (``<project>/.gemini``)."""
        from guard.integrations.hosts.host_rules import RuleFile

        root = project_root(event.cwd, home, (".gemini/settings.json", ".gemini/policies"))
        files: list[RuleFile] = []
        for base, label, project in ((home, "user", False), (root, "project", True)):
            if base is None:
                continue
            folder = os.path.join(base, ".gemini")
            settings = os.path.join(folder, "settings.json")
            files.append(RuleFile(f"Gemini CLI {label} settings", settings, root, project, "gemini-settings"))
            try:
                names = sorted(n for n in os.listdir(os.path.join(folder, "policies")) if n.endswith(".toml"))
            except OSError:
                names = []
            for n in names:
                path = os.path.join(folder, "policies", n)
                files.append(RuleFile(f"Gemini CLI {label} policy", path, root, project, "gemini-policy"))
        return files

    def parse(self, payload: Mapping[str, Any], env: Mapping[str, str]) -> Event:
        event = super().parse(payload, env)
        if event.session_id is None and env.get("GEMINI_SESSION_ID"):
            event = attrs.evolve(event, session_id=env["GEMINI_SESSION_ID"])
        return event

    def outcome(self, name: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        response = payload.get("tool_response")
        if isinstance(response, Mapping) and response.get("error"):
            error = response["error"]
            message = error.get("message") if isinstance(error, Mapping) else error
            return {"success": False, "error": str(message)[:500]}
        # run_shell_command reports a failed command only in its text: ``Exit Code: 2`` after the output
        text = response.get("llmContent") if isinstance(response, Mapping) else response
        code = exit_code_in(text, tail=True) if isinstance(text, str) else None
        if code is not None:
            return {"success": code == 0, "error": None if code == 0 else f"Exit Code: {code}"}
        return {"success": True if response is not None else None, "error": None}

    def headless(self, payload: Mapping[str, Any], env: Mapping[str, str]) -> bool:
        return False

    def allow(self, event: Event, reason: str) -> Reply:
        return Reply({"decision": "allow"})

    def ask(self, event: Event, reason: str, risk: str | None = None) -> Reply:
        return Reply({"decision": "ask", "systemMessage": reason})

    def deny(self, event: Event, why: str, instead: str) -> Reply:
        return Reply({"decision": "deny", "reason": f"{why} {instead}"})

    def block_prompt(self, event: Event, reason: str) -> Reply:
        return Reply({"decision": "deny", "reason": reason})
