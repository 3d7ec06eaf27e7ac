"""The counters the aggregates keep per tool, operation, family and pattern.

Raw counts serve the seed's formulas; :class:`Decayed` counts (halving every half-life)
serve guard's. Plain mutable records: the aggregates own them behind their lock.
"""

from __future__ import annotations

import attrs


@attrs.define
class Decayed:
    """A count and a sum that halve every ``half_life`` seconds (0 = never)."""

    n: float = 0.0
    s: float = 0.0
    t: float = 0.0

    def add(self, x: float, ts: float, half_life: float) -> None:
        if self.n == 0.0 and self.s == 0.0:
            self.t = ts
        if ts >= self.t:
            self._decay_to(ts, half_life)
            self.n += 1.0
            self.s += x
        else:  # an older event arriving late counts for less
            w = _factor(self.t - ts, half_life)
            self.n += w
            self.s += x * w

    def at(self, ts: float, half_life: float) -> tuple[float, float]:
        """``(n, s)`` decayed to ``ts`` (never grown: a ``ts`` before the last event counts as it).

        ``_factor(max(0.0, ts - t), half_life)`` written out: the fused score asks four times a call."""
        dt = ts - self.t
        f = 1.0 if half_life <= 0 else 2.0 ** (-(dt if dt > 0.0 else 0.0) / half_life)
        return self.n * f, self.s * f

    def _decay_to(self, ts: float, half_life: float) -> None:
        f = _factor(ts - self.t, half_life)
        self.n *= f
        self.s *= f
        self.t = ts


def _factor(dt: float, half_life: float) -> float:
    return 1.0 if half_life <= 0 else 2.0 ** (-dt / half_life)


@attrs.define
class ToolStats:
    runs: int = 0
    successes: int = 0
    decayed: Decayed = attrs.field(factory=Decayed)


@attrs.define
class UserStats:
    interactions: int = 0
    approvals: int = 0
    satisfaction_sum: float = 0.0
    satisfaction_count: int = 0
    decayed: Decayed = attrs.field(factory=Decayed)


@attrs.define
class PatternStats:
    runs: int = 0
    successes: int = 0
    importance_sum: float = 0.0
    last: float = 0.0


def count_run(stats: ToolStats, ok: bool, ts: float, half_life: float) -> None:
    stats.runs += 1
    stats.successes += ok
    stats.decayed.add(1.0 if ok else 0.0, ts, half_life)


def count_answer(stats: UserStats, ok: bool, sat: float | None, ts: float, half_life: float) -> None:
    stats.interactions += 1
    stats.approvals += ok
    if sat is not None:
        stats.satisfaction_sum += sat
        stats.satisfaction_count += 1
    stats.decayed.add(1.0 if ok else 0.0, ts, half_life)
