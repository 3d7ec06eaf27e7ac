"""Memory for a process that embeds guard: the published snapshot, read without LanceDB or numpy.

    memory = SnapshotMemory(workspace, config)   # imports no lancedb, no pyarrow, no numpy
    memory.relevance(call, sig, risk, now)       # searches the published snapshot (positioned reads)
    memory.remember(event)                       # one line appended to the queue

The writer of the workspace (``guard serve``, ``guard tidy``, or a process with
``memory.write_in_process``) publishes ``memory-snapshot.bin`` (:mod:`guard.memory.published`)
and drains ``memory-queue.jsonl`` (:mod:`guard.memory.queue`). Relevance runs the writer's own
search on the writer's own numbers, so it equals what :class:`~guard.memory.lance.LanceMemory`
answers for the same table. The file is looked at again at most every :data:`CHECK_SECONDS`
(a ``stat``); a new one (another inode, size or mtime) is opened in its place. Until a writer
has published, relevance is "unavailable (no snapshot published yet …)", weighed as such by fusion.
"""

from __future__ import annotations

import os
import threading
import time
from datetime import datetime
from pathlib import Path

import cachetools

from guard.config import Config
from guard.log import logger
from guard.memory.base import MemoryEvent, MemoryResult, result_of
from guard.memory.embed import Embedder, HashingEmbedder, sparse_of
from guard.memory.published import PublishedSnapshot, snapshot_path
from guard.memory.queue import append, queue_path
from guard.model import Risk, ToolCall

CHECK_SECONDS = 1.0  # how often relevance looks whether a new snapshot was published


class SnapshotMemory:
    """A :class:`~guard.memory.base.MemoryProvider` reading the published snapshot of ``workspace``."""

    name = "snapshot"

    def __init__(self, workspace: Path, config: Config, *, embedder: Embedder | None = None) -> None:
        self.path = snapshot_path(workspace)
        self.queue = queue_path(workspace)
        self.embedder = embedder or HashingEmbedder(dim=config.get("memory.dim"))
        self._similarity = float(config.get("memory.similarity"))
        self._top_k = int(config.get("memory.top_k"))
        self._prior = float(config.get("fusion.prior_strength"))
        self._seed = config.get("fusion.mode") == "seed"
        size, ttl = config.get("memory.cache_size"), config.get("memory.cache_seconds")
        self._cache: cachetools.TTLCache[tuple[str, str], MemoryResult] | None = (
            cachetools.TTLCache(size, ttl) if size and ttl else None
        )
        self._lock = threading.Lock()
        self._snapshot: PublishedSnapshot | None = None
        self._stamp: tuple[int, int, int] | None = None
        self._checked = float("-inf")
        self._why = "no snapshot published yet: start guard serve or run guard tidy"
        self._closed = False
        self.queued = 0
        self.dropped = 0

    @property
    def status(self) -> str:
        return "closed" if self._closed else "ready" if self._snapshot is not None else self._why

    def relevance(self, call: ToolCall, signature: str, risk: Risk, now: datetime) -> MemoryResult:
        if self._closed:
            return _unavailable("closed")
        snapshot = self._current()
        if snapshot is None:
            return _unavailable(self._why)
        key = (call.kind, signature)
        cache = self._cache
        if cache is not None:
            with self._lock:
                hit: MemoryResult | None = cache.get(key)
            if hit is not None:
                return hit
        try:
            found = snapshot.search(key[0], sparse_of(self.embedder, signature), self._similarity, self._top_k)
        except Exception as exc:  # the hot path never raises
            logger.warning(f"memory relevance failed: {exc}")
            return _unavailable(f"{type(exc).__name__}: {exc}")
        result = result_of(found, self._prior, self._seed)
        if cache is not None:
            with self._lock:
                cache[key] = result
        return result

    def remember(self, event: MemoryEvent) -> None:
        """Queue the outcome for the writer (one appended line; never loads LanceDB)."""
        if self._closed:
            return
        try:
            append(self.queue, event)
            self.queued += 1
        except OSError as exc:
            self.dropped += 1
            if self.dropped % 1000 == 1:  # the first, then one in a thousand: a full queue stays full
                logger.warning(f"memory: cannot queue the outcome ({exc}); {self.dropped} dropped so far")

    def flush(self) -> bool:
        return True  # every outcome is in the queue file once remember returns

    def refresh(self) -> bool:
        """Look for a newly published snapshot now; ``True`` if one is open."""
        self._checked = float("-inf")
        return self._current() is not None

    def close(self) -> None:
        self._closed = True
        self._snapshot = None

    def _current(self) -> PublishedSnapshot | None:
        now = time.monotonic()
        if now - self._checked < CHECK_SECONDS:
            return self._snapshot
        self._checked = now
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._snapshot, self._stamp = None, None
            self._why = "no snapshot published yet: start guard serve or run guard tidy"
            return None
        except OSError as exc:
            self._why = f"cannot read {self.path}: {exc}"
            return self._snapshot
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        if stamp == self._stamp:
            return self._snapshot
        try:
            snapshot = PublishedSnapshot(self.path)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            self._snapshot, self._stamp = None, stamp
            self._why = f"unreadable snapshot {self.path.name}: {exc}"
            return None
        if snapshot.embedder != self.embedder.name or snapshot.dim != self.embedder.dim:
            self._snapshot, self._stamp = None, stamp
            self._why = f"the snapshot holds {snapshot.embedder}/{snapshot.dim} vectors, not {self.embedder.name}/{self.embedder.dim}"
            return None
        with self._lock:
            if self._cache is not None:
                self._cache.clear()
            self._snapshot, self._stamp = snapshot, snapshot.stamp
        return snapshot


def _unavailable(why: str) -> MemoryResult:
    """The answer while no snapshot can be read, one object per reason: every call asks until a
    writer publishes (the default before ``guard serve`` runs), and fusion then finds it by identity."""
    res = _UNAVAILABLE.get(why)
    if res is None:
        if len(_UNAVAILABLE) >= 64:
            _UNAVAILABLE.clear()
        res = _UNAVAILABLE[why] = MemoryResult(available=False, note=f"memory: unavailable ({why})")
    return res


_UNAVAILABLE: dict[str, MemoryResult] = {}
