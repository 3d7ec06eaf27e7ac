"""guard mode's evidence notes (cmd_success, user_pref) are written from the levels when the
record is read: they must say what the counts and the inherited value say at that call, and a
changed count must change them (nothing is answered from an earlier call's note)."""

from __future__ import annotations

from pathlib import Path

from freezegun import freeze_time

from guard import Guard

T0 = "2026-03-02 12:00:00"
OP = {"command": "frobnicate --all"}  # unknown program: medium risk, prior 55
SIBLING = {"command": "frobnicate --other"}


def notes(g: Guard) -> tuple[str, str, dict[str, object]]:
    dims = g.decide("bash", OP).layer("fusion").data["dimensions"]
    return dims["cmd_success"]["note"], dims["user_pref"]["note"], dims["cmd_success"]["levels"]


def test_notes_follow_the_counts_and_the_inherited_value(workspace: Path) -> None:
    with freeze_time(T0):
        g = Guard(workspace, {"memory.backend": "history", "system.health": 60})
        g.record_result("bash", OP, success=True)
        for _ in range(3):
            g.record_result("bash", SIBLING, success=False)
        g.record_interaction("bash", OP, approved=True)
        cmd, user, levels = notes(g)
        # the family: 1 of 4 runs succeeded, shrunk towards 55 -> (4·25 + 4·55)/8 = 40 < 55: inherited
        assert cmd == "operation: 1/1 runs succeeded; family 'frobnicate': 1/4 runs succeeded; inherits 40.0 < prior 55"
        assert levels["family"] == {"name": "frobnicate", "n": 4.0, "raw": 25.0, "shrunk": 40.0, "of": 4}
        assert user == "operation: 1/1 approved; family 'frobnicate': 1/1 approved"
        # the same counts: the same notes (near miss)
        assert notes(g)[:2] == (cmd, user)
        # one more count each: both notes change (family runs (5·40 + 4·55)/9, answers (2·50 + 4·55)/6)
        g.record_result("bash", OP, success=True)
        g.record_interaction("bash", SIBLING, approved=False)
        cmd2, user2, _ = notes(g)
        g.close()
    assert cmd2 == "operation: 2/2 runs succeeded; family 'frobnicate': 2/5 runs succeeded; inherits 46.7 < prior 55"
    assert user2 == "operation: 1/1 approved; family 'frobnicate': 1/2 approved; inherits 53.3 < prior 55"
