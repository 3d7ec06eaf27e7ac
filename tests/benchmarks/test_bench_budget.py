"""The crafted-input rows: a decision's own time and its wall time, each against what guard.pauses bounds."""

from __future__ import annotations

from typing import Any

from benchmarks import bench_budget as bench


def _result(name: str, kb: float, median: float, max_: float, collections: float, own: float) -> dict[str, Any]:
    return {
        "name": name,
        "kb": kb,
        "median": median,
        "max": max_,
        "max_collections": collections,
        "max_own": own,
        "decisions": ["request_confirm"],
    }


def test_the_max_rows_judge_own_time_by_the_budget_and_the_wall_by_the_allowance() -> None:
    results = [
        # the slowest on the wall: 230 ms of it collections (another module's heap), 150 ms its own
        _result("3,000 command substitutions", 30.0, 190.0, 380.0, 230.0, 150.0),
        # the busiest on its own: no collections at all, 310 ms its own
        _result("2,000 functions", 37.0, 195.0, 310.0, 0.0, 310.0),
        _result("1,600 words rm -f $x", 12.0, 30.0, 40.0, 0.0, 40.0),
        _result("tiny", 1.0, 500.0, 900.0, 0.0, 900.0),  # under 10 KB: not a crafted 10-100 KB input
    ]
    rows = {r["name"]: r for r in bench.rows_of(results)}
    own = rows["crafted 10-100 KB input, worst max decision, own time"]
    wall = rows["crafted 10-100 KB input, worst max decision, wall"]
    assert (own["value"], own["met"]) == (310.0, False)  # 300 = 200 ms budget + one 100 ms step
    assert own["note"].startswith("2,000 functions")
    assert (wall["value"], wall["met"]) == (380.0, True)  # within 300 + the 1 s allowance for collections
    assert "230 ms" in wall["note"]
    assert rows["crafted 10-100 KB input, worst median decision"]["value"] == 195.0


def test_a_decision_past_the_allowance_misses_the_wall_row() -> None:
    results = [
        _result("3,000 command substitutions", 30.0, 190.0, 1400.0, 1250.0, 150.0),
        _result("1,600 words rm -f $x", 12.0, 30.0, 40.0, 0.0, 40.0),
    ]
    rows = {r["name"]: r for r in bench.rows_of(results)}
    assert rows["crafted 10-100 KB input, worst max decision, wall"]["met"] is False
    assert rows["crafted 10-100 KB input, worst max decision, own time"]["met"] is True
