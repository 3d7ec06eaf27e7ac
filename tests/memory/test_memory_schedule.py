"""When maintenance runs: a pure function of the time, more often by day than at night."""

from __future__ import annotations

import threading
from datetime import datetime, time, timedelta

import pytest
from freezegun import freeze_time
from memhelpers import make_config

from guard.memory.schedule import Scheduler, TidySchedule

DAY, QUIET = timedelta(minutes=30), timedelta(minutes=180)
S = TidySchedule(day=DAY, quiet=QUIET, quiet_start=time(23, 0), quiet_end=time(7, 0))
NO_WINDOW = TidySchedule(day=DAY, quiet=QUIET, quiet_start=time(3, 0), quiet_end=time(3, 0))


def at(hh: int, mm: int = 0, day: int = 1) -> datetime:
    return datetime(2026, 3, day, hh, mm)


class TestIntervalAt:
    @pytest.mark.parametrize(
        ("t", "expected"),
        [
            (at(12), DAY),
            (at(22, 59), DAY),
            (at(23, 0), QUIET),  # start inclusive
            (at(23, 59), QUIET),
            (at(0, 0, day=2), QUIET),  # across midnight
            (at(6, 59), QUIET),
            (at(7, 0), DAY),  # end exclusive
        ],
    )
    def test_quiet_window_crosses_midnight(self, t: datetime, expected: timedelta) -> None:
        assert S.interval_at(t) == expected

    def test_window_within_one_day(self) -> None:
        s = TidySchedule(day=DAY, quiet=QUIET, quiet_start=time(1, 0), quiet_end=time(5, 30))
        assert [s.interval_at(at(h, m)) for h, m in [(0, 59), (1, 0), (5, 29), (5, 30)]] == [DAY, QUIET, QUIET, DAY]

    @pytest.mark.parametrize("hour", [0, 3, 12, 23])
    def test_equal_ends_disable_the_window(self, hour: int) -> None:
        assert not NO_WINDOW.window_enabled
        assert NO_WINDOW.interval_at(at(hour)) == DAY
        assert NO_WINDOW.next_boundary(at(hour)) is None

    def test_comes_from_configuration(self) -> None:
        cfg = make_config(
            memory__tidy_day_minutes=10,
            memory__tidy_quiet_minutes=90,
            memory__quiet_start="22:30",
            memory__quiet_end="06:00",
        )
        s = TidySchedule.from_config(cfg)
        assert (s.day, s.quiet, s.quiet_start, s.quiet_end) == (
            timedelta(minutes=10),
            timedelta(minutes=90),
            time(22, 30),
            time(6, 0),
        )

    def test_bad_time_falls_back_to_the_default(self) -> None:
        cfg = make_config(memory__quiet_start="25:00")
        assert TidySchedule.from_config(cfg).quiet_start == time(23, 0)
        assert any("memory.quiet_start" in w for w in cfg.warnings)


class TestNextRun:
    def test_day_runs_every_day_interval(self) -> None:
        assert S.next_run(at(12)) == at(12, 30)

    def test_last_day_run_before_the_window(self) -> None:
        assert S.next_run(at(22, 50)) == at(23, 20)

    def test_night_runs_every_quiet_interval_across_midnight(self) -> None:
        assert S.next_run(at(23, 20)) == at(2, 20, day=2)

    def test_the_morning_does_not_wait_for_the_night_interval(self) -> None:
        assert S.next_run(at(5, 20, day=2)) == at(7, 30, day=2)

    def test_without_a_window_the_day_interval_applies_around_the_clock(self) -> None:
        assert NO_WINDOW.next_run(at(23, 50)) == at(0, 20, day=2)


class TestDue:
    def test_never_run_is_due(self) -> None:
        assert S.due(at(12), None)

    def test_due_once_the_interval_passed(self) -> None:
        assert not S.due(at(12, 29), at(12))
        assert S.due(at(12, 30), at(12))

    def test_each_quiet_window_gets_a_catch_up_run(self) -> None:
        s = TidySchedule(day=timedelta(hours=6), quiet=QUIET, quiet_start=time(23, 0), quiet_end=time(7, 0))
        assert not s.due(at(22, 59), at(20))
        assert s.due(at(23, 1), at(20))  # window started, no run in it yet
        assert not s.due(at(23, 30), at(23, 1))


class TestScheduler:
    def test_runs_when_due_under_frozen_time_across_midnight(self) -> None:
        runs: list[datetime] = []
        with freeze_time(at(22, 45)) as clock:
            sched = Scheduler(S, runs.append, last_run=at(22, 40))
            assert not sched.tick()
            clock.move_to(at(23, 10))  # 22:40 + 30 min day interval
            assert sched.tick()
            clock.move_to(at(1, 0, day=2))
            assert not sched.tick()  # quiet: 3 h
            clock.move_to(at(2, 10, day=2))
            assert sched.tick()
            clock.move_to(at(7, 30, day=2))  # morning: boundary 07:00 + 30 min
            assert sched.tick()
        assert runs == [at(23, 10), at(2, 10, day=2), at(7, 30, day=2)]

    def test_window_disabled_runs_every_day_interval_at_night(self) -> None:
        runs: list[datetime] = []
        with freeze_time(at(23, 0)) as clock:
            sched = Scheduler(NO_WINDOW, runs.append, last_run=at(23, 0))
            for minutes in range(0, 181, 10):
                clock.move_to(at(23, 0) + timedelta(minutes=minutes))
                sched.tick()
        assert runs == [at(23, 0) + timedelta(minutes=m) for m in (30, 60, 90, 120, 150, 180)]

    def test_a_failing_job_is_logged_and_counted(self) -> None:
        def boom(now: datetime) -> None:
            raise RuntimeError("table gone")

        with freeze_time(at(12)):
            sched = Scheduler(S, boom)
            assert sched.tick() and sched.runs == 1 and sched.last_run == at(12)

    def test_thread_runs_the_job_and_stops(self) -> None:
        ran = threading.Event()
        sched = Scheduler(S, lambda now: ran.set())  # never run: due at once
        sched.start()
        try:
            assert ran.wait(10)
        finally:
            sched.stop()
        assert sched.runs == 1

    def test_wake_makes_the_thread_look_again(self) -> None:
        calls = threading.Semaphore(0)
        sched = Scheduler(S, lambda now: calls.release(), last_run=datetime.now())
        sched.start()
        try:
            sched.last_run = datetime.now() - timedelta(days=1)
            sched.wake()
            assert calls.acquire(timeout=10)
        finally:
            sched.stop()
