"""Fixtures for the policy tests: a workspace, a Guard on it, and an event-stream builder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from guard import Guard

from .helpers import Stream


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GUARD_HOME", str(tmp_path_factory.mktemp("guard-home")))
    for key in list(os.environ):
        if key.startswith("GUARD_") and key != "GUARD_HOME":
            monkeypatch.delenv(key)
    monkeypatch.setenv("GUARD_SYSTEM_HEALTH", "90")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path / "ws"


@pytest.fixture
def stream() -> Stream:
    return Stream()


@pytest.fixture
def guard_on(workspace: Path) -> Iterator[Any]:
    made: list[Guard] = []

    def make(**config: Any) -> Guard:
        g = Guard(workspace, {"memory.backend": "history"} | config)
        made.append(g)
        return g

    yield make
    for g in made:
        g.close()
