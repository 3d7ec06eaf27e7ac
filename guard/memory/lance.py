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
from collections import deque
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import cachetools
from loguru import logger

from guard.config import Config
from guard.memory import tidy as tidy_mod
from guard.memory.base import NO_MEMORY_SCORE, MemoryEvent, MemoryResult, seed_score
from guard.memory.embed import Embedder, HashingEmbedder, Vector
from guard.memory.index import Neighbours, Snapshot, neighbours
from guard.memory.schedule import Scheduler, TidySchedule
from guard.memory.table import connect, events_to_arrow, is_remote, open_table, sql_str
from guard.model import Risk, ToolCall
from guard.toolnames import canonical_tool

_MAX_PENDING = 100_000  # queued outcomes kept while the store cannot take them
_SNAPSHOT_COLUMNS = ["tool", "signature", "vector", "count", "success", "importance"]


def _import_lancedb() -> None:
    import lancedb  # noqa: F401  (the 0.8 s import, on the background thread only)


class _Waiter(threading.Event):
    def __init__(self, refresh: bool = False) -> None:
        super().__init__()
        self.refresh = refresh
        self.ok = False


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
        self.dropped = 0  # outcomes that could not be kept (queue overflow, store unavailable)
        self._settled = threading.Event()
        self._why = "loading" if start_background else "not opened"
        self._similarity = float(config.get("memory.similarity"))
        self._top_k = int(config.get("memory.top_k"))
        self._prior = float(config.get("fusion.prior_strength"))
        self._seed = config.get("fusion.mode") == "seed"
        self._flush_seconds = float(config.get("memory.flush_seconds"))
        self._batch_rows = int(config.get("memory.batch_rows"))
        self._snapshot_seconds = float(config.get("memory.snapshot_seconds"))
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
        self._cond = threading.Condition()
        self._queue: deque[MemoryEvent] = deque()
        self._oldest = 0.0
        self._waiters: list[_Waiter] = []
        self._reload_asked = False
        self._failures = 0
        self._retry_at = 0.0
        self._stopping = False
        self._closed = False
        state = state_dir or (None if is_remote(self.uri) else Path(self.uri.removeprefix("file://")).parent)
        self.marker = state / tidy_mod.MARKER_NAME if state is not None else None
        self.scheduler: Scheduler | None = None
        self._background = start_background
        self._thread: threading.Thread | None = None
        _LIVE.add(self)
        if start_background:
            self._thread = threading.Thread(target=self._run, name="guard-memory", daemon=True)
            self._thread.start()

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
                hit = cache.get(key)
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
        if self._closed:
            return
        with self._cond:
            if len(self._queue) >= _MAX_PENDING:
                self._queue.popleft()
                self.dropped += 1
            if not self._queue:
                self._oldest = time.monotonic()
            self._queue.append(event)
            if len(self._queue) >= self._batch_rows or self._flush_seconds == 0:
                self._cond.notify()

    def flush(self, timeout: float | None = 30.0) -> bool:
        """Store everything queued so far; ``True`` means it is durable (committed)."""
        if not self._background:
            return self._flush_now()
        return self._ask(_Waiter(), timeout)

    def close(self, timeout: float | None = 30.0) -> None:
        """Flush, stop the background threads, and answer "unavailable (closed)" from now on."""
        if self._closed:
            return
        self.flush(timeout)
        self._closed = True
        if self.scheduler is not None:
            self.scheduler.stop(timeout)
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
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
        if not self._background:
            ok = self._flush_now()
            self._check(force=True)
            return ok
        return self._ask(_Waiter(refresh=True), timeout)

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
            with self._cond:
                self._reload_asked = True
                self._cond.notify()
        return report

    @property
    def status(self) -> str:
        return "closed" if self._closed else "ready" if self.ready.is_set() else self._why

    @property
    def pending(self) -> int:
        return len(self._queue)

    # -- background work -----------------------------------------------------------------

    def _load(self) -> None:
        try:
            _import_lancedb()
            self._table = open_table(connect(self.uri, self.config), self.embedder.dim)
            self._reload()
            self.ready.set()
            self._why = "ready"
        except Exception as exc:  # a broken store is "unavailable", never a crash
            self._why = f"cannot open {self.uri}: {_short(exc)}"
            logger.warning("memory {}", self._why)
        finally:
            self._settled.set()

    def _run(self) -> None:
        self._load()
        if self.ready.is_set() and self.config.get("memory.tidy") and not self._closed:
            self.scheduler = Scheduler(
                TidySchedule.from_config(self.config), lambda now: self.tidy(now), last_run=_last_or_now(self.marker)
            )
            self.scheduler.start()
        next_check = time.monotonic() + self._snapshot_seconds
        while True:
            with self._cond:
                while not self._wakeup(next_check):
                    self._cond.wait(self._wait_seconds(next_check))
                batch = list(self._queue) if time.monotonic() >= self._retry_at or self._waiters else []
                if batch:
                    self._queue.clear()
                waiters, self._waiters = self._waiters, []
                refresh, self._reload_asked = self._reload_asked or any(w.refresh for w in waiters), False
                stopping = self._stopping
            written = self._write(batch)
            checked = True
            if refresh or self._stale or (self._snapshot_seconds and time.monotonic() >= next_check):
                checked = self._check(force=refresh)
                next_check = time.monotonic() + self._snapshot_seconds
            for w in waiters:
                w.ok = written and (checked or not w.refresh)
                w.set()
            if stopping:
                return

    def _wakeup(self, next_check: float) -> bool:
        now = time.monotonic()
        queued = bool(self._queue) and now >= self._retry_at
        return bool(
            self._stopping
            or self._waiters
            or self._reload_asked
            or (queued and (len(self._queue) >= self._batch_rows or now >= self._oldest + self._flush_seconds))
            or (self._snapshot_seconds and now >= next_check)
        )

    def _wait_seconds(self, next_check: float) -> float | None:
        deadlines = [max(self._oldest + self._flush_seconds, self._retry_at)] if self._queue else []
        if self._snapshot_seconds:
            deadlines.append(next_check)
        return max(0.01, min(deadlines) - time.monotonic()) if deadlines else None

    def _ask(self, waiter: _Waiter, timeout: float | None) -> bool:
        if self._thread is None or not self._thread.is_alive():
            return False
        with self._cond:
            self._waiters.append(waiter)
            self._cond.notify()
        return waiter.wait(timeout) and waiter.ok

    def _flush_now(self) -> bool:
        with self._cond:
            batch = list(self._queue)
            self._queue.clear()
        return self._write(batch)

    def _write(self, batch: list[MemoryEvent]) -> bool:
        if not batch:
            return self.ready.is_set()
        if not self.ready.is_set():
            self.dropped += len(batch)
            return False
        try:
            arrow = events_to_arrow(batch, self.embedder)
            with self._write_lock:
                version = self._table.add(arrow).version
            self._failures, self._retry_at = 0, 0.0
        except Exception as exc:  # keep the batch for the next round, after a back-off
            self._failures += 1
            self._retry_at = time.monotonic() + min(60.0, 2.0**self._failures)
            logger.opt(exception=exc).warning("memory write failed, will retry: {}", exc)
            with self._cond:
                self._queue.extendleft(reversed(batch))
                while len(self._queue) > _MAX_PENDING:
                    self._queue.popleft()
                    self.dropped += 1
            return False
        snapshot = self._snapshot
        if snapshot is not None:
            if snapshot.version is None or version != snapshot.version + 1:
                self._stale = True  # someone else committed too: reload in the background
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
        if self._cache is not None:
            with self._cache_lock:
                for e in batch:
                    self._cache.pop((canonical_tool(e.tool), e.signature), None)
        return True

    def _check(self, force: bool = False) -> bool:
        """Reload the snapshot if the table moved on (other writers, maintenance)."""
        if not self.ready.is_set():
            return False
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
        table = self._table
        version = table.version
        where = f"embedder = {sql_str(self.embedder.name)}"
        if table.count_rows(where) > self.config.get("memory.snapshot_max_rows"):
            self._snapshot = None  # too big to hold: relevance queries LanceDB
        else:
            import numpy as np

            arrow = table.search().where(where).select(_SNAPSHOT_COLUMNS).limit(None).to_arrow()
            dim = self.embedder.dim

            def numbers(name: str) -> Any:
                return np.asarray(arrow.column(name).to_numpy(), dtype=np.float64)

            self._snapshot = Snapshot.build(
                dim,
                version,
                arrow.column("tool").to_pylist(),
                arrow.column("signature").to_pylist(),
                arrow.column("vector").combine_chunks().values.to_numpy(zero_copy_only=False).reshape(-1, dim),
                numbers("count"),
                np.asarray(arrow.column("success").to_numpy(zero_copy_only=False), dtype=bool),
                numbers("importance"),
            )
        if self._cache is not None:
            with self._cache_lock:
                self._cache.clear()

    def _query(self, tool: str, query: Vector) -> Neighbours | None:
        if self._table is None:
            raise RuntimeError("no table")
        where = f"tool = {sql_str(tool)} AND embedder = {sql_str(self.embedder.name)}"
        arrow = (
            self._table.search(query)
            .distance_type("cosine")
            .where(where)
            .distance_range(upper_bound=1.0 - self._similarity + 1e-6)
            .limit(self._top_k)
            .select(["count", "success", "importance", "_distance"])
            .to_arrow(timeout=self._timeout)
        )
        if arrow.num_rows == 0:
            return None
        import numpy as np

        count = np.asarray(arrow.column("count").to_numpy(), dtype=np.float64)
        success = np.asarray(arrow.column("success").to_numpy(zero_copy_only=False), dtype=bool)
        importance = np.asarray(arrow.column("importance").to_numpy(), dtype=np.float64)
        sims = 1.0 - np.asarray(arrow.column("_distance").to_numpy(), dtype=np.float64)
        imp = importance * count
        return neighbours(sims, count, count * success, imp, imp * success, self._similarity, self._top_k)

    def _result(self, found: Neighbours | None) -> MemoryResult:
        if found is None:
            return MemoryResult(note="memory: no similar past operation")
        m = self._prior
        confidence = found.weight / (found.weight + m) if m else (1.0 if found.weight else 0.0)
        if self._seed:
            score = seed_score(found.avg_importance, found.success_rate)
        else:
            # Shrink the evidence toward the no-memory score: failures pull below 40.
            score = 100.0 * (confidence * found.weighted_rate + (1.0 - confidence) * NO_MEMORY_SCORE / 100.0)
        return MemoryResult(
            score=min(100.0, max(0.0, score)),
            matched=found.matched,
            confidence=confidence,
            success_rate=found.success_rate,
            avg_importance=found.avg_importance,
            note=(
                f"memory: {found.matched} similar past operation(s) (best similarity {found.best:.2f}), "
                f"{found.success_rate:.0%} succeeded"
            ),
        )


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
