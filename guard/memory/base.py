"""The memory-provider protocol and a provider built on the history files.

Seed formula: related memories exist → ``40 + avg_importance·40 + success_rate·20``;
none → ``40``. ``confidence`` (0-1) says how much evidence stands behind the score so the
fusion layer can weigh it (guard mode); the seed mode ignores it.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Protocol

import attrs

from guard.model import Risk, ToolCall

if TYPE_CHECKING:
    from guard.counters import PatternStats
    from guard.memory.neighbours import Neighbours

NO_MEMORY_SCORE = 40.0


@attrs.frozen
class MemoryResult:
    score: float = NO_MEMORY_SCORE
    matched: int = 0
    available: bool = True
    confidence: float = 0.0
    success_rate: float | None = None
    avg_importance: float | None = None
    note: str = ""


@attrs.frozen
class MemoryEvent:
    """One completed operation, as memory stores it."""

    tool: str
    signature: str
    success: bool
    risk: Risk
    timestamp: datetime
    session_id: str | None = None
    agent_id: str | None = None
    importance: float | None = None

    @property
    def effective_importance(self) -> float:
        return importance_of(self.success, self.risk) if self.importance is None else self.importance


def importance_of(success: bool, risk: Risk) -> float:
    """How much an outcome should count, 0-1: failures and risky operations matter more.

    A successful ``ls`` (safe) is 0.2; a failed ``rm -rf`` (high) is 1.0.
    """
    base = {Risk.SAFE: 0.2, Risk.LOW: 0.35, Risk.MEDIUM: 0.5, Risk.HIGH: 0.75, Risk.CRITICAL: 0.9}[risk]
    return min(1.0, base + (0.0 if success else 0.25))


def seed_score(avg_importance: float, success_rate: float) -> float:
    return 40.0 + avg_importance * 40.0 + success_rate * 20.0


def result_of(found: Neighbours | None, prior: float, seed: bool) -> MemoryResult:
    """The relevance of what the similar past operations say (LanceDB and snapshot readers alike).

    ``confidence = W / (W + prior)``; the seed mode's score is :func:`seed_score`, guard's the
    importance-weighted success rate shrunk toward the no-memory 40 by the confidence."""
    if found is None:
        return MemoryResult(note="memory: no similar past operation")
    m = prior
    confidence = found.weight / (found.weight + m) if m else (1.0 if found.weight else 0.0)
    if seed:
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


# what a provider answers for an operation it knows nothing about (frozen: one object will do)
NO_SIMILAR = MemoryResult(note="no similar past operation")


class MemoryProvider(Protocol):
    name: str

    def relevance(self, call: ToolCall, signature: str, risk: Risk, now: datetime) -> MemoryResult: ...

    def remember(self, event: MemoryEvent) -> None: ...

    def flush(self) -> bool | None: ...

    def close(self) -> None: ...


class PatternCounts(Protocol):
    """Where :class:`HistoryMemory` reads past runs (``guard.aggregates.Aggregates``)."""

    def pattern(self, signature: str) -> PatternStats | None: ...


class HistoryMemory:
    """Memory from ``.command-execution.jsonl``: past runs of the exact same signature.

    Used where LanceDB is off or too heavy (per-call hook processes). Related memories are
    the earlier results of the same normalised call; importance per result follows
    :func:`importance_of` with the risk recorded at the time.
    """

    name = "history"

    def __init__(self, aggregates: PatternCounts, prior_strength: float = 4.0) -> None:
        self._aggregates = aggregates
        self._m = prior_strength
        # (runs, successes, importance sum) -> the answer: the same counts, the same answer
        self._answers: dict[tuple[int, int, float], MemoryResult] = {}

    def relevance(self, call: ToolCall, signature: str, risk: Risk, now: datetime) -> MemoryResult:
        stats = self._aggregates.pattern(signature)
        if stats is None or stats.runs == 0:
            return NO_SIMILAR
        runs, successes = stats.runs, stats.successes
        if type(runs) is not int or type(successes) is not int:  # 3.0 == 3, but the note would differ
            return self._answer(runs, successes, stats.importance_sum)
        key = (runs, successes, stats.importance_sum)
        res = self._answers.get(key)
        if res is None:
            res = self._answer(*key)
            if len(self._answers) >= 4096:
                self._answers.clear()
            self._answers[key] = res
        return res

    def _answer(self, runs: int, successes: int, importance_sum: float) -> MemoryResult:
        rate = successes / runs
        imp = importance_sum / runs
        return MemoryResult(
            score=seed_score(imp, rate),
            matched=runs,
            confidence=runs / (runs + self._m) if self._m else 1.0,
            success_rate=rate,
            avg_importance=imp,
            note=f"{runs} earlier run(s) of this exact call, {rate:.0%} succeeded",
        )

    def remember(self, event: MemoryEvent) -> None:
        # The history file is the source of truth; the aggregates pick the line up.
        return None

    def flush(self) -> None:
        return None

    def close(self) -> None:
        return None
