"""Outcomes a reader cannot store itself, handed to the writer through a file.

A process that embeds guard reads memory from the published snapshot and never loads LanceDB,
so it appends each outcome as one JSON line to ``<workspace>/memory-queue.jsonl`` (0600,
``O_APPEND``, an exclusive ``flock`` per line). The writer (``guard serve``, ``guard tidy``, a
``memory.write_in_process`` process) drains it: under the queue lock it renames the file to
``memory-queue.jsonl.ingesting``, stores those rows, publishes the snapshot and only then
removes the renamed file, so a crash in between stores them again on the next drain (at least
once). One drain at a time per workspace (a second lock, taken without waiting).

An appender that opened the file just before the rename finds, once it holds the lock, that the
path names another file (or none) and opens it again: no line lands in a file already drained.
Signatures arrive redacted (``State.signature_of``) and are redacted again when stored.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from guard.memory.base import MemoryEvent
from guard.model import Risk

QUEUE_NAME = "memory-queue.jsonl"
MAX_LINE = 64 * 1024  # a longer line is an error, not an outcome
MAX_BYTES = 32 * 1024 * 1024  # about 100k outcomes: with no writer draining it, newer ones are dropped


class QueueFull(OSError):
    """The queue holds :data:`MAX_BYTES` already: no writer has drained it (start ``guard serve``)."""


def queue_path(workspace: Path) -> Path:
    return workspace / QUEUE_NAME


def _lock(fd: int, *, wait: bool) -> bool:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no cross-process lock
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except OSError:
        return False
    return True


def to_line(event: MemoryEvent) -> bytes:
    return (
        json.dumps(
            {
                "tool": event.tool,
                "signature": event.signature,
                "success": event.success,
                "risk": event.risk.label,
                "ts": event.timestamp.timestamp(),
                "session_id": event.session_id,
                "agent_id": event.agent_id,
                "importance": event.importance,
            },
            ensure_ascii=False,
        ).encode("utf-8", "surrogatepass")
        + b"\n"
    )


def from_line(line: bytes) -> MemoryEvent | None:
    try:
        d = json.loads(line)
        return MemoryEvent(
            tool=str(d["tool"]),
            signature=str(d["signature"]),
            success=bool(d["success"]),
            risk=Risk.parse(d["risk"]),
            timestamp=datetime.fromtimestamp(float(d["ts"]), UTC),
            session_id=d.get("session_id"),
            agent_id=d.get("agent_id"),
            importance=None if d.get("importance") is None else float(d["importance"]),
        )
    except (ValueError, KeyError, TypeError):
        return None


def append(path: Path, event: MemoryEvent) -> None:
    """Add one outcome to the queue (raises ``OSError`` when the workspace cannot be written)."""
    line = to_line(event)
    for _ in range(5):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            _lock(fd, wait=True)
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                if os.fstat(fd).st_size + len(line) > MAX_BYTES:
                    raise QueueFull(f"{path} is full ({MAX_BYTES // 1_000_000} MB): nothing drains it")
                os.write(fd, line)
                return
        finally:
            os.close(fd)  # (closing releases the lock)
    raise OSError(f"{path}: the memory queue kept moving while appending")


def drain(path: Path, store: Callable[[list[MemoryEvent]], bool]) -> int:
    """Hand queued outcomes to ``store`` (True: durable); how many were stored (0: none or busy)."""
    ingesting = path.with_name(path.name + ".ingesting")
    if not path.exists() and not ingesting.exists():
        return 0
    gate = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if not _lock(gate, wait=False):
            return 0  # another writer is draining
        if not ingesting.exists():  # (a leftover of an interrupted drain goes first)
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                return 0
            try:
                _lock(fd, wait=True)
                os.replace(path, ingesting)
            finally:
                os.close(fd)
        with open(ingesting, "rb") as f:
            events = [e for line in f if len(line) <= MAX_LINE and (e := from_line(line)) is not None]
        if events and not store(events):
            return 0  # kept for the next drain
        os.unlink(ingesting)
        return len(events)
    finally:
        os.close(gate)
