"""The batch writer: never blocks put(), acknowledges flushes, retries, reports drops."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from guard.memory.writer import BatchWriter, Written


class Store:
    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.outcomes: list[Written] = []
        self.checks: list[bool] = []
        self.wrote = threading.Event()

    def write(self, batch: list[int]) -> Written:
        outcome = self.outcomes.pop(0) if self.outcomes else Written.STORED
        if batch and outcome is Written.STORED:
            self.batches.append(batch)
            self.wrote.set()
        return outcome

    def check(self, force: bool) -> bool:
        self.checks.append(force)
        return True


@pytest.fixture
def store() -> Store:
    return Store()


@pytest.fixture
def writer(store: Store) -> Iterator[BatchWriter[int]]:
    w: BatchWriter[int] = BatchWriter(store.write, store.check, flush_seconds=3600, batch_rows=3, check_seconds=0)
    w.start(lambda: None, name="test-writer")
    yield w
    w.stop(10)


def test_flush_writes_everything_queued_in_one_batch(writer: BatchWriter[int], store: Store) -> None:
    writer.put(1)
    writer.put(2)
    assert writer.pending == 2 and store.batches == []
    assert writer.flush(10) and writer.pending == 0
    assert store.batches == [[1, 2]]


def test_a_full_batch_is_written_without_a_flush(writer: BatchWriter[int], store: Store) -> None:
    for i in range(3):
        writer.put(i)
    assert store.wrote.wait(10)
    assert store.batches == [[0, 1, 2]]


def test_a_failed_batch_is_kept_and_a_flush_retries_it(writer: BatchWriter[int], store: Store) -> None:
    store.outcomes = [Written.RETRY]
    writer.put(7)
    assert writer.flush(10) is False and writer.pending == 1
    assert writer.flush(10) is True and store.batches == [[7]]


def test_an_unusable_store_drops_and_says_so(writer: BatchWriter[int], store: Store) -> None:
    store.outcomes = [Written.DROPPED]
    writer.put(1)
    assert writer.flush(10) is False and writer.dropped == 1 and writer.pending == 0


def test_overflow_drops_the_oldest_and_counts(store: Store) -> None:
    w: BatchWriter[int] = BatchWriter(
        store.write, store.check, flush_seconds=3600, batch_rows=100, check_seconds=0, max_pending=2
    )
    for i in range(5):
        w.put(i)
    assert w.dropped == 3 and w.flush(10) and store.batches == [[3, 4]]


def test_refresh_flushes_then_checks(writer: BatchWriter[int], store: Store) -> None:
    writer.put(1)
    assert writer.refresh(10)
    assert store.batches == [[1]] and store.checks == [True]


def test_without_a_thread_flush_is_synchronous(store: Store) -> None:
    w: BatchWriter[int] = BatchWriter(store.write, store.check, flush_seconds=0, batch_rows=1, check_seconds=0)
    w.put(1)
    assert w.flush(None) and store.batches == [[1]]
    w.stop(1)
