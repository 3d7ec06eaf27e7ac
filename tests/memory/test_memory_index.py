"""The in-process snapshot: grouped columns, growth, sparse and dense search, aggregation."""

from __future__ import annotations

import numpy as np
import pytest

from guard.memory.embed import HashingEmbedder
from guard.memory.index import Snapshot, ToolIndex, neighbours

E = HashingEmbedder(dim=64)
ROWS = [
    ("bash", "bash:npm test", True, 0.35),
    ("bash", "bash:npm test", False, 0.6),
    ("bash", "bash:npm test", True, 0.35),
    ("bash", "bash:npm test -- --watch", True, 0.35),
    ("bash", "bash:git push", True, 0.5),
    ("write", "write:src/a.py", True, 0.2),
]


def incremental() -> Snapshot:
    s = Snapshot(64, version=1)
    s.extend((t, sig, E.embed(sig), 1.0, ok, imp) for t, sig, ok, imp in ROWS)
    return s


def built() -> Snapshot:
    return Snapshot.build(
        64,
        1,
        [r[0] for r in ROWS],
        [r[1] for r in ROWS],
        np.stack([E.embed(r[1]) for r in ROWS]),
        np.ones(len(ROWS)),
        np.array([r[2] for r in ROWS]),
        np.array([r[3] for r in ROWS]),
    )


class TestSnapshot:
    def test_rows_are_grouped_by_signature(self) -> None:
        s = incremental()
        assert len(s.tools["bash"]) == 3 and len(s.tools["write"]) == 1

    @pytest.mark.parametrize("make", [incremental, built])
    def test_search_aggregates_the_neighbours(self, make: object) -> None:
        s = make()  # type: ignore[operator]
        found = s.search("bash", E.embed("bash:npm test"), 0.8, 20)
        assert found is not None
        assert found.matched == 4 and found.success_rate == 0.75 and found.best == pytest.approx(1.0)
        exact = s.search("bash", E.embed("bash:npm test"), 0.999, 20)
        assert exact is not None and exact.matched == 3
        # importance-weighted: the failure (0.6) outweighs each success (0.35)
        assert exact.weighted_rate == pytest.approx(0.7 / 1.3)

    def test_build_matches_incremental(self) -> None:
        a, b = incremental(), built()
        for sig in ("bash:npm test", "bash:git push", "bash:npm run build"):
            assert a.search("bash", E.embed(sig), 0.5, 20) == b.search("bash", E.embed(sig), 0.5, 20)

    def test_unknown_tool_has_no_neighbours(self) -> None:
        assert incremental().search("edit", E.embed("edit:x"), 0.1, 5) is None


class TestToolIndex:
    def test_grows_past_its_capacity_keeping_every_vector(self) -> None:
        index = ToolIndex(64, capacity=2)
        sigs = [f"bash:cmd{i} arg{i}" for i in range(300)]
        for sig in sigs:
            index.add(sig, E.embed(sig), 1.0, True, 0.2)
        assert len(index) == 300
        for sig in (sigs[0], sigs[150], sigs[299]):
            found = index.search(E.embed(sig), 0.999, 1)
            assert found is not None and found.matched == 1

    def test_dense_queries_search_every_feature(self) -> None:
        index = ToolIndex(8)
        rng = np.random.default_rng(1)
        vecs = rng.normal(size=(5, 8)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1)[:, None]
        for i, v in enumerate(vecs):
            index.add(str(i), v, 1.0, i % 2 == 0, 0.5)
        found = index.search(vecs[3], 0.999, 5)
        assert found is not None and found.matched == 1 and found.success_rate == 0.0


class TestNeighbours:
    def test_threshold_top_k_and_kernel(self) -> None:
        sims = np.array([0.95, 0.85, 0.80, 0.5])
        ones = np.ones(4)
        found = neighbours(sims, ones, ones, ones * 0.5, ones * 0.5, 0.8, 2)
        assert found is not None and found.matched == 2 and found.best == pytest.approx(0.95)
        assert found.weight == pytest.approx(0.75 + 0.25)  # kernel (sim − 0.8)/0.2

    def test_nothing_above_the_threshold(self) -> None:
        ones = np.ones(2)
        assert neighbours(np.array([0.1, 0.2]), ones, ones, ones, ones, 0.8, 5) is None
