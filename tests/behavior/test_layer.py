"""The verdict's shape and the tier limits besides lines per write."""

from __future__ import annotations

from freezegun import freeze_time

from guard.behavior.settings import BehaviorSettings
from guard.config import Config
from guard.layers.base import Context
from guard.layers.behavior import BehaviorLayer
from guard.model import AUTO_ALLOW, REQUEST_CONFIRM, Risk, ToolCall

from .conftest import behavior, ids

T0 = "2026-03-02 10:00:00"


def test_without_a_tracker_the_layer_is_neutral():
    layer = BehaviorLayer(Config.load(None, env={}))
    v = layer(ToolCall("bash", {"command": "ls"}), Context(config=Config.load(None, env={}), now=None, state=None))
    assert v.decision is None and v.ceiling is None and v.data["health"] == 100.0


def test_record_shows_every_effect(make_guard):
    with freeze_time(T0):
        g = make_guard({})
        for _ in range(6):
            g.record_result("bash", {"command": "npm test"}, session_id="s", success=False)
        r = g.decide("bash", {"command": "npm test"}, session_id="s")
        d = behavior(r).data
        assert set(d) >= {"health", "signals", "tier", "breaker", "penalties"}
        assert d["breaker"]["state"] == "open" and d["tier"]["name"] == "Seed"
        line = r.to_dict()
        assert line["layers"][1]["data"]["signals"] == d["signals"]


def test_low_health_changes_the_fusion_weights(make_guard):
    with freeze_time(T0) as clock:
        g = make_guard({})
        for i in range(6):
            g.decide("bash", {"command": f"step {i}"}, session_id="s")
            g.record_result("bash", {"command": f"step {i}"}, session_id="s", success=False)
            clock.tick(5)
        for _ in range(3):
            g.record_interaction("bash", {"command": "x"}, session_id="s", approved=False)
        r = g.decide("bash", {"command": "make"}, session_id="s")
        assert behavior(r).data["health"] < 40
        fusion = r.layer("fusion")
        assert fusion.data["weights"]["user_pref"] == 0.1 and fusion.data["weights"]["memory"] == 0.2
        assert "G301" in [x.rule_id for x in fusion.reasons]


def test_files_per_task_beyond_the_tier_ask(make_guard):
    with freeze_time(T0) as clock:
        g = make_guard({"write": (Risk.LOW, {"write"})})
        for i in range(3):
            r = g.decide("write", {"file_path": f"f{i}.py", "content": "x"}, session_id="s")
            assert r.decision == AUTO_ALLOW and "G241" not in ids(r)
            clock.tick(30)
        r = g.decide("write", {"file_path": "f3.py", "content": "x"}, session_id="s")
        assert r.decision == REQUEST_CONFIRM and "G241" in ids(r)
        again = g.decide("write", {"file_path": "f0.py", "content": "y"}, session_id="s")
        assert "G241" not in ids(again)  # a file already written is not a new one


def test_risky_paths_need_sapling(make_guard):
    with freeze_time(T0):
        g = make_guard({"edit": (Risk.LOW, {"write", "protected_path"})})
        r = g.decide("edit", {"file_path": ".github/workflows/ci.yml", "new_string": "x"}, session_id="s")
        assert r.decision == REQUEST_CONFIRM and "G242" in ids(r)
        from guard.behavior.tiers import Scorecard

        g.state.sessions.tiers.cards["default"] = Scorecard("default", points=200)
        assert "G242" not in ids(g.decide("edit", {"file_path": ".github/x.yml", "new_string": "x"}, session_id="s"))


def test_tiers_can_be_switched_off(make_guard):
    with freeze_time(T0):
        g = make_guard({"write": (Risk.LOW, {"write"})}, **{"behavior.tiers": False})
        r = g.decide("write", {"file_path": "big.py", "content": "x\n" * 1000}, session_id="s")
        assert "G240" not in ids(r) and behavior(r).data["tier"] is None


def test_settings_come_from_the_configuration():
    s = BehaviorSettings.from_config(Config.load(None, env={"GUARD_BEHAVIOR_BREAKER_FAILURES": "3"}))
    assert s.breaker_failures == 3 and s.breaker_base_s == 300.0 and s.ttl_s == 86_400.0
