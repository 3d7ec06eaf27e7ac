"""Precise learning (issue 15): the person's settings win; every record carries real components.

Everything goes through the public API (``Guard.decide``, the seed's engine) or the CLI in a
subprocess with a fake HOME. Dangerous commands are data handed to guard, never run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from guard.engine import MultiSourceFusionEngine
from guard.model import AUTO_ALLOW, BLOCK, COMPONENT_KEYS, REQUEST_CONFIRM

READ = {"command": "cat README.md"}


def _toml(workspace: Path, text: str) -> Path:
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "guard.toml").write_text(text)
    return workspace


# -- deliverable 5: the person's settings win ---------------------------------------------------


def test_default_floor_still_lets_a_fresh_read_run(make_guard: Any) -> None:
    rec = make_guard().decide("bash", READ)
    assert rec.decision == AUTO_ALLOW


@pytest.mark.parametrize("threshold", [95, 99, 101])
def test_auto_allow_threshold_in_the_file_is_honoured_for_safe_reads(
    make_guard: Any, workspace: Path, threshold: int
) -> None:
    _toml(workspace, f"[thresholds]\nauto_allow = {threshold}\n")
    rec = make_guard().decide("bash", READ)
    assert rec.final_score < threshold
    assert rec.decision == REQUEST_CONFIRM
    assert any("G305" in n and "not applied" in n for n in rec.notes)


def test_threshold_from_the_environment_is_honoured(make_guard: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GUARD_THRESHOLDS_AUTO_ALLOW", "99")
    rec = make_guard().decide("bash", READ)
    assert rec.decision == REQUEST_CONFIRM and rec.final_score < 99


def test_a_low_threshold_the_person_set_still_allows_on_score(make_guard: Any, workspace: Path) -> None:
    _toml(workspace, "[thresholds]\nauto_allow = 60\n")
    assert make_guard().decide("bash", READ).decision == AUTO_ALLOW  # 90 >= 60: the score itself allows


def test_seed_engine_thresholds_are_honoured(workspace: Path) -> None:
    engine = MultiSourceFusionEngine(workspace, {"fusion.mode": "seed", "system.health": 90})
    try:
        before = engine.fuse_decision_context("bash", READ)
        assert before.decision == AUTO_ALLOW  # the seed scores a fresh read ~60; the floor lifts it
        assert any("G305 static floor (fusion.static_floor)" in n for n in before.record.notes)
        engine.thresholds = {"auto_allow": 95, "request_confirm": 50, "block": 0}
        after = engine.fuse_decision_context("bash", READ)
        assert after.final_score < 95 and after.decision == REQUEST_CONFIRM
    finally:
        engine.close()


def test_static_floor_is_a_named_setting(make_guard: Any) -> None:
    g = make_guard(config={"fusion.mode": "seed"})
    lifted = g.decide("bash", READ)
    assert lifted.decision == AUTO_ALLOW and lifted.final_score < 75
    assert any(n.startswith("G305 static floor (fusion.static_floor)") for n in lifted.notes)
    off = make_guard(config={"fusion.mode": "seed", "fusion.static_floor": False}).decide("bash", READ)
    assert off.decision == REQUEST_CONFIRM and not any("G305" in n for n in off.notes)


def test_weights_not_summing_to_one_are_rejected_naming_the_key(make_guard: Any, workspace: Path) -> None:
    _toml(workspace, "[weights]\nmemory = 0.40\n")  # the README's own example: sums to 1.10
    g = make_guard()
    assert g.config.weights == {"memory": 0.30, "cmd_success": 0.30, "user_pref": 0.25, "system": 0.15}
    assert any("weights.memory" in w and "1.100" in w for w in g.config.warnings)


def test_weights_summing_to_one_within_tolerance_are_kept(make_guard: Any, workspace: Path) -> None:
    _toml(workspace, "[weights]\nmemory = 0.40\nsystem = 0.0505\n")  # 1.0005
    assert make_guard().config.get("weights.memory") == 0.40


def test_thresholds_out_of_order_from_code_are_rejected(make_guard: Any) -> None:
    g = make_guard(config={"thresholds.auto_allow": 40, "thresholds.request_confirm": 60})
    assert g.config.thresholds["auto_allow"] == 75.0 and g.config.thresholds["request_confirm"] == 50.0
    assert any("thresholds.request_confirm" in w for w in g.config.warnings)


def test_low_health_weights_are_not_rejected(make_guard: Any) -> None:
    # the seed's dynamic weights do not sum to 1 on purpose
    g = make_guard(config={"fusion.low_health_user_pref": 0.1, "fusion.low_health_memory": 0.2})
    assert not any("weights sum" in w for w in g.config.warnings)


# -- deliverable 7: every record carries real components --------------------------------------


def test_a_static_block_carries_the_fused_components(make_guard: Any, workspace: Path) -> None:
    g = make_guard()
    rec = g.decide("bash", {"command": "rm -rf /"})
    assert rec.decision == BLOCK
    fusion = rec.layer("fusion")
    assert fusion is not None and fusion.data.get("after_block") is True
    assert fusion.decision is None and not fusion.reasons  # scored, not judged
    # critical prior is 0 and nothing is known: every dimension is the prior, except memory's
    # unconfident default and the pinned system health (90, weighed for critical calls)
    assert rec.components["system"] == 90.0
    assert rec.final_score == pytest.approx(sum(rec.weights[k] * rec.components[k] for k in COMPONENT_KEYS), abs=0.01)
    assert rec.final_score > 0
    g.flush()
    line = json.loads((workspace / ".fusion-decisions.jsonl").read_text().splitlines()[-1])
    assert line["decision"] == BLOCK and line["components"]["system"] == 90.0
    assert line["fusion_score"] == round(rec.final_score, 2)
