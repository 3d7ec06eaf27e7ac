"""``guard hook HOST`` with the daemon up is a thin client (issue 17, step 2).

The installed command is ``<python> -I -m guard hook HOST``. A wrapper runs exactly that entry
(``runpy`` on ``guard.__main__``) and reports ``sys.modules`` afterwards: with a live daemon the
process must not have loaded the decision code or its libraries. Fake HOME and GUARD_HOME, a
loopback-free Unix socket in the temporary workspace; the commands are data for guard.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from guard import hookclient
from guard.workspace import DECISIONS
from tests.conftest import GUARD_CMD, ROOT, guard_cli_env

WRAPPER = textwrap.dedent(
    """
    import atexit, json, runpy, sys
    out = sys.argv.pop(1)
    sys.argv[0] = "guard"

    @atexit.register  # the hook ends its process itself (os._exit) once atexit has run
    def dump():
        with open(out, "w") as f:
            json.dump({"modules": sorted(sys.modules)}, f)

    runpy.run_module("guard", run_name="__main__", alter_sys=True)
    """
)
HEAVY = (
    "attrs",
    "loguru",
    "psutil",
    "lancedb",
    "pyarrow",
    "numpy",
    "cachetools",
    "argparse",
    "tree_sitter",
    "guard.core",
    "guard.cli",
    "guard.static",
    "guard.integrations.hosts.flow",
)


def _env(tmp_path: Path, ws: Path) -> dict[str, str]:
    env = guard_cli_env() | {"HOME": str(tmp_path / "home"), "GUARD_HOME": str(ws), "GUARD_HOOKS_DAEMON": "auto"}
    env.pop("CLAUDE_CODE_CHILD_SESSION", None)
    return env


def _event(command: str) -> bytes:
    return json.dumps(
        {
            "session_id": "thin",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "cwd": "/tmp",
        }
    ).encode()


def _hook(tmp_path: Path, ws: Path, command: str, *args: str) -> tuple[subprocess.CompletedProcess[bytes], Any]:
    """``python -I -m guard hook claude-code`` (the installed form), through the module-dumping wrapper."""
    dump = tmp_path / "modules.json"
    dump.unlink(missing_ok=True)
    proc = subprocess.run(
        [sys.executable, "-I", "-c", WRAPPER, str(dump), "hook", "claude-code", *args],
        input=_event(command),
        capture_output=True,
        env=_env(tmp_path, ws),
        cwd=ROOT,  # -I: the checkout must be importable as the installed package is
        timeout=120,
    )
    return proc, json.loads(dump.read_text())


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture
def served(tmp_path: Path, ws: Path) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [*GUARD_CMD, "serve", "--workspace", str(ws)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=_env(tmp_path, ws),
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("guard serve: listening on")
    yield proc
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)


def _via(ws: Path) -> list[str | None]:
    log = ws / DECISIONS
    lines = log.read_text().splitlines() if log.exists() else []
    return [json.loads(line).get("via") for line in lines]


def test_hook_answered_by_the_daemon_loads_no_decision_code(tmp_path: Path, ws: Path, served: Any) -> None:
    for command, decision in (("ls -la", "allow"), ("rm -rf /", "deny")):
        proc, got = _hook(tmp_path, ws, command)
        answer = json.loads(proc.stdout)
        assert answer["hookSpecificOutput"]["permissionDecision"] == decision, proc.stderr
        assert [m for m in HEAVY if m in got["modules"]] == []
    assert _via(ws)[-2:] == ["daemon", "daemon"]


def test_hook_without_a_daemon_decides_in_process_on_the_same_event(tmp_path: Path, ws: Path) -> None:
    (ws / ".guard-serve.spawned").touch()  # "started moments ago": the fallback starts no daemon here
    proc, got = _hook(tmp_path, ws, "rm -rf /")
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "guard.core" in got["modules"]  # decided here, on the event the thin client read
    proc, _ = _hook(tmp_path, ws, "git status")
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"
    assert len(_via(ws)) == 2 and "daemon" not in _via(ws)
    assert not (ws / "guard.sock").exists()


def test_no_daemon_flag_and_daemon_off_skip_the_client(tmp_path: Path, ws: Path, served: Any) -> None:
    proc, got = _hook(tmp_path, ws, "ls -la", "--no-daemon")
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"
    assert "guard.core" in got["modules"]
    (ws / "guard.toml").write_text('[hooks]\ndaemon = "off"\n')
    proc, got = _hook(tmp_path, ws, "ls -la")
    assert "guard.core" in got["modules"]
    assert "daemon" not in _via(ws)


def test_unknown_host_still_gets_the_full_path_refusal(tmp_path: Path, ws: Path) -> None:
    proc = subprocess.run(
        [*GUARD_CMD, "hook", "nosuchhost"], input=_event("ls"), capture_output=True, env=_env(tmp_path, ws)
    )
    assert proc.returncode == 2 and b"unknown host" in proc.stderr


def test_thin_client_knows_the_hosts_integrations_knows() -> None:
    from guard.integrations.hosts import ALIASES, HOSTS

    assert set(HOSTS) == hookclient.HOST_NAMES
    assert hookclient.ALIASES == ALIASES


def test_workspace_resolution_matches_the_full_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from guard.workspace import resolve

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    for arg, env in ((None, None), ("rel/ws", None), ("~/x", None), (None, "~/g"), ("", str(tmp_path / "e"))):
        if env is None:
            monkeypatch.delenv("GUARD_HOME", raising=False)
        else:
            monkeypatch.setenv("GUARD_HOME", env)
        assert os.path.normpath(hookclient.workspace_of(arg)) == str(resolve(arg))
