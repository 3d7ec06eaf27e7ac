"""When memory maintenance runs: more often by day, less often in a quiet window.

Everything is decided by pure functions of the (local, wall-clock) time, so a scheduler
recomputes them before every run and a change of period takes effect at the next run:

- :meth:`TidySchedule.interval_at` is the interval that applies at ``t``: the quiet one inside
  the window (default 23:00-07:00, which crosses midnight), the day one outside it. Equal
  ends mean "no quiet window": the day interval applies all day.
- :meth:`TidySchedule.next_run` is the earlier of "last run + the interval of its period" and
  "the next period boundary + the new period's interval", so a long night interval does not
  delay the first morning run, nor a short day interval carry into the night.
- :meth:`TidySchedule.due` also catches up once per quiet window: a window that has started
  and has had no run yet is due, whatever the interval says.

:class:`Scheduler` is the thread that runs a job when due. It waits on an event, not a
sleep, so tests (and ``close()``) wake it at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, time, timedelta

import attrs
from loguru import logger

from guard.config import Config

# The longest the scheduler thread waits before looking at the clock again (clock jumps,
# suspend/resume).
_MAX_WAIT = timedelta(minutes=5)


def _now() -> datetime:
    return datetime.now()  # looked up at call time, so frozen clocks in tests apply


def _parse_hhmm(text: str) -> time:
    hh, _, mm = text.partition(":")
    return time(int(hh), int(mm))


@attrs.frozen
class TidySchedule:
    day: timedelta = timedelta(minutes=30)
    quiet: timedelta = timedelta(minutes=180)
    quiet_start: time = time(23, 0)
    quiet_end: time = time(7, 0)

    @classmethod
    def from_config(cls, config: Config) -> TidySchedule:
        return cls(
            day=timedelta(minutes=config.get("memory.tidy_day_minutes")),
            quiet=timedelta(minutes=config.get("memory.tidy_quiet_minutes")),
            quiet_start=_parse_hhmm(config.get("memory.quiet_start")),
            quiet_end=_parse_hhmm(config.get("memory.quiet_end")),
        )

    @property
    def window_enabled(self) -> bool:
        return self.quiet_start != self.quiet_end

    def in_quiet(self, t: datetime) -> bool:
        """Whether ``t`` falls in the quiet window (start inclusive, end exclusive)."""
        if not self.window_enabled:
            return False
        now = t.time().replace(tzinfo=None)
        if self.quiet_start < self.quiet_end:
            return self.quiet_start <= now < self.quiet_end
        return now >= self.quiet_start or now < self.quiet_end

    def interval_at(self, t: datetime) -> timedelta:
        """The interval between runs that applies at ``t``.

        >>> s = TidySchedule()
        >>> s.interval_at(datetime(2026, 1, 1, 12)), s.interval_at(datetime(2026, 1, 1, 2))
        (datetime.timedelta(seconds=1800), datetime.timedelta(seconds=10800))
        """
        return self.quiet if self.in_quiet(t) else self.day

    def next_boundary(self, t: datetime) -> datetime | None:
        """The first window start or end strictly after ``t`` (``None`` without a window)."""
        if not self.window_enabled:
            return None
        candidates = []
        for edge in (self.quiet_start, self.quiet_end):
            at = t.replace(hour=edge.hour, minute=edge.minute, second=0, microsecond=0)
            candidates.append(at if at > t else at + timedelta(days=1))
        return min(candidates)

    def window_start(self, t: datetime) -> datetime | None:
        """The start of the quiet window ``t`` is in (``None`` outside a window)."""
        if not self.in_quiet(t):
            return None
        start = t.replace(hour=self.quiet_start.hour, minute=self.quiet_start.minute, second=0, microsecond=0)
        return start if start <= t else start - timedelta(days=1)

    def next_run(self, last: datetime) -> datetime:
        regular = last + self.interval_at(last)
        boundary = self.next_boundary(last)
        if boundary is None:
            return regular
        return min(regular, boundary + self.interval_at(boundary))

    def due(self, now: datetime, last: datetime | None) -> bool:
        if last is None or now >= self.next_run(last):
            return True
        start = self.window_start(now)
        return start is not None and last < start


class Scheduler:
    """Runs ``job(now)`` whenever ``schedule.due(now, last_run)``; ``tick()`` is one check.

    The thread (``start()``) calls ``tick()``, then waits until the next run is due (at
    most five minutes) or ``wake()``/``stop()`` is called. A job that raises is logged and
    counts as a run, so a broken table is not hammered.
    """

    def __init__(
        self,
        schedule: TidySchedule,
        job: Callable[[datetime], object],
        *,
        last_run: datetime | None = None,
        clock: Callable[[], datetime] | None = None,
        name: str = "guard-memory-tidy",
    ) -> None:
        self.schedule = schedule
        self.last_run = last_run
        self.runs = 0
        self._job = job
        self._clock = clock or _now
        self._name = name
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def tick(self) -> bool:
        """Run the job if it is due now; return whether it ran."""
        now = self._clock()
        if not self.schedule.due(now, self.last_run):
            return False
        try:
            self._job(now)
        except Exception as exc:  # the scheduler must survive any job failure
            logger.opt(exception=exc).warning("memory maintenance failed: {}", exc)
        self.last_run = now
        self.runs += 1
        return True

    def seconds_until_due(self) -> float:
        if self.last_run is None:
            return 0.0
        wait = self.schedule.next_run(self.last_run) - self._clock()
        return max(0.0, min(wait, _MAX_WAIT).total_seconds())

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
            self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def stop(self, timeout: float | None = 5.0) -> None:
        self._stopping.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _loop(self) -> None:
        while not self._stopping.is_set():
            self.tick()
            self._wake.wait(max(self.seconds_until_due(), 1.0))
            self._wake.clear()
