"""The per-task circuit breaker: opening, backoff, half-open trial, human-only after repeated openings."""

from __future__ import annotations

import pytest

from guard.behavior.breaker import CLOSED, HALF_OPEN, OPEN, TRIAL, Breaker
from guard.behavior.settings import BehaviorSettings

S = BehaviorSettings()  # 5 failures, 300 s base, 3600 s cap, human after 3 openings


def failing(n: int, t: float = 0.0, settings: BehaviorSettings = S) -> Breaker:
    b = Breaker("task", "bash:make")
    for i in range(n):
        b.on_result(False, t + i, settings)
    return b


def test_opens_at_the_fifth_failure_in_a_row():
    assert failing(4).status(10, S) == CLOSED
    b = failing(5)
    assert b.status(10, S) == OPEN and b.fail_count == 5 and b.next_retry_at == 4 + 300


def test_a_success_in_between_starts_the_count_again():
    b = failing(4)
    b.on_result(True, 5, S)
    b.on_result(False, 6, S)
    assert b.status(7, S) == CLOSED and b.failures == 1


def test_half_open_after_the_wait_and_one_trial_at_a_time():
    b = failing(5)
    assert b.status(303.9, S) == OPEN
    assert b.status(304, S) == HALF_OPEN
    b.on_dispatch(304, S)
    assert b.status(305, S) == TRIAL
    assert b.status(304 + 300, S) == HALF_OPEN  # the trial never reported back: another may run


def test_trial_success_closes_and_forgets_the_backoff():
    b = failing(5)
    b.on_dispatch(304, S)
    b.on_result(True, 310, S)
    assert b.status(311, S) == CLOSED and b.idle and b.openings == 0


@pytest.mark.parametrize(("openings", "wait"), [(1, 300), (2, 600)])
def test_backoff_doubles(openings, wait):
    b = failing(5)
    for _i in range(openings - 1):
        t = b.next_retry_at
        b.on_dispatch(t, S)
        b.on_result(False, t + 1, S)
    assert b.openings == openings and b.next_retry_at - b.opened_at == wait


def test_backoff_is_capped():
    s = BehaviorSettings(breaker_human_after=0, breaker_max_s=1000)
    b = failing(5, settings=s)
    for _ in range(6):
        t = b.next_retry_at
        b.on_result(False, t + 1, s)
    assert b.next_retry_at - b.opened_at == 1000 and not b.require_human


def test_after_three_openings_only_a_person_can_close_it():
    b = failing(5)
    for _ in range(2):
        t = b.next_retry_at
        b.on_result(False, t + 1, S)
    assert b.require_human and b.next_retry_at is None
    assert b.status(10**9, S) == OPEN
    assert b.public(0, S)["requireHuman"] is True and b.public(0, S)["nextRetryAt"] is None


def test_round_trips_through_json():
    b = failing(5)
    assert Breaker.from_json(b.to_json()) == b
