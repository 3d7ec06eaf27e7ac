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
