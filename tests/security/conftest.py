"""Fixtures for the static classifier's security cases: one Guard per module, a fake home."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from guard.core import Guard
from tests.conftest import claude_bash_hook, home_at


@pytest.fixture(scope="module")
def module_guard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Guard]:
    """One Guard for a module's cases (each call in its own session, nothing saved)."""
    g = Guard(tmp_path_factory.mktemp("ws"), {"system.health": 90, "memory.backend": "history"})
    yield g
    g.close()


@pytest.fixture(scope="module")
def fake_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A scratch HOME (with a ``proj`` folder to run in) for a module's cases: ``~`` reads as it."""
    home = tmp_path_factory.mktemp("home")
    (home / "proj").mkdir()
    with home_at(home):
        yield home


@pytest.fixture(scope="module")
def home_guard(fake_home: Path) -> Iterator[Guard]:
    """One Guard whose workspace is in the scratch home."""
    g = Guard(fake_home / ".guard", {"system.health": 90, "memory.backend": "history"})
    yield g
    g.close()


def decide(
    g: Guard, command: str, cwd: str | Path = "/home/u/proj", tool: str = "bash", params: dict[str, str] | None = None
) -> tuple[str, set[str]]:
    """The decision on one call (``bash COMMAND``, or ``tool`` with ``params``) and its reasons' rule ids."""
    record = g.decide(tool, params or {"command": command}, session_id="t", save=False, cwd=str(cwd))
    return record.decision, {r.rule_id for r in record.reasons}


def hook_answer(home: Path, command: str) -> tuple[str, str]:
    """``guard hook claude-code`` in a subprocess on ``command`` run from ``home/proj`` (``home`` is the
    process's HOME): the host's ``permissionDecision`` and its reason. The command is data."""
    (home / "proj").mkdir(exist_ok=True)
    out = claude_bash_hook(home, command, home / "proj")
    return out["permissionDecision"], out.get("permissionDecisionReason", "")
