"""Helpers shared by the memory tests (a uniquely named module, not ``conftest``)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from guard.config import Config
from guard.memory.base import MemoryEvent
from guard.model import Risk, ToolCall
from guard.signature import signature

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


def open_memory(tmp: Path, **overrides: Any) -> Any:
    """A LanceMemory without background threads, opened in this thread."""
    from guard.memory.lance import LanceMemory

    m = LanceMemory(str(tmp / "memory.lance"), make_config(**overrides), start_background=False)
    assert m.open(), m.status
    return m


def add_one_by_one(memory: Any, events: list[MemoryEvent]) -> None:
    """One LanceDB commit (version, fragment) per event, like an unbatched writer."""
    from guard.memory.table import events_to_arrow

    for e in events:
        memory._table.add(events_to_arrow([e], memory.embedder))
