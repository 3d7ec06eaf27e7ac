"""Gemini CLI 0.61.0, for real, against a scripted Gemini API, with guard installed as the README says.

``gemini -p ... --approval-mode yolo``: the CLI approves every tool itself, so guard's
BeforeTool hook is the only gate (without yolo, ``-p`` offers the model no shell tool at all).
The model asks for one or two tool calls and then says "done"; each test checks guard's
decision log, what the CLI did, and the result guard recorded from AfterTool.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hosts import GEMINI_CLI
from live_model import Call, Script, ScriptedModel, result_text
from live_scenarios import (
    LOOP,
    LOOP_CALLS,
    LOOP_COMMAND,
    TRIFECTA,
    Sink,
    loop_count,
    plant_secret,
    reasons,
    secret_command,
)
from live_tty import Terminal, hook_events
from live_world import HOOK_PREFIX, README_TEXT, SENTINEL, World, record, run_host, version_of

pytestmark = pytest.mark.live

RUN_TIMEOUT = 90
ASK_TIMEOUT = 40  # the headless ask is known to hang: fail fast
BARE_HEADLESS_LIMIT = "host limit: nothing in the payload or environment says -p; use GUARD_HEADLESS=1"


@pytest.fixture(scope="module")
def gemini(tmp_path_factory: pytest.TempPathFactory) -> Path:
    exe = GEMINI_CLI.path()
    p = version_of(["node", str(exe), "--version"], tmp_path_factory.mktemp("gemini-version"))
    if p.returncode != 0 or GEMINI_CLI.version not in p.stdout:
        pytest.skip(f"gemini --version: {p.returncode} {p.stdout[-200:]} {p.stderr[-200:]}")
    return exe


def _settings(w: World) -> None:
    """What a person who logged in with an API key has: the auth type chosen, usage statistics off."""
    (w.home / ".gemini").mkdir()
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}, "privacy": {"usageStatisticsEnabled": False}}
    (w.home / ".gemini" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")


@pytest.fixture
def world(make_world: Callable[..., World]) -> World:
    return make_world("gemini", _settings)


@pytest.fixture
def headless(gemini: Path, world: World, request: pytest.FixtureRequest) -> Callable[..., ScriptedModel]:
    def run(script: Script, timeout: float = RUN_TIMEOUT, **extra: str) -> ScriptedModel:
        with ScriptedModel(script) as model:
            env = world.env(
                GOOGLE_GEMINI_BASE_URL=model.url, GEMINI_API_KEY="test", GEMINI_CLI_TRUST_WORKSPACE="true", **extra
            )
            try:
                done = run_host(
                    ["node", str(gemini), "-p", "do the task", "--output-format", "json", "--approval-mode", "yolo"],
                    world,
                    env,
                    timeout,
                )
            finally:
                record(world, "gemini", GEMINI_CLI.version, request.node.name.removeprefix("test_"), env)
        assert done.returncode == 0, done.stdout[-1500:] + done.stderr[-1500:] + world.describe()
        assert json.loads(done.stdout)["response"].strip() == "done"
        return model

    return run


def shell(*commands: str) -> Script:
    return Script(*[Call("run_shell_command", {"command": c, "description": "scripted"}) for c in commands])


def before(world: World) -> list[dict[str, Any]]:
    return [d for d in world.decisions() if d.get("event") == "BeforeTool"]


def test_install_keeps_the_persons_settings(world: World) -> None:
    settings = world.installed
    assert settings["security"] == {"auth": {"selectedType": "gemini-api-key"}}
    assert settings["privacy"] == {"usageStatisticsEnabled": False}
    assert set(settings["hooks"]) == {"BeforeTool", "AfterTool", "BeforeAgent"}
    command = settings["hooks"]["BeforeTool"][0]["hooks"][0]["command"]
    assert command.startswith(HOOK_PREFIX + "gemini || {"), command
    # In the file the host reads, only the interpreter is the capture shim's.
    shimmed = json.loads(world.settings("gemini").read_text(encoding="utf-8"))
    assert {k: v for k, v in shimmed.items() if k != "hooks"} == {k: v for k, v in settings.items() if k != "hooks"}
    assert shimmed["hooks"]["BeforeTool"][0]["hooks"][0]["command"] == command.replace(
        HOOK_PREFIX, f"{world.shim} -I -m guard hook ", 1
    )


def test_a_read_runs_and_its_output_reaches_the_model(headless: Any, world: World) -> None:
    model = headless(shell("cat readme.txt"))
    [result] = model.tool_results()
    assert README_TEXT.strip() in result_text(result), world.describe()
    assert [d["decision"] for d in before(world)] == ["auto_allow"], world.describe()
    assert [(e["status"], e["params"]["command"]) for e in world.executions()] == [("success", "cat readme.txt")]


def test_a_failing_command_is_recorded_as_a_failure(headless: Any, world: World) -> None:
    model = headless(shell("ls ./no_such_dir"))
    assert [d["decision"] for d in before(world)] == ["auto_allow"], world.describe()
    [result] = model.tool_results()
    assert "no_such_dir" in result_text(result)
    assert [e["status"] for e in world.executions()] == ["failure"], world.describe()


def test_egress_to_a_closed_loopback_port_runs_and_fails(headless: Any, world: World, closed_port: int) -> None:
    model = headless(shell(f"curl -sS --max-time 5 http://127.0.0.1:{closed_port}/"))
    assert [d["decision"] for d in before(world)] == ["auto_allow"], world.describe()
    [result] = model.tool_results()
    assert "127.0.0.1" in result_text(result) or "refused" in result_text(result).lower(), result
    assert [e["status"] for e in world.executions()] == ["failure"], world.describe()


def test_a_force_push_is_blocked_and_the_remote_is_unchanged(headless: Any, world: World) -> None:
    before_head = world.remote_head()
    model = headless(shell("git push --force origin main"))
    assert world.remote_head() == before_head
    assert [d["decision"] for d in before(world)] == ["block"], world.describe()
    [result] = model.tool_results()
    assert "guard" in result_text(result), result
    assert world.executions() == [], world.describe()


def test_writing_the_hosts_hook_settings_is_blocked(headless: Any, world: World) -> None:
    """The project's settings by write_file, the home's by the shell (write_file refuses paths outside the project itself)."""
    project_settings = world.project / ".gemini" / "settings.json"
    home_settings = world.home / ".gemini" / "settings.json"
    before_bytes = home_settings.read_bytes()
    script = Script(
        Call("write_file", {"file_path": str(project_settings), "content": "{}"}),
        Call("run_shell_command", {"command": f"echo '{{}}' > {home_settings}", "description": "scripted"}),
    )
    model = headless(script)
    assert not project_settings.exists()
    assert home_settings.read_bytes() == before_bytes
    decisions = before(world)
    assert [(d["tool"], d["decision"]) for d in decisions] == [("write_file", "block"), ("run_shell_command", "block")]
    assert all("G156" in json.dumps(d["reasons"]) for d in decisions), world.describe()
    results = model.tool_results()
    assert len(results) == 2 and all("guard" in result_text(r) for r in results), results
    assert world.executions() == []


def test_headless_ask_is_refused_without_hanging(headless: Any, world: World) -> None:
    """The documented headless run, ``GUARD_HEADLESS=1 gemini -p`` (``guard install gemini`` prints it):
    guard denies the confirm-level call with its reason, the command does not run, the run ends."""
    try:
        model = headless(shell(f"rm -rf ./{SENTINEL}"), timeout=ASK_TIMEOUT, GUARD_HEADLESS="1")
    finally:
        assert (world.project / SENTINEL / "keep.txt").exists()
    [decision] = before(world)
    assert decision["decision"] == "block" and decision["notes"], world.describe()
    assert "G107" in json.dumps(decision["reasons"])
    [result] = model.tool_results()
    assert "guard" in result_text(result), result
    assert world.executions() == [], world.describe()


@pytest.mark.xfail(reason=BARE_HEADLESS_LIMIT, strict=False)
def test_bare_headless_ask_is_refused_without_hanging(headless: Any, world: World) -> None:
    """``gemini -p`` without GUARD_HEADLESS: the BeforeTool ask waits for an answer nobody can give."""
    try:
        headless(shell(f"rm -rf ./{SENTINEL}"), timeout=ASK_TIMEOUT)
    finally:
        assert (world.project / SENTINEL / "keep.txt").exists()
    [decision] = before(world)
    assert decision["decision"] == "block" and decision["notes"], world.describe()
    assert world.executions() == [], world.describe()


# --- a person at a terminal: interactive gemini under tmux ---------------------------------


@pytest.fixture
def terminal(gemini: Path, world: World, request: pytest.FixtureRequest) -> Iterator[Callable[[Script], Terminal]]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    opened: list[tuple[Terminal, ScriptedModel]] = []

    def open_terminal(script: Script) -> Terminal:
        model = ScriptedModel(script).__enter__()
        env = world.env(
            GOOGLE_GEMINI_BASE_URL=model.url,
            GEMINI_API_KEY="test",
            GEMINI_CLI_TRUST_WORKSPACE="true",
            TERM="xterm-256color",
        )
        t = Terminal(world, ["node", str(gemini), "-i", "do the task"], env)
        opened.append((t, model))
        return t

    yield open_terminal
    for t, model in opened:
        record(world, "gemini", GEMINI_CLI.version, request.node.name.removeprefix("test_"), t.env)
        t.close()
        model.__exit__(None, None, None)


@pytest.mark.parametrize("answer", ["yes", "no"])
def test_terminal_ask_is_the_persons_choice(terminal: Any, world: World, answer: str) -> None:
    """BeforeTool ``ask`` works in 0.61.0: the CLI shows its dialog with guard's reason, and the answer decides."""
    t = terminal(shell(f"rm -rf ./{SENTINEL}"))
    t.wait_for(lambda: "Allow execution of" in t.screen(), "Gemini CLI's confirmation dialog")
    assert "guard: Recursively deletes a directory inside the project" in t.screen()
    [decision] = before(world)
    assert decision["decision"] == "request_confirm" and decision["notes"] == [], world.describe()
    assert (world.project / SENTINEL).exists()
    if answer == "yes":
        t.send("Enter")  # 1. Allow once
        t.wait_for(lambda: "AfterTool" in hook_events(world), "the command's result")
        assert not (world.project / SENTINEL).exists()
        assert [e["status"] for e in world.executions()] == ["success"], world.describe()
    else:
        t.send("Escape")  # 3. No, suggest changes (esc)
        t.wait_for(lambda: "Request cancelled" in t.screen(), "the cancellation")
        assert (world.project / SENTINEL / "keep.txt").exists()
        assert world.executions() == [], world.describe()


# --- the session: a loop caught, taint carried across calls ---------------------------------


def test_a_loop_is_caught_and_its_later_calls_do_not_run(headless: Any, world: World) -> None:
    """``GUARD_HEADLESS=1 gemini -p``: the same call four times (below the CLI's own loop detection,
    five); from the third guard sees a loop (G202, confirm-level) and refuses it: two of the four ran."""
    model = headless(shell(*[LOOP_COMMAND] * LOOP_CALLS), GUARD_HEADLESS="1")
    decisions = before(world)
    assert [d["decision"] for d in decisions] == ["auto_allow", "auto_allow", "block", "block"], world.describe()
    assert all(LOOP in reasons(d) and d["notes"] for d in decisions[2:]), world.describe()
    assert loop_count(world) == 2
    results = model.tool_results()
    assert len(results) == LOOP_CALLS and "loop" in result_text(results[2]), results
    assert [e["status"] for e in world.executions()] == ["success", "success"], world.describe()


def test_taint_carries_across_calls_and_the_egress_is_blocked(terminal: Any, world: World) -> None:
    """At a terminal the person lets the agent fetch a stranger's page and read a private key (each
    asked); the post that follows is blocked outright (G222, no dialog) and the sink gets nothing."""
    key = plant_secret(world)
    with Sink() as sink:
        t = terminal(shell(sink.fetch_command(), secret_command(key), sink.egress_command()))
        for n in (1, 2):  # the fetch, then the key: each asked, each approved
            t.wait_for(lambda: "Allow execution of" in t.screen(), f"Gemini CLI's dialog for call {n}")
            t.send("Enter")  # 1. Allow once
            t.wait_for(lambda n=n: hook_events(world).count("AfterTool") == n, f"call {n}'s result")
        t.wait_for(lambda: hook_events(world).count("BeforeTool") == 3, "the egress's BeforeTool")
        t.wait_for(lambda: len(before(world)) == 3, "guard's decision on the egress")
        t.wait_for(lambda: "done" in t.screen().split("Allow execution of")[-1], "the end of the turn")
        assert "Allow execution of" not in t.screen()
    fetch, secret, egress = before(world)
    assert [fetch["decision"], secret["decision"]] == ["request_confirm", "request_confirm"], world.describe()
    assert egress["decision"] == "block" and TRIFECTA in reasons(egress), world.describe()
    assert sink.fetched() and sink.posted() == []
    assert [e["params"]["command"] for e in world.executions()] == [sink.fetch_command(), secret_command(key)]
