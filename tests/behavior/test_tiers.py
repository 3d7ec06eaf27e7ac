"""Trust tiers: points by difficulty, no deductions, double reward with cooldown, persisted per agent."""

from __future__ import annotations

from pathlib import Path

from guard.behavior.tiers import TIERS, Scorecard, TierBook, tier_for

HOUR = 3600.0


def ok(task: str, t: float, difficulty: str = "normal") -> dict:
    return {"t": t, "ok": True, "task": task, "difficulty": difficulty}


def fail(task: str, t: float) -> dict:
    return {"t": t, "ok": False, "task": task}


def test_the_seed_table():
    assert [(t.name, t.points) for t in TIERS] == [
        ("Seed", 0),
        ("Sprout", 50),
        ("Sapling", 200),
        ("Tree", 500),
        ("Forest", 1000),
    ]
    assert [t.max_lines for t in TIERS[:4]] == [150, 300, 500, 1000]
    assert [t.max_files for t in TIERS[:4]] == [3, 5, 10, 20]
    assert [t.risky_paths for t in TIERS] == [False, False, True, True, True]
    assert tier_for(49.9).name == "Seed" and tier_for(50).name == "Sprout" and tier_for(10_000).name == "Forest"


def test_points_by_difficulty_and_no_deductions():
    c = Scorecard("a")
    c.apply(ok("t1", 0, "trivial"), HOUR)
    c.apply(ok("t2", 1, "normal"), HOUR)
    c.apply(ok("t3", 2, "hard"), HOUR)
    assert c.points == 12
    c.apply(fail("t4", 3), HOUR)
    assert c.points == 12 and c.failures == 1


def test_success_after_failure_earns_double_once_per_hour():
    c = Scorecard("a")
    c.apply(fail("x", 0), HOUR)
    c.apply(ok("x", 10), HOUR)
    assert c.points == 6 and c.double_rewards == 1
    c.apply(fail("y", 20), HOUR)
    c.apply(ok("y", 30), HOUR)  # within the cooldown: single
    assert c.points == 9
    c.apply(fail("z", HOUR + 5), HOUR)
    c.apply(ok("z", HOUR + 10), HOUR)  # cooldown over
    assert c.points == 15 and c.double_rewards == 2


def test_a_success_without_an_earlier_failure_is_single():
    c = Scorecard("a")
    c.apply(fail("x", 0), HOUR)
    c.apply(ok("other", 10), HOUR)
    assert c.points == 3


def test_high_tiers_earn_less_for_easy_work():
    c = Scorecard("a", points=500)
    c.apply(ok("t", 0, "trivial"), HOUR)
    c.apply(ok("t", 1, "normal"), HOUR)
    c.apply(ok("t", 2, "hard"), HOUR)
    assert c.points == 500 + 0.1 + 1.5 + 8


def test_promotion_is_counted():
    c = Scorecard("a", points=48)
    c.apply(ok("t", 0), HOUR)
    assert c.tier.name == "Sprout" and c.promotions == 1


def test_persisted_per_agent_and_merged_between_processes(tmp_path: Path):
    lock = tmp_path / "sessions" / ".lock"
    one, two = TierBook(tmp_path, HOUR, lock), TierBook(tmp_path, HOUR, lock)
    for i in range(10):
        one.record("a1", ok(f"t{i}", i))
    two.record("a1", ok("u", 100))  # two never saw one's results
    two.record("a2", ok("u", 100, "hard"))
    one.flush()
    two.flush()
    three = TierBook(tmp_path, HOUR, lock)
    assert three.card("a1").points == 33 and three.card("a2").points == 8
    assert oct((tmp_path / "tiers.json").stat().st_mode & 0o777) == "0o600"
    # a reader notices a change written by another process
    one.record("a2", ok("v", 200))
    one.flush()
    assert three.card("a2").points == 11
