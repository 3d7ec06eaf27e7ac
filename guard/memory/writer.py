"""A queue drained in batches by one background thread, with acknowledged flushes.

``put()`` never blocks on I/O. The thread hands the queue to ``write(batch)`` when
``batch_rows`` items are waiting, when the oldest has waited ``flush_seconds``, or when
someone calls ``flush()``; ``flush()`` returns ``True`` only once ``write`` reported the
batch stored. A batch that could not be stored goes back to the front of the queue and is
retried after an exponential back-off (at most a minute); beyond ``max_pending`` items the
oldest are dropped and counted. Between batches the thread also calls ``check(force)``
every ``check_seconds`` (and at once after :meth:`ask_check` or ``refresh()``).
"""

from __future__ import annotations

import enum
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Written(enum.Enum):
    STORED = "stored"
    RETRY = "retry"  # keep the batch, try again after a back-off
    DROPPED = "dropped"  # the store cannot take it at all; not retried


class _Waiter(threading.Event):
    def __init__(self, refresh: bool) -> None:
        super().__init__()
        self.refresh = refresh
        self.ok = False


class BatchWriter(Generic[T]):
    def __init__(
        self,
        write: Callable[[list[T]], Written],
        check: Callable[[bool], bool],
        *,
        flush_seconds: float,
        batch_rows: int,
        check_seconds: float,
        max_pending: int = 100_000,
    ) -> None:
        self.dropped = 0
        self._write = write
        self._check = check
        self._flush_seconds = flush_seconds
        self._batch_rows = batch_rows
        self._check_seconds = check_seconds
        self._max_pending = max_pending
        self._cond = threading.Condition()
        self._queue: deque[T] = deque()
        self._oldest = 0.0
        self._waiters: list[_Waiter] = []
        self._check_asked = False
        self._failures = 0
        self._retry_at = 0.0
        self._stopping = False
        self._thread: threading.Thread | None = None

    @property
    def pending(self) -> int:
        return len(self._queue)

    def put(self, item: T) -> None:
        with self._cond:
            if len(self._queue) >= self._max_pending:
                self._queue.popleft()
                self.dropped += 1
            if not self._queue:
                self._oldest = time.monotonic()
            self._queue.append(item)
            if len(self._queue) >= self._batch_rows or self._flush_seconds == 0:
                self._cond.notify()

    def start(self, prepare: Callable[[], None], name: str) -> None:
        """Start the thread: ``prepare()`` first (open the store), then the batching loop."""
        self._thread = threading.Thread(target=self._run, args=(prepare,), name=name, daemon=True)
        self._thread.start()

    def flush(self, timeout: float | None) -> bool:
        """Write everything queued so far; ``True`` once it is stored."""
        return self._ask(_Waiter(refresh=False), timeout) if self._thread else self._drain() is Written.STORED

    def refresh(self, timeout: float | None) -> bool:
        """Flush, then ``check(force=True)``."""
        if self._thread:
            return self._ask(_Waiter(refresh=True), timeout)
        stored = self._drain() is Written.STORED
        return self._check(True) and stored

    def ask_check(self) -> None:
        with self._cond:
            self._check_asked = True
            self._cond.notify()

    def stop(self, timeout: float | None) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _ask(self, waiter: _Waiter, timeout: float | None) -> bool:
        if self._thread is None or not self._thread.is_alive():
            return False
        with self._cond:
            self._waiters.append(waiter)
            self._cond.notify()
        return waiter.wait(timeout) and waiter.ok

    def _drain(self) -> Written:
        with self._cond:
            batch = list(self._queue)
            self._queue.clear()
        return self._store(batch)

    def _store(self, batch: list[T]) -> Written:
        outcome = self._write(batch)
        if outcome is Written.STORED:
            self._failures, self._retry_at = 0, 0.0
        elif outcome is Written.DROPPED:
            self.dropped += len(batch)
        elif batch:
            self._failures += 1
            self._retry_at = time.monotonic() + min(60.0, 2.0**self._failures)
            with self._cond:
                self._queue.extendleft(reversed(batch))
                while len(self._queue) > self._max_pending:
                    self._queue.popleft()
                    self.dropped += 1
        return outcome

    def _run(self, prepare: Callable[[], None]) -> None:
        prepare()
        next_check = time.monotonic() + self._check_seconds
        while True:
            with self._cond:
                while not self._due(next_check):
                    self._cond.wait(self._wait_seconds(next_check))
                # A flush retries at once; otherwise a failed batch waits for its back-off.
                take = self._waiters or time.monotonic() >= self._retry_at
                batch = list(self._queue) if take else []
                if batch:
                    self._queue.clear()
                waiters, self._waiters = self._waiters, []
                refresh = self._check_asked or any(w.refresh for w in waiters)
                self._check_asked = False
                stopping = self._stopping
            stored = self._store(batch) is Written.STORED
            checked = True
            if refresh or (self._check_seconds and time.monotonic() >= next_check):
                checked = self._check(refresh)
                next_check = time.monotonic() + self._check_seconds
            for w in waiters:
                w.ok = stored and (checked or not w.refresh)
                w.set()
            if stopping:
                return

    def _due(self, next_check: float) -> bool:
        now = time.monotonic()
        queued = bool(self._queue) and now >= self._retry_at
        return bool(
            self._stopping
            or self._waiters
            or self._check_asked
            or (queued and (len(self._queue) >= self._batch_rows or now >= self._oldest + self._flush_seconds))
            or (self._check_seconds and now >= next_check)
        )

    def _wait_seconds(self, next_check: float) -> float | None:
        deadlines = [max(self._oldest + self._flush_seconds, self._retry_at)] if self._queue else []
        if self._check_seconds:
            deadlines.append(next_check)
        return max(0.01, min(deadlines) - time.monotonic()) if deadlines else None
