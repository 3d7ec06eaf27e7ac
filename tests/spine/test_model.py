"""Records: frozen, validated, serialised in the seed's decision-log shape."""

from __future__ import annotations

import attrs
import pytest

from guard.model import (
    AUTO_ALLOW,
    BLOCK,
    REQUEST_CONFIRM,
    DecisionRecord,
    Reason,
    Risk,
    ToolCall,
    Verdict,
    decision_at_most,
    stricter,
)


def test_records_are_frozen() -> None:
    call = ToolCall("bash", {"command": "ls"})
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        call.tool = "write"  # type: ignore[misc]


@pytest.mark.parametrize("score", [-0.01, 100.01])
def test_score_outside_0_100_is_rejected(score: float) -> None:
    with pytest.raises(ValueError, match=r"0\.\.100"):
        Verdict("fusion", score=score)


@pytest.mark.parametrize("score", [0.0, 100.0, 73.75])
def test_score_on_the_edges_is_accepted(score: float) -> None:
    assert Verdict("fusion", score=score).score == score


def test_unknown_decision_is_rejected() -> None:
    with pytest.raises(ValueError, match="decision"):
        Verdict("x", decision="maybe")


def test_risk_is_ordered_and_parses_labels() -> None:
    assert Risk.CRITICAL > Risk.HIGH > Risk.MEDIUM > Risk.LOW > Risk.SAFE
    assert Risk.parse("High") is Risk.HIGH
    with pytest.raises(ValueError, match="unknown risk"):
        Risk.parse("extreme")


def test_stricter_and_ceiling() -> None:
    assert stricter(AUTO_ALLOW, BLOCK) == BLOCK
    assert stricter(REQUEST_CONFIRM, AUTO_ALLOW) == REQUEST_CONFIRM
    assert decision_at_most(AUTO_ALLOW, REQUEST_CONFIRM) == REQUEST_CONFIRM
    assert decision_at_most(BLOCK, REQUEST_CONFIRM) == BLOCK


def test_tool_kind_folds_host_names() -> None:
    assert ToolCall("Bash").kind == "bash"
    assert ToolCall("run_shell_command").kind == "bash"
    assert ToolCall("WebFetch").kind == "web_fetch"
    assert ToolCall("MyTool").kind == "mytool"


def test_decision_record_to_dict_has_the_seed_shape_and_extras() -> None:
    rec = DecisionRecord(
        call=ToolCall("bash", {"command": "ls"}, session_id="s1"),
        decision=REQUEST_CONFIRM,
        final_score=73.75,
        risk=Risk.MEDIUM,
        components={"memory": 75, "cmd_success": 80, "user_pref": 70, "system": 65},
        layers=[Verdict("static", Risk.MEDIUM, reasons=[Reason("G199", "ordinary")])],
        unavailable=["memory"],
    )
    d = rec.to_dict()
    for key in ("timestamp", "tool", "session_id", "fusion_score", "decision", "components"):
        assert key in d
    assert d["fusion_score"] == 73.75
    assert d["components"] == {"memory": 75.0, "cmd_success": 80.0, "user_pref": 70.0, "system": 65.0}
    assert d["risk"] == "medium"
    assert d["layers"][0]["reasons"] == [{"id": "G199", "message": "ordinary"}]
    assert d["unavailable"] == ["memory"]
    assert "G199" in rec.summary()
