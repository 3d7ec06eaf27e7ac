"""The Guard's memory dimension, end to end, on both providers."""

from __future__ import annotations

from guard import Guard


def _memory(rec):  # type: ignore[no-untyped-def]
    return rec.layer("fusion").data["dimensions"]["memory"]


def test_history_memory_rises_after_successes_and_falls_after_failures(make_guard) -> None:  # type: ignore[no-untyped-def]
    g = make_guard()
    assert _memory(g.decide("bash", {"command": "make build"}))["value"] == 40.0
    for _ in range(4):
        g.record_result("bash", {"command": "make build"}, success=True)
        g.record_result("bash", {"command": "pip install flaky"}, success=False)
    good = g.decide("bash", {"command": "make build"})
    # a medium-risk call: a low-risk one's failures never pull it below its prior (issue 14)
    bad = g.decide("bash", {"command": "pip install flaky"})
    assert good.components["memory"] > 55 > bad.components["memory"]
    assert _memory(good)["matched"] == 4


def test_lancedb_memory_is_seen_by_a_fresh_guard(workspace) -> None:  # type: ignore[no-untyped-def]
    config = {"system.health": 90, "memory.backend": "lancedb", "memory.tidy": False}
    first = Guard(workspace, config)
    assert first.state.memory.name == "lancedb"
    for _ in range(5):
        first.record_result("bash", {"command": "make build"}, success=True)
    first.close()
    second = Guard(workspace, config)
    assert second.state.memory.wait_ready(120)
    rec = second.decide("bash", {"command": "make build"})
    mem = _memory(rec)
    assert mem["matched"] >= 1 and "memory" not in rec.unavailable
    assert rec.components["memory"] > 55
    unseen = _memory(second.decide("bash", {"command": "terraform plan"}))
    assert unseen["value"] == 40.0
    second.close()
