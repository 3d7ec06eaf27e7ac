"""Trust tiers earned by points (seed ``evolution-tiers``): growth, never deductions.

Each success earns points by difficulty (trivial 1, normal 3, hard 8; difficulty comes
from the call's static risk: safe/low trivial, medium normal, high/critical hard). The
first success of a task that failed before earns double, at most once per cooldown (1 h).
From Tree upwards trivial work earns a tenth and normal work half (the seed's guard
against farming points with ``ls``). Failures are remembered, never deducted.

Points decide the tier and the tier decides what an agent may do without asking:
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

import attrs

from guard.behavior import files
from guard.log import logger
from guard.namedtuple import NamedTuple


class Tier(NamedTuple):  # (a named tuple: five rows of a table, read only)
    level: int
    name: str
    points: int
    max_lines: float  # per write or edit
    max_files: float  # distinct files written per task (a session)
    risky_paths: bool  # may touch protected paths without asking
    subagents: bool  # may start sub-agents without asking

    def permissions(self) -> dict[str, Any]:
        return {
            "max_lines_per_write": None if math.isinf(self.max_lines) else int(self.max_lines),
            "max_files_per_task": None if math.isinf(self.max_files) else int(self.max_files),
            "risky_paths": self.risky_paths,
            "subagents": self.subagents,
        }


INF = math.inf
TIERS: tuple[Tier, ...] = (
    Tier(1, "Seed", 0, 150, 3, False, True),
    Tier(2, "Sprout", 50, 300, 5, False, True),
    Tier(3, "Sapling", 200, 500, 10, True, True),
    Tier(4, "Tree", 500, 1000, 20, True, True),
    Tier(5, "Forest", 1000, INF, INF, True, True),
)
POINTS = {"trivial": 1.0, "normal": 3.0, "hard": 8.0}
# Seed difficultyPenalty: a high tier doing easy work earns less.
HIGH_TIER_FACTOR = {4: {"trivial": 0.1, "normal": 0.5}, 5: {"trivial": 0.1, "normal": 0.5}}
MAX_FAILED_TASKS = 256


def tier_for(points: float) -> Tier:
    for tier in reversed(TIERS):
        if points >= tier.points:
            return tier
    return TIERS[0]


@attrs.define
class Scorecard:
    agent: str
    points: float = 0.0
    successes: int = 0
    failures: int = 0
    double_rewards: int = 0
    promotions: int = 0
    last_double_at: float | None = None
    failed_tasks: OrderedDict[str, float] = attrs.field(factory=OrderedDict)
    updated: float = 0.0

    @property
    def tier(self) -> Tier:
        return tier_for(self.points)

    def apply(self, event: dict[str, Any], cooldown_s: float) -> None:
        """One result: ``{"t": ts, "ok": bool, "task": id, "difficulty": "normal"}``."""
        t = float(event.get("t", 0.0))
        task = str(event.get("task", ""))
        self.updated = max(self.updated, t)
        if not event.get("ok"):
            self.failures += 1
            self.failed_tasks[task] = t
            self.failed_tasks.move_to_end(task)
            while len(self.failed_tasks) > MAX_FAILED_TASKS:
                self.failed_tasks.popitem(last=False)
            return
        before = self.tier
        difficulty = str(event.get("difficulty", "normal"))
        award = POINTS.get(difficulty, POINTS["normal"]) * HIGH_TIER_FACTOR.get(before.level, {}).get(difficulty, 1.0)
        if self.failed_tasks.pop(task, None) is not None and (
            self.last_double_at is None or t - self.last_double_at >= cooldown_s
        ):
            award *= 2
            self.double_rewards += 1
            self.last_double_at = t
        self.successes += 1
        self.points = round(self.points + award, 3)
        if self.tier.level > before.level:
            self.promotions += 1

    def brief(self) -> dict[str, Any]:
        """What a decision record shows: agent, tier name, points (a fresh dict)."""
        return {"agent": self.agent, "name": tier_for(self.points).name, "points": self.points}

    def public(self) -> dict[str, Any]:
        tier = self.tier
        nxt = next((x for x in TIERS if x.level == tier.level + 1), None)
        return {
            "agent": self.agent,
            "tier": tier.name,
            "level": tier.level,
            "points": self.points,
            "next": None if nxt is None else {"tier": nxt.name, "points": nxt.points},
            "permissions": tier.permissions(),
            "successes": self.successes,
            "failures": self.failures,
            "double_rewards": self.double_rewards,
        }

    def to_json(self) -> dict[str, Any]:
        out = attrs.asdict(self)
        out["failed_tasks"] = list(self.failed_tasks.items())
        return out

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Scorecard:
        fields = {a.name for a in attrs.fields(cls)}
        kw = {k: v for k, v in raw.items() if k in fields}
        kw["failed_tasks"] = OrderedDict((str(k), float(v)) for k, v in raw.get("failed_tasks", []))
        card = cls(**kw)
        if not _finite(card.points) or card.points < 0:  # ``1e309`` reads as infinity: the top tier
            raise ValueError(f"points {card.points!r}")
        return card

    def clamp(self, limit: float) -> None:
        """Times later than ``limit`` (now + the allowed skew) become ``limit``, and times that are no
        number at all (NaN, infinity) are dropped: a ``last_double_at`` in 9999 would refuse every
        double reward for ever, a NaN one too (``t - nan >= cooldown`` is never true)."""
        self.updated = _clamped(self.updated, limit) or 0.0
        self.last_double_at = _clamped(self.last_double_at, limit)
        for task, t in list(self.failed_tasks.items()):
            self.failed_tasks[task] = _clamped(t, limit) or 0.0


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _clamped(t: float | None, limit: float) -> float | None:
    """``t`` at most ``limit``; None when it is not a finite number (past times stand)."""
    return min(float(t), limit) if t is not None and _finite(t) else None


TIERS_FILE = "tiers.json"
VERSION = 1


class TierBook:
    """Scorecards per agent id, persisted in ``<workspace>/tiers.json`` (None: memory only).

    Results are applied in memory at once and kept as pending until :meth:`flush` (the
    tracker flushes on a promotion, at ``flush()``/``close()``, and when the oldest pending
    result is ``behavior.flush_seconds`` old), which re-reads the file under the lock if
    it changed and applies the pending results on top: two processes scoring the same
    agent both count.
    """

    def __init__(
        self, workspace: Path | None, cooldown_s: float, lock_path: Path | None = None, max_skew_s: float = 300.0
    ) -> None:
        self.path = workspace / TIERS_FILE if workspace is not None else None
        self.lock_path = lock_path
        self.cooldown_s = cooldown_s
        self.max_skew_s = max_skew_s
        self.cards: dict[str, Scorecard] = {}
        self.pending: list[tuple[str, dict[str, Any]]] = []
        self._stamp: files.Stamp = None
        self._blanks: dict[str, Scorecard] = {}
        self.loaded = False  # the file has been read (after that ``cards`` answers a look without syncing)

    def blank(self, agent: str) -> Scorecard:
        """A zero card for an agent with no points yet (not stored)."""
        card = self._blanks.get(agent)
        if card is None or card.points or card.successes or card.failures:
            card = self._blanks[agent] = Scorecard(agent)
        return card

    def card(self, agent: str) -> Scorecard:
        self._sync()
        card = self.cards.get(agent)
        if card is None:
            card = self.cards[agent] = Scorecard(agent)
        return card

    def peek(self, agent: str, *, sync: bool = True) -> Scorecard | None:
        """The agent's card; ``sync=False`` skips looking for other processes' changes (after the first look)."""
        if sync or not self.loaded:
            self._sync()
        return self.cards.get(agent)

    def shown(self, agent: str, *, sync: bool = True) -> Scorecard:
        """``peek(agent, sync=sync)``, or the agent's ``blank`` card when it has none: what a decision reads."""
        if sync or not self.loaded:
            self._sync()
        card = self.cards.get(agent)
        if card is None:
            card = self._blanks.get(agent)
            if card is None or card.points or card.successes or card.failures:
                card = self.blank(agent)
        return card

    def record(self, agent: str, event: dict[str, Any]) -> bool:
        """Apply one result in memory (saved at :meth:`flush`); True when it promoted the agent."""
        card = self.card(agent)
        before = card.promotions
        event = {**event, "t": _clamped(event.get("t"), time.time() + self.max_skew_s) or 0.0}
        card.apply(event, self.cooldown_s)
        self.pending.append((agent, event))
        return card.promotions > before

    def oldest_pending_age(self, now: float) -> float:
        return now - float(self.pending[0][1].get("t", now)) if self.pending else 0.0

    def _sync(self) -> None:
        if self.path is None:
            return
        if self.loaded and files.unchanged(self.path, self._stamp):
            return
        self._load()

    def _load(self) -> None:
        assert self.path is not None
        doc, self._stamp = files.read_json(self.path)
        self.loaded = True
        self.cards = self._cards_of(doc, time.time() + self.max_skew_s)
        for agent, event in self.pending:
            self.cards.setdefault(agent, Scorecard(agent)).apply(event, self.cooldown_s)

    @staticmethod
    def _cards_of(doc: dict[str, Any] | None, limit: float) -> dict[str, Scorecard]:
        """The cards in the file, their times clamped to ``limit`` (another writer's clock, or a hand,
        may have put them in the future)."""
        if not doc or doc.get("version") != VERSION:
            return {}
        out = {}
        for agent, raw in doc.get("agents", {}).items():
            try:
                out[agent] = Scorecard.from_json(raw)
                out[agent].clamp(limit)
            except (TypeError, ValueError, AttributeError) as exc:
                logger.warning(f"tiers: scorecard of {agent!r} unreadable ({exc}); starting it afresh")
        return out

    def flush(self) -> None:
        if self.path is None or not self.pending or self.lock_path is None:
            return
        with files.locked(self.lock_path):
            if not self.loaded or files.stamp(self.path) != self._stamp:
                self._load()
            doc = {"version": VERSION, "agents": {a: c.to_json() for a, c in self.cards.items()}}
            self._stamp = files.write_json(self.path, doc)
            self.pending.clear()
