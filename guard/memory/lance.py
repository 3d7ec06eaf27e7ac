"""Memory of past operations in LanceDB, answered from an in-process snapshot.

    memory = LanceMemory(str(workspace / "memory.lance"), config)   # returns at once
    memory.relevance(call, signature(call.tool, call.params), risk, now)  # never blocks, never raises
    memory.remember(MemoryEvent(...))   # enqueues; the background writer stores it
    memory.flush()                      # returns True once everything queued is durable
    memory.close()

The constructor starts one background thread, which imports LanceDB (≈0.8 s; this module
itself imports neither ``lancedb`` nor ``pyarrow``), opens or creates the table, loads the
:class:`~guard.memory.index.Snapshot`, sets :attr:`ready`, then writes queued outcomes in
batches (every ``memory.flush_seconds`` or ``memory.batch_rows`` rows) and looks for other
writers' rows every ``memory.snapshot_seconds``. Until ready, and on any error, relevance is
the neutral ``MemoryResult(score=40, available=False, note="memory: unavailable (…)")``.

Relevance: the most similar past operations of the same tool at cosine ≥
``memory.similarity`` (at most ``memory.top_k``) are the related memories; none give exactly
40. ``confidence = W / (W + m)`` with the kernel-weighted count ``W`` (see
:func:`~guard.memory.index.neighbours`) and ``m = fusion.prior_strength``. The score:

- ``fusion.mode = "seed"``: the seed's ``40 + avg_importance·40 + success_rate·20``, exactly.
  It never falls below 40, and since failures carry more importance
  (:func:`~guard.memory.base.importance_of`) a history of failures scores above no history;
- ``fusion.mode = "guard"`` (default): ``100·(c·r + (1 − c)·0.40)``, the importance-weighted
  success rate ``r`` shrunk toward the no-memory 40 by the confidence ``c``: similar
  successes lift the score toward 100, similar failures pull it toward 0.
Results are cached per (tool, signature) for ``memory.cache_seconds``; storing an outcome
with the same signature evicts the entry at once.

Tables above ``memory.snapshot_max_rows`` are not held in memory: relevance then queries
LanceDB with a ``memory.query_timeout_ms`` timeout (a timeout gives the neutral result).
A maintenance :class:`~guard.memory.schedule.Scheduler` runs :mod:`guard.memory.tidy` in the
background unless ``memory.tidy`` is false.
"""

from __future__ import annotations

import atexit
import threading
import time
import weakref
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cachetools
from loguru import logger

from guard.config import Config
from guard.memory import tidy as tidy_mod
from guard.memory.base import MemoryEvent, MemoryResult, result_of
from guard.memory.embed import Embedder, HashingEmbedder
from guard.memory.index import Neighbours, Snapshot
from guard.memory.published import publish, snapshot_path
from guard.memory.queue import drain, queue_path
from guard.memory.schedule import Scheduler, TidySchedule
from guard.memory.table import connect, events_to_arrow, is_remote, open_table, privatise, read_snapshot, search_table
from guard.memory.writer import BatchWriter, Written
from guard.model import Risk, ToolCall
from guard.toolnames import canonical_tool

if TYPE_CHECKING:
    from guard.memory.embed import Vector

_MAX_PENDING = 100_000  # queued outcomes kept while the store cannot take them
_PUBLISH_SECONDS = 1.0  # least time between two publications of the snapshot after writes


def _import_lancedb() -> None:
    import lancedb  # noqa: F401  (the 0.8 s import, on the background thread only)


class LanceMemory:
    """A :class:`~guard.memory.base.MemoryProvider` backed by LanceDB (local path or ``s3://``)."""

    name = "lancedb"

    def __init__(
        self,
        uri: str,
        config: Config,
        *,
        embedder: Embedder | None = None,
        start_background: bool = True,
        state_dir: Path | None = None,
    ) -> None:
        self.uri = str(uri)
        self.config = config
        self.embedder = embedder or HashingEmbedder(dim=config.get("memory.dim"))
        self.ready = threading.Event()
        self._settled = threading.Event()
        self._why = "loading" if start_background else "not opened"
        self._similarity = float(config.get("memory.similarity"))
        self._top_k = int(config.get("memory.top_k"))
        self._prior = float(config.get("fusion.prior_strength"))
        self._seed = config.get("fusion.mode") == "seed"
        self._timeout = timedelta(milliseconds=config.get("memory.query_timeout_ms"))
        size, ttl = config.get("memory.cache_size"), config.get("memory.cache_seconds")
        self._cache: cachetools.TTLCache[tuple[str, str], MemoryResult] | None = (
            cachetools.TTLCache(size, ttl) if size and ttl else None
        )
        self._cache_lock = threading.Lock()
        self._table: Any = None
        self._snapshot: Snapshot | None = None
        self._stale = False
        self._write_lock = threading.RLock()  # one table writer at a time: batches, maintenance
        self._writer: BatchWriter[MemoryEvent] = BatchWriter(
            self._write,
            self._check,
            flush_seconds=float(config.get("memory.flush_seconds")),
            batch_rows=int(config.get("memory.batch_rows")),
            check_seconds=float(config.get("memory.snapshot_seconds")),
            max_pending=_MAX_PENDING,
        )
        self._closed = False
        state = state_dir or (None if is_remote(self.uri) else Path(self.uri.removeprefix("file://")).parent)
        self.marker = state / tidy_mod.MARKER_NAME if state is not None else None
        # Readers in this workspace map what this writer publishes and queue what they cannot store.
        local = state is not None and not is_remote(self.uri)
        self.published = snapshot_path(state) if local and state is not None else None
        self.queue = queue_path(state) if local and state is not None else None
        self._published_at = float("-inf")
        self._publish_cost = 0.0
        self._unpublished = False
        self.scheduler: Scheduler | None = None
        _LIVE.add(self)
        if start_background:
            self._writer.start(self._prepare, name="guard-memory")

    # -- the provider protocol -------------------------------------------------------------

    def relevance(self, call: ToolCall, signature: str, risk: Risk, now: datetime) -> MemoryResult:
        """How operations like this one went before. ``risk`` and ``now`` are not used: the
        static cap belongs to fusion, and age is handled by retention."""
        if self._closed:
            return _unavailable("closed")
        if not self.ready.is_set():
            return _unavailable(self._why)
        key = (call.kind, signature)
        cache = self._cache
        if cache is not None:
            with self._cache_lock:
                hit: MemoryResult | None = cache.get(key)
            if hit is not None:
                return hit
        try:
            query = self.embedder.embed(signature)
            snapshot = self._snapshot
            found = (
                snapshot.search(key[0], query, self._similarity, self._top_k)
                if snapshot is not None
                else self._query(key[0], query)
            )
        except Exception as exc:  # the hot path never raises: degrade to the neutral result
            logger.opt(exception=exc).warning("memory relevance failed: {}", exc)
            return _unavailable(_short(exc))
        result = self._result(found)
        if cache is not None:
            with self._cache_lock:
                cache[key] = result
        return result

    def remember(self, event: MemoryEvent) -> None:
        """Queue one completed operation; the background writer stores it (never blocks on I/O)."""
        if not self._closed:
            self._writer.put(event)

    def flush(self, timeout: float | None = 30.0) -> bool:
        """Store everything queued so far; ``True`` means it is durable (committed)."""
        return self._writer.flush(timeout)

    def close(self, timeout: float | None = 30.0) -> None:
        """Flush, stop the background threads, and answer "unavailable (closed)" from now on."""
        if self._closed:
            return
        self.flush(timeout)
        self._closed = True
        if self.scheduler is not None:
            self.scheduler.stop(timeout)
        self._writer.stop(timeout)
        if self._unpublished:  # (the writer thread has stopped)
            self._publish()
        _LIVE.discard(self)

    # -- more control ------------------------------------------------------------------------

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until loading finished; ``True`` if the memory is usable."""
        self._settled.wait(timeout)
        return self.ready.is_set()

    def open(self) -> bool:
        """Load in the calling thread (for ``start_background=False``); ``True`` if usable."""
        if not self._settled.is_set():
            self._load()
        return self.ready.is_set()

    def refresh(self, timeout: float | None = 30.0) -> bool:
        """Flush, then pick up rows that other processes or hosts stored, now."""
        return self._writer.refresh(timeout)

    def tidy(self, now: datetime | None = None, *, dry_run: bool = False, force: bool = False) -> tidy_mod.TidyReport:
        """One maintenance run on this memory's table (see :mod:`guard.memory.tidy`)."""
        if not self.ready.is_set():
            report = tidy_mod.TidyReport(uri=self.uri, dry_run=dry_run, started=(now or datetime.now()).isoformat())
            report.skipped = f"memory unavailable ({self._why})"
            return report
        limits = tidy_mod.TidyLimits.from_config(self.config)
        report = tidy_mod.run(
            self._table,
            self.uri,
            limits,
            now=now,
            dry_run=dry_run,
            force=force,
            marker=self.marker,
            lock=self._write_lock,
        )
        if not dry_run and not report.skipped:
            with self._write_lock:
                privatise(self.uri)
            self._writer.ask_check()  # reload the snapshot in the background
        return report

    @property
    def status(self) -> str:
        return "closed" if self._closed else "ready" if self.ready.is_set() else self._why

    @property
    def pending(self) -> int:
        return self._writer.pending

    @property
    def dropped(self) -> int:
        """Outcomes that could not be kept (queue overflow, store unavailable)."""
        return self._writer.dropped

    # -- background work -----------------------------------------------------------------

    def _load(self) -> None:
        try:
            _import_lancedb()
            self._table = open_table(connect(self.uri, self.config), self.embedder.dim)
            privatise(self.uri)
            self._reload()
            self.ready.set()
            self._why = "ready"
        except Exception as exc:  # a broken store is "unavailable", never a crash
            self._why = f"cannot open {self.uri}: {_short(exc)}"
            logger.warning("memory {}", self._why)
        finally:
            self._settled.set()

    def _prepare(self) -> None:
        """On the background thread: open the store, then start the maintenance schedule."""
        self._load()
        if self.ready.is_set():
            self._ingest()
        if self.ready.is_set() and self.config.get("memory.tidy") and not self._closed:
            self.scheduler = Scheduler(
                TidySchedule.from_config(self.config), lambda now: self.tidy(now), last_run=_last_or_now(self.marker)
            )
            self.scheduler.start()

    def _write(self, batch: list[MemoryEvent]) -> Written:
        if not self.ready.is_set():
            return Written.DROPPED
        if not batch:
            return Written.STORED
        try:
            arrow = events_to_arrow(batch, self.embedder)
            with self._write_lock:
                version = self._table.add(arrow).version
                privatise(self.uri)
        except Exception as exc:  # the writer keeps the batch and retries after a back-off
            logger.opt(exception=exc).warning("memory write failed, will retry: {}", exc)
            return Written.RETRY
        snapshot = self._snapshot
        if snapshot is not None:
            if snapshot.version is None or version != snapshot.version + 1:
                self._stale = True  # someone else committed too: reload in the background
                self._writer.ask_check()
            snapshot.version = version
            snapshot.extend(
                (
                    canonical_tool(e.tool),
                    e.signature,
                    self.embedder.embed(e.signature),
                    1.0,
                    e.success,
                    e.effective_importance,
                )
                for e in batch
            )
            self._publish(force=False)
        if self._cache is not None:
            with self._cache_lock:
                for e in batch:
                    self._cache.pop((canonical_tool(e.tool), e.signature), None)
        return Written.STORED

    def _check(self, force: bool = False) -> bool:
        """Reload the snapshot if the table moved on (other writers, maintenance)."""
        if not self.ready.is_set():
            return False
        self._ingest()
        if self._unpublished:
            self._publish()
        try:
            with self._write_lock:
                self._table.checkout_latest()
                version = self._table.version
            snapshot = self._snapshot
            if force or self._stale or snapshot is None or snapshot.version != version:
                self._reload()
            return True
        except Exception as exc:
            logger.opt(exception=exc).warning("memory refresh failed: {}", exc)
            return False

    def _reload(self) -> None:
        self._stale = False
        limit = self.config.get("memory.snapshot_max_rows")
        self._snapshot = read_snapshot(self._table, self.embedder, limit)  # None: too big, query LanceDB
        if self._cache is not None:
            with self._cache_lock:
                self._cache.clear()
        self._publish()

    def _ingest(self) -> int:
        """Store what readers of this workspace queued (:mod:`guard.memory.queue`)."""
        if self.queue is None:
            return 0
        try:
            return drain(self.queue, lambda events: self._write(events) is Written.STORED)
        except OSError as exc:
            logger.warning("memory: cannot read the queue {}: {}", self.queue, exc)
            return 0

    def _publish(self, *, force: bool = True) -> None:
        """Publish the snapshot for this workspace's readers (none: remove a stale one).

        After a write (``force=False``) at most one publication per ``10 ×`` the last one's cost
        and per second (100k memories take ≈0.7 s to write out): a skipped one is marked and
        done at the next check, the next write past the interval, or ``close``."""
        path = self.published
        if path is None:
            return
        now = time.monotonic()
        if not force and now - self._published_at < max(_PUBLISH_SECONDS, 10.0 * self._publish_cost):
            self._unpublished = True
            return
        snapshot = self._snapshot
        try:
            if snapshot is None:
                path.unlink(missing_ok=True)  # too big to hold: readers say so rather than answer from old rows
            else:
                publish(snapshot, path, self.embedder.name)
        except OSError as exc:
            logger.warning("memory: cannot publish the snapshot {}: {}", path, exc)
            return
        self._unpublished = False
        self._published_at = time.monotonic()
        self._publish_cost = self._published_at - now

    def _query(self, tool: str, query: Vector) -> Neighbours | None:
        if self._table is None:
            raise RuntimeError("no table")
        return search_table(self._table, self.embedder.name, tool, query, self._similarity, self._top_k, self._timeout)

    def _result(self, found: Neighbours | None) -> MemoryResult:
        return result_of(found, self._prior, self._seed)


def _unavailable(why: str) -> MemoryResult:
    return MemoryResult(available=False, note=f"memory: unavailable ({why})")


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


def _last_or_now(marker: Path | None) -> datetime:
    # No marker yet: count from start-up, so a process start never triggers a run at once.
    return tidy_mod.last_run(marker) or datetime.now()


_LIVE: weakref.WeakSet[LanceMemory] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    """Flush every open memory when the interpreter exits normally."""
    for memory in list(_LIVE):
        try:
            memory.close(timeout=10.0)
        except Exception as exc:  # pragma: no cover - best effort at exit
            logger.warning("memory: flush at exit failed: {}", exc)
