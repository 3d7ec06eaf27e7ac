"""A garbage collection, or a thread that is not running, in the middle of a decision does not use up its time.

A full collection stops the process for 100-500 ms once it holds about a million objects (this
suite's own process does, late in a run), and the decision budget is 200 ms: an ordinary call
that happened to be decided then was asked as "too complex to check in time". A decision is now
out of time only when the budget has passed on the wall clock and guard itself has done at least
half a budget's work, on the wall clock less the collections and on its thread's CPU clock
(:mod:`guard.pauses`). The same holds for a thread that stands still while the wall clock runs (a
busy machine, a container's used-up CPU quota, another thread holding the interpreter lock): a
clean-clone CI run's daemon took 208 ms over ``rm -rf build`` and asked about it.

Time is frozen and moved by hand: a ``gc`` callback moves the frozen clock while a collection
runs (a long pause without sleeping), a stall moves it with no CPU spent (a thread that did not
run), and the near-miss moves it by the same amount while spending as much of the thread's CPU
(guard's own work being slow), which must still ask. Decisions go through ``@guarded``, with a
first layer that only says when time passes; nothing is executed but the guarded function.
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time
from freezegun.api import StepTickTimeFactory

from guard import Guard, guarded, pauses
from guard.errors import ConfirmationRequired, ToolBlocked
from guard.layers.base import Context
from guard.model import ToolCall, Verdict

SCRIPT = " && ".join(f"ls dir{i}" for i in range(300))  # long enough for the analysis to read the clock
PAUSE_S = 0.5  # more than the 200 ms budget


class Collections:
    """Moves frozen time by ``seconds`` inside the next ``count`` collections once armed."""

    def __init__(self, frozen: Any, seconds: float) -> None:
        self.frozen, self.seconds = frozen, seconds
        self.left = 0
        self.seen = 0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and self.left:
            self.left -= 1
            self.seen += 1
            self.frozen.tick(self.seconds)


def work_for(frozen: Any, seconds: float) -> None:
    """``seconds`` of guard's own work: as much of this thread's CPU spent, and the frozen wall
    clock moved by as much."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass
    frozen.tick(seconds)


class Stall:
    """A first layer: ``work`` seconds of its own, ``stalled`` seconds on the wall clock without
    running (no CPU spent), then one collection of the collections' length (``pause``) or none."""

    name = "stall"

    def __init__(self, collections: Collections, work: float, pause: bool, stalled: float = 0.0) -> None:
        self.collections, self.work, self.pause, self.stalled = collections, work, pause, stalled

    def __call__(self, call: ToolCall, ctx: Context) -> Verdict:
        if self.work:
            work_for(self.collections.frozen, self.work)
        if self.stalled:
            self.collections.frozen.tick(self.stalled)
        if self.pause:
            self.collections.left = 1
            gc.collect()
        return Verdict(layer=self.name)


@pytest.fixture
def frozen() -> Iterator[Any]:
    with freeze_time("2026-06-01 12:00:00") as f:
        yield f


@pytest.fixture
def collections(frozen: Any) -> Iterator[Collections]:
    c = Collections(frozen, PAUSE_S)
    gc.callbacks.append(c)  # after guard's own callback, installed when guard.pauses was imported
    try:
        yield c
    finally:
        gc.callbacks.remove(c)


def guard_with(tmp_path: Path, stall: Stall) -> Guard:
    config = {"system.health": 90, "memory.backend": "history"}
    plain = Guard(tmp_path / "ws", config)
    layers = [stall, *plain.default_layers()]
    plain.close()
    return Guard(tmp_path / "ws", config, layers=layers)


def run_tool(g: Guard, command: str) -> tuple[str, dict[str, Any]]:
    """A ``@guarded`` bash tool called with ``command``: ("ran" or "asked" or "blocked", the
    decision as written to the workspace's decision log)."""

    @guarded(tool="bash", guard=g)
    def bash(command: str) -> str:
        return "ran"

    try:
        outcome = bash(command)
    except ConfirmationRequired:
        outcome = "asked"
    except ToolBlocked:
        outcome = "blocked"
    lines = (g.workspace / ".fusion-decisions.jsonl").read_text().splitlines()
    return outcome, json.loads(lines[-1])


def rule_ids(record: dict[str, Any]) -> set[str]:
    return {r["id"] for r in record["reasons"]}


def test_a_long_collection_during_a_decision_leaves_the_budget_alone(tmp_path: Path, collections: Collections) -> None:
    g = guard_with(tmp_path, Stall(collections, work=0.0, pause=True))
    try:
        before = pauses.total
        outcome, record = run_tool(g, SCRIPT)
    finally:
        g.close()
    assert collections.seen == 1
    assert pauses.total - before == pytest.approx(PAUSE_S)
    assert record["elapsed_us"] >= PAUSE_S * 1e6  # the decision did take that long on the wall clock
    assert outcome == "ran", record
    assert "G420" not in rule_ids(record)


def test_the_same_time_spent_outside_a_collection_asks(tmp_path: Path, collections: Collections) -> None:
    g = guard_with(tmp_path, Stall(collections, work=PAUSE_S, pause=False))
    try:
        before = pauses.total
        outcome, record = run_tool(g, SCRIPT)
    finally:
        g.close()
    assert collections.seen == 0 and pauses.total == before
    assert outcome == "asked"
    assert "G420" in rule_ids(record)


def test_a_thread_standing_still_during_a_decision_leaves_the_budget_alone(
    tmp_path: Path, collections: Collections
) -> None:
    g = guard_with(tmp_path, Stall(collections, work=0.0, pause=False, stalled=PAUSE_S))
    try:
        outcome, record = run_tool(g, SCRIPT)
    finally:
        g.close()
    assert record["elapsed_us"] >= PAUSE_S * 1e6  # the decision did take that long on the wall clock
    assert outcome == "ran", record
    assert "G420" not in rule_ids(record)


@pytest.mark.parametrize(
    ("work", "pause", "stalled", "asked"),
    [
        # worked: a 200 ms budget; out of time once the wall clock passes 200 ms and guard's own
        # work passes 100 ms (half of it) on the wall clock less collections and on the CPU clock
        (0.15, 0.1, 0.0, True),  # wall 250 ms, own 150 ms: both past
        (0.09, 0.5, 0.0, False),  # wall 590 ms, own 90 ms: a decision that did little, paused
        (0.15, 0.0, 0.0, False),  # wall 150 ms: within the budget
        (0.21, 0.0, 0.0, True),  # wall 210 ms, all of it its own
        (0.0, 1.1, 0.0, False),  # wall 1.1 s: paused, within the 1 s allowance past the deadline
        (0.0, 1.3, 0.0, True),  # wall 1.3 s: past the deadline by more than the allowance, whatever paused it
        (0.09, 0.0, 0.5, False),  # wall 590 ms, own CPU 90 ms: a thread that did not run
        (0.15, 0.0, 0.1, True),  # wall 250 ms, own CPU 150 ms: both past
        (0.0, 0.0, 1.3, True),  # wall 1.3 s of standing still: past the allowance
    ],
)
def test_out_of_time_needs_the_budget_gone_and_half_of_it_worked(
    tmp_path: Path, frozen: Any, work: float, pause: float, stalled: float, asked: bool
) -> None:
    c = Collections(frozen, pause)
    gc.callbacks.append(c)
    g = guard_with(tmp_path, Stall(c, work=work, pause=bool(pause), stalled=stalled))
    try:
        outcome, record = run_tool(g, "git status")
    finally:
        gc.callbacks.remove(c)
        g.close()
    assert ("G420" in rule_ids(record)) is asked
    assert outcome == ("asked" if asked else "ran")


def test_a_collection_during_the_static_analysis_leaves_its_budget_alone(tmp_path: Path, frozen: Any) -> None:
    """The pause lands inside the analysis of the script: collections forced often, one armed."""
    c = Collections(frozen, PAUSE_S)

    class Arm:
        name = "arm"

        def __call__(self, call: ToolCall, ctx: Context) -> Verdict:
            c.left = 1
            return Verdict(layer=self.name)

    config = {"system.health": 90, "memory.backend": "history"}
    plain = Guard(tmp_path / "ws", config)
    g = Guard(tmp_path / "ws", config, layers=[Arm(), *plain.default_layers()])
    plain.close()
    thresholds = gc.get_threshold()
    gc.callbacks.append(c)
    gc.set_threshold(1)  # a collection at almost every allocation: the next one is inside static
    try:
        outcome, record = run_tool(g, SCRIPT)
    finally:
        gc.set_threshold(*thresholds)
        gc.callbacks.remove(c)
        g.close()
    assert c.seen == 1
    assert outcome == "ran", record
    assert "G420" not in rule_ids(record)


def test_a_block_stays_a_block_whatever_the_collections(tmp_path: Path, collections: Collections) -> None:
    g = guard_with(tmp_path, Stall(collections, work=0.0, pause=True))
    try:
        outcome, record = run_tool(g, "rm -rf ~")
    finally:
        g.close()
    assert (outcome, record["decision"]) == ("blocked", "block")


class TestClock:
    def test_the_clock_leaves_out_what_collections_took(self, frozen: Any) -> None:
        c = Collections(frozen, 2.0)
        gc.callbacks.append(c)
        try:
            start_perf, start_clock, start_total = _now(), pauses.clock(), pauses.total
            c.left = 2
            gc.collect()
            gc.collect()
            frozen.tick(0.25)  # guard's own work
        finally:
            gc.callbacks.remove(c)
        # worked: 2 collections x 2 s are left out; the 0.25 s outside them is not
        assert _now() - start_perf == pytest.approx(4.25)
        assert pauses.total - start_total == pytest.approx(4.0)
        assert pauses.clock() - start_clock == pytest.approx(0.25)

    def test_deadlines_are_the_budget_on_the_wall_and_half_of_it_on_the_clock(self, frozen: Any) -> None:
        start = _now()
        wall, work = pauses.deadlines(200.0, start)
        assert wall == pytest.approx(start + 0.2)
        assert work[0] == pytest.approx(start - pauses.total + 0.1)
        assert work[1] - time.thread_time() == pytest.approx(0.1, abs=0.01)  # half the budget on this thread's CPU
        assert not pauses.late(wall, work)
        work_for(frozen, 0.15)
        assert not pauses.late(wall, work)  # 150 ms in: neither passed
        work_for(frozen, 0.06)
        assert pauses.late(wall, work)  # 210 ms, all work
        assert pauses.late(wall, None)

    def test_a_thread_that_did_not_run_is_not_late(self, frozen: Any) -> None:
        wall, work = pauses.deadlines(200.0)
        frozen.tick(0.3)  # 300 ms on the wall clock, next to no CPU of this thread's
        assert not pauses.late(wall, work)
        assert pauses.late(wall, None)  # (the wall deadline alone has passed)
        work_for(frozen, 0.1)  # and now 100 ms of its own
        assert pauses.late(wall, work)

    def test_sooner_moves_both_clocks(self) -> None:
        assert pauses.sooner((10.0, 4.0), 0.02) == pytest.approx((9.98, 3.98))
        assert pauses.sooner(None, 0.02) is None

    def test_past_the_allowance_a_paused_decision_is_late_too(self, frozen: Any) -> None:
        c = Collections(frozen, 1.1)
        gc.callbacks.append(c)
        try:
            wall, work = pauses.deadlines(200.0)
            own = pauses.clock()
            c.left = 1
            gc.collect()  # 1.1 s of collection: 1.1 s on the wall, nothing of guard's own
            assert not pauses.late(wall, work)  # 0.9 s past the wall deadline: within the allowance
            c.seconds, c.left = 0.2, 1
            gc.collect()  # 0.2 s more, still none of it guard's own
            assert pauses.clock() - own == pytest.approx(0.0, abs=1e-6)  # (own time: none)
            assert pauses.late(wall, work)  # 1.1 s past it
        finally:
            gc.callbacks.remove(c)

    def test_a_clock_that_jumps_during_a_collection_is_not_a_pause(self, frozen: Any) -> None:
        c = Collections(frozen, 3600.0)  # an hour: time set by hand, not a collection
        gc.callbacks.append(c)
        try:
            before = pauses.total
            c.left = 1
            gc.collect()
        finally:
            gc.callbacks.remove(c)
        assert c.seen == 1 and pauses.total == before


def _now() -> float:
    import time

    return time.perf_counter()


def test_frozen_time_factory_ticks_perf_counter(frozen: Any) -> None:
    """(The tests above rely on freezegun moving ``time.perf_counter`` with ``tick``.)"""
    import time

    assert not isinstance(frozen, StepTickTimeFactory)
    t0 = time.perf_counter()
    frozen.tick(1.5)
    assert time.perf_counter() - t0 == pytest.approx(1.5)
