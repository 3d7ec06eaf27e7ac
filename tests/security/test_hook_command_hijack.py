"""The hook command ``guard install`` writes cannot be answered by the agent's project.

``python -m guard`` puts the working directory first on ``sys.path``, so a ``guard.py``,
``guard/__main__.py`` or ``json.py`` in the project would run instead of guard; a bare
``guard`` fails when the host's PATH does not hold guard's environment. The installed command
is this Python by absolute path with isolated imports (``-I``). Each test reads the command
back from the settings file the real ``guard install`` wrote in a fake HOME and runs it with
``sh -c``, as the hosts do, from a project full of impostors, with PATH cut to /usr/bin:/bin.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from guard.integrations.install import is_ours
from tests.conftest import GUARD_CMD
from tests.integrations.hookhelpers import PROTOCOLS, hook_env, prepare

# host -> (settings file under HOME, the event to run, the sample payload, how its refusal reads)
HOSTS = {
    "claude-code": (".claude/settings.json", "PreToolUse", "claude_code/pretooluse_bash.in.json"),
    "codex": (".codex/hooks.json", "PreToolUse", "codex/pretooluse_bash.in.json"),
    "gemini": (".gemini/settings.json", "BeforeTool", "gemini_cli/beforetool.in.json"),
    "cursor": (".cursor/hooks.json", "beforeShellExecution", "cursor/beforeshellexecution.in.json"),
}
IMPOSTORS = (
    "guard.py",
    "guard/__init__.py",
    "guard/__main__.py",
    "json.py",
    "socket.py",
    "integrations.py",
    "attrs.py",
)
BLOCKED = "rm -rf /"


def impostor(project: Path, name: str) -> None:
    """A module that, if ever imported, leaves a sentinel file and nothing else."""
    path = project / name
    path.parent.mkdir(parents=True, exist_ok=True)
    sentinel = project / "sentinels" / name.replace("/", "_")
    path.write_text(f"open({str(sentinel)!r}, 'w').close()\n", encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "sentinels").mkdir(parents=True)
    for name in IMPOSTORS:
        impostor(project, name)
    return project


def install(host: str, home: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """The real ``guard install HOST`` into a fake HOME (run from a neutral directory)."""
    return subprocess.run(
        [*GUARD_CMD, "install", host, *extra],
        capture_output=True,
        text=True,
        env=hook_env(HOME=str(home)),
        cwd=home,
        timeout=120,
    )


def commands(settings: Path, host: str) -> list[str]:
    doc = json.loads(settings.read_text(encoding="utf-8"))
    found = []
    for entries in doc["hooks"].values():
        for entry in entries:
            for handler in entry.get("hooks", [entry]):
                if is_ours(handler, host):
                    found.append(handler["command"])
    return found


def installed_command(host: str, home: Path) -> str:
    where, event, _ = HOSTS[host]
    done = install(host, home)
    assert done.returncode == 0, done.stderr
    doc = json.loads((home / where).read_text(encoding="utf-8"))
    [entry] = doc["hooks"][event]
    handler = entry if "command" in entry else entry["hooks"][0]
    return str(handler["command"])


def as_the_host(
    command: str, payload: bytes, project: Path, home: Path, ws: Path
) -> subprocess.CompletedProcess[bytes]:
    """``sh -c COMMAND`` from the project, PATH cut down, PYTHONPATH pointing into the project."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "GUARD_HOME": str(ws),
        "GUARD_SYSTEM_HEALTH": "90",
        "GUARD_HOOKS_DAEMON": "off",
        "PYTHONPATH": str(project),
        "PYTHONSTARTUP": str(project / "json.py"),
    }
    return subprocess.run(["sh", "-c", command], input=payload, capture_output=True, cwd=project, env=env, timeout=120)


def payload_for(host: str, command: str, project: Path) -> bytes:
    data: dict[str, Any] = json.loads((PROTOCOLS / HOSTS[host][2]).read_text(encoding="utf-8"))
    holder = data.get("tool_input", data)
    holder["command"] = command
    data["cwd"] = str(project)
    return json.dumps(data).encode()


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_the_installed_hook_answers_from_a_project_full_of_impostors(host: str, project: Path, tmp_path: Path) -> None:
    home, ws = tmp_path / "home", prepare(tmp_path / "ws")
    home.mkdir()
    command = installed_command(host, home)
    program = command.split()[0]
    assert os.path.isabs(program) and " -I -m guard hook " in command
    blocked = as_the_host(command, payload_for(host, BLOCKED, project), project, home, ws)
    answer = blocked.stdout.decode()
    assert "G101" in answer, (answer, blocked.stderr.decode())  # guard's real answer: its rule id
    allowed = as_the_host(command, payload_for(host, "ls -la", project), project, home, ws)
    assert allowed.returncode == 0 and "G101" not in allowed.stdout.decode()
    assert sorted(p.name for p in (project / "sentinels").iterdir()) == []  # no impostor was imported
    lines = (ws / ".fusion-decisions.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["decision"] for line in lines] == ["block", "auto_allow"]


def test_the_impostors_would_have_answered_plain_python_m_guard(project: Path, tmp_path: Path) -> None:
    """The hole this closes: the same run without isolation imports the project's guard."""
    command = f"{sys.executable} -m guard hook codex"
    as_the_host(command, b"{}", project, tmp_path, prepare(tmp_path / "ws"))
    assert (project / "sentinels" / "guard___main__.py").exists() or (project / "sentinels" / "guard.py").exists()


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_reinstalling_upgrades_old_commands_in_place_and_then_changes_nothing(host: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    where, event, _ = HOSTS[host]
    settings = home / where
    settings.parent.mkdir(parents=True)
    old = [f"{sys.executable} -m guard hook {host}", f"guard hook {host}"]
    foreign = {"type": "command", "command": "notify-send hi"} if host != "cursor" else {"command": "notify-send hi"}
    if host == "cursor":
        doc: dict[str, Any] = {"version": 1, "hooks": {event: [{"command": c} for c in old] + [foreign]}}
    else:
        handlers = [{"type": "command", "command": c} for c in old]
        doc = {"hooks": {event: [{"matcher": "*", "hooks": [*handlers, foreign]}]}}
    settings.write_text(json.dumps(doc), encoding="utf-8")
    assert install(host, home).returncode == 0
    found = commands(settings, host)
    assert found and all(" -I -m guard hook " in c and os.path.isabs(c.split()[0]) for c in found)
    assert not any(c in old for c in found)
    assert "notify-send hi" in settings.read_text(encoding="utf-8")  # another tool's hook stays
    before = settings.read_bytes()
    again = install(host, home)
    assert again.returncode == 0 and "already installed" in again.stdout
    assert settings.read_bytes() == before


def test_the_interpreter_path_keeps_the_virtual_environment() -> None:
    """Absolute, but a venv's symlinked ``bin/python`` is not resolved to the base interpreter."""
    from guard.integrations.install import python_argv

    argv = python_argv()
    assert argv[0] == os.path.abspath(sys.executable) and argv[1:] == ["-I", "-m", "guard"]


def test_openclaw_is_told_guards_absolute_isolated_command(tmp_path: Path) -> None:
    done = install("openclaw", tmp_path)
    config = json.loads(done.stdout.split("plugins.entries.guard.config: ", 1)[1].splitlines()[0])
    assert config["command"] == [os.path.abspath(sys.executable), "-I", "-m", "guard"]


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads the daemon's argv from /proc")
def test_the_daemon_a_hook_starts_is_isolated_too(project: Path, tmp_path: Path) -> None:
    home, ws = tmp_path / "home", prepare(tmp_path / "ws")
    home.mkdir()
    command = installed_command("codex", home)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "GUARD_HOME": str(ws), "GUARD_HOOKS_DAEMON": "auto"}
    hooked = subprocess.run(
        ["sh", "-c", command], input=payload_for("codex", "ls -la", project), capture_output=True, cwd=project, env=env
    )
    assert hooked.returncode == 0
    status_cmd = [*GUARD_CMD, "serve", "--workspace", str(ws)]
    status = json.loads(
        subprocess.run([*status_cmd, "--status", "--wait", "30"], capture_output=True, env=hook_env()).stdout
    )
    try:
        assert status["running"] is True
        argv = Path(f"/proc/{status['pid']}/cmdline").read_bytes().split(b"\0")
        assert argv[1:4] == [b"-I", b"-m", b"guard"] and b"serve" in argv
    finally:
        subprocess.run([*status_cmd, "--stop", "--wait", "30"], capture_output=True, env=hook_env(), timeout=60)
    assert sorted(p.name for p in (project / "sentinels").iterdir()) == []
