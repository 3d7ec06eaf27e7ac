"""Signals made once per distinct message (issue 17 item 3) still say what the session did."""

from __future__ import annotations

from guard.behavior.facts import Probe
from guard.behavior.session import SessionState
from guard.behavior.settings import BehaviorSettings
from guard.behavior.signals import assess

S = BehaviorSettings()
T = 1_000_000.0


def _run(tasks: list[str], dt: float, start: float = T) -> tuple[SessionState, float]:
    state = SessionState("s", started=start, updated=start)
    t = start
    for task in tasks:
        t += dt
        state.apply({"e": "d", "t": t, "task": task, "dec": "auto_allow", "risk": 1}, S)
    return state, t


def _probe(task: str) -> Probe:
    return Probe(task, f"bash:{task}", "bash", 1, frozenset())


def test_a_burst_message_follows_the_count_call_after_call():
    calm, t = _run([f"c{i}" for i in range(60)], 60.0)
    messages = []
    for i in range(24):
        t += 0.3
        a = assess(calm, _probe(f"b{i}"), t, S, session_id="s")
        messages += [s.message for s in a.signals if s.id == "G205"]
        calm.apply({"e": "d", "t": t, "task": f"b{i}", "dec": "auto_allow", "risk": 1}, S)
    counts = [int(m.split()[0]) for m in messages]
    assert counts == sorted(counts) and len(set(counts)) == len(counts) >= 4
    assert all("far above the session's usual" in m and m.endswith("(a burst)") for m in messages)


def test_the_same_cycle_in_two_sessions_reads_the_same_and_shares_its_reason():
    a, ta = _run(["x", "y"] * 3, 10.0)
    b, tb = _run(["x", "y"] * 3, 10.0, start=T + 5_000)
    first = assess(a, _probe("x"), ta + 10, S, session_id="a")
    second = assess(b, _probe("x"), tb + 10, S, session_id="b")
    assert [s.message for s in first.signals] == ["a cycle of 2 calls repeated 3 times in a row (a loop)"]
    assert first.signals[0].reason() is second.signals[0].reason()  # formatted (and redacted in the log) once
    assert first.signals[0].reason().alternative == "change the approach instead of repeating the same steps"


def test_a_cycle_of_another_length_is_not_told_as_the_first_one():
    a, ta = _run(["x", "y", "z"] * 3, 10.0)
    got = assess(a, _probe("x"), ta + 10, S, session_id="a")
    assert [s.message for s in got.signals if s.id == "G203"] == [
        "a cycle of 3 calls repeated 3 times in a row (a loop)"
    ]
