"""Shared fixtures for the memory tests.

LanceDB is imported once per session (≈0.8 s) by the ``lancedb`` fixture; every table lives
in its own temporary directory. Background threads are waited on with ``flush()`` and
``wait_ready()``, never with sleeps.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from guard.config import Config
from guard.memory.base import MemoryEvent
from guard.model import Risk, ToolCall
from guard.signature import signature

os.environ.setdefault("LANCE_LOG", "error")

# Quiet defaults for tests: no background maintenance, no periodic re-checks.
TEST_SETTINGS: dict[str, Any] = {
    "memory.tidy": False,
    "memory.snapshot_seconds": 0,
    "memory.flush_seconds": 3600,
}


def make_config(tmp: Path | None = None, **overrides: Any) -> Config:
    values = {**TEST_SETTINGS, **{k.replace("__", "."): v for k, v in overrides.items()}}
    return Config.load(workspace=tmp, env={}, overrides=values)


def event(command: str, success: bool = True, risk: Risk = Risk.LOW, tool: str = "Bash", **kw: Any) -> MemoryEvent:
    params = {"command": command} if tool.lower() == "bash" else {"file_path": command}
    ts = kw.pop("timestamp", datetime(2026, 1, 1, 12, tzinfo=UTC))
    return MemoryEvent(tool, signature(tool, params), success, risk, ts, **kw)


def ask(memory: Any, command: str, tool: str = "Bash") -> Any:
    call = ToolCall(tool, {"command": command} if tool.lower() == "bash" else {"file_path": command})
    return memory.relevance(call, signature(call.tool, call.params), Risk.LOW, datetime(2026, 1, 2, tzinfo=UTC))


@pytest.fixture(scope="session")
def lancedb() -> Any:
    """The one LanceDB import of the session."""
    return pytest.importorskip("lancedb")


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return make_config()


@pytest.fixture
def memory(lancedb: Any, tmp_path: Path, config: Config) -> Iterator[Any]:
    from guard.memory.lance import LanceMemory

    m = LanceMemory(str(tmp_path / "memory.lance"), config)
    assert m.wait_ready(60), m.status
    yield m
    m.close()
