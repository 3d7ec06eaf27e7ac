"""Host adapter defects seen against the real hosts, replayed with their exact payload shapes (issue 13).

Each class is one defect: Claude Code asking in attended sessions, Codex ``apply_patch`` and
interactive shells, failed commands on Codex and Gemini, OpenClaw counting guard's own
refusals as tool failures, headless Gemini, and Codex failing closed. Hooks run as
``guard hook HOST`` subprocesses with a fake HOME and GUARD_HOME where the environment
matters, else through ``flow.run`` with a fresh ``Guard`` per event, as a per-call process.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GUARD_CMD, guard_cli_env

ASK = "ssh build-host uptime"  # asked about on a fresh install (G149)
ALLOW = "ls -la"
PATCH = "*** Begin Patch\n*** Update File: {path}\n@@\n-a = 1\n+a = 2\n*** End Patch\n"
REFUSAL_TEXT = "opens an interactive shell whose input guard cannot see"


# -- helpers ------------------------------------------------------------------------------
def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = guard_cli_env()
    for key in list(env):
        if key.startswith(("CLAUDE_CODE_", "GEMINI_", "CODEX_")) or (
            key.startswith("GUARD_") and key != "GUARD_SYSTEM_HEALTH"
        ):
            del env[key]
    env |= {"HOME": str(home), "GUARD_HOOKS_DAEMON": "off", **extra}
    return env


def hook(host: str, payload: dict[str, Any], ws: Path, env: dict[str, str]) -> tuple[Any, int, str]:
    proc = subprocess.run(
        [*GUARD_CMD, "hook", host, "--workspace", str(ws)],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        timeout=60,
    )
    out = proc.stdout.decode()
    return (json.loads(out) if out.strip() else None), proc.returncode, proc.stderr.decode()


def jsonl(ws: Path, name: str) -> list[dict[str, Any]]:
    path = ws / name
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []


def pending(ws: Path) -> list[dict[str, Any]]:
    path = ws / ".guard-pending.json"
    return json.loads(path.read_text())["entries"] if path.exists() else []


def claude_pre(command: str, cwd: Path, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": "cc-1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "x"},
        "tool_use_id": "toolu_01",
        **extra,
    }


def codex(event: str, tool: str, tool_input: dict[str, Any], cwd: Path, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": "019a-codex",
        "turn_id": "turn-1",
        "transcript_path": "/tmp/rollout.jsonl",
        "cwd": str(cwd),
        "hook_event_name": event,
        "model": "gpt-5",
        "permission_mode": "default",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "call_1",
        **extra,
    }


def gemini(event: str, command: str, cwd: Path, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": "gem-1",
        "transcript_path": "/tmp/session.json",
        "cwd": str(cwd),
        "hook_event_name": event,
        "timestamp": "2026-08-20T12:00:01.000Z",
        "tool_name": "run_shell_command",
        "tool_input": {"command": command},
        **extra,
    }


def reason(out: Any) -> str:
    """Every text a host shows the agent in one string."""
    return json.dumps(out, ensure_ascii=False)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    (h / "proj").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(h))
    return h


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir(mode=0o700)
    return w


@pytest.fixture
def in_process(ws: Path) -> Iterator[Callable[..., Any]]:
    """One hook event through ``flow.run`` with a fresh Guard, as a per-call process would."""
    from guard import Guard
    from guard.integrations.hosts import get_host
    from guard.integrations.hosts.flow import run

    def call(host: str, payload: dict[str, Any], env: dict[str, str] | None = None) -> Any:
        opened: list[Guard] = []

        def open_guard() -> Guard:
            opened.append(Guard(ws, {"system.health": 90, "memory.backend": "history"}))
            return opened[-1]

        reply = run(get_host(host), json.dumps(payload), open_guard, env=env or {})
        for g in opened:
            g.close()
        return reply

    yield call


# -- 1. Claude Code: attended sessions ask; headless ones deny and leave nothing pending -------
class TestClaudeCodeAttended:
    def test_an_attended_session_asks_although_every_hook_is_a_child_session(self, home: Path, ws: Path) -> None:
        env = env_for(home, CLAUDE_CODE_CHILD_SESSION="1", CLAUDE_CODE_SESSION_ATTENDED="1")
        out, code, _ = hook("claude-code", claude_pre(ASK, home / "proj"), ws, env)
        assert out["hookSpecificOutput"]["permissionDecision"] == "ask" and code == 0
        assert [e["state"] for e in pending(ws)] == ["asked"]

    def test_claude_p_is_headless_denies_with_the_reason_and_leaves_nothing_pending(self, home: Path, ws: Path) -> None:
        env = env_for(home, CLAUDE_CODE_CHILD_SESSION="1", CLAUDE_CODE_SESSION_ATTENDED="0")
        out, _, _ = hook("claude-code", claude_pre(ASK, home / "proj"), ws, env)
        hso = out["hookSpecificOutput"]
        assert hso["permissionDecision"] == "deny" and "nobody can answer" in hso["permissionDecisionReason"]
        assert pending(ws) == []

    def test_without_attended_the_child_session_flag_still_decides(self, home: Path, ws: Path) -> None:
        out, _, _ = hook(
            "claude-code", claude_pre(ASK, home / "proj"), ws, env_for(home, CLAUDE_CODE_CHILD_SESSION="1")
        )
        assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
        out, _, _ = hook("claude-code", claude_pre(ASK, home / "proj"), ws, env_for(home))
        assert out["hookSpecificOutput"]["permissionDecision"] == "ask"

    def test_read_only_calls_are_allowed_either_way(self, home: Path, ws: Path) -> None:
        for attended in ("0", "1"):
            env = env_for(home, CLAUDE_CODE_CHILD_SESSION="1", CLAUDE_CODE_SESSION_ATTENDED=attended)
            out, _, _ = hook("claude-code", claude_pre(ALLOW, home / "proj"), ws, env)
            assert out["hookSpecificOutput"]["permissionDecision"] == "allow"


# -- 2. Codex apply_patch: the patch is in tool_input.command ---------------------------------
class TestCodexApplyPatch:
    @pytest.mark.parametrize("as_list", [False, True], ids=["text", "argv"])
    def test_a_project_edit_is_allowed_as_a_file_write(self, in_process: Any, home: Path, as_list: bool) -> None:
        patch = PATCH.format(path="src/app.py")
        command: Any = ["apply_patch", patch] if as_list else patch
        reply = in_process("codex", codex("PreToolUse", "apply_patch", {"command": command}, home / "proj"))
        assert reply.output is None, reply.stdout  # Codex: no output is "allow"

    @pytest.mark.parametrize(
        "target",
        ["~/.codex/hooks.json", "{ws}/guard.toml", "~/.claude/settings.json"],
        ids=["codex", "guard", "claude"],
    )
    @pytest.mark.parametrize("as_list", [False, True], ids=["text", "argv"])
    def test_a_patch_to_guard_or_hook_settings_is_blocked(
        self, in_process: Any, home: Path, ws: Path, target: str, as_list: bool
    ) -> None:
        patch = PATCH.format(path=target.format(ws=ws))
        command: Any = ["apply_patch", patch] if as_list else patch
        reply = in_process("codex", codex("PreToolUse", "apply_patch", {"command": command}, home / "proj"))
        hso = reply.output["hookSpecificOutput"]
        assert hso["permissionDecision"] == "deny" and "G156" in hso["permissionDecisionReason"]
        assert "guard approve" not in hso["permissionDecisionReason"]  # blocked, not approvable
        permission = in_process("codex", codex("PermissionRequest", "apply_patch", {"command": command}, home / "proj"))
        assert permission.output["hookSpecificOutput"]["decision"]["behavior"] == "deny"

    def test_a_heredoc_apply_patch_through_the_shell_is_blocked_too(self, in_process: Any, home: Path) -> None:
        command = "apply_patch <<'EOF'\n" + PATCH.format(path="~/.codex/hooks.json") + "EOF\n"
        reply = in_process("codex", codex("PreToolUse", "Bash", {"command": command}, home / "proj"))
        assert reply.output["hookSpecificOutput"]["permissionDecision"] == "deny"


# -- 3. Codex interactive shells: exec_command with a terminal, then unseen write_stdin -----
class TestInteractiveShells:
    @pytest.mark.parametrize(
        "params",
        [
            {"cmd": "bash", "tty": True},
            {"cmd": "python3", "tty": True},
            {"cmd": "node", "tty": True},
            {"cmd": "bash -i"},
            {"command": ["zsh"]},
            {"cmd": "ssh build-host", "tty": True},
            {"cmd": "psql -d app", "tty": True},
            {"cmd": "docker exec -it web sh", "tty": True},
        ],
    )
    def test_an_interactive_shell_is_not_auto_allowed(
        self, in_process: Any, home: Path, params: dict[str, Any]
    ) -> None:
        reply = in_process("codex", codex("PreToolUse", "exec_command", params, home / "proj"))
        text = reply.output["hookSpecificOutput"]["permissionDecisionReason"]
        assert reply.output["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert REFUSAL_TEXT in text.lower() and "G425" in text

    @pytest.mark.parametrize(
        "params",
        [
            {"cmd": "ls -la", "tty": True},
            {"cmd": "python3 script.py", "tty": True},
            {"cmd": "bash -c 'ls -la'", "tty": True},
            {"cmd": "bash < script.sh"},
            {"cmd": "python3 --version", "tty": True},
        ],
    )
    def test_commands_and_scripts_are_judged_as_before(
        self, in_process: Any, home: Path, params: dict[str, Any]
    ) -> None:
        reply = in_process("codex", codex("PreToolUse", "exec_command", params, home / "proj"))
        assert reply.output is None, reply.stdout


# -- 6. failed commands are failures on Codex and Gemini --------------------------------------
class TestOutcomes:
    @pytest.mark.parametrize(
        ("response", "status"),
        [
            ("Exit code: 1\nWall time: 0.2 seconds\nOutput:\nmake: *** [deploy] Error 1\n", "failure"),
            ("Chunk ID: 9f\nWall time: 0.1 seconds\nProcess exited with code 2\nOutput:\nno\n", "failure"),
            ('{"output": "boom", "metadata": {"exit_code": 3, "duration_seconds": 0.1}}', "failure"),
            ({"output": "Exit code: 4\nOutput:\n"}, "failure"),
            ("Exit code: 0\nWall time: 0.2 seconds\nOutput:\nlog says: Exit code: 1\n", "success"),
            ("a.txt\nb.txt\n", "success"),
        ],
    )
    def test_codex_post_tool_use(self, in_process: Any, ws: Path, home: Path, response: Any, status: str) -> None:
        in_process(
            "codex", codex("PostToolUse", "Bash", {"command": "make deploy"}, home / "proj", tool_response=response)
        )
        assert [line["status"] for line in jsonl(ws, ".command-execution.jsonl")] == [status]

    @pytest.mark.parametrize(
        ("content", "status"),
        [
            (
                "Command: make deploy\nDirectory: (root)\nOutput: Error 1\nError: (none)\nExit Code: 2\nSignal: (none)",
                "failure",
            ),
            ("Command: ls\nDirectory: (root)\nOutput: a.txt\nError: (none)\nExit Code: 0\nSignal: (none)", "success"),
            ("Command: cat log\nOutput: Exit Code: 2\nError: (none)\nExit Code: 0\nSignal: (none)", "success"),
            ("a.txt\nb.txt", "success"),
        ],
    )
    def test_gemini_after_tool_reads_exit_code_in_llm_content(
        self, in_process: Any, ws: Path, home: Path, content: str, status: str
    ) -> None:
        payload = gemini(
            "AfterTool", "make deploy", home / "proj", tool_response={"llmContent": content, "returnDisplay": content}
        )
        in_process("gemini", payload)
        assert [line["status"] for line in jsonl(ws, ".command-execution.jsonl")] == [status]


# -- 7. OpenClaw: guard's own refusals are not tool failures ----------------------------------
def openclaw(hook_name: str, command: str, call_id: str, **event: Any) -> dict[str, Any]:
    return {
        "hook": hook_name,
        "event": {"toolName": "exec", "params": {"command": command}, "runId": "run-1", "toolCallId": call_id, **event},
        "ctx": {"agentId": "main", "sessionKey": "agent:main:telegram:dm:1", "toolName": "exec", "toolCallId": call_id},
    }


class TestOpenClawRefusals:
    def test_five_refusals_do_not_make_ls_refused(self, in_process: Any, ws: Path) -> None:
        for i in range(5):
            blocked = in_process("openclaw", openclaw("before_tool_call", "rm -rf /", f"c{i}"))
            assert blocked.output["block"] is True
            in_process(
                "openclaw", openclaw("after_tool_call", "rm -rf /", f"c{i}", error=blocked.output["blockReason"])
            )
        in_process("openclaw", openclaw("after_tool_call", "rm -rf /", "c9", error="denied", guardRefused=True))
        assert jsonl(ws, ".command-execution.jsonl") == []
        answer = in_process("openclaw", openclaw("before_tool_call", "ls", "c10")).output
        assert "block" not in answer  # was: refused for "session health 57" after five "failures"
        assert "fail" not in json.dumps(answer)  # the refusals count once, as refusals (G206 may ask)

    def test_a_real_tool_error_is_still_a_failure(self, in_process: Any, ws: Path) -> None:
        in_process("openclaw", openclaw("after_tool_call", "make", "c1", error="make: *** [all] Error 2", durationMs=5))
        assert [line["status"] for line in jsonl(ws, ".command-execution.jsonl")] == ["failure"]


# -- 5. headless: GUARD_HEADLESS=1 in every host -----------------------------------------------
class TestHeadlessEnv:
    @pytest.mark.parametrize(
        ("host", "payload", "denied"),
        [
            ("gemini", lambda cwd: gemini("BeforeTool", ASK, cwd), lambda o: o["decision"] == "deny"),
            (
                "claude-code",
                lambda cwd: claude_pre(ASK, cwd),
                lambda o: o["hookSpecificOutput"]["permissionDecision"] == "deny",
            ),
            (
                "cursor",
                lambda cwd: {
                    "hook_event_name": "beforeShellExecution",
                    "command": ASK,
                    "cwd": str(cwd),
                    "conversation_id": "c1",
                    "generation_id": "g1",
                },
                lambda o: o["permission"] == "deny",
            ),
            ("openclaw", lambda cwd: openclaw("before_tool_call", ASK, "c1"), lambda o: o.get("block") is True),
        ],
    )
    def test_a_confirm_is_a_deny_with_the_reason(
        self, in_process: Any, ws: Path, home: Path, host: str, payload: Any, denied: Any
    ) -> None:
        asked = in_process(host, payload(home / "proj"))
        assert not denied(asked.output), asked.stdout  # someone could answer: it asks
        headless = in_process(host, payload(home / "proj"), env={"GUARD_HEADLESS": "1"})
        assert denied(headless.output) and "nobody can answer" in headless.stdout
        assert [e["state"] for e in pending(ws)] == ["asked"]  # only the first one asked

    def test_install_gemini_says_how_to_run_headless(self, home: Path, ws: Path) -> None:
        proc = subprocess.run(
            [*GUARD_CMD, "install", "gemini", "--settings", str(home / "settings.json"), "--workspace", str(ws)],
            capture_output=True,
            text=True,
            env=env_for(home),
            timeout=60,
        )
        assert proc.returncode == 0 and "GUARD_HEADLESS=1 gemini -p" in proc.stdout


# -- 4. Codex fails closed --------------------------------------------------------------------
class TestCodexFailsClosed:
    def test_a_workspace_guard_cannot_use_denies_in_codex_schema(self, home: Path, tmp_path: Path) -> None:
        """Codex needs an approval id guard cannot store: an ask becomes a deny, in Codex's schema."""
        broken = tmp_path / "not-a-dir"
        broken.write_text("x")
        out, code, _ = hook(
            "codex", codex("PreToolUse", "Bash", {"command": ASK}, home / "proj"), broken, env_for(home)
        )
        assert code == 0 and out["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert sorted(out) == ["hookSpecificOutput"]
        assert sorted(out["hookSpecificOutput"]) == ["hookEventName", "permissionDecision", "permissionDecisionReason"]

    def test_a_workspace_guard_cannot_use_keeps_the_static_verdict_of_a_read(self, home: Path, tmp_path: Path) -> None:
        """Near-miss: a read the static layer rates safe still runs (issue 12: keep the static verdict)."""
        broken = tmp_path / "not-a-dir"
        broken.write_text("x")
        out, code, _ = hook(
            "codex", codex("PreToolUse", "Bash", {"command": ALLOW}, home / "proj"), broken, env_for(home)
        )
        assert code == 0 and (out is None or out.get("hookSpecificOutput", {}).get("permissionDecision") != "deny")

    def test_a_payload_it_cannot_read_denies(self, in_process: Any, home: Path) -> None:
        payload = codex("PreToolUse", "Bash", {"command": ALLOW}, home / "proj")
        payload["tool_input"] = ["ls"]
        reply = in_process("codex", payload)
        assert reply.output["hookSpecificOutput"]["permissionDecision"] == "deny" and reply.exit_code == 0
