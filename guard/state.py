"""Shared state a ``Guard`` hands its layers: history aggregates, memory, system, sessions.

Everything here is explicit and thread-safe; layers read it, only ``Guard`` writes it.
"""

from __future__ import annotations

import threading
from datetime import datetime
from pathlib import Path
from typing import Any

from guard import workspace as ws
from guard.aggregates import Aggregates
from guard.config import Config
from guard.jsonl import JsonlLog
from guard.log import logger
from guard.memory.base import HistoryMemory, MemoryEvent, MemoryProvider
from guard.model import Risk, ToolCall
from guard.system import SystemHealth

DAY = 86_400.0


class State:
    def __init__(self, workspace: Path, config: Config, *, memory_backend: str | None = None) -> None:
        self.workspace = workspace
        self.config = config
        self.aggregates = Aggregates(
            workspace,
            float(config.get("fusion.tool_half_life_days")) * DAY,
            float(config.get("fusion.user_half_life_days")) * DAY,
            float(config.get("guard.clock_skew_seconds")),
        )
        try:
            self.aggregates.load()
        except Exception as exc:
            logger.warning(f"state unavailable: {exc}")
        self.decisions = JsonlLog(workspace / ws.DECISIONS)
        self.system = SystemHealth(config)
        self.sessions = _make_sessions(workspace, config)
        self.memory: MemoryProvider | None = _make_memory(
            workspace, config, self.aggregates, memory_backend or str(config.get("memory.backend"))
        )
        self._lock = threading.Lock()

    def signature_of(self, call: ToolCall) -> str:
        """The call's signature with secrets masked: the key history and memory store it under
        (the behavior and fusion layers both ask; the call keeps the answer)."""
        return call.redacted_signature

    def remember(self, call: ToolCall, sig: str, *, success: bool, risk: Risk, now: datetime) -> None:
        if self.memory is None:
            return
        try:
            self.memory.remember(
                MemoryEvent(
                    tool=call.kind,
                    signature=sig,
                    success=success,
                    risk=risk,
                    timestamp=now,
                    session_id=call.session_id,
                    agent_id=call.agent_id,
                )
            )
        except Exception as exc:
            logger.warning(f"memory unavailable: {exc}")

    def flush(self) -> None:
        try:
            self.aggregates.catch_up()
        except OSError as exc:  # e.g. the workspace is not a directory: close must not fail
            if not ws.note_write_failure(exc, self.workspace):
                logger.warning(f"history unavailable: {exc}")
        else:
            self.aggregates.save()
        if self.memory is not None:
            try:
                self.memory.flush()
            except Exception as exc:
                logger.warning(f"memory flush failed: {exc}")
        flush = getattr(self.sessions, "flush", None)
        if callable(flush):
            flush()

    def close(self) -> None:
        try:
            self.flush()
        finally:
            if self.memory is not None:
                try:
                    self.memory.close()
                except Exception as exc:
                    logger.warning(f"memory close failed: {exc}")
            self.sessions.close()
            self.aggregates.close()
            self.decisions.close()


def _make_sessions(workspace: Path, config: Config) -> Any:
    """The session tracker; it persists sessions under ``<workspace>/sessions/`` when it can write there."""
    from guard.behavior.tracker import SessionTracker

    return SessionTracker(config, workspace)


def _make_memory(workspace: Path, config: Config, aggregates: Aggregates, backend: str) -> MemoryProvider | None:
    """'auto': the published snapshot (no LanceDB in this process) for a local store, unless
    ``memory.write_in_process``; LanceDB for ``s3://`` and 'lancedb' (the writer: ``guard serve``);
    'history' the history files."""
    if backend == "off":
        return None
    if backend in ("auto", "lancedb", "snapshot"):
        from guard.memory.table import is_remote, resolve_uri

        uri = resolve_uri(config, workspace)
        if backend == "snapshot" or (
            backend == "auto" and not is_remote(uri) and not config.get("memory.write_in_process")
        ):
            from guard.memory.reader import SnapshotMemory

            return SnapshotMemory(workspace, config)
        try:
            from guard.memory.lance import LanceMemory  # imports lancedb lazily, in the background
        except ImportError:
            if backend == "lancedb":
                logger.warning("LanceDB memory is not available; using the history files")
        else:
            return LanceMemory(uri, config, state_dir=workspace)
    return HistoryMemory(aggregates, float(config.get("fusion.prior_strength")))
