"""``guard doctor``: each host's hooks, the daemon and the workspace, each problem with its fix.

Runs the real CLI in a subprocess with a fake HOME and workspace; every fix it prints is then
run (in that fake HOME) and the same check comes back clean.
"""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GUARD_CMD
from tests.integrations.hookhelpers import hook_env, prepare


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return prepare(tmp_path / "ws")


def guard(*args: str, home: Path, ws: Path) -> subprocess.CompletedProcess[str]:
    env = hook_env(HOME=str(home), GUARD_HOME=str(ws))
    return subprocess.run([*GUARD_CMD, *args], capture_output=True, text=True, env=env, cwd=home, timeout=120)


def doctor(home: Path, ws: Path) -> tuple[int, list[dict[str, Any]]]:
    done = guard("doctor", "--json", home=home, ws=ws)
    report = json.loads(done.stdout)
    assert report["ok"] is (done.returncode == 0)
    return done.returncode, report["checks"]


def about(checks: list[dict[str, Any]], check: str) -> list[dict[str, Any]]:
    return [c for c in checks if c["check"] == check]


def run_fix(fix: str, home: Path, ws: Path) -> None:
    """A printed fix, run as the person would (``guard …`` is this guard; the rest is chmod)."""
    argv = shlex.split(fix)
    if argv[0] == "guard":
        assert guard(*argv[1:], home=home, ws=ws).returncode == 0
    else:
        assert argv[0] == "chmod"
        subprocess.run(argv, check=True, timeout=30)


def write(path: Path, doc: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")


def test_a_fresh_home_has_no_problems_and_names_each_host(home: Path, ws: Path) -> None:
    code, checks = doctor(home, ws)
    assert code == 0
    for host in ("claude-code", "codex", "gemini", "cursor"):
        [c] = about(checks, host)
        assert (c["status"], c["message"], c["fix"]) == ("info", "not installed", f"guard install {host}")
    assert about(checks, "daemon")[0]["status"] == "info"


def test_an_installed_host_is_this_guard_absolute_and_isolated(home: Path, ws: Path) -> None:
    assert guard("install", "claude-code", home=home, ws=ws).returncode == 0
    code, checks = doctor(home, ws)
    assert code == 0 and [c["status"] for c in about(checks, "claude-code")] == ["ok", "ok"]  # and its self-test


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("guard hook claude-code --headless", "found on PATH"),
        (f"{sys.executable} -m guard hook claude-code --headless", "not isolated"),
        ("/nonexistent/python -I -m guard hook claude-code --headless", "does not exist"),
    ],
    ids=["bare", "not-isolated", "missing-interpreter"],
)
def test_an_old_or_hijackable_command_is_a_problem_whose_fix_works(
    command: str, why: str, home: Path, ws: Path
) -> None:
    write(
        home / ".claude/settings.json",
        {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": command}]}]}},
    )
    code, checks = doctor(home, ws)
    problems = [c for c in about(checks, "claude-code") if c["status"] == "problem"]
    assert code == 1 and any(why in c["message"] for c in problems)
    assert {c["fix"] for c in problems} == {"guard install claude-code --headless"}  # keeps the hook's options
    run_fix(problems[0]["fix"], home, ws)
    code, checks = doctor(home, ws)
    assert code == 0 and {c["status"] for c in about(checks, "claude-code")} == {"ok"}
    assert "--headless" in (home / ".claude/settings.json").read_text()


def test_a_settings_file_that_does_not_parse_is_a_problem(home: Path, ws: Path) -> None:
    write(home / ".gemini/settings.json", '{"hooks": ')
    write(home / ".codex/config.toml", "[features\n")
    code, checks = doctor(home, ws)
    assert code == 1
    [gemini] = about(checks, "gemini")
    assert gemini["status"] == "problem" and "not valid JSON" in gemini["message"] and "line 1" in gemini["message"]
    assert any(c["status"] == "problem" and "not valid TOML" in c["message"] for c in about(checks, "codex"))


def test_a_workspace_others_can_read_is_a_problem_whose_fix_works(home: Path, ws: Path) -> None:
    ws.chmod(0o755)
    (ws / ".fusion-decisions.jsonl").write_text("{}\n")
    (ws / ".fusion-decisions.jsonl").chmod(0o644)
    code, checks = doctor(home, ws)
    problems = [c for c in about(checks, "workspace") if c["status"] == "problem"]
    assert code == 1 and len(problems) == 2
    assert {c["fix"] for c in problems} == {f"chmod 700 {ws}", f"chmod 600 {ws / '.fusion-decisions.jsonl'}"}
    for c in problems:
        run_fix(c["fix"], home, ws)
    code, checks = doctor(home, ws)
    assert code == 0 and [c["status"] for c in about(checks, "workspace")] == ["ok"]


@pytest.fixture
def served(ws: Path, home: Path) -> Iterator[subprocess.Popen[str]]:
    """A foreground ``guard serve`` this test started, stopped by its own pid."""
    env = hook_env(HOME=str(home), GUARD_HOME=str(ws))
    proc = subprocess.Popen(
        [*GUARD_CMD, "serve", "--workspace", str(ws)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("guard serve: listening on")
    yield proc
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=20)


def test_a_running_daemon_of_this_version_is_healthy(served: subprocess.Popen[str], home: Path, ws: Path) -> None:
    _, checks = doctor(home, ws)
    [d] = about(checks, "daemon")
    assert d["status"] == "ok" and f"pid {served.pid}" in d["message"]


def test_the_text_report_prints_each_problem_with_its_fix(home: Path, ws: Path) -> None:
    write(
        home / ".cursor/hooks.json",
        {"version": 1, "hooks": {"beforeShellExecution": [{"command": "guard hook cursor"}]}},
    )
    done = guard("doctor", home=home, ws=ws)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    i = next(n for n, line in enumerate(lines) if line.startswith("PROBLEM") and "found on PATH" in line)
    assert lines[i + 1].strip() == "fix: guard install cursor"
    assert lines[-1].startswith("guard doctor:") and "problem" in lines[-1]
