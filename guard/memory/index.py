"""The in-process snapshot of memory: one numpy matrix per tool, searched on the hot path.

LanceDB is the durable store; a flat LanceDB search costs 2.5-10 ms, a numpy product over
the same vectors 0.01-3 ms. So the hot path searches a :class:`Snapshot` that the
background thread builds from the table and extends after each write.

Rows are grouped by signature: a call repeated 10,000 times is one column with
``count = 10_000``, so the neighbours of a query are distinct operations. Each column keeps
the sums ``count``, ``successes``, ``importance_sum`` and ``importance_success`` of its rows.

Thread-safety: one writer (the background thread) and any number of readers without a
lock. A reader takes the arrays object first and the row count second; a writer fills a
column before it publishes the new count, and swaps in grown arrays as a whole. A reader may
see an aggregate that is one write behind, never a torn vector.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import attrs
import numpy as np
import numpy.typing as npt

from guard.memory.neighbours import SLACK, Neighbours, aggregate, top

if TYPE_CHECKING:
    from guard.memory.embed import Vector

__all__ = ["Neighbours", "Snapshot", "ToolIndex", "neighbours", "search_columns", "similarities"]

F64 = npt.NDArray[np.float64]

# Per column: operations, successes, Σ importance, Σ importance of the successes.
_AGGREGATES = ("count", "successes", "importance_sum", "importance_success")


@attrs.frozen
class _Arrays:
    vectors_t: npt.NDArray[np.float32]  # (dim, capacity): a column per row, rows contiguous per feature
    count: F64
    successes: F64
    importance_sum: F64
    importance_success: F64

    @classmethod
    def empty(cls, dim: int, capacity: int) -> _Arrays:
        return cls(np.zeros((dim, capacity), np.float32), *(np.zeros(capacity) for _ in range(4)))

    @property
    def capacity(self) -> int:
        return int(self.count.shape[0])

    def grown(self, n: int) -> _Arrays:
        bigger = _Arrays.empty(self.vectors_t.shape[0], max(64, self.capacity * 2))
        bigger.vectors_t[:, :n] = self.vectors_t[:, :n]
        for name in _AGGREGATES:
            getattr(bigger, name)[:n] = getattr(self, name)[:n]
        return bigger


class ToolIndex:
    """The rows of one tool."""

    def __init__(self, dim: int, capacity: int = 64) -> None:
        self.dim = dim
        self._a = _Arrays.empty(dim, capacity)
        self._rows: dict[str, int] = {}
        self.n = 0

    def __len__(self) -> int:
        return self.n

    @property
    def nbytes(self) -> int:
        a = self._a
        return int(a.vectors_t.nbytes) + sum(int(getattr(a, name).nbytes) for name in _AGGREGATES)

    def add(self, signature: str, vector: Vector, count: float, success: bool, importance: float) -> None:
        values = (count, count if success else 0.0, importance * count, importance * count if success else 0.0)
        i = self._rows.get(signature)
        if i is None:
            i = self.n
            a = self._a if i < self._a.capacity else self._a.grown(i)
            a.vectors_t[:, i] = vector
            for name, value in zip(_AGGREGATES, values, strict=True):
                getattr(a, name)[i] = value
            self._a = a
            self._rows[signature] = i
            self.n = i + 1  # publish last
        else:
            for name, value in zip(_AGGREGATES, values, strict=True):
                getattr(self._a, name)[i] += value

    def search(self, query: Vector, threshold: float, top_k: int) -> Neighbours | None:
        a = self._a
        n = min(self.n, a.capacity)
        return search_columns(
            a.vectors_t, a.count, a.successes, a.importance_sum, a.importance_success, n, query, threshold, top_k
        )


def search_columns(
    vectors_t: npt.NDArray[np.float32],
    count: F64,
    successes: F64,
    importance_sum: F64,
    importance_success: F64,
    n: int,
    query: Vector,
    threshold: float,
    top_k: int,
) -> Neighbours | None:
    """Neighbours among the first ``n`` columns: the search the published snapshot's reader
    (:mod:`guard.memory.published`) repeats without numpy, so their scores are identical."""
    if n == 0:
        return None
    sims = similarities(vectors_t, n, query)
    return neighbours(sims, count[:n], successes[:n], importance_sum[:n], importance_success[:n], threshold, top_k)


def similarities(vectors_t: npt.NDArray[np.float32], n: int, query: Vector) -> F64:
    """The similarity of each of the first ``n`` columns, as :func:`guard.memory.neighbours.fold`
    defines it: float64, one nonzero feature of the query at a time, in ascending order. Hashed
    queries are sparse, so this touches only the feature rows the query uses."""
    sims = np.zeros(n)
    term = np.empty(n)
    for k in np.flatnonzero(query):
        np.multiply(vectors_t[k, :n], float(query[k]), out=term, dtype=np.float64)
        sims += term
    return sims


def neighbours(
    sims: npt.NDArray[np.floating],
    count: F64,
    successes: F64,
    importance_sum: F64,
    importance_success: F64,
    threshold: float,
    top_k: int,
) -> Neighbours | None:
    """Aggregate the rows at or above ``threshold`` (at most ``top_k``, most similar first; ties
    by position), with :func:`guard.memory.neighbours.aggregate`."""
    idx = np.flatnonzero(sims >= threshold - SLACK)
    if len(idx) == 0:
        return None
    chosen = [
        j for j, _ in top(zip(idx.tolist(), sims[idx].astype(np.float64).tolist(), strict=True), threshold, top_k)
    ]
    return aggregate(
        sims[chosen].astype(np.float64).tolist(),
        count[chosen].tolist(),
        successes[chosen].tolist(),
        importance_sum[chosen].tolist(),
        importance_success[chosen].tolist(),
        threshold,
    )


class Snapshot:
    """Every tool's :class:`ToolIndex` as of table ``version``."""

    def __init__(self, dim: int, version: int | None = None) -> None:
        self.dim = dim
        self.version = version
        self.tools: dict[str, ToolIndex] = {}

    def __len__(self) -> int:
        return sum(len(t) for t in self.tools.values())

    @property
    def nbytes(self) -> int:
        """Memory held by the arrays (capacity included)."""
        return sum(t.nbytes for t in self.tools.values())

    def add(self, tool: str, signature: str, vector: Vector, count: float, success: bool, importance: float) -> None:
        index = self.tools.get(tool)
        if index is None:
            index = self.tools[tool] = ToolIndex(self.dim)
        index.add(signature, vector, count, success, importance)

    def extend(self, rows: Iterable[tuple[str, str, Vector, float, bool, float]]) -> None:
        for row in rows:
            self.add(*row)

    @classmethod
    def build(
        cls,
        dim: int,
        version: int | None,
        tools: list[str],
        signatures: list[str],
        vectors: npt.NDArray[np.float32],
        count: F64,
        success: npt.NDArray[np.bool_],
        importance: F64,
    ) -> Snapshot:
        """A snapshot of many rows at once, sized to fit (a quarter spare for new rows)."""
        snapshot = cls(dim, version)
        columns: dict[str, dict[str, int]] = {}
        members: dict[str, list[int]] = {}
        firsts: dict[str, list[int]] = {}
        col = np.empty(len(tools), np.intp)
        for i, (tool, sig) in enumerate(zip(tools, signatures, strict=True)):
            seen = columns.setdefault(tool, {})
            j = seen.get(sig)
            if j is None:
                j = seen[sig] = len(seen)
                firsts.setdefault(tool, []).append(i)
            col[i] = j
            members.setdefault(tool, []).append(i)
        weighted = importance * count
        for tool, seen in columns.items():
            rows = np.asarray(members[tool], np.intp)
            n = len(seen)
            a = _Arrays.empty(dim, n + n // 4 + 16)
            a.vectors_t[:, :n] = vectors[firsts[tool]].T
            ok = success[rows]
            for name, values in zip(
                _AGGREGATES, (count[rows], count[rows] * ok, weighted[rows], weighted[rows] * ok), strict=True
            ):
                np.add.at(getattr(a, name), col[rows], values)
            index = snapshot.tools[tool] = ToolIndex(dim, capacity=0)
            index._a, index._rows, index.n = a, seen, n
        return snapshot

    def search(self, tool: str, query: Vector, threshold: float, top_k: int) -> Neighbours | None:
        index = self.tools.get(tool)
        return None if index is None else index.search(query, threshold, top_k)
