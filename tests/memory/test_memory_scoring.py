"""Memory's similar-operation score against hand-worked numbers (docs/mutation.md), never LanceDB.

Formulas (guard/memory/base.py, guard/memory/index.py), threshold s₀, prior strength m:
  kernel K = (sim − s₀)/(1 − s₀) (1 when s₀ = 1); weight W = Σ count·K;
  success_rate = Σ successes / Σ count; avg_importance = Σ importance / Σ count;
  weighted_rate = Σ K·importance of successes / Σ K·importance (success_rate when that is 0);
  confidence = W/(W + m) (m = 0: 1 if W else 0);
  guard score = 100·(confidence·weighted_rate + (1 − confidence)·0.40); seed = 40 + 40·avg + 20·rate.
Vectors are chosen by hand (a table embedder) so every similarity is known exactly; the reader is
:class:`SnapshotMemory`, the provider of every embedding process, over a published snapshot.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from memhelpers import make_config

from guard import Guard
from guard.memory import HistoryMemory, MemoryEvent, importance_of
from guard.memory.embed import CallableEmbedder
from guard.memory.index import Snapshot, ToolIndex
from guard.memory.published import publish, snapshot_path
from guard.memory.reader import SnapshotMemory
from guard.model import Risk, ToolCall

NOW = datetime(2026, 3, 2, 12, tzinfo=UTC)
# Unit vectors: "q" is the query; the others' similarity to it is their first coordinate.
VECTORS = {
    "q": (1.0, 0.0, 0.0, 0.0),
    "same": (1.0, 0.0, 0.0, 0.0),  # sim 1.0
    "close": (0.9, math.sqrt(1 - 0.81), 0.0, 0.0),  # sim 0.9
    "edge": (0.8, 0.6, 0.0, 0.0),  # sim 0.8: exactly the default threshold
    "near": (0.85, math.sqrt(1 - 0.85**2), 0.0, 0.0),  # sim 0.85
    "half": (0.5, 0.0, math.sqrt(0.75), 0.0),  # sim 0.5
    "far": (0.6, 0.0, 0.0, 0.8),  # sim 0.6
    "dense": (0.5, 0.5, 0.5, 0.5),  # a query with every feature set
}
TABLE = CallableEmbedder("table-v1", 4, lambda text: VECTORS[text])
Row = tuple[str, float, bool, float]  # (signature, count, success, importance)


def memory_of(tmp_path: Path, rows: list[Row], **settings: Any) -> SnapshotMemory:
    """A published snapshot of ``rows`` (tool ``bash``), read the way an embedding process reads it."""
    snapshot = Snapshot(TABLE.dim, version=1)
    snapshot.extend(("bash", sig, TABLE.embed(sig), count, ok, imp) for sig, count, ok, imp in rows)
    publish(snapshot, snapshot_path(tmp_path), TABLE.name)
    return SnapshotMemory(tmp_path, make_config(memory__cache_size=0, **settings), embedder=TABLE)


def ask(memory: SnapshotMemory, query: str = "q", tool: str = "Bash") -> Any:
    return memory.relevance(ToolCall(tool, {"command": query}), query, Risk.LOW, NOW)


# A: 3 successes and 1 failure of the same operation; B: 2 failures of a close one; C: far away.
MIXED: list[Row] = [
    ("same", 3, True, 0.35),
    ("same", 1, False, 0.6),
    ("close", 2, False, 0.6),
    ("far", 5, True, 0.2),
]


class TestImportance:
    @pytest.mark.parametrize(
        ("risk", "ok", "expected"),
        [
            (Risk.SAFE, True, 0.2),
            (Risk.SAFE, False, 0.45),  # 0.2 + 0.25
            (Risk.LOW, True, 0.35),
            (Risk.LOW, False, 0.6),  # 0.35 + 0.25
            (Risk.MEDIUM, True, 0.5),
            (Risk.MEDIUM, False, 0.75),  # 0.5 + 0.25
            (Risk.HIGH, True, 0.75),
            (Risk.HIGH, False, 1.0),  # 0.75 + 0.25
            (Risk.CRITICAL, True, 0.9),
            (Risk.CRITICAL, False, 1.0),  # 0.9 + 0.25 = 1.15, capped at 1
        ],
    )
    def test_importance_by_risk_and_outcome(self, risk: Risk, ok: bool, expected: float) -> None:
        assert importance_of(ok, risk) == pytest.approx(expected)
        assert MemoryEvent("bash", "bash:x", ok, risk, NOW).effective_importance == pytest.approx(expected)

    def test_an_explicit_importance_wins(self) -> None:
        assert MemoryEvent("bash", "bash:x", False, Risk.CRITICAL, NOW, importance=0.1).effective_importance == 0.1


class TestSnapshotScore:
    def test_guard_mode_worked_example(self, tmp_path: Path) -> None:
        r = ask(memory_of(tmp_path, MIXED))
        # K: same (1 − 0.8)/0.2 = 1; close (0.9 − 0.8)/0.2 = 0.5; far 0.6 < 0.8 does not count
        # matched 4 + 2 = 6; success_rate 3/6 = 0.5; avg_importance (3·0.35 + 0.6 + 2·0.6)/6 = 2.85/6 = 0.475
        # W = 1·4 + 0.5·2 = 5; confidence 5/(5 + 4) = 5/9
        # weighted_rate = 1·1.05 / (1·1.65 + 0.5·1.2) = 1.05/2.25 = 7/15
        # score = 100·(5/9·7/15 + 4/9·0.4) = 100·(7/27 + 4.8/27) = 1180/27 = 43.7037…
        assert r.matched == 6 and r.available
        assert r.success_rate == pytest.approx(0.5) and r.avg_importance == pytest.approx(0.475)
        assert r.confidence == pytest.approx(5 / 9, rel=1e-6)
        assert r.score == pytest.approx(1180 / 27, rel=1e-6)
        assert r.note == "memory: 6 similar past operation(s) (best similarity 1.00), 50% succeeded"

    def test_seed_mode_worked_example(self, tmp_path: Path) -> None:
        r = ask(memory_of(tmp_path, MIXED, fusion__mode="seed"))
        # 40 + 0.475·40 + 0.5·20 = 40 + 19 + 10 = 69 (confidence as in guard mode: 5/9)
        assert r.score == pytest.approx(69.0) and r.confidence == pytest.approx(5 / 9, rel=1e-6)

    def test_little_importance_weight_still_weighs_the_outcomes(self, tmp_path: Path) -> None:
        """Σ K·importance below 1 (0.35 + 0.6 = 0.95) still gives the weighted rate, not the plain one."""
        r = ask(memory_of(tmp_path, [("same", 1, True, 0.35), ("same", 1, False, 0.6)]))
        # W = 2, confidence 2/6 = 1/3; weighted_rate 0.35/0.95 = 7/19 (plain rate 0.5)
        # score = 100·(1/3·7/19 + 2/3·0.4) = 100·(7/57 + 0.8/3) = 100·(7 + 15.2)/57 = 2220/57 = 38.947…
        assert r.confidence == pytest.approx(1 / 3, rel=1e-6)
        assert r.score == pytest.approx(2220 / 57, rel=1e-6)

    def test_no_prior_means_full_confidence(self, tmp_path: Path) -> None:
        r = ask(memory_of(tmp_path, [("same", 1, True, 0.35)], fusion__prior_strength=0))
        # confidence 1; weighted_rate 1 -> score 100·(1·1 + 0·0.4) = 100
        assert r.confidence == 1.0 and r.score == pytest.approx(100.0)

    def test_certain_failures_score_zero(self, tmp_path: Path) -> None:
        r = ask(memory_of(tmp_path, [("same", 1, False, 0.6)], fusion__prior_strength=0))
        # confidence 1, weighted_rate 0 -> 100·(1·0 + 0·0.4) = 0
        assert r.score == 0.0

    def test_no_prior_and_no_weight_means_no_confidence(self, tmp_path: Path) -> None:
        """A memory right at the threshold counts as matched but adds no weight (K = 0)."""
        r = ask(memory_of(tmp_path, [("half", 2, False, 0.6)], memory__similarity=0.5, fusion__prior_strength=0))
        # K = (0.5 − 0.5)/0.5 = 0 -> W = 0, confidence 0; weighted_rate falls back to the rate 0
        # score = 100·(0·0 + 1·0.4) = 40
        assert r.matched == 2 and r.confidence == 0.0 and r.score == pytest.approx(40.0)

    def test_a_memory_at_the_threshold_is_matched(self, tmp_path: Path) -> None:
        r = ask(memory_of(tmp_path, [("same", 1, True, 0.35), ("edge", 1, False, 0.6)]))
        # edge: sim 0.8 = s₀ counts (matched 2, 1 of 2 succeeded), K ≈ 0
        # W = 1 + 0 = 1, confidence 1/5; weighted_rate 0.35/0.35 = 1 -> 100·(0.2 + 0.8·0.4) = 52
        assert r.matched == 2 and r.success_rate == 0.5
        assert r.score == pytest.approx(52.0, rel=1e-5)

    def test_nothing_similar_scores_40(self, tmp_path: Path) -> None:
        r = ask(memory_of(tmp_path, [("far", 3, True, 0.2)]))
        assert (r.score, r.matched, r.confidence, r.available) == (40.0, 0, 0.0, True)
        assert r.note == "memory: no similar past operation"

    def test_one_operation_is_enough(self, tmp_path: Path) -> None:
        r = ask(memory_of(tmp_path, [("same", 1, False, 0.6)]))
        # W = 1, confidence 1/5; weighted_rate 0 -> 100·(0 + 0.8·0.4) = 32
        assert r.matched == 1 and r.score == pytest.approx(32.0)

    def test_top_k_keeps_the_most_similar(self, tmp_path: Path) -> None:
        rows: list[Row] = [("near", 1, True, 0.5), ("same", 1, False, 0.5), ("close", 1, False, 0.5)]
        r = ask(memory_of(tmp_path, rows, memory__top_k=2))
        # the two most similar: same (K 1) and close (K 0.5), both failures; near (0.85) is left out
        assert r.matched == 2 and r.success_rate == 0.0

    def test_threshold_one_counts_only_identical_operations_fully(self, tmp_path: Path) -> None:
        r = ask(memory_of(tmp_path, [("same", 3, True, 0.35), ("close", 2, False, 0.6)], memory__similarity=1.0))
        # K = 1 for every match at s₀ = 1; W = 3, confidence 3/7; weighted 1 -> 100·(3/7 + 4/7·0.4) = 100·4.6/7
        assert r.matched == 3 and r.confidence == pytest.approx(3 / 7, rel=1e-6)
        assert r.score == pytest.approx(460 / 7, rel=1e-6)

    def test_a_dense_query_finds_its_neighbours(self, tmp_path: Path) -> None:
        r = ask(memory_of(tmp_path, [("same", 2, True, 0.35), ("far", 1, False, 0.2)], memory__similarity=0.5), "dense")
        # sims: same 0.5 (K 0), far (0.3 + 0.4) = 0.7 (K 0.4); matched 3, 2 of 3 succeeded
        assert r.matched == 3 and r.success_rate == pytest.approx(2 / 3)

    def test_other_tools_do_not_count(self, tmp_path: Path) -> None:
        assert ask(memory_of(tmp_path, MIXED), tool="Write").matched == 0


class TestIndex:
    def test_similarity_is_capped_at_one(self) -> None:
        """A vector a little longer than unit (rounding) counts as identical, not more."""
        s = Snapshot(4)
        s.add("bash", "long", np.array([1.001, 0, 0, 0], np.float32), 1.0, True, 0.5)
        found = s.search("bash", TABLE.embed("q"), 0.8, 5)
        assert found is not None and found.best == 1.0 and found.weight == 1.0

    def test_a_column_without_operations_is_not_a_neighbour(self) -> None:
        s = Snapshot(4)
        s.add("bash", "same", TABLE.embed("same"), 0.0, True, 0.5)
        assert s.search("bash", TABLE.embed("q"), 0.8, 5) is None

    def test_counts_weigh_importance(self) -> None:
        s = Snapshot(4)
        s.add("bash", "same", TABLE.embed("same"), 4.0, True, 0.5)
        found = s.search("bash", TABLE.embed("q"), 0.8, 5)
        # avg_importance 4·0.5/4 = 0.5; W = 4; weighted 2/2 = 1
        assert found is not None and (found.matched, found.avg_importance, found.weight) == (4, 0.5, 4.0)
        assert found.weighted_rate == 1.0

    def test_memory_held_follows_the_capacity(self) -> None:
        """float32 vectors (dim·capacity·4 bytes) plus 4 float64 aggregates (4·capacity·8)."""
        index = ToolIndex(8)
        assert index.dim == 8 and index.nbytes == 8 * 64 * 4 + 4 * 64 * 8  # 4096: room for 64
        for i in range(65):
            index.add(f"s{i}", np.eye(8, dtype=np.float32)[i % 8], 1.0, True, 0.2)
        assert index.nbytes == 8 * 128 * 4 + 4 * 128 * 8  # doubled to 128
        small = ToolIndex(8, capacity=2)
        for i in range(3):
            small.add(f"s{i}", np.eye(8, dtype=np.float32)[i], 1.0, True, 0.2)
        assert small.nbytes == 8 * 64 * 4 + 4 * 64 * 8  # grows to at least 64
        assert len(small) == 3

    def test_build_of_many_rows(self) -> None:
        sigs = ["same", "same", "close", "far", "edge"]
        s = Snapshot.build(
            4,
            7,
            ["bash"] * 5,
            sigs,
            np.stack([TABLE.embed(x) for x in sigs]),
            np.array([2.0, 1.0, 3.0, 1.0, 1.0]),
            np.array([True, False, False, True, True]),
            np.array([0.35, 0.6, 0.6, 0.2, 0.35]),
        )
        assert (s.dim, s.version, len(s)) == (4, 7, 4)
        # 4 columns: capacity 4 + 4//4 + 16 = 21 -> 4·21·4 + 4·21·8 = 336 + 672 = 1008 bytes
        assert s.nbytes == 1008
        found = s.search("bash", TABLE.embed("q"), 0.85, 20)
        # same (count 3: 2 ok at 0.35, 1 failed at 0.6; K 1), close (3 failed at 0.6; K (0.9 − 0.85)/0.15 = 1/3)
        # matched 6; avg (0.7 + 0.6 + 1.8)/6 = 3.1/6; W = 3 + 1 = 4; weighted 0.7/(1.3 + 1.8/3) = 0.7/1.9
        assert found is not None and found.matched == 6
        assert found.avg_importance == pytest.approx(3.1 / 6)
        assert found.weight == pytest.approx(4.0, rel=1e-5)
        assert found.weighted_rate == pytest.approx(0.7 / 1.9, rel=1e-5)

    def test_version_and_rows(self) -> None:
        s = Snapshot(4, version=3)
        s.extend([("bash", "same", TABLE.embed("same"), 1.0, True, 0.2)] * 2)
        s.add("write", "far", TABLE.embed("far"), 1.0, True, 0.2)
        assert (s.version, len(s)) == (3, 2)


class TestHistoryMemory:
    """Past runs of the exact call, from the history files (``memory.backend = "history"``)."""

    def guard(self, workspace: Path, **config: Any) -> Guard:
        return Guard(workspace, {"memory.backend": "history", "system.health": 90, **config})

    def test_one_earlier_run(self, workspace: Path) -> None:
        g = self.guard(workspace, **{"fusion.mode": "seed"})
        call = {"command": "frobnicate --all"}  # unknown program: medium risk
        g.record_result("bash", call, success=True)
        r = g.state.memory.relevance(
            ToolCall("bash", call), g.state.signature_of(ToolCall("bash", call)), Risk.MEDIUM, NOW
        )
        # importance of a medium success 0.5; rate 1 -> seed 40 + 0.5·40 + 1·20 = 80; confidence 1/(1 + 4)
        assert (r.matched, r.success_rate, r.avg_importance) == (1, 1.0, 0.5)
        assert r.score == pytest.approx(80.0) and r.confidence == pytest.approx(0.2)
        assert r.note == "1 earlier run(s) of this exact call, 100% succeeded"
        rec = g.decide("bash", call)
        assert rec.components["memory"] == 80.0
        assert rec.layer("fusion").data["dimensions"]["memory"]["note"] == r.note
        g.close()

    def test_no_earlier_run(self, workspace: Path) -> None:
        g = self.guard(workspace)
        call = ToolCall("bash", {"command": "frobnicate --none"})
        r = g.state.memory.relevance(call, g.state.signature_of(call), Risk.MEDIUM, NOW)
        assert (r.score, r.matched, r.note) == (40.0, 0, "no similar past operation")
        g.close()

    def test_the_provider_alone_defaults_to_four_pseudo_runs(self, workspace: Path) -> None:
        g = self.guard(workspace, **{"fusion.prior_strength": 0})
        call = ToolCall("bash", {"command": "frobnicate --all"})
        g.record_result("bash", call.params, success=True)
        r = HistoryMemory(g.state.aggregates).relevance(call, g.state.signature_of(call), Risk.MEDIUM, NOW)
        assert r.confidence == pytest.approx(1 / 5)  # 1 run / (1 + 4)
        g.close()

    def test_no_prior_means_full_confidence(self, workspace: Path) -> None:
        g = self.guard(workspace, **{"fusion.prior_strength": 0})
        call = ToolCall("bash", {"command": "frobnicate --all"})
        g.record_result("bash", call.params, success=False)
        r = g.state.memory.relevance(call, g.state.signature_of(call), Risk.MEDIUM, NOW)
        assert r.confidence == 1.0 and r.success_rate == 0.0
        g.close()
