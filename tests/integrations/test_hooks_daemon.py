"""``guard serve``: hooks answered by a warm daemon, the same as in-process, and a fallback when it is not there."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hookhelpers import (
    ALLOW,
    ASK,
    BLOCK,
    decisions,
    file_mode,
    hook_env,
    interactions,
    prepare,
    run_hook,
    sample,
    with_command,
)

from guard.integrations import daemon
from tests.conftest import GUARD_CMD


def daemon_env(**extra: str) -> dict[str, str]:
    return hook_env(GUARD_HOOKS_DAEMON="auto", **extra)


def serve_status(ws: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    proc = subprocess.run(
        [*GUARD_CMD, "serve", "--workspace", str(ws), *args], capture_output=True, text=True, env=env or daemon_env()
    )
    status: dict[str, Any] = json.loads(proc.stdout)
    return status | {"exit": proc.returncode}


@pytest.fixture
def served(ws: Path) -> Iterator[subprocess.Popen[str]]:
    """A foreground ``guard serve`` we started, ready when it says so; stopped by its pid."""
    proc = subprocess.Popen(
        [*GUARD_CMD, "serve", "--workspace", str(ws)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=daemon_env(),
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("guard serve: listening on"), line
    yield proc
    _finish(proc)


def _finish(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=20)


def hooked_via_daemon(host: str, payload: Any, ws: Path) -> Any:
    """Like run_hook, but letting the hook use the daemon, and reporting whether it decided in-process."""
    proc = subprocess.run(
        [*GUARD_CMD[:1], "-X", "importtime", *GUARD_CMD[1:], "hook", host, "--workspace", str(ws)],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=daemon_env(),
        timeout=60,
    )
    modules = {
        line.split("|")[-1].strip() for line in proc.stderr.decode().splitlines() if line.startswith("import time:")
    }
    return proc, modules


def test_the_daemon_answers_like_the_in_process_path(served: subprocess.Popen[str], ws: Path, tmp_path: Path) -> None:
    other = prepare(tmp_path / "in-process")
    cases = [
        ("claude-code", with_command(sample("claude-code", "pretooluse_bash.in.json"), ALLOW)),
        ("claude-code", with_command(sample("claude-code", "pretooluse_bash.in.json"), ASK)),
        ("claude-code", with_command(sample("claude-code", "pretooluse_bash.in.json"), BLOCK)),
        ("codex", with_command(sample("codex", "pretooluse_bash.in.json"), BLOCK)),
        ("gemini", with_command(sample("gemini", "beforetool.in.json"), ASK)),
        ("cursor", with_command(sample("cursor", "beforeshellexecution.in.json"), ASK)),
        ("openclaw", with_command(sample("openclaw", "before_tool_call.event.json"), BLOCK)),
    ]
    for host, payload in cases:
        proc, modules = hooked_via_daemon(host, payload, ws)
        assert proc.returncode == 0, proc.stderr
        assert "guard.core" not in modules and "guard.integrations.hosts.flow" not in modules  # a thin client
        local = run_hook(host, payload, other)
        ours, theirs = json.loads(proc.stdout), local.json
        assert _strip_numbers(ours) == _strip_numbers(theirs), host
    assert len(decisions(ws)) == len(cases)


def _strip_numbers(obj: Any) -> Any:
    """Answers equal up to ids and scores (``guard approve <id>``, ``score 57``)."""
    text = json.dumps(obj)
    import re

    return re.sub(r"guard approve [0-9a-f]+|score \d+", "X", text)


def test_pairing_works_across_daemon_and_in_process_hooks(served: subprocess.Popen[str], ws: Path) -> None:
    pre = with_command(sample("claude-code", "pretooluse_bash.in.json"), ASK)
    hooked_via_daemon("claude-code", pre, ws)
    post = pre | {"hook_event_name": "PostToolUse", "tool_response": {"stdout": "", "interrupted": False}}
    assert run_hook("claude-code", post, ws, "--no-daemon").json == {}
    assert [i["action"] for i in interactions(ws)] == ["approved"]


def test_socket_is_private_and_status_reports_the_daemon(served: subprocess.Popen[str], ws: Path) -> None:
    path = daemon.socket_path(ws)
    assert path == ws / "guard.sock" and file_mode(path) == 0o600
    status = serve_status(ws, "--status")
    assert status["running"] is True and status["pid"] == served.pid and status["exit"] == 0


def test_a_second_daemon_for_the_same_workspace_steps_aside(served: subprocess.Popen[str], ws: Path) -> None:
    proc = subprocess.run(
        [*GUARD_CMD, "serve", "--workspace", str(ws)], capture_output=True, text=True, env=daemon_env(), timeout=30
    )
    assert proc.returncode == 0 and "already running" in proc.stderr
    assert serve_status(ws, "--status")["pid"] == served.pid


def test_stop_ends_the_daemon_and_removes_its_socket(served: subprocess.Popen[str], ws: Path) -> None:
    assert serve_status(ws, "--stop", "--wait", "10")["running"] is False
    assert served.wait(timeout=20) == 0
    assert not (ws / "guard.sock").exists()


def test_a_client_of_another_version_makes_the_daemon_step_down(served: subprocess.Popen[str], ws: Path) -> None:
    answer = daemon.call(ws, {"v": 1, "op": "hook", "host": "claude-code", "input": "{}", "version": "0.0.0-old"})
    assert answer is not None and "error" in answer
    assert served.wait(timeout=20) == 0


def test_the_client_refuses_a_socket_in_a_directory_others_can_enter(served: subprocess.Popen[str], ws: Path) -> None:
    assert daemon.call(ws, {"v": 1, "op": "ping"}) is not None
    os.chmod(ws, 0o755)
    try:
        assert daemon.call(ws, {"v": 1, "op": "ping"}) is None
    finally:
        os.chmod(ws, 0o700)


def test_a_hook_starts_the_daemon_on_demand_and_answers_meanwhile(ws: Path) -> None:
    payload = with_command(sample("claude-code", "pretooluse_bash.in.json"), ASK)
    first = run_hook("claude-code", payload, ws, env=daemon_env())
    assert first.json["hookSpecificOutput"]["permissionDecision"] == "ask"  # decided in-process
    status = serve_status(ws, "--status", "--wait", "30")
    try:
        assert status["running"] is True
        proc, modules = hooked_via_daemon("claude-code", payload, ws)
        assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "ask"
        assert "guard.core" not in modules
    finally:
        serve_status(ws, "--stop", "--wait", "10")
        _kill_if_alive(status.get("pid"))


def test_no_daemon_when_the_setting_is_off(ws: Path) -> None:
    (ws / "guard.toml").write_text((ws / "guard.toml").read_text() + '[hooks]\ndaemon = "off"\n')
    run_hook("claude-code", sample("claude-code", "pretooluse_bash.in.json"), ws, env=daemon_env())
    assert not (ws / ".guard-serve.spawned").exists()
    assert serve_status(ws, "--status")["running"] is False


def test_a_long_workspace_path_gets_a_private_socket_elsewhere(tmp_path: Path) -> None:
    ws = prepare(tmp_path / ("w" * 110))
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    env = daemon_env(XDG_RUNTIME_DIR=str(run_dir))
    proc = subprocess.Popen(
        [*GUARD_CMD, "serve", "--workspace", str(ws)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        path = Path(line.rsplit(" ", 1)[-1].strip())
        assert path.parent == run_dir / f"guard-{os.getuid()}" and file_mode(path.parent) == 0o700
        out = run_hook(
            "claude-code", with_command(sample("claude-code", "pretooluse_bash.in.json"), BLOCK), ws, env=env
        )
        assert out.json["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert serve_status(ws, "--status", env=env)["pid"] == proc.pid
    finally:
        _finish(proc)


def _kill_if_alive(pid: Any) -> None:
    if isinstance(pid, int):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
