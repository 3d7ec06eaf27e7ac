"""A broken or slow store makes memory unavailable (neutral 40, a note), never an exception."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from memhelpers import ask, event, make_config

from guard.memory.base import NO_MEMORY_SCORE

pytestmark = pytest.mark.lancedb


def assert_neutral(result: Any, why: str) -> None:
    assert (result.score, result.matched, result.available, result.confidence) == (NO_MEMORY_SCORE, 0, False, 0.0)
    assert result.note.startswith("memory: unavailable (") and why in result.note, result.note


def broken(uri: str, **overrides: Any) -> Any:
    from guard.memory.lance import LanceMemory

    m = LanceMemory(uri, make_config(**overrides))
    assert m.wait_ready(60) is False
    return m


class TestUnreadableStore:
    def test_corrupt_table_directory(self, lancedb: Any, tmp_path: Path) -> None:
        versions = tmp_path / "memory.lance" / "memories.lance" / "_versions"
        versions.mkdir(parents=True)
        (versions / "1.manifest").write_bytes(b"garbage\n")
        m = broken(str(tmp_path / "memory.lance"))
        assert_neutral(ask(m, "git status"), "cannot open")
        m.remember(event("git status"))
        assert m.flush() is False  # not durable, and says so
        m.close()

    def test_a_file_where_the_directory_should_be(self, lancedb: Any, tmp_path: Path) -> None:
        (tmp_path / "memory.lance").write_text("not a directory")
        m = broken(str(tmp_path / "memory.lance"))
        assert_neutral(ask(m, "ls"), "FileExistsError")
        m.close()

    @pytest.mark.parametrize(("uri", "why"), [("nosuch://bucket/x", "No object store"), ("s3://", "bucket")])
    def test_bad_uri(self, lancedb: Any, uri: str, why: str) -> None:
        m = broken(uri)
        assert_neutral(ask(m, "ls"), why)
        m.close()

    def test_table_of_another_dimension(self, lancedb: Any, tmp_path: Path) -> None:
        from guard.memory.lance import LanceMemory

        uri = str(tmp_path / "memory.lance")
        small = LanceMemory(uri, make_config(memory__dim=64))
        assert small.wait_ready(60)
        small.close()
        m = broken(uri)
        assert_neutral(ask(m, "ls"), "64-d vectors")
        m.close()


class TestNotReady:
    def test_loading_is_unavailable_until_ready(self, lancedb: Any, tmp_path: Path, monkeypatch: Any) -> None:
        """Constructing returns at once; the import happens on the background thread."""
        from guard.memory import lance

        gate = threading.Event()
        monkeypatch.setattr(lance, "_import_lancedb", lambda: gate.wait(30))
        m = lance.LanceMemory(str(tmp_path / "memory.lance"), make_config())
        try:
            assert not m.ready.is_set()
            assert_neutral(ask(m, "ls"), "loading")
            m.remember(event("ls"))  # queued while loading
            gate.set()
            assert m.wait_ready(60)
            assert m.flush()
            assert ask(m, "ls").matched == 1
        finally:
            gate.set()
            m.close()

    def test_without_background_it_waits_for_open(self, lancedb: Any, tmp_path: Path) -> None:
        from guard.memory.lance import LanceMemory

        m = LanceMemory(str(tmp_path / "memory.lance"), make_config(), start_background=False)
        assert_neutral(ask(m, "ls"), "not opened")
        assert m.open()
        m.remember(event("ls"))
        assert m.flush() and ask(m, "ls").matched == 1
        m.close()


class _Failing:
    def __getattr__(self, name: str) -> Any:
        return lambda *a, **k: self

    def to_arrow(self, **kw: Any) -> Any:
        raise TimeoutError("query took longer than 50 ms")


class TestFailures:
    def test_query_timeout_is_neutral(self, memory: Any, monkeypatch: Any) -> None:
        monkeypatch.setattr(memory, "_snapshot", None)
        monkeypatch.setattr(memory._table, "search", lambda *a, **k: _Failing())
        assert_neutral(ask(memory, "ls"), "TimeoutError: query took longer than 50 ms")

    def test_a_failed_write_is_kept_and_retried(self, memory: Any, monkeypatch: Any) -> None:
        table = memory._table
        real_add = table.add

        def fail_once(*a: Any, **k: Any) -> Any:
            monkeypatch.setattr(table, "add", real_add)
            raise OSError("disk full")

        monkeypatch.setattr(table, "add", fail_once)
        memory.remember(event("make"))
        assert memory.flush() is False and memory.pending == 1
        assert memory.flush() is True and memory.pending == 0
        assert table.count_rows() == 1
