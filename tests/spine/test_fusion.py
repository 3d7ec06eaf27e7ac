"""The fused scorer: the seed's formulas exactly in seed mode, and guard's documented improvements."""

from __future__ import annotations

from datetime import timedelta

import pytest
from freezegun import freeze_time

from guard import MultiSourceFusionEngine
from guard.layers.base import Context
from guard.layers.fusion import Component, Evaluators, FusionLayer
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM, Risk, Verdict


class SeedExample(MultiSourceFusionEngine):
    """The spec's worked example: memory 75, cmd_success 80, user_pref 70, system 65."""

    def _evaluate_memory_relevance(self, tool_name, params, session_id):  # type: ignore[no-untyped-def]
        return 75

    def _evaluate_command_success(self, tool_name, params, session_id):  # type: ignore[no-untyped-def]
        return 80

    def _evaluate_user_preference(self, tool_name, params, session_id):  # type: ignore[no-untyped-def]
        return 70

    def _evaluate_system_health(self, tool_name, params, session_id):  # type: ignore[no-untyped-def]
        return 65


@pytest.mark.parametrize("mode", ["seed", "guard"])
def test_seed_worked_example_scores_73_75_and_asks(workspace, mode) -> None:  # type: ignore[no-untyped-def]
    """The seed prints 73.5, but its own formula gives 73.75: the formula wins."""
    engine = SeedExample(workspace, {"fusion.mode": mode})
    score = engine.fuse_decision_context("bash", {"command": "rm /tmp/test.txt"}, "session_123")
    assert score.final_score == pytest.approx(73.75)
    assert score.decision == REQUEST_CONFIRM
    assert score.reasoning["memory"]["score"] == 75
    engine.close()


def test_engine_weights_and_thresholds_are_assignable(workspace) -> None:  # type: ignore[no-untyped-def]
    engine = SeedExample(workspace)
    engine.weights["memory"] = 0.40  # 75*.4 + 80*.3 + 70*.25 + 65*.15 = 81.25
    score = engine.fuse_decision_context("bash", {"command": "rm /tmp/test.txt"})
    assert score.final_score == pytest.approx(81.25)
    assert score.decision == AUTO_ALLOW
    engine.thresholds = {"auto_allow": 85, "request_confirm": 50, "block": 0}
    assert engine.fuse_decision_context("bash", {"command": "rm /tmp/test.txt"}).decision == REQUEST_CONFIRM
    engine.close()


def test_subclass_can_call_super_and_scale(workspace) -> None:  # type: ignore[no-untyped-def]
    class Finance(MultiSourceFusionEngine):
        def _evaluate_memory_relevance(self, tool_name, params, session_id):  # type: ignore[no-untyped-def]
            score = super()._evaluate_memory_relevance(tool_name, params, session_id)
            return min(100, score * 1.2) if "money" in str(params) else score

    engine = Finance(workspace, {"fusion.mode": "seed", "system.health": 90})
    plain = engine.fuse_decision_context("bash", {"command": "frobnicate"})
    money = engine.fuse_decision_context("bash", {"command": "frobnicate money"})
    assert plain.components["memory"] == pytest.approx(40.0)
    assert money.components["memory"] == pytest.approx(48.0)
    engine.close()


def test_save_decision_appends_the_seed_log_line(workspace) -> None:  # type: ignore[no-untyped-def]
    import json

    engine = SeedExample(workspace)
    score = engine.fuse_decision_context("bash", {"command": "rm /tmp/test.txt"}, "session_123")
    engine.save_decision("bash", score, "session_123")
    engine.close()
    lines = (workspace / ".fusion-decisions.jsonl").read_text().splitlines()
    rec = json.loads(lines[-1])
    assert rec["tool"] == "bash" and rec["session_id"] == "session_123"
    assert rec["fusion_score"] == 73.75 and rec["decision"] == REQUEST_CONFIRM
    assert rec["components"] == {"memory": 75.0, "cmd_success": 80.0, "user_pref": 70.0, "system": 65.0}


def _results(g, tool, outcomes, command="frobnicate"):  # type: ignore[no-untyped-def]
    for ok in outcomes:
        g.record_result(tool, {"command": command}, success=ok)


def test_seed_mode_uses_raw_success_rate(make_guard) -> None:  # type: ignore[no-untyped-def]
    g = make_guard(config={"fusion.mode": "seed"})
    _results(g, "bash", [True])
    rec = g.decide("bash", {"command": "frobnicate"})
    assert rec.components["cmd_success"] == 100.0  # the seed's 1/1 = 100


def test_guard_mode_shrinks_one_success_towards_the_prior(make_guard) -> None:  # type: ignore[no-untyped-def]
    g = make_guard()
    _results(g, "bash", [True])
    rec = g.decide("bash", {"command": "frobnicate"})
    # medium prior 55, m=4: (1*100 + 4*55)/5 = 64
    assert rec.components["cmd_success"] == pytest.approx(64.0)


def test_guard_mode_many_failures_pull_success_down(make_guard) -> None:  # type: ignore[no-untyped-def]
    g = make_guard()
    _results(g, "bash", [False] * 20)
    assert g.decide("bash", {"command": "frobnicate"}).components["cmd_success"] < 15


def test_seed_user_pref_formula(make_guard) -> None:  # type: ignore[no-untyped-def]
    g = make_guard(config={"fusion.mode": "seed"})
    for approved, sat in [(True, 5), (True, 4), (False, 1), (True, None)]:
        g.record_interaction("write", {"file_path": "a"}, approved=approved, satisfaction=sat)
    rec = g.decide("write", {"file_path": "a"})
    # approval 75% * 0.6 + mean satisfaction (5+4+1)/3*20 = 66.67 * 0.4
    assert rec.components["user_pref"] == pytest.approx(75 * 0.6 + (10 / 3 * 20) * 0.4, abs=0.01)


def test_no_history_is_neutral_not_bad_in_seed_mode(make_guard) -> None:  # type: ignore[no-untyped-def]
    g = make_guard(config={"fusion.mode": "seed"})
    rec = g.decide("bash", {"command": "frobnicate"})
    assert rec.components == {"memory": 40.0, "cmd_success": 50.0, "user_pref": 50.0, "system": 90.0}
    assert rec.final_score == pytest.approx(40 * 0.3 + 50 * 0.3 + 50 * 0.25 + 90 * 0.15)


def test_cold_start_read_only_is_allowed_and_ordinary_command_asks(make_guard) -> None:  # type: ignore[no-untyped-def]
    g = make_guard()
    assert g.decide("bash", {"command": "ls"}).decision == AUTO_ALLOW
    assert g.decide("bash", {"command": "frobnicate --all"}).decision == REQUEST_CONFIRM


def test_time_decay_lets_recent_failures_dominate(make_guard) -> None:  # type: ignore[no-untyped-def]
    with freeze_time("2026-01-01 12:00:00") as clock:
        g = make_guard()
        _results(g, "bash", [True] * 40)
        clock.tick(timedelta(days=14))
        _results(g, "bash", [False] * 3)
        decayed = g.decide("bash", {"command": "frobnicate"}).layer("fusion")
    raw = decayed.data["dimensions"]["cmd_success"]["value"]
    assert raw < 85  # raw rate is 40/43 = 93%, but two half-lives make the failures count more


def test_low_session_health_applies_seed_weight_change(workspace) -> None:  # type: ignore[no-untyped-def]
    from guard import Guard
    from guard.layers.fusion import FusionLayer

    class Sick:
        name = "behavior"

        def __call__(self, call, ctx):  # type: ignore[no-untyped-def]
            return Verdict("behavior", data={"health": 30.0})

    g = Guard(workspace, {"system.health": 90, "fusion.mode": "seed"})
    g.chain = type(g.chain)([Sick(), FusionLayer(g.config)])
    rec = g.decide("bash", {"command": "frobnicate"})
    assert rec.weights["user_pref"] == 0.10 and rec.weights["memory"] == 0.20
    # not renormalised: 40*.2 + 50*.3 + 50*.1 + 90*.15 = 41.5
    assert rec.final_score == pytest.approx(41.5)
    assert any(r.rule_id == "G301" for r in rec.reasons)
    g.close()


def test_health_at_40_keeps_normal_weights(workspace) -> None:  # type: ignore[no-untyped-def]
    from guard import Guard

    class Borderline:
        name = "behavior"

        def __call__(self, call, ctx):  # type: ignore[no-untyped-def]
            return Verdict("behavior", data={"health": 40.0})

    g = Guard(workspace, {"system.health": 90})
    g.chain = type(g.chain)([Borderline(), FusionLayer(g.config)])
    assert g.decide("bash", {"command": "frobnicate"}).weights["user_pref"] == 0.25
    g.close()


def test_system_pressure_alone_never_blocks(make_guard) -> None:  # type: ignore[no-untyped-def]
    g = make_guard(config={"system.health": 0})
    rec = g.decide("bash", {"command": "frobnicate"})
    assert rec.final_score < 50
    assert rec.decision == REQUEST_CONFIRM
    assert any(r.rule_id == "G303" for r in rec.reasons)


def test_system_pressure_does_not_touch_safe_reads(make_guard) -> None:  # type: ignore[no-untyped-def]
    busy = make_guard(config={"system.health": 5}).decide("bash", {"command": "ls"})
    assert busy.decision == AUTO_ALLOW


def test_low_risk_calls_do_not_measure_the_machine(workspace) -> None:  # type: ignore[no-untyped-def]
    """A per-call hook process deciding ``ls`` must not pay for importing psutil; ``frobnicate`` does."""
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import sys\n"
        "from guard import Guard\n"
        f"g = Guard({str(workspace)!r}, {{'memory.backend': 'history'}})\n"
        "low = g.decide('bash', {'command': sys.argv[1]})\n"
        "print(low.layer('fusion').data['dimensions']['system']['note'], '|', 'psutil' in sys.modules)\n"
    )
    env = {"PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = [
        subprocess.run([sys.executable, "-c", code, c], capture_output=True, text=True, env=env, timeout=120).stdout
        for c in ("ls -la", "frobnicate --all")
    ]
    assert out[0].strip() == "system: not weighed for low-risk calls | False"
    assert out[1].strip().endswith("| True") and "not weighed" not in out[1]


def test_seed_mode_system_pressure_can_block(make_guard) -> None:  # type: ignore[no-untyped-def]
    g = make_guard(config={"system.health": 0, "fusion.mode": "seed"})
    assert g.decide("bash", {"command": "frobnicate"}).decision == BLOCK


def test_pinned_system_health_from_environment(workspace, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from guard import Guard

    monkeypatch.setenv("GUARD_SYSTEM_HEALTH", "42")
    g = Guard(workspace, {"fusion.mode": "seed"})
    assert g.decide("bash", {"command": "frobnicate"}).components["system"] == 42.0
    g.close()


def test_broken_evaluator_degrades_to_neutral_and_is_named(workspace) -> None:  # type: ignore[no-untyped-def]
    from guard import Guard

    class Broken(Evaluators):
        def memory(self, call, ctx):  # type: ignore[no-untyped-def]
            raise OSError("disk gone")

    g = Guard(workspace, {"system.health": 90}, evaluators=Broken(Guard(workspace).config))
    rec = g.decide("bash", {"command": "frobnicate"})
    assert "memory" in rec.unavailable
    assert rec.decision != AUTO_ALLOW
    g.close()


def test_fusion_layer_runs_without_state() -> None:
    from datetime import datetime

    from guard.config import Config
    from guard.model import ToolCall

    layer = FusionLayer(Config.load(None, env={}))
    ctx = Context(config=layer.config, now=datetime.now(), verdicts=[Verdict("static", Risk.SAFE)])
    v = layer(ToolCall("bash", {"command": "ls"}), ctx)
    assert v.score is not None and set(v.data["components"]) == {"memory", "cmd_success", "user_pref", "system"}
    assert isinstance(Component(1.0).value, float)
