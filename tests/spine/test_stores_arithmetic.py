"""The history aggregates against hand-worked numbers (docs/mutation.md): decay, late lines, clamps.

Lines are written in the seed's shape to the history files, read by :class:`Aggregates`
(the public reading calls: ``tool``, ``user``, ``pattern``, ``op_tool``, ``family_tool``...).
A decayed pair (n, s) halves every half-life: adding x at ts ≥ t first decays (n, s) by
2^(−(ts − t)/H), then adds (1, x); a line older than t adds (w, x·w), w = 2^(−(t − ts)/H);
half-life 0 never decays. Time is frozen; the clock is epoch seconds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

from guard.aggregates import Aggregates
from guard.signature import family_of

NOW = 1_000_000.0  # "now" for catch_up, frozen
SIG = "bash:git status"


def write(root: Path, name: str, *lines: Any) -> None:
    with open(root / name, "a", encoding="utf-8") as f:
        for line in lines:
            f.write((line if isinstance(line, str) else json.dumps(line)) + "\n")


def runs(root: Path, *lines: Any) -> None:
    write(root, ".command-execution.jsonl", *lines)


def answers(root: Path, *lines: Any) -> None:
    write(root, ".user-interactions.jsonl", *lines)


def run(ok: bool, ts: Any, **kw: Any) -> dict[str, Any]:
    return {"tool": "bash", "status": "success" if ok else "failure", "timestamp": ts, "signature": SIG, **kw}


def caught_up(root: Path, tool_h: float = 100.0, user_h: float = 1000.0) -> Aggregates:
    agg = Aggregates(root, tool_h, user_h)
    with freeze_time(NOW_DT):
        agg.catch_up()
    return agg


NOW_DT = "1970-01-12 13:46:40"  # = NOW


def levels(agg: Aggregates) -> list[Any]:
    return [agg.tool("bash"), agg.op_tool(SIG), agg.family_tool(family_of(SIG))]


class TestDecay:
    def test_a_later_line_decays_what_came_before(self, tmp_path: Path) -> None:
        runs(tmp_path, run(True, NOW - 200), run(False, NOW - 100))
        for stats in levels(caught_up(tmp_path)):
            # success at −200: (1, 1); failure 100 s later: (0.5, 0.5) + (1, 0) = (1.5, 0.5)
            assert (stats.runs, stats.successes) == (2, 1)
            assert stats.decayed.at(NOW - 100, 100.0) == pytest.approx((1.5, 0.5))
            # 100 s on: halved again
            assert stats.decayed.at(NOW, 100.0) == pytest.approx((0.75, 0.25))

    def test_a_first_failure_starts_the_clock(self, tmp_path: Path) -> None:
        runs(tmp_path, run(False, NOW - 200), run(True, NOW - 100))
        stats = caught_up(tmp_path).tool("bash")
        # failure (1, 0) at −200, halved by −100 → (0.5, 0); + (1, 1) = (1.5, 1)
        assert stats.decayed.at(NOW - 100, 100.0) == pytest.approx((1.5, 1.0))

    def test_a_late_line_counts_for_less(self, tmp_path: Path) -> None:
        runs(tmp_path, run(True, NOW - 100), run(True, NOW - 200))
        stats = caught_up(tmp_path).tool("bash")
        # (1, 1) at −100; the line from −200 arrives late: w = 2^(−100/100) = 0.5 → (1.5, 1.5)
        assert stats.decayed.at(NOW - 100, 100.0) == pytest.approx((1.5, 1.5))

    def test_reading_at_the_last_time_does_not_decay(self, tmp_path: Path) -> None:
        runs(tmp_path, run(True, NOW - 100))
        assert caught_up(tmp_path).tool("bash").decayed.at(NOW - 100, 100.0) == (1.0, 1.0)

    def test_a_one_second_half_life_decays(self, tmp_path: Path) -> None:
        runs(tmp_path, run(True, NOW - 2), run(True, NOW - 1))
        # (1, 1) halved after 1 s → (0.5, 0.5) + (1, 1) = (1.5, 1.5)
        assert caught_up(tmp_path, tool_h=1.0).tool("bash").decayed.at(NOW - 1, 1.0) == pytest.approx((1.5, 1.5))

    def test_half_life_zero_never_decays(self, tmp_path: Path) -> None:
        runs(tmp_path, run(True, NOW - 5000), run(False, NOW - 100), run(True, NOW - 9000))
        assert caught_up(tmp_path, tool_h=0).tool("bash").decayed.at(NOW + 1e6, 0) == (3.0, 2.0)

    def test_answers_decay_by_the_user_half_life(self, tmp_path: Path) -> None:
        answers(
            tmp_path,
            {"tool": "bash", "action": "approved", "timestamp": NOW - 2000, "signature": SIG},
            {"tool": "bash", "action": "denied", "timestamp": NOW - 1000, "signature": SIG},
        )
        agg = caught_up(tmp_path)
        for stats in (agg.user("bash"), agg.op_user(SIG), agg.family_user(family_of(SIG))):
            # user half-life 1000 s (the tools' is 100): (1, 1) → (0.5, 0.5) + (1, 0) = (1.5, 0.5)
            assert stats.decayed.at(NOW - 1000, 1000.0) == pytest.approx((1.5, 0.5))


class TestLines:
    def test_timestamps_iso_with_z_numbers_and_unusable_ones(self, tmp_path: Path) -> None:
        runs(
            tmp_path,
            run(True, "1970-01-12T13:45:00Z"),  # NOW − 100
            run(True, NOW - 100),
        )
        stats = caught_up(tmp_path).tool("bash")
        assert stats.decayed.at(NOW - 100, 100.0) == pytest.approx((2.0, 2.0))  # both at −100
        for bad in (True, float("nan"), "yesterday", None):
            root = tmp_path / str(bad)
            root.mkdir()
            runs(root, run(True, NOW - 100), run(True, bad))
            # an unusable time counts as now: (1, 1) at −100, halved by now, + (1, 1) = (1.5, 1.5)
            assert caught_up(root).tool("bash").decayed.at(NOW, 100.0) == pytest.approx((1.5, 1.5)), bad

    def test_a_line_from_the_future_counts_as_now_plus_the_skew(self, tmp_path: Path) -> None:
        runs(tmp_path, run(True, NOW - 100), run(False, NOW + 10_000))
        stats = caught_up(tmp_path, tool_h=400.0).tool("bash")
        # the second line counts at NOW + 300 (the default skew): (1, 1) decayed over 400 s → (0.5, 0.5) + (1, 0)
        assert stats.decayed.at(NOW + 300, 400.0) == pytest.approx((1.5, 0.5))

    def test_unreadable_lines_are_skipped(self, tmp_path: Path) -> None:
        runs(
            tmp_path,
            {"tool": 5, "status": "success"},
            {"tool": "bash", "status": 1},
            {"tool": "bash", "status": "maybe"},
            run(True, NOW),
        )
        answers(tmp_path, {"tool": 5, "action": "approved"}, {"tool": "bash", "action": 1})
        agg = caught_up(tmp_path)
        assert agg.tool("bash").runs == 1 and agg.user("bash") is None

    def test_importance_follows_the_recorded_risk(self, tmp_path: Path) -> None:
        runs(
            tmp_path,
            run(True, NOW - 3),  # no risk: medium success 0.5
            run(False, NOW - 2, risk="high"),  # 0.75 + 0.25 = 1.0
            run(True, NOW - 1, risk="bogus"),  # unreadable: medium 0.5
        )
        p = caught_up(tmp_path).pattern(SIG)
        assert (p.runs, p.successes, p.importance_sum, p.last) == (3, 2, pytest.approx(2.0), NOW - 1)

    def test_satisfaction_counts_from_one_to_five(self, tmp_path: Path) -> None:
        answers(
            tmp_path,
            *(
                {"tool": "bash", "action": "approved", "satisfaction": s, "signature": SIG, "timestamp": NOW}
                for s in (1, 5, 0, 6, 5.5, True, "4", None)
            ),
        )
        agg = caught_up(tmp_path)
        for stats in (agg.user("bash"), agg.op_user(SIG), agg.family_user(family_of(SIG))):
            assert (stats.interactions, stats.satisfaction_count, stats.satisfaction_sum) == (8, 2, 6.0)


class TestState:
    def test_the_state_file_keeps_every_level(self, tmp_path: Path) -> None:
        runs(tmp_path, run(True, NOW - 200), run(False, NOW - 100))
        answers(tmp_path, {"tool": "bash", "action": "approved", "satisfaction": 4, "timestamp": NOW, "signature": SIG})
        agg = caught_up(tmp_path)
        agg.save()
        fresh = Aggregates(tmp_path, 100.0, 1000.0)
        with freeze_time(NOW_DT):
            fresh.load()
            assert fresh.catch_up() == 0
        for stats in levels(fresh):
            assert (stats.runs, stats.successes) == (2, 1)
            assert stats.decayed.at(NOW - 100, 100.0) == pytest.approx((1.5, 0.5))
        for u in (fresh.user("bash"), fresh.op_user(SIG), fresh.family_user(family_of(SIG))):
            assert (u.interactions, u.approvals, u.satisfaction_sum, u.satisfaction_count) == (1, 1, 4.0, 1)
            assert u.decayed.at(NOW, 1000.0) == (1.0, 1.0)
        p = fresh.pattern(SIG)
        assert (p.runs, p.successes, p.importance_sum, p.last) == (2, 1, pytest.approx(1.25), NOW - 100)

    def test_a_state_file_from_the_future_does_not_freeze_decay(self, tmp_path: Path) -> None:
        """Every level's clock is pulled back to now + the skew when the state is loaded."""
        runs(tmp_path, run(True, NOW - 100))
        answers(tmp_path, {"tool": "bash", "action": "approved", "timestamp": NOW - 100, "signature": SIG})
        caught_up(tmp_path).save()
        path = tmp_path / ".guard-state.json"
        state = json.loads(path.read_text())
        year_9999 = 253402214400.0
        for key in ("tools", "users"):
            for stats in state[key].values():
                stats["decayed"][2] = year_9999
        for key in ("op_tools", "family_tools", "op_users", "family_users"):
            for _, stats in state[key]:
                stats["decayed"][2] = year_9999
        state["patterns"][0][1][3] = year_9999
        path.write_text(json.dumps(state))
        agg = Aggregates(tmp_path, 100.0, 1000.0)
        with freeze_time(NOW_DT):
            agg.load()
        for stats in (*levels(agg), agg.user("bash"), agg.op_user(SIG), agg.family_user(family_of(SIG))):
            assert stats.decayed.t == NOW + 300
        assert agg.pattern(SIG).last == NOW + 300
        runs(tmp_path, run(False, NOW + 700))  # counts at NOW + 700

        with freeze_time("1970-01-12 14:03:20"):  # NOW + 1000
            agg.catch_up()
        # (1, 1) at NOW + 300, decayed over 400 s to the failure at NOW + 700 (2^−4), + (1, 0):
        # the failure counts in full (with a clock left in 9999 it would count 2^−(big) ≈ 0)
        assert agg.tool("bash").decayed.at(NOW + 700, 100.0) == pytest.approx((1 + 2**-4, 2**-4))
