"""The fused score against worked numbers (docs/fusion.md), computed by hand, never by guard.

Seed formulas: memory = 40 + avg_importance·40 + success_rate·20; cmd_success = successes/runs·100;
user_pref = approval_rate·0.6 + satisfaction·0.4 (satisfaction 1-5 → 20·s); weights 0.30, 0.30,
0.25, 0.15; >= 75 auto_allow, >= 50 request_confirm. guard mode shrinks each level towards its
parent: (n·raw + m·parent) / (n + m), m = 4, and the medium prior is 55.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

from guard import Guard
from guard.config import Config
from guard.layers.base import Context
from guard.layers.fusion import Component, Evaluators, FusionLayer, band
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM, Risk, ToolCall, Verdict

T0 = "2026-03-02 12:00:00"
CALL = {"command": "frobnicate --all"}  # unknown program: medium risk, prior 55


def history(g: Guard) -> None:
    """3 of 4 runs succeeded; 3 of 4 answers approved, satisfaction 4 and 5 given."""
    for ok in (True, True, True, False):
        g.record_result("bash", CALL, success=ok)
    for approved, sat in ((True, 4), (True, 5), (True, None), (False, None)):
        g.record_interaction("bash", CALL, approved=approved, satisfaction=sat)


def test_seed_mode_worked_example(workspace: Path) -> None:
    with freeze_time(T0):
        g = Guard(workspace, {"fusion.mode": "seed", "memory.backend": "history", "system.health": 60})
        history(g)
        rec = g.decide("bash", CALL)
        g.close()
    # memory: importance success medium 0.5, failure medium 0.75 -> avg (3·0.5 + 0.75)/4 = 0.5625
    #         40 + 0.5625·40 + 0.75·20 = 40 + 22.5 + 15 = 77.5
    # cmd_success: 3/4·100 = 75
    # user_pref: rate 75, satisfaction (4+5)/2·20 = 90 -> 75·0.6 + 90·0.4 = 45 + 36 = 81
    assert rec.components == {"memory": 77.5, "cmd_success": 75.0, "user_pref": 81.0, "system": 60.0}
    # 0.30·77.5 + 0.30·75 + 0.25·81 + 0.15·60 = 23.25 + 22.5 + 20.25 + 9 = 75
    assert rec.final_score == pytest.approx(75.0)


def test_guard_mode_worked_example(workspace: Path) -> None:
    with freeze_time(T0):
        g = Guard(workspace, {"memory.backend": "history", "system.health": 60})
        history(g)
        rec = g.decide("bash", CALL)
        g.close()
    # memory: success rate 0.75 -> 75, confidence 4/(4+4) = 0.5 -> 0.5·75 + 0.5·55 = 65
    # cmd_success: family n 4 raw 75 -> (4·75 + 4·55)/8 = 65; inherited min(65, 55) = 55;
    #              operation (4·75 + 4·55)/8 = 65
    # user_pref: raw 81 -> family (4·81 + 4·55)/8 = 68; inherited 55; operation (324 + 220)/8 = 68
    assert rec.components == {"memory": 65.0, "cmd_success": 65.0, "user_pref": 68.0, "system": 60.0}
    # 0.30·65 + 0.30·65 + 0.25·68 + 0.15·60 = 19.5 + 19.5 + 17 + 9 = 65
    assert rec.final_score == pytest.approx(65.0)
    assert rec.decision == REQUEST_CONFIRM
    dims = rec.layer("fusion").data["dimensions"]
    assert dims["cmd_success"]["value"] == 75.0 and dims["cmd_success"]["confidence"] == 0.5
    assert dims["cmd_success"]["levels"]["family"]["shrunk"] == 65.0
    assert dims["cmd_success"]["levels"]["inherited"] == 55.0
    assert dims["user_pref"]["value"] == 81.0


def test_old_history_counts_half_after_a_half_life(workspace: Path) -> None:
    """Tool history halves every 7 days: 4 runs a week old weigh n = 2."""
    with freeze_time(T0) as clock:
        g = Guard(workspace, {"memory.backend": "history", "system.health": 60})
        for ok in (True, True, True, False):
            g.record_result("bash", CALL, success=ok)
        clock.tick(7 * 86_400)
        rec = g.decide("bash", CALL)
        g.close()
    # n 2, raw 75: family (2·75 + 4·55)/6 = 370/6; inherited 55; operation (150 + 220)/6 = 61.67
    assert rec.components["cmd_success"] == 61.67
    assert rec.layer("fusion").data["dimensions"]["cmd_success"]["levels"]["operation"]["n"] == 2.0


class Fixed(Evaluators):
    """User-supplied evaluators (the documented extension point) with fixed dimensions."""

    def __init__(self, config: Config, values: dict[str, Component]) -> None:
        super().__init__(config)
        self.values = values

    def memory(self, call: ToolCall, ctx: Context) -> Component:
        return self.values["memory"]

    def cmd_success(self, call: ToolCall, ctx: Context) -> Component:
        return self.values["cmd_success"]

    def user_pref(self, call: ToolCall, ctx: Context) -> Component:
        return self.values["user_pref"]

    def system(self, call: ToolCall, ctx: Context) -> Component:
        return self.values["system"]


def fuse(values: dict[str, Component], risk: Risk, health: float | None = None, **config: Any) -> Verdict:
    cfg = Config.load(None, env={}, overrides=config)
    layer = FusionLayer(cfg, Fixed(cfg, values))
    verdicts = [Verdict("static", risk)]
    if health is not None:
        verdicts.append(Verdict("behavior", data={"health": health}))
    ctx = Context(config=cfg, now=datetime(2026, 3, 2, 12), verdicts=verdicts)
    return layer(ToolCall("bash", CALL), ctx)


def same(v: float) -> dict[str, Component]:
    return {k: Component(v) for k in ("memory", "cmd_success", "user_pref", "system")}


def test_unhealthy_session_lowers_two_weights_without_renormalising() -> None:
    healthy = fuse(same(80.0), Risk.MEDIUM, health=40.0, **{"fusion.mode": "seed"})
    assert healthy.score == pytest.approx(80.0)
    sick = fuse(same(80.0), Risk.MEDIUM, health=39.0, **{"fusion.mode": "seed"})
    # 0.20·80 + 0.30·80 + 0.10·80 + 0.15·80 = 16 + 24 + 8 + 12 = 60
    assert sick.score == pytest.approx(60.0)
    assert sick.data["weights"] == {"memory": 0.2, "cmd_success": 0.3, "user_pref": 0.1, "system": 0.15}
    assert [r.rule_id for r in sick.reasons] == ["G301"]


def test_each_weight_is_its_own() -> None:
    """memory 100, the rest 0: the score is the memory weight; likewise for each dimension."""
    for key, weight in (("memory", 30.0), ("cmd_success", 30.0), ("user_pref", 25.0), ("system", 15.0)):
        values = same(0.0) | {key: Component(100.0)}
        assert fuse(values, Risk.MEDIUM, **{"fusion.mode": "seed"}).score == pytest.approx(weight)


def test_guard_mode_shrinks_a_dimension_by_its_confidence() -> None:
    # medium prior 55; memory 100 at confidence 0.25: 0.25·100 + 0.75·55 = 66.25; the rest at the prior
    values = same(55.0) | {"memory": Component(100.0, 0.25, matched=1)}
    v = fuse(values, Risk.MEDIUM)
    assert v.data["components"]["memory"] == 66.25
    # 0.30·66.25 + 0.70·55 = 19.875 + 38.5 = 58.375
    assert v.score == pytest.approx(58.375)


def test_low_risk_failures_do_not_fall_below_the_prior() -> None:
    # low prior 80: cmd_success 0 measured -> floored at 80; user_pref 0 is not an outcome -> 0
    values = same(80.0) | {"cmd_success": Component(0.0, matched=3), "user_pref": Component(0.0)}
    v = fuse(values, Risk.LOW)
    assert v.data["components"] == {"memory": 80.0, "cmd_success": 80.0, "user_pref": 0.0, "system": 80.0}
    # 0.30·80 + 0.30·80 + 0 + 0.15·80 = 24 + 24 + 12 = 60
    assert v.score == pytest.approx(60.0)


def test_failures_alone_ask_instead_of_blocking() -> None:
    # medium prior 55: memory and cmd_success 0, user_pref and system at the prior
    values = same(55.0) | {"memory": Component(0.0), "cmd_success": Component(0.0)}
    v = fuse(values, Risk.MEDIUM)
    # 0.25·55 + 0.15·55 = 22 -> block by the band, softened (G304)
    assert v.score == pytest.approx(22.0)
    assert v.decision == REQUEST_CONFIRM
    assert [r.rule_id for r in v.reasons] == ["G304"]
    refused = fuse(same(55.0) | {"user_pref": Component(0.0)}, Risk.MEDIUM)
    # 0.75·55 = 41.25: the person's refusals still block
    assert refused.score == pytest.approx(41.25)
    assert refused.decision == BLOCK


def test_score_is_clipped_to_0_100() -> None:
    assert fuse(same(150.0), Risk.MEDIUM, **{"fusion.mode": "seed"}).score == 100.0
    assert fuse(same(-20.0), Risk.MEDIUM, **{"fusion.mode": "seed"}).score == 0.0


def test_bands_include_their_threshold() -> None:
    t = {"auto_allow": 75.0, "request_confirm": 50.0}
    assert [band(s, t) for s in (75.0, 74.99, 50.0, 49.99)] == [AUTO_ALLOW, REQUEST_CONFIRM, REQUEST_CONFIRM, BLOCK]


def test_seed_notes_name_the_counts(workspace: Path) -> None:
    with freeze_time(T0):
        g = Guard(workspace, {"fusion.mode": "seed", "memory.backend": "history", "system.health": 60})
        history(g)
        dims = g.decide("bash", CALL).layer("fusion").data["dimensions"]
        g.close()
    assert (dims["cmd_success"]["note"], dims["cmd_success"]["matched"]) == ("3/4 runs succeeded", 4)
    assert (dims["user_pref"]["note"], dims["user_pref"]["matched"]) == ("3/4 approved", 4)
    assert dims["memory"]["matched"] == 4


def test_neighbours_refusals_transfer_to_the_operation(workspace: Path) -> None:
    """guard mode: ``frobnicate --dry`` refused 4 times pulls ``frobnicate --all`` (approved once) down."""
    with freeze_time(T0):
        g = Guard(workspace, {"memory.backend": "history", "system.health": 60})
        for _ in range(4):
            g.record_interaction("bash", {"command": "frobnicate --dry"}, approved=False)
        g.record_interaction("bash", CALL, approved=True)
        rec = g.decide("bash", CALL)
        g.close()
    # family: 5 answers, 1 approved -> raw 20·0.6 + 20·0.4 = 20; (5·20 + 4·55)/9 = 320/9 = 35.56
    # inherited min(35.56, 55) = 35.56; operation raw 100: (1·100 + 4·320/9)/5 = 48.44
    levels = rec.layer("fusion").data["dimensions"]["user_pref"]["levels"]
    assert levels["family"]["shrunk"] == 35.56 and levels["inherited"] == 35.56
    assert rec.components["user_pref"] == 48.44


class Neighbours:
    """A memory provider (the MemoryProvider protocol) whose similar calls all went one way."""

    name = "neighbours"

    def __init__(self, rate: float) -> None:
        self.rate = rate

    def relevance(self, call: ToolCall, signature: str, risk: Risk, now: datetime) -> Any:
        from guard.memory.base import MemoryResult

        return MemoryResult(score=70.0, matched=2, confidence=0.5, success_rate=self.rate, avg_importance=0.5)

    def remember(self, event: Any) -> None:
        return None

    def flush(self) -> None:
        return None

    def close(self) -> None:
        return None


@pytest.mark.parametrize(
    ("rate", "own_runs", "expected"),
    [
        (1.0, 0, 55.0),  # 0.5·100 + 0.5·55 = 77.5 > 55, but not this operation: capped at the prior
        (0.0, 0, 27.5),  # 0.5·0 + 0.5·55 = 27.5: neighbours may pull it down
        (1.0, 1, 77.5),  # the operation has run: the neighbours' 77.5 stands
    ],
)
def test_similar_memories_never_lift_a_new_operation(
    workspace: Path, rate: float, own_runs: int, expected: float
) -> None:
    with freeze_time(T0):
        g = Guard(workspace, {"memory.backend": "history", "system.health": 60})
        g.state.memory = Neighbours(rate)
        for _ in range(own_runs):
            g.record_result("bash", CALL, success=True)
        rec = g.decide("bash", CALL)
        g.close()
    assert rec.components["memory"] == expected
    assert rec.layer("fusion").data["dimensions"]["memory"]["value"] == 100.0 * rate
    capped = "not this operation: not above the prior" in rec.layer("fusion").data["dimensions"]["memory"]["note"]
    assert capped is (expected == 55.0)


def test_memory_off_is_40_in_seed_mode_and_unavailable(workspace: Path) -> None:
    with freeze_time(T0):
        g = Guard(workspace, {"fusion.mode": "seed", "memory.backend": "off", "system.health": 60})
        rec = g.decide("bash", CALL)
        g.close()
    assert rec.components["memory"] == 40.0
    assert "memory" in rec.unavailable


def test_history_that_asked_names_the_dimension() -> None:
    # safe prior 90; user_pref 20 (not an outcome, not floored): 0.75·90 + 0.25·20 = 72.5
    values = same(90.0) | {"user_pref": Component(20.0, note="refused before")}
    v = fuse(values, Risk.SAFE)
    assert v.score == pytest.approx(72.5) and v.decision == REQUEST_CONFIRM
    # every dimension at the prior would give 90: history asked, and user_pref pulled it down most
    assert [(r.rule_id, r.message) for r in v.reasons] == [
        ("G302", "fused score 72.5 is below 75 (user_pref: refused before)")
    ]
    # near-miss: medium prior 55, user_pref 40 -> 55 - 0.25·15 = 51.25; at the prior 55 still asks
    plain = fuse(same(55.0) | {"user_pref": Component(40.0)}, Risk.MEDIUM)
    assert plain.score == pytest.approx(51.25) and plain.decision == REQUEST_CONFIRM
    assert list(plain.reasons) == []
