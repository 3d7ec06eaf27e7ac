"""LanceMemory relevance: how did operations like this one go before?"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from memhelpers import ask, event, make_config

from guard.memory.base import MemoryProvider, seed_score
from guard.model import Risk

pytestmark = pytest.mark.lancedb


def remember_all(memory: Any, *events: Any) -> None:
    for e in events:
        memory.remember(e)
    assert memory.flush()


class TestScore:
    def test_unseen_call_scores_exactly_40(self, memory: Any) -> None:
        r = ask(memory, "cargo build --release")
        assert (r.score, r.matched, r.available, r.confidence) == (40.0, 0, True, 0.0)
        assert r.note == "memory: no similar past operation"

    def test_similar_successes_raise_the_score(self, memory: Any) -> None:
        remember_all(memory, *(event("npm test") for _ in range(5)), event("npm test -- --watch"))
        r = ask(memory, "npm test")
        assert r.score > 70 and r.matched == 6 and r.success_rate == 1.0
        assert 0.5 < r.confidence < 1.0
        assert "6 similar past operation(s)" in r.note and "100% succeeded" in r.note

    def test_similar_failures_lower_the_score_below_40(self, memory: Any) -> None:
        remember_all(memory, *(event("make deploy", success=False) for _ in range(4)))
        r = ask(memory, "make deploy")
        assert r.score < 40 and r.success_rate == 0.0 and r.matched == 4

    def test_more_evidence_moves_the_score_further(self, memory: Any) -> None:
        remember_all(memory, event("ls -la"))
        one = ask(memory, "ls -la")
        remember_all(memory, *(event("ls -la") for _ in range(20)))
        many = ask(memory, "ls -la")
        assert 40 < one.score < many.score and one.confidence < many.confidence

    def test_seed_mode_reproduces_the_seed_formula(self, lancedb: Any, tmp_path: Path) -> None:
        from guard.memory.lance import LanceMemory

        m = LanceMemory(str(tmp_path / "m.lance"), make_config(fusion__mode="seed"))
        try:
            assert m.wait_ready(60)
            remember_all(m, event("make", risk=Risk.MEDIUM), event("make", success=False, risk=Risk.MEDIUM))
            r = ask(m, "make")
            assert r.avg_importance == pytest.approx((0.5 + 0.75) / 2)
            assert r.success_rate == 0.5
            assert r.score == pytest.approx(seed_score(r.avg_importance, 0.5))
            assert ask(m, "terraform apply").score == 40.0
        finally:
            m.close()


class TestNeighbours:
    def test_other_tools_do_not_count(self, memory: Any) -> None:
        remember_all(memory, event("src/app.py", tool="Write"))
        assert ask(memory, "src/app.py").matched == 0
        assert ask(memory, "src/app.py", tool="Write").matched == 1

    def test_dissimilar_calls_do_not_count(self, memory: Any) -> None:
        remember_all(memory, event("rm -rf /tmp/build"))
        assert ask(memory, "rm -rf /").matched == 0
        assert ask(memory, "rm -rf /tmp/build2").matched == 1

    def test_similarity_threshold_is_a_setting(self, lancedb: Any, tmp_path: Path) -> None:
        from guard.memory.lance import LanceMemory

        m = LanceMemory(str(tmp_path / "m.lance"), make_config(memory__similarity=1.0))
        try:
            assert m.wait_ready(60)
            remember_all(m, event("rm -rf /tmp/build"))
            assert ask(m, "rm -rf /tmp/build2").matched == 0
            assert ask(m, "rm -rf /tmp/build").matched == 1
        finally:
            m.close()

    def test_query_path_agrees_with_the_snapshot(self, lancedb: Any, tmp_path: Path) -> None:
        """Tables above memory.snapshot_max_rows are searched in LanceDB instead, with a timeout."""
        from guard.memory.lance import LanceMemory

        uri = str(tmp_path / "m.lance")
        events = [event("pytest -x", success=i % 4 != 0) for i in range(8)] + [event("git status")]
        small = LanceMemory(uri, make_config())
        assert small.wait_ready(60)
        remember_all(small, *events)
        expected = ask(small, "pytest -x")
        small.close()
        big = LanceMemory(uri, make_config(memory__snapshot_max_rows=0))
        try:
            assert big.wait_ready(60) and big._snapshot is None
            got = ask(big, "pytest -x")
            assert (got.matched, got.success_rate) == (expected.matched, expected.success_rate)
            assert got.score == pytest.approx(expected.score)
        finally:
            big.close()


class TestCache:
    def test_repeated_question_is_served_from_the_cache(self, memory: Any) -> None:
        first = ask(memory, "git status")
        assert ask(memory, "git status") is first

    def test_an_outcome_with_the_same_signature_evicts_the_entry(self, memory: Any) -> None:
        assert ask(memory, "git status").matched == 0
        remember_all(memory, event("git status"))
        assert ask(memory, "git status").matched == 1


class TestWriter:
    def test_is_a_memory_provider(self, memory: Any) -> None:
        provider: MemoryProvider = memory
        assert provider.name == "lancedb"

    def test_remember_only_enqueues(self, memory: Any) -> None:
        """A decision never waits on a write: nothing reaches the table before a flush."""
        memory.remember(event("git status"))
        assert memory.pending == 1
        assert memory._table.count_rows() == 0
        assert memory.flush() and memory.pending == 0
        assert memory._table.count_rows() == 1

    def test_a_full_batch_is_written_without_a_flush(self, lancedb: Any, tmp_path: Path) -> None:
        from guard.memory.lance import LanceMemory

        m = LanceMemory(str(tmp_path / "m.lance"), make_config(memory__batch_rows=3))
        try:
            assert m.wait_ready(60)
            for _ in range(3):
                m.remember(event("git status"))
            m.refresh()  # waits for the worker's current round
            assert m._table.count_rows() == 3
        finally:
            m.close()

    def test_rows_carry_the_schema(self, memory: Any) -> None:
        remember_all(memory, event("rm -rf build", success=False, risk=Risk.MEDIUM, session_id="s1", agent_id="a1"))
        row = memory._table.to_arrow().to_pylist()[0]
        assert row["tool"] == "bash" and row["signature"] == "bash:rm -rf build"
        assert row["embedder"] == "hashing-v1" and len(row["vector"]) == 256
        assert row["success"] is False and row["risk"] == "medium" and row["count"] == 1
        assert row["importance"] == pytest.approx(0.75)
        assert (row["session_id"], row["agent_id"]) == ("s1", "a1")

    def test_a_fresh_instance_sees_what_was_flushed(self, lancedb: Any, tmp_path: Path) -> None:
        from guard.memory.lance import LanceMemory

        uri = str(tmp_path / "m.lance")
        first = LanceMemory(uri, make_config())
        assert first.wait_ready(60)
        first.remember(event("docker compose up"))
        first.close()  # close flushes
        second = LanceMemory(uri, make_config())
        try:
            assert second.wait_ready(60)
            assert ask(second, "docker compose up").matched == 1
        finally:
            second.close()

    def test_refresh_picks_up_another_writer(self, lancedb: Any, tmp_path: Path) -> None:
        from guard.memory.lance import LanceMemory

        uri = str(tmp_path / "m.lance")
        reader = LanceMemory(uri, make_config())
        assert reader.wait_ready(60)  # the table exists before the second store opens it
        writer = LanceMemory(uri, make_config())
        try:
            assert writer.wait_ready(60)
            assert ask(reader, "kubectl get pods").matched == 0
            remember_all(writer, event("kubectl get pods"))
            assert reader.refresh()
            assert ask(reader, "kubectl get pods").matched == 1
        finally:
            reader.close()
            writer.close()

    def test_closed_memory_is_unavailable_and_ignores_outcomes(self, memory: Any) -> None:
        memory.close()
        memory.remember(event("ls"))
        r = ask(memory, "ls")
        assert (r.available, r.score, r.note) == (False, 40.0, "memory: unavailable (closed)")
