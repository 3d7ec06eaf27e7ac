"""What guard tells the agent never names a way to switch guard off (issue 12, deliverable 9).

Every text an agent can read: each host's hook answers (allow, ask, deny, headless, out of
band, an open circuit breaker, input guard cannot read, guard failing), and the exceptions
``@guarded`` raises. They say what to do instead and that the person can approve; none
names ``guard reset``, ``uninstall``, a configuration command or key, or a ``GUARD_``
variable. Codex and Cursor, which cannot ask from a hook, may address the person with the
id to approve (``guard approve ID`` needs the person's terminal). The person's own views
(``guard explain``, ``guard stats``) still show ``guard reset``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from guard.errors import ToolBlocked

FORBIDDEN = re.compile(
    r"guard\s+reset|uninstall|guard\s+config|GUARD_|hooks\.headless|guard\.headless|--headless|--no-ask"
    r"|--no-daemon|confirm=|guard\.toml|guard\s+install",
    re.I,
)
APPROVE = re.compile(r"guard\s+approve", re.I)
MAY_NAME_APPROVE = {"codex", "cursor"}  # addressed to the person, with the id: the hook cannot ask
HOSTS = ("claude-code", "codex", "gemini", "cursor", "openclaw")
FAILING = "make deploy"


def pre(host: str, command: str, cwd: Path, sid: str) -> dict[str, Any]:
    if host == "cursor":
        return {"hook_event_name": "beforeShellExecution", "command": command, "cwd": str(cwd),
                "conversation_id": sid, "generation_id": "g1"}  # fmt: skip
    if host == "openclaw":
        return {"hook": "before_tool_call", "event": {"toolName": "exec", "params": {"command": command}},
                "ctx": {"sessionKey": sid}}  # fmt: skip
    name, tool = ("BeforeTool", "run_shell_command") if host == "gemini" else ("PreToolUse", "Bash")
    return {"session_id": sid, "cwd": str(cwd), "hook_event_name": name, "tool_name": tool,
            "permission_mode": "default", "tool_input": {"command": command}}  # fmt: skip


def failed(host: str, command: str, cwd: Path, sid: str) -> dict[str, Any]:
    if host == "cursor":
        return {"hook_event_name": "afterShellExecution", "command": command, "cwd": str(cwd),
                "conversation_id": sid, "generation_id": "g1", "exit_code": 2, "output": "Error 2"}  # fmt: skip
    if host == "openclaw":
        return {"hook": "after_tool_call", "event": {"toolName": "exec", "params": {"command": command},
                "error": "make: *** [deploy] Error 2"}, "ctx": {"sessionKey": sid}}  # fmt: skip
    base = pre(host, command, cwd, sid)
    if host == "gemini":
        return base | {"hook_event_name": "AfterTool", "tool_response": {"llmContent": "Output: x\nExit Code: 2"}}
    if host == "claude-code":
        return base | {"hook_event_name": "PostToolUseFailure", "error": "Exit code 2\nError 2"}
    return base | {"hook_event_name": "PostToolUse", "tool_response": "Exit code: 2\nWall time: 1 seconds\nOutput:\n"}


def fail_until_the_breaker_opens(workspace: Path, sid: str) -> None:
    """The session ran the failing command six times (its circuit breaker opens at five)."""
    from guard import Guard

    with Guard(workspace, {"system.health": 90, "memory.backend": "history"}) as g:
        for _ in range(6):
            g.decide("bash", {"command": FAILING}, session_id=sid)
            g.record_result("bash", {"command": FAILING}, session_id=sid, success=False, error="exit 2")


@pytest.fixture
def texts(tmp_path: Path) -> Callable[[str], list[str]]:
    """Every answer one host gives across guard's situations, as text."""
    from guard import Guard
    from guard.integrations.hosts import get_host
    from guard.integrations.hosts.flow import run

    def collect(host: str) -> list[str]:
        ws = tmp_path / host
        ws.mkdir(mode=0o700)
        cwd = tmp_path / "proj"
        cwd.mkdir(exist_ok=True)

        def once(payload: Any, env: dict[str, str] | None = None, workspace: Path = ws) -> str:
            opened: list[Guard] = []

            def open_guard() -> Guard:
                opened.append(Guard(workspace, {"system.health": 90, "memory.backend": "history"}))
                return opened[-1]

            raw = payload if isinstance(payload, str) else json.dumps(payload)
            reply = run(get_host(host), raw, open_guard, env=env or {})
            for g in opened:
                g.close()
            return reply.stdout + reply.stderr

        out = [
            once(pre(host, "ls -la", cwd, "a")),
            once(pre(host, "ssh build-host uptime", cwd, "b")),  # ask, or out of band
            once(pre(host, "rm -rf /", cwd, "c")),  # block
            once(pre(host, "bash", cwd, "d")),  # an interactive shell
            once(pre(host, "ssh build-host uptime", cwd, "e"), env={"GUARD_HEADLESS": "1"}),
            once("this is not json"),
            once(pre(host, "ls", cwd, "f"), workspace=tmp_path / "missing" / "ws"),
        ]
        (tmp_path / "file").write_text("x")
        out.append(once(pre(host, "ls", cwd, "g"), workspace=tmp_path / "file"))  # guard cannot record
        out.append(once(pre(host, FAILING, cwd, "h")))
        out.append(once(failed(host, FAILING, cwd, "h")))
        fail_until_the_breaker_opens(ws, "h")
        out.append(once(pre(host, FAILING, cwd, "h")))
        assert "G210" in out[-1], out[-1]  # the breaker's refusal is among the texts checked
        return out

    return collect


@pytest.mark.parametrize("host", HOSTS)
def test_no_hook_answer_names_a_way_to_switch_guard_off(texts: Callable[[str], list[str]], host: str) -> None:
    for text in texts(host):
        assert not FORBIDDEN.search(text), text
        if host not in MAY_NAME_APPROVE:
            assert not APPROVE.search(text), text


def test_an_open_breaker_tells_the_agent_the_person_can_close_it(texts: Callable[[str], list[str]]) -> None:
    last = texts("claude-code")[-1]
    assert "the person can close it" in last and "find out why it fails" in last


def test_guarded_exceptions_say_what_to_do_instead(make_guard: Any) -> None:
    from guard import guarded

    g = make_guard()

    @guarded(tool="bash", guard=g, session_id="s1")
    def shell(command: str) -> str:
        if command == FAILING:
            raise RuntimeError("Error 2")
        return "ok"

    messages = []
    for command in ("rm -rf /", "ssh build-host uptime"):
        with pytest.raises(ToolBlocked) as caught:
            shell(command)
        messages.append(str(caught.value))
    for _ in range(6):
        g.decide("bash", {"command": FAILING}, session_id="s1")
        g.record_result("bash", {"command": FAILING}, session_id="s1", success=False, error="exit 2")
    with pytest.raises(ToolBlocked) as caught:
        shell(FAILING)
    messages.append(str(caught.value))
    assert "G210" in messages[-1]
    for m in messages:
        assert not FORBIDDEN.search(m) and not APPROVE.search(m), m
    assert "tell the person" in messages[1]  # nobody to confirm: say who must approve
    assert "Instead:" in messages[0] or "tell the person" in messages[0]


def test_the_persons_views_still_show_how_to_close_a_breaker(make_guard: Any) -> None:
    from guard.cli.render import explain_text

    g = make_guard()
    for _ in range(6):
        g.decide("bash", {"command": FAILING}, session_id="s1")
        g.record_result("bash", {"command": FAILING}, session_id="s1", success=False, error="exit 2")
    record = g.decide("bash", {"command": FAILING}, session_id="s1")
    assert "guard reset --session s1 --task" in explain_text(record)
