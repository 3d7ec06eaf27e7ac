"""The dispatch after a decision reuses the layer's look at the session only while it still holds.

The behavior layer hands its probe and the session's live entry to the dispatch that follows
(no second look at the file). A session reset or forgotten in between (another thread, a
``guard reset`` through the same tracker) must not take the dispatch with it: it is counted in
the session as it is now. The loop check, which compares the cheapest part of a cycle first,
finds exactly the cycles its definition names; the burst check, written without ``max``
calls, says what its first form said (a NaN from a damaged file included).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from freezegun import freeze_time

from guard.behavior import signals
from guard.behavior.facts import Probe
from guard.behavior.session import SessionState
from guard.behavior.settings import BehaviorSettings
from guard.behavior.tracker import session_file
from guard.layers.base import Context
from guard.model import ToolCall, Verdict

from .conftest import tagged_guard

T0 = "2026-03-02 10:00:00"
LS = {"command": "ls"}


class ResetSession:
    """A real layer after the behavior layer that resets the session mid-decision (as another
    thread sharing the Guard could), when ``armed``."""

    name = "resetter"

    def __init__(self) -> None:
        self.armed = False

    def __call__(self, call: ToolCall, ctx: Context) -> Verdict:
        if self.armed and ctx.state is not None:
            ctx.state.sessions.reset(session_id=call.session_id)
        return Verdict(self.name)


def _guard(tmp_path: Path) -> tuple[object, ResetSession]:
    g = tagged_guard(tmp_path, {})
    static, behavior, fusion = g.chain.layers
    resetter = ResetSession()
    g.chain = type(g.chain)([static, behavior, resetter, fusion])
    return g, resetter


def _saved_dispatches(tmp_path: Path, sid: str) -> int:
    doc = json.loads(session_file(tmp_path / "sessions", sid).read_text())
    return int(doc["counts"][0])


def test_a_session_reset_between_look_and_dispatch_counts_the_dispatch_afresh(tmp_path: Path):
    with freeze_time(T0) as clock:
        g, resetter = _guard(tmp_path)
        try:
            for _ in range(3):
                g.decide("bash", LS, session_id="s")
                clock.tick(1)
            resetter.armed = True
            g.decide("bash", LS, session_id="s")  # reset after the look: the dispatch lands in the new session
            assert g.state.sessions.get("s").dispatches == 1
            g.flush()
            assert _saved_dispatches(tmp_path, "s") == 1
        finally:
            g.close()


def test_without_a_reset_every_dispatch_counts(tmp_path: Path):
    """Near miss: the same decisions with nothing in between add up."""
    with freeze_time(T0) as clock:
        g, _ = _guard(tmp_path)
        try:
            for _ in range(4):
                g.decide("bash", LS, session_id="s")
                clock.tick(1)
            assert g.state.sessions.get("s").dispatches == 4
            g.flush()
            assert _saved_dispatches(tmp_path, "s") == 4
        finally:
            g.close()


def test_a_reset_of_another_session_leaves_this_one_alone(tmp_path: Path):
    """Near miss: the entry reused for the dispatch is still the live one."""
    with freeze_time(T0) as clock:
        g, resetter = _guard(tmp_path)
        try:
            g.decide("bash", LS, session_id="other")
            for _ in range(2):
                g.decide("bash", LS, session_id="s")
                clock.tick(1)
            resetter.armed = True
            g.decide("bash", LS, session_id="other")
            assert g.state.sessions.get("s").dispatches == 2
            assert g.state.sessions.get("other").dispatches == 1
        finally:
            g.close()


def _cycle_by_definition(ring: list[str], task: str, top_period: int) -> int | None:
    """The shortest period p (2..top_period) for which the last 3p calls of ring + [task] are three
    equal blocks holding more than one call: the loop signal's definition, spelled out."""
    calls = [*ring, task]
    for p in range(2, top_period + 1):
        if 3 * p > len(calls):
            break
        a, b, c = calls[-3 * p : -2 * p], calls[-2 * p : -p], calls[-p:]
        if a == b == c and len(set(c)) > 1:
            return p
    return None


def test_the_cycle_check_finds_exactly_the_cycles_of_its_definition():
    s = BehaviorSettings.from_config(None)
    rng = random.Random(24)
    seen_cycles = set()
    for _ in range(4000):
        alphabet = ["a", "b", "c", "d"][: rng.randint(2, 4)]
        if rng.random() < 0.5:  # mostly periodic rings, some broken near the end
            p = rng.randint(2, 10)
            block = [rng.choice(alphabet) for _ in range(p)]
            ring = (block * 10)[: rng.randint(1, 30)]
            if rng.random() < 0.3 and ring:
                ring[rng.randrange(len(ring))] = rng.choice(alphabet)
        else:
            ring = [rng.choice(alphabet) for _ in range(rng.randint(0, 30))]
        task = rng.choice(alphabet)
        state = SessionState("s", ring=ring, run_task=ring[-1] if ring else "", run_len=1)
        out: list[signals.Signal] = []
        signals._loops(state, Probe(task, "sig", "bash", 2, frozenset()), s, out)
        cycles = [x for x in out if x.id == "G203"]
        if any(x.id == "G202" for x in out):
            continue  # the repeat signal, checked first, stands for the loop
        expected = _cycle_by_definition(ring, task, signals.MAX_PERIOD)
        got = None if not cycles else int(cycles[0].message.split()[3])
        assert got == expected, (ring, task)
        seen_cycles.add(got)
    assert {None, 2, 3, 5, 10} <= seen_cycles  # the sample holds hits of several periods and misses


def _burst_by_definition(state: SessionState, this: bool, now: float, s: BehaviorSettings) -> str | None:
    """The burst signal's message as first written (``max`` calls; a NaN in the file as it reads)."""
    recent = list(state.recent)
    since = now - signals.BURST_SECONDS
    stale = 0
    if recent and not recent[0] >= since:
        for t in recent:
            if t >= since:
                break
            stale += 1
    count = len(recent) - stale + this
    if len(recent) + 1 < s.burst_calls or count < s.burst_calls:
        return None
    before = state.dispatches - count + this
    usual = before / max(60.0, since - state.started) * signals.BURST_SECONDS if before and state.started else 0.0
    if count >= s.burst_factor * max(usual, 1.0):
        shown = f"{usual:.1f}" if before else "0.0"
        return (
            f"{count} calls in the last {signals.BURST_SECONDS:.0f} s, far above the session's usual {shown} (a burst)"
        )
    return None


def test_the_burst_check_reads_as_its_definition_nan_included():
    s = BehaviorSettings.from_config(None)
    rng = random.Random(17)
    now = 1_000_000.0
    fired = 0
    for _ in range(3000):
        n = rng.randint(0, 60)
        recent = sorted(now - rng.uniform(0, 12) for _ in range(n))
        if recent and rng.random() < 0.05:
            recent[0] = float("nan")  # a damaged file
        started = rng.choice([0.0, float("nan"), now - rng.uniform(0, 600)])
        state = SessionState("s", started=started, updated=now)
        state.recent.extend(recent)
        state.dispatches = n + rng.randint(0, 400)
        this = rng.random() < 0.8
        probe = Probe("t", "sig", "bash", 2, frozenset()) if this else None
        out: list[signals.Signal] = []
        signals._burst(state, probe, now, s, out)
        expected = _burst_by_definition(state, this, now, s)
        assert [x.message for x in out] == ([] if expected is None else [expected])
        fired += expected is not None
    assert 100 < fired < 2900  # hits and misses both sampled
