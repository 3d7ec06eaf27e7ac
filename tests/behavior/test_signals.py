"""Each signal on its own: the case it must catch and the near-miss it must let through."""

from __future__ import annotations

from guard.behavior.facts import EGRESS, SECRET, UNTRUSTED, Probe
from guard.behavior.session import SessionState
from guard.behavior.settings import BehaviorSettings
from guard.behavior.signals import HARD_CAP, assess
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM, Risk

S = BehaviorSettings()
T = 1_000_000.0


class Session:
    """Feeds events into a SessionState the way the tracker does."""

    def __init__(self, settings: BehaviorSettings = S) -> None:
        self.settings = settings
        self.state = SessionState("s", started=T, updated=T)
        self.t = T

    def call(self, task: str, *, dec: str = AUTO_ALLOW, risk: int = 1, facts=(), dt: float = 10.0) -> None:
        self.t += dt
        ev = {"e": "d", "t": self.t, "task": task, "call": f"bash:{task}", "dec": dec, "risk": risk}
        if facts:
            ev["facts"] = list(facts)
        self.state.apply(ev, self.settings)

    def result(self, task: str, ok: bool, dt: float = 1.0) -> None:
        self.t += dt
        self.state.apply({"e": "r", "t": self.t, "task": task, "call": f"bash:{task}", "ok": ok}, self.settings)

    def answer(self, task: str, ok: bool) -> None:
        self.t += 1
        self.state.apply({"e": "i", "t": self.t, "task": task, "ok": ok}, self.settings)

    def assess(self, task: str | None = None, *, risk: int = 1, facts=(), dt: float = 10.0):
        probe = None if task is None else Probe(task, f"bash:{task}", "bash", risk, frozenset(facts))
        return assess(self.state, probe, self.t + dt, self.settings, session_id="s")


class TestFailures:
    def test_one_failure_is_not_a_crisis(self):
        s = Session()
        s.call("a")
        s.result("a", False)
        a = s.assess("b")
        assert a.ids == ["G201"] and a.health >= 85 and a.ceiling is None

    def test_a_streak_of_failures_drops_health_below_the_confirm_line(self):
        s = Session()
        for i in range(5):
            s.call(f"t{i}")
            s.result(f"t{i}", False)
        a = s.assess("next")
        assert "G201" in a.ids and a.health < 60 and a.ceiling == REQUEST_CONFIRM and "G250" in a.ids

    def test_failures_decay(self):
        s = Session()
        for i in range(5):
            s.call(f"t{i}")
            s.result(f"t{i}", False)
        fresh = s.assess("next").health
        later = s.assess("next", dt=3600).health  # six half-lives of 10 minutes
        assert later > fresh and later >= 95

    def test_successes_dilute_failures(self):
        s = Session()
        for i in range(10):
            s.call(f"ok{i}")
            s.result(f"ok{i}", True)
        s.call("x")
        s.result("x", False)
        s.call("y")
        s.result("y", False)
        assert s.assess("z").health > 95


class TestLoops:
    def test_the_third_identical_call_is_a_loop(self):
        s = Session()
        s.call("a")
        s.call("a")
        a = s.assess("a")
        assert "G202" in a.ids and a.ceiling == REQUEST_CONFIRM and a.health <= HARD_CAP

    def test_two_identical_calls_are_not(self):
        s = Session()
        s.call("a")
        assert s.assess("a").ids == []

    def test_a_b_a_b_a_b_is_a_cycle(self):
        s = Session()
        for task in "ababa":
            s.call(task)
        a = s.assess("b")
        assert "G203" in a.ids and a.ceiling == REQUEST_CONFIRM

    def test_a_b_a_b_is_not_yet(self):
        s = Session()
        for task in "aba":
            s.call(task)
        assert s.assess("b").ids == []

    def test_a_three_call_cycle_three_times(self):
        s = Session()
        for task in "abcabcab":
            s.call(task)
        assert "G203" in s.assess("c").ids
        assert "G203" not in s.assess("d").ids

    def test_the_longest_cycle_is_found_and_a_longer_one_is_not(self):
        """Periods up to 10: the call being decided is found 10 calls back, never 11."""
        s = Session()
        for task in "abcdefghij" * 2 + "abcdefghi":
            s.call(task)
        a = s.assess("j")
        assert "G203" in a.ids and "cycle of 10 calls" in a.reasons[0].message
        s = Session()
        for task in "abcdefghijk" * 2 + "abcdefghij":
            s.call(task)
        assert "G203" not in s.assess("k").ids

    def test_the_shortest_period_that_repeats_is_named(self):
        """A call seen 2 and 4 calls back, where only the period of 4 repeats three times."""
        s = Session()
        for task in "abcb" * 2 + "abc":
            s.call(task)
        a = s.assess("b")
        assert "G203" in a.ids and "cycle of 4 calls" in a.reasons[0].message

    def test_the_session_so_far_shows_its_cycle(self):
        """Without a call being decided (the analyzer), the ring itself is read: a cycle, and a near-miss."""
        s = Session()
        for task in "ababab":
            s.call(task)
        assert "G203" in s.assess().ids
        s = Session()
        for task in "ababa":
            s.call(task)
        assert "G203" not in s.assess().ids

    def test_blocked_attempts_are_not_calls_the_session_made(self):
        s = Session()
        s.call("a")
        s.call("a", dec=BLOCK)
        s.call("a", dec=BLOCK)
        assert "G202" not in s.assess("a").ids


class TestDenials:
    def test_limit_is_three_in_a_row(self):
        s = Session()
        for _ in range(3):
            s.answer("x", False)
        assert "G231" in s.assess("y").ids

    def test_ten_of_the_last_fifty(self):
        s = Session()
        for _ in range(10):
            s.answer("x", False)
            for _ in range(3):
                s.answer("x", True)
        a = s.assess("y")
        assert a.ids == ["G231"] and "10 of the last 40 answers" in a.signals[0].message

    def test_nine_of_fifty_spread_out_is_not(self):
        s = Session()
        for _ in range(9):
            s.answer("x", False)
            for _ in range(3):
                s.answer("x", True)
        a = s.assess("x")
        assert "G231" not in a.ids and "G230" in a.ids and a.ceiling is None
        assert s.assess("y").ids == []  # a refusal weighs on the refused call, not on others


class TestRisingRisk:
    def test_safe_session_turning_high(self):
        s = Session()
        for i in range(8):
            s.call(f"r{i}", risk=Risk.SAFE)
        s.call("h1", risk=Risk.HIGH)
        a = s.assess("h2", risk=Risk.HIGH)
        assert "G204" in a.ids and a.ceiling is None

    def test_steady_medium_work_is_not_rising(self):
        s = Session()
        for i in range(8):
            s.call(f"m{i}", risk=Risk.MEDIUM)
        assert "G204" not in s.assess("m9", risk=Risk.MEDIUM).ids

    def test_one_medium_call_after_reads_is_not(self):
        s = Session()
        for i in range(8):
            s.call(f"r{i}", risk=Risk.SAFE)
        assert "G204" not in s.assess("m", risk=Risk.MEDIUM).ids


class TestBurst:
    def test_twenty_calls_in_ten_seconds_after_a_calm_hour(self):
        s = Session()
        for i in range(60):
            s.call(f"c{i}", dt=60)
        s.call("b0", dt=30)
        for i in range(1, 19):
            s.call(f"b{i}", dt=0.3)
        assert "G205" in s.assess("b19", dt=0.3).ids

    def test_nineteen_is_not(self):
        s = Session()
        for i in range(60):
            s.call(f"c{i}", dt=60)
        s.call("b0", dt=30)
        for i in range(1, 18):
            s.call(f"b{i}", dt=0.3)
        assert "G205" not in s.assess("b18", dt=0.3).ids

    def test_a_session_that_always_runs_fast_is_not_bursting(self):
        s = Session()
        for i in range(600):
            s.call(f"c{i}", dt=0.3)
        assert "G205" not in s.assess("x", dt=0.3).ids


class TestRefusals:
    def test_three_refused_calls_in_a_row_need_a_person(self):
        s = Session()
        for i in range(3):
            s.call(f"bad{i}", dec=BLOCK)
        a = s.assess("ok")
        assert "G206" in a.ids and a.ceiling == REQUEST_CONFIRM

    def test_two_do_not(self):
        s = Session()
        for i in range(2):
            s.call(f"bad{i}", dec=BLOCK)
        a = s.assess("ok")
        assert "G206" in a.ids and a.ceiling is None

    def test_a_call_that_ran_ends_the_streak(self):
        s = Session()
        for i in range(3):
            s.call(f"bad{i}", dec=BLOCK)
        s.call("fine")
        assert "G206" not in s.assess("ok").ids


class TestTaint:
    def test_order_untrusted_after_secret_also_counts(self):
        s = Session()
        s.call("cat-env", facts=[SECRET])
        s.call("fetch", facts=[UNTRUSTED])
        a = s.assess("upload", facts=[EGRESS])
        assert a.decision == BLOCK and "G222" in a.ids

    def test_taint_is_sticky(self):
        s = Session()
        s.call("fetch", facts=[UNTRUSTED])
        for i in range(100):
            s.call(f"work{i}")
        assert "G221" in s.assess("upload", facts=[EGRESS]).ids

    def test_non_egress_calls_in_a_tainted_session_are_only_noted(self):
        s = Session()
        s.call("fetch", facts=[UNTRUSTED])
        s.call("cat-env", facts=[SECRET])
        a = s.assess("edit")
        assert a.decision is None and a.ceiling is None and "G223" in a.ids

    def test_a_confirmed_call_taints_once_its_result_succeeds(self):
        s = Session()
        s.call("fetch", dec=REQUEST_CONFIRM, facts=[UNTRUSTED])
        assert s.state.taint is None
        s.result("fetch", True)
        assert s.state.taint is not None

    def test_a_confirmed_call_that_failed_does_not_taint(self):
        s = Session()
        s.call("fetch", dec=REQUEST_CONFIRM, facts=[UNTRUSTED])
        s.result("fetch", False)
        assert s.state.taint is None


class TestAssessWithoutACall:
    def test_session_view_has_no_per_call_effects(self):
        s = Session()
        s.call("fetch", facts=[UNTRUSTED])
        s.call("cat-env", facts=[SECRET])
        a = s.assess(None)
        assert a.decision is None and a.breaker is None and "G223" in a.ids
