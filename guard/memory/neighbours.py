"""What the similar past operations say: one selection and one aggregation, in plain Python.

Every search ends here: the in-process numpy snapshot (:mod:`guard.memory.index`), LanceDB's
own search (:func:`guard.memory.table.search_table`) and the published snapshot a reader
searches without numpy (:mod:`guard.memory.published`). Identical inputs give identical scores
because nothing here depends on an order of summation: the rows at or above the threshold are
ranked by ``(similarity descending, column ascending)`` (ties broken the same way everywhere),
and every sum is :func:`math.fsum` (correctly rounded, whatever the order).

The similarity itself is defined once too (:func:`fold`): the float64 left fold, over the
query's nonzero features in ascending order, of ``query[k] * vector[k]``. numpy runs it a
feature row at a time; the reader runs it per column; both give the same bits.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Sequence

import attrs

SLACK = 1e-6  # a similarity this far below the threshold still counts (float32 vectors)


@attrs.frozen
class Neighbours:
    """What the similar past operations say.

    - ``matched``: how many past operations (rows times their ``count``);
    - ``success_rate``, ``avg_importance``: plain count-weighted means (the seed's averages);
    - ``weight``: the evidence, Σ count·K with the kernel ``K = (sim − s₀) / (1 − s₀)``: a
      memory right at the threshold ``s₀`` adds little, an identical one its full count;
    - ``weighted_rate``: the success rate weighted by count·K·importance, so similar,
      important outcomes (failures, risky operations) count most;
    - ``best``: the highest similarity.
    """

    matched: int
    success_rate: float
    avg_importance: float
    weight: float
    weighted_rate: float
    best: float


def fold(pairs: Iterable[tuple[float, float]]) -> float:
    """The similarity of one column: ``s = 0.0; s += q * v`` for each (query, column) value pair
    of the query's nonzero features, ascending. The reference numpy repeats row by row."""
    s = 0.0
    for q, v in pairs:
        if v:  # a zero adds ±0.0, which changes no sum; skipping it keeps the bits
            s += q * v
    return s


def top(hits: Iterable[tuple[int, float]], threshold: float, top_k: int) -> list[tuple[int, float]]:
    """The (column, similarity) pairs at or above ``threshold``: at most ``top_k``, the most
    similar first, ties in column order."""
    floor = threshold - SLACK
    kept = [(j, s) for j, s in hits if s >= floor]
    if len(kept) <= top_k:
        return kept
    return heapq.nsmallest(top_k, kept, key=lambda js: (-js[1], js[0]))


def aggregate(
    sims: Sequence[float],
    count: Sequence[float],
    successes: Sequence[float],
    importance_sum: Sequence[float],
    importance_success: Sequence[float],
    threshold: float,
) -> Neighbours | None:
    """Aggregate the chosen rows (the output of :func:`top`, in any order)."""
    if not sims:
        return None
    total = math.fsum(count)
    if total <= 0.0:
        return None
    s = [min(x, 1.0) for x in sims]
    if threshold < 1.0:
        kernel = [min(max((x - threshold) / (1.0 - threshold), 0.0), 1.0) for x in s]
    else:
        kernel = [1.0] * len(s)
    rate = math.fsum(successes) / total
    w_imp = math.fsum(k * i for k, i in zip(kernel, importance_sum, strict=True))
    weighted = math.fsum(k * i for k, i in zip(kernel, importance_success, strict=True)) / w_imp if w_imp > 0 else rate
    return Neighbours(
        matched=round(total),
        success_rate=rate,
        avg_importance=min(1.0, math.fsum(importance_sum) / total),
        weight=math.fsum(k * c for k, c in zip(kernel, count, strict=True)),
        weighted_rate=weighted,
        best=max(s),
    )
