"""Shared fixtures: every test gets its own workspace and never touches ~/.guard.

The whole test process runs with a fake ``HOME`` (and XDG folders) under a temporary folder,
set here, when pytest imports this file: before any test module imports guard, so a
``Path.home()`` read at import time sees it too, and every subprocess inherits it. A test that
truly needs the real HOME (an npm cache, an installed peer tool) reads :data:`REAL_HOME` and
says why. At the end of the session the run fails if the real HOME gained a ``.guard`` folder
or a host's configuration folder changed (:mod:`homewatch`), and the ``guard serve`` daemons
that the run's hooks started on demand are stopped.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from homewatch import changes, listing

ROOT = Path(__file__).resolve().parents[1]

# Saved once per test process tree: a nested run (a test that starts pytest) inherits both.
REAL_HOME = Path(os.environ.setdefault("REAL_HOME", os.path.expanduser("~")))
_XDG = {
    "XDG_CONFIG_HOME": ".config",
    "XDG_DATA_HOME": ".local/share",
    "XDG_CACHE_HOME": ".cache",
    "XDG_STATE_HOME": ".local/state",
}
# Variables that point a host at its own configuration folder instead of one under HOME.
_HOST_HOMES = ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "OPENCLAW_HOME", "OPENCLAW_STATE_DIR")


def _fake_home() -> Path:
    """The session's fake HOME: made once; importing this file again (``from tests.conftest
    import ...``) finds it already set."""
    current = os.environ.get("HOME", "")
    if current and current == os.environ.get("TESTS_FAKE_HOME"):
        return Path(current)
    home = Path(tempfile.mkdtemp(prefix="guard-tests-home-"))
    atexit.register(_remove, home, os.getpid())
    os.environ["HOME"] = os.environ["TESTS_FAKE_HOME"] = str(home)
    for var, sub in _XDG.items():
        os.environ[var] = str(home / sub)
    for var in _HOST_HOMES:
        os.environ.pop(var, None)
    return home


def _remove(home: Path, creator: int) -> None:
    """The fake HOME goes with the process that made it (not with a forked worker, e.g. mutmut's)."""
    if os.getpid() == creator:
        shutil.rmtree(home, ignore_errors=True)


# the outermost run made the fake HOME; a nested run (a test that starts pytest) inherits it
_MADE_HERE = not (os.environ.get("HOME") and os.environ.get("HOME") == os.environ.get("TESTS_FAKE_HOME"))
FAKE_HOME = _fake_home()
_REAL_HOME_AT_START = listing(REAL_HOME)


def _reap_daemons() -> list[int]:
    """Stop the ``guard serve`` daemons this test run started (a hook in ``auto`` mode starts one
    for the next call, which would idle for 15 minutes after the run): every such process whose
    environment carries this run's ``TESTS_FAKE_HOME``, which all of the run's subprocesses
    inherit whatever HOME a test gives them. Returns their ids."""
    mine = f"TESTS_FAKE_HOME={FAKE_HOME}".encode()
    reaped = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and any(a.endswith(b"guard") for a in argv) and mine in environ:
            with contextlib.suppress(OSError):
                os.kill(int(entry.name), signal.SIGTERM)
                reaped.append(int(entry.name))
    return reaped


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop the daemons the run left; fail it if anything in it wrote to the real HOME's
    ``.guard`` or a host's folder."""
    if _MADE_HERE:  # (not a nested run: the outer one may still be using its daemons)
        _reap_daemons()
    found = changes(_REAL_HOME_AT_START, listing(REAL_HOME))
    if not found:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    text = f"the tests changed the real HOME ({REAL_HOME}):\n  " + "\n  ".join(found[:50])
    if reporter is not None:
        reporter.write_line(text, red=True, bold=True)
    else:
        print(text, file=sys.stderr)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("guard-home")
    monkeypatch.setenv("GUARD_HOME", str(home))
    for key in list(os.environ):
        if key.startswith("GUARD_") and key != "GUARD_HOME":
            monkeypatch.delenv(key)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path / "ws"


@pytest.fixture
def make_guard(workspace: Path):  # type: ignore[no-untyped-def]
    from guard import Guard

    made = []

    def make(**kw):  # type: ignore[no-untyped-def]
        config = {"system.health": 90, "memory.backend": "history"} | kw.pop("config", {})
        g = Guard(kw.pop("workspace", workspace), config, **kw)
        made.append(g)
        return g

    yield make
    for g in made:
        g.close()


def guard_cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["GUARD_SYSTEM_HEALTH"] = "90"
    env["LANCE_LOG"] = "error"
    return env


GUARD_CMD = [sys.executable, "-m", "guard"]


@contextlib.contextmanager
def home_at(home: Path) -> Iterator[Path]:
    """``HOME`` is ``home`` while this lasts (guard reads ``~`` as it), as it was afterwards."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        yield home


def claude_bash_hook(home: Path, command: str, cwd: Path | None = None) -> dict[str, Any]:
    """``guard hook claude-code --no-daemon`` on one Bash ``PreToolUse`` event, in a subprocess whose
    HOME is ``home`` and whose workspace is ``home/.guard``: the host's ``hookSpecificOutput``. The
    command is data: guard judges it, nothing runs it."""
    payload = {
        "session_id": "s1",
        "cwd": str(cwd or home),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "toolu_1",
    }
    env = {**guard_cli_env(), "HOME": str(home), "GUARD_HOME": str(home / ".guard")}
    proc = subprocess.run(
        [*GUARD_CMD, "hook", "claude-code", "--workspace", str(home / ".guard"), "--no-daemon"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    out: dict[str, Any] = json.loads(proc.stdout)["hookSpecificOutput"]
    return out


def guard_check(tool: str, params: Any, *, env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """``guard check TOOL PARAMS --cwd CWD --json`` in a subprocess, run from ``cwd``: its decision
    record. The exit code must be one of the decisions' (0, 10, 20), not a crash."""
    proc = subprocess.run(
        [*GUARD_CMD, "check", tool, json.dumps(params), "--cwd", str(cwd), "--json"],
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=60,
    )
    assert proc.returncode in (0, 10, 20), proc.stderr.decode()
    record: dict[str, Any] = json.loads(proc.stdout)
    return record
