"""Claude Code 2.1.332, for real, against a scripted Anthropic API, with guard installed as the README says.

Each test: a fresh world (fake home and project), ``guard install claude-code``, then
``claude -p`` with a model that asks for one tool call and then says "done". The test checks
what guard decided (``.fusion-decisions.jsonl``), what Claude Code did (the sentinel files,
the bare remote, the tool result it sent back to the model) and what guard recorded after
the call (``.command-execution.jsonl``).
"""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hosts import CLAUDE_CODE
from live_model import Call, Script, ScriptedModel, result_text
from live_world import README_TEXT, SENTINEL, World

pytestmark = pytest.mark.live

RUN_TIMEOUT = 120  # a headless run that waits for an answer nobody gives fails here instead of hanging


@pytest.fixture(scope="module")
def claude() -> Path:
    exe = CLAUDE_CODE.path()
    p = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60)
    if p.returncode != 0 or CLAUDE_CODE.version not in p.stdout:
        pytest.skip(f"claude --version: {p.returncode} {p.stdout[-200:]} {p.stderr[-200:]}")
    return exe


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = World.make(tmp_path / "live")
    installed = w.guard("install", "claude-code")
    assert installed.returncode == 0, installed.stderr
    yield w
    w.stop_daemon()


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on: bound, never listening, so a connect is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def settings(world: World) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((world.home / ".claude" / "settings.json").read_text(encoding="utf-8"))
    return data


def run_claude(claude: Path, world: World, model: ScriptedModel, *extra: str) -> subprocess.CompletedProcess[str]:
    env = world.env(
        CLAUDE_CONFIG_DIR=str(world.home / ".claude"),
        ANTHROPIC_BASE_URL=model.url,
        ANTHROPIC_API_KEY="test",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    return subprocess.run(
        [str(claude), "-p", "do the task", "--output-format", "json", *extra],
        cwd=world.project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )


def bash(command: str) -> Script:
    return Script(Call("Bash", {"command": command, "description": "scripted"}))


def pre_decisions(world: World) -> list[dict[str, Any]]:
    return [d for d in world.decisions() if d.get("event") == "PreToolUse"]


def test_install_writes_the_readme_command(world: World) -> None:
    hooks = settings(world)["hooks"]
    assert set(hooks) >= {"PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit"}
    command = hooks["PreToolUse"][0]["hooks"][0]["command"]
    assert command.startswith("guard hook claude-code"), command


def test_a_read_runs_and_its_output_reaches_the_model(claude: Path, world: World) -> None:
    with ScriptedModel(bash("cat readme.txt")) as model:
        done = run_claude(claude, world, model)
    assert done.returncode == 0, done.stderr + world.describe()
    results = model.tool_results()
    assert [result_text(r).strip() for r in results] == [README_TEXT.strip()], world.describe()
    assert [d["decision"] for d in pre_decisions(world)] == ["auto_allow"], world.describe()
    assert [(e["status"], e["params"]["command"]) for e in world.executions()] == [("success", "cat readme.txt")]


def test_a_failing_command_is_recorded_as_a_failure(claude: Path, world: World) -> None:
    with ScriptedModel(bash("ls ./no_such_dir")) as model:
        done = run_claude(claude, world, model)
    assert done.returncode == 0, done.stderr + world.describe()
    assert [d["decision"] for d in pre_decisions(world)] == ["auto_allow"], world.describe()
    [result] = model.tool_results()
    assert result.get("is_error") is True and "no_such_dir" in result_text(result)
    assert [e["status"] for e in world.executions()] == ["failure"], world.describe()
    assert [c["payload"]["hook_event_name"] for c in world.captures() if c["payload"]][-1] == "PostToolUseFailure"


def test_egress_to_a_closed_loopback_port_runs_and_fails(claude: Path, world: World, closed_port: int) -> None:
    with ScriptedModel(bash(f"curl -sS --max-time 5 http://127.0.0.1:{closed_port}/")) as model:
        done = run_claude(claude, world, model)
    assert done.returncode == 0, done.stderr + world.describe()
    assert [d["decision"] for d in pre_decisions(world)] == ["auto_allow"], world.describe()
    [result] = model.tool_results()
    assert result.get("is_error") is True, result
    assert [e["status"] for e in world.executions()] == ["failure"], world.describe()


def test_a_force_push_is_blocked_and_the_remote_is_unchanged(claude: Path, world: World) -> None:
    before = world.remote_head()
    with ScriptedModel(bash("git push --force origin main")) as model:
        done = run_claude(claude, world, model)
    assert done.returncode == 0, done.stderr + world.describe()
    assert world.remote_head() == before
    assert [d["decision"] for d in pre_decisions(world)] == ["block"], world.describe()
    [result] = model.tool_results()
    assert result.get("is_error") is True and "guard" in result_text(result), result
    assert world.executions() == [], world.describe()


def test_writing_the_hosts_hook_settings_is_blocked(claude: Path, world: World) -> None:
    target = world.home / ".claude" / "settings.json"
    before = target.read_bytes()
    # Claude Code writes only a file it has read in this session: read it, then write it.
    script = Script(
        Call("Read", {"file_path": str(target)}), Call("Write", {"file_path": str(target), "content": "{}"})
    )
    with ScriptedModel(script) as model:
        done = run_claude(claude, world, model)
    assert done.returncode == 0, done.stderr + world.describe()
    assert target.read_bytes() == before
    read, write = pre_decisions(world)
    assert read["tool"] == "Read" and read["decision"] == "auto_allow", world.describe()
    assert write["tool"] == "Write" and write["decision"] == "block", world.describe()
    assert "G156" in json.dumps(write["reasons"])
    results = model.tool_results()
    assert len(results) == 2, results
    result = results[-1]
    assert result.get("is_error") is True and "guard" in result_text(result), result


def test_headless_ask_is_refused_without_hanging(claude: Path, world: World) -> None:
    """``claude -p``: nobody can answer, so a confirm-level call is denied, and the run ends."""
    with ScriptedModel(bash(f"rm -rf ./{SENTINEL}")) as model:
        done = run_claude(claude, world, model)
    assert done.returncode == 0, done.stderr + world.describe()
    assert (world.project / SENTINEL / "keep.txt").exists()
    [decision] = pre_decisions(world)
    assert decision["decision"] == "block", world.describe()
    assert decision["notes"] == ["no human present: request_confirm acts as block"]
    assert "G107" in json.dumps(decision["reasons"])
    [result] = model.tool_results()
    assert result.get("is_error") is True, result
    assert world.executions() == [], world.describe()
