"""The seed's analyzer shape: SessionBehaviorAnalyzer().analyze_session(id) and the weight helper."""

from __future__ import annotations

from pathlib import Path

from guard.engine import MultiSourceFusionEngine
from guard.integrations.behavior_analyzer import SessionBehaviorAnalyzer, lower_weights_if_unhealthy

from .conftest import default_guard


def _struggling(workspace: Path, sid: str = "s") -> None:
    with default_guard(workspace) as g:
        for _ in range(6):
            g.decide("bash", {"command": "npm test"}, session_id=sid)
            g.record_result("bash", {"command": "npm test"}, session_id=sid, success=False)


def test_analyze_session_gives_health_and_signals(tmp_path: Path):
    _struggling(tmp_path)
    m = SessionBehaviorAnalyzer(workspace=tmp_path).analyze_session("s")
    assert m.health_score < 40 and "G201" in m.signal_ids  # a failure streak (loops depend on what was let through)
    assert m.breakers[0]["state"] == "open" and m.to_dict()["health_score"] == m.health_score


def test_a_healthy_or_unknown_session(tmp_path: Path):
    with default_guard(tmp_path) as g:
        g.decide("read", {"file_path": "a.py"}, session_id="ok")
    analyzer = SessionBehaviorAnalyzer(workspace=tmp_path)
    ok = analyzer.analyze_session("ok")
    assert ok.health_score == 100.0 and ok.healthy and ok.known
    unknown = analyzer.analyze_session("never")
    assert unknown.health_score == 100.0 and not unknown.known


def test_seed_weight_change_below_40(tmp_path: Path):
    _struggling(tmp_path)
    engine = MultiSourceFusionEngine(tmp_path, {"system.health": 90})
    try:
        metrics = SessionBehaviorAnalyzer(workspace=tmp_path).analyze_session("s")
        before = dict(engine.weights)
        assert lower_weights_if_unhealthy(engine, metrics) is True
        assert engine.weights["user_pref"] == 0.1 and engine.weights["memory"] == 0.2
        assert engine.weights["cmd_success"] == before["cmd_success"]  # not renormalised
        assert engine.guard.config.get("weights.user_pref") == 0.1  # the engine really uses them
    finally:
        engine.close()


def test_no_weight_change_for_a_healthy_session(tmp_path: Path):
    engine = MultiSourceFusionEngine(tmp_path, {"system.health": 90})
    try:
        healthy = SessionBehaviorAnalyzer(workspace=tmp_path).analyze_session("fresh")
        assert lower_weights_if_unhealthy(engine, healthy) is False
        assert engine.weights["user_pref"] == 0.25
        assert lower_weights_if_unhealthy(engine, 39.9) is True
    finally:
        engine.close()
