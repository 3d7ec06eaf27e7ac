"""Shared fixtures: every test gets its own workspace and never touches ~/.guard."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


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
