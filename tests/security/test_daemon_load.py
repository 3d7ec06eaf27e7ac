"""``guard serve`` under load and when it hangs (issue 13, deliverable 9).

200 hooks connecting in the same instant are all answered by the daemon (a listen backlog
of 64 answered 65-69 of 100, the rest decided in their own process); a daemon that stopped
answering is given up on after its first second, and the hook decides in-process; a daemon
killed outright leaves a socket that the next one replaces. Every decision line says which
answered: ``"via": "daemon"`` or ``"via": "hook"``.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from guard import __version__
from guard.integrations import daemon
from tests.conftest import GUARD_CMD, guard_cli_env

CLIENTS = 200


def env(ws: Path) -> dict[str, str]:
    e = guard_cli_env()
    for key in list(e):
        if key.startswith(("CLAUDE_CODE_", "GUARD_")) and key != "GUARD_SYSTEM_HEALTH":
            del e[key]
    return e | {"GUARD_HOME": str(ws), "GUARD_HOOKS_DAEMON": "auto"}


def payload(i: int, cwd: Path) -> bytes:
    return json.dumps(
        {
            "session_id": f"s{i}",
            "cwd": str(cwd),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "ls -la"},
            "tool_use_id": f"toolu_{i}",
        }
    ).encode()


def start(ws: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [*GUARD_CMD, "serve", "--workspace", str(ws)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env(ws),
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("guard serve: listening on")
    return proc


def finish(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGCONT)
        proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)


def vias(ws: Path) -> list[str]:
    path = ws / ".fusion-decisions.jsonl"
    return [json.loads(x).get("via") for x in path.read_text().splitlines() if x.strip()] if path.exists() else []


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir(mode=0o700)
    (w / "guard.toml").write_text('[system]\nhealth = 90\n[memory]\nbackend = "history"\n')
    return w


@pytest.fixture
def served(ws: Path) -> Iterator[subprocess.Popen[str]]:
    proc = start(ws)
    yield proc
    finish(proc)


def test_two_hundred_simultaneous_hooks_are_all_answered_by_the_daemon(
    ws: Path, tmp_path: Path, served: subprocess.Popen[str]
) -> None:
    barrier = threading.Barrier(CLIENTS)
    answers: list[Any] = [None] * CLIENTS

    def client(i: int) -> None:
        data = payload(i, tmp_path)
        barrier.wait()
        answers[i] = daemon.hook(ws, "claude-code", data, headless=False, may_ask=True, version=__version__)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    by_daemon = [a for a in answers if a is not None]
    fallback = CLIENTS - len(by_daemon)
    assert (len(by_daemon), fallback) == (CLIENTS, 0)
    assert all(json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "allow" for out, _, _ in by_daemon)
    assert vias(ws).count("daemon") == CLIENTS


def test_a_hung_daemon_is_given_up_on_and_the_hook_decides_in_process(
    ws: Path, tmp_path: Path, served: subprocess.Popen[str]
) -> None:
    assert daemon.ALIVE_TIMEOUT <= 1.0  # connect, and the daemon's first byte, within a second
    served.send_signal(signal.SIGSTOP)  # the process is there, its socket accepts, nothing answers
    try:
        assert daemon.call(ws, {"v": daemon.PROTOCOL, "op": "ping"}) is None
        proc = subprocess.run(
            [*GUARD_CMD, "hook", "claude-code", "--workspace", str(ws)],
            input=payload(1, tmp_path),
            capture_output=True,
            env=env(ws),
            timeout=60,
        )
        assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"
        assert vias(ws) == ["hook"]
    finally:
        served.send_signal(signal.SIGCONT)


def test_a_killed_daemon_leaves_a_socket_the_next_one_replaces(ws: Path, tmp_path: Path) -> None:
    first = start(ws)
    pid = daemon.call(ws, {"v": daemon.PROTOCOL, "op": "ping"})["pid"]  # type: ignore[index]
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=30)
    assert daemon.socket_path(ws).exists()  # stale: nobody listens
    assert daemon.call(ws, {"v": daemon.PROTOCOL, "op": "ping"}) is None
    second = start(ws)
    try:
        info = daemon.call(ws, {"v": daemon.PROTOCOL, "op": "ping"})
        assert info is not None and info["pid"] != pid
        answered = daemon.hook(
            ws, "claude-code", payload(2, tmp_path), headless=False, may_ask=True, version=__version__
        )
        assert answered is not None and vias(ws) == ["daemon"]
    finally:
        finish(second)
