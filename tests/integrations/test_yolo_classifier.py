"""The seed's ``classify_with_fusion`` shape, on guard's chain."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from guard import MultiSourceFusionEngine
from guard.integrations import yolo_classifier
from guard.integrations.yolo_classifier import classify_with_fusion, yolo_static_classify


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[MultiSourceFusionEngine]:
    # Every call that is neither safe read-only nor critical is confirmed, whichever static classifier runs
    # (safe reads score 90 on a fresh install, the rest at most 80; a set threshold beats the static floor).
    config = {
        "system.health": 90,
        "memory.backend": "history",
        "thresholds.auto_allow": 88,
        "thresholds.request_confirm": 1,
    }
    e = MultiSourceFusionEngine(tmp_path / "ws", config)
    yield e
    e.close()


def test_an_allowed_call_has_the_seeds_three_keys(engine: MultiSourceFusionEngine) -> None:
    assert classify_with_fusion("bash", {"command": "ls"}, "session_123", engine=engine) == {
        "risk": "SAFE",
        "fusion_score": 90.0,
        "decision": "auto_allow",
    }


def test_a_confirmed_call_keeps_its_static_risk(engine: MultiSourceFusionEngine) -> None:
    out = classify_with_fusion("bash", {"command": "npm install left-pad"}, "session_123", engine=engine)
    assert set(out) == {"risk", "fusion_score", "decision"}
    assert out["decision"] == "request_confirm" and out["risk"] in ("LOW", "MEDIUM", "HIGH")
    assert 0 <= out["fusion_score"] <= 100


def test_a_blocked_call_is_critical_with_a_reason(engine: MultiSourceFusionEngine) -> None:
    out = classify_with_fusion("bash", {"command": "rm -rf /"}, "session_123", engine=engine)
    assert out["risk"] == "CRITICAL" and out["decision"] == "block"
    assert set(out) == {"risk", "reason", "fusion_score", "decision"}
    assert "G101" in out["reason"]


def test_a_low_fused_score_blocks_as_critical_even_when_the_static_risk_is_not(tmp_path: Path) -> None:
    """The seed: `if fusion_score.decision == "block": return {"risk": "CRITICAL", ...}`."""
    engine = MultiSourceFusionEngine(
        tmp_path / "ws", {"system.health": 90, "thresholds.request_confirm": 99, "thresholds.auto_allow": 100}
    )
    try:
        out = classify_with_fusion("write", {"file_path": "notes.txt", "content": "x"}, engine=engine)
        assert yolo_static_classify("write", {"file_path": "notes.txt"}, engine=engine) == "LOW"
        assert (out["risk"], out["decision"]) == ("CRITICAL", "block")
    finally:
        engine.close()


def test_classifying_logs_nothing_as_in_the_seed(engine: MultiSourceFusionEngine) -> None:
    classify_with_fusion("bash", {"command": "ls"}, "s", engine=engine)
    assert not (engine.workspace / ".fusion-decisions.jsonl").exists()


def test_static_classification_alone(engine: MultiSourceFusionEngine) -> None:
    assert yolo_static_classify("bash", {"command": "cat README.md"}, engine=engine) == "SAFE"
    assert yolo_static_classify("bash", {"command": "rm -rf ~"}, engine=engine) == "CRITICAL"


def test_the_default_engine_uses_guard_home_and_is_made_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GUARD_HOME", str(tmp_path / "home-ws"))
    monkeypatch.setenv("GUARD_SYSTEM_HEALTH", "90")
    monkeypatch.setattr(yolo_classifier, "_ENGINE", None)
    try:
        out = classify_with_fusion("bash", {"command": "ls"}, "s")
        assert out["decision"] == "auto_allow"
        assert yolo_classifier.default_engine() is yolo_classifier.default_engine()
        assert yolo_classifier.default_engine().workspace == tmp_path / "home-ws"
    finally:
        if yolo_classifier._ENGINE is not None:
            yolo_classifier._ENGINE.close()
        monkeypatch.setattr(yolo_classifier, "_ENGINE", None)
