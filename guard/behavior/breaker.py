"""A circuit breaker per task (seed ``circuit_breaker_opened``: failCount, requireHuman, nextRetryAt).

A task is one normalised call within a session. ``breaker_failures`` failures of it in a
row open the breaker: the task is blocked until ``next_retry_at`` (``breaker_base_seconds``,
doubling with each reopening up to ``breaker_max_seconds``). After that it is *half-open*:
one trial run is let through; its success closes the breaker, its failure reopens it with
the longer wait. After ``breaker_human_after`` openings only ``guard reset`` closes it
(``require_human``). While a trial's result is outstanding, other runs of the task wait.
"""

from __future__ import annotations

from typing import Any

import attrs

from guard.behavior.settings import BehaviorSettings
from guard.behavior.timefmt import iso

CLOSED = "closed"
OPEN = "open"
HALF_OPEN = "half_open"
TRIAL = "trial"


@attrs.define
class Breaker:
    task: str
    text: str
    failures: int = 0  # failures in a row, now
    fail_count: int = 0  # failures in a row when it last opened (seed failCount)
    openings: int = 0  # since it was last closed by a success: the backoff exponent
    is_open: bool = False
    opened_at: float | None = None
    next_retry_at: float | None = None
    require_human: bool = False
    trial_at: float | None = None

    def status(self, now: float, settings: BehaviorSettings) -> str:
        if not self.is_open:
            return CLOSED
        if self.require_human or self.next_retry_at is None or now < self.next_retry_at:
            return OPEN
        if (
            self.trial_at is not None
            and self.trial_at >= self.next_retry_at
            and now < self.trial_at + max(settings.breaker_base_s, 1.0)
        ):
            return TRIAL
        return HALF_OPEN

    def on_dispatch(self, now: float, settings: BehaviorSettings) -> None:
        """A run of the task was let through: in half-open state it is the trial."""
        if self.status(now, settings) == HALF_OPEN:
            self.trial_at = now

    def on_result(self, ok: bool, now: float, settings: BehaviorSettings) -> None:
        if ok:
            self.failures = 0
            self.openings = 0
            self.is_open = False
            self.require_human = False
            self.next_retry_at = self.opened_at = self.trial_at = None
            return
        self.failures += 1
        if self.is_open or self.failures >= settings.breaker_failures:
            self._open(now, settings)

    def _open(self, now: float, settings: BehaviorSettings) -> None:
        self.openings += 1
        self.is_open = True
        self.fail_count = self.failures
        self.opened_at = now
        self.trial_at = None
        if settings.breaker_human_after and self.openings >= settings.breaker_human_after:
            self.require_human = True
            self.next_retry_at = None
        else:
            wait = min(settings.breaker_max_s, settings.breaker_base_s * 2.0 ** (self.openings - 1))
            self.next_retry_at = now + wait

    @property
    def idle(self) -> bool:
        """Nothing to remember: closed with no failures."""
        return not self.is_open and self.failures == 0

    def close(self) -> None:
        self.on_result(True, 0.0, BehaviorSettings())

    def public(self, now: float, settings: BehaviorSettings) -> dict[str, Any]:
        """The record's view: the seed's fields plus state and the task."""
        return {
            "task": self.task,
            "call": self.text,
            "state": self.status(now, settings),
            "failures_in_a_row": self.failures,
            "failCount": self.fail_count,
            "requireHuman": self.require_human,
            "nextRetryAt": iso(self.next_retry_at) if self.next_retry_at is not None else None,
            "openings": self.openings,
        }

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Breaker:
        fields = {a.name for a in attrs.fields(cls)}
        return cls(**{k: v for k, v in raw.items() if k in fields})
