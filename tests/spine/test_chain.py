"""The chain: declared order, short-circuit on block, combine rule, failures degrade to caution."""

from __future__ import annotations

from guard import Guard
from guard.chain import DEFAULT_ORDER, Chain
from guard.layers.fusion import FusionLayer
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM, Reason, Risk, Verdict


class Fixed:
    def __init__(self, name, **verdict):  # type: ignore[no-untyped-def]
        self.name = name
        self.verdict = verdict
        self.calls = 0

    def __call__(self, call, ctx):  # type: ignore[no-untyped-def]
        self.calls += 1
        return Verdict(self.name, **self.verdict)


class Boom:
    name = "boom"

    def __call__(self, call, ctx):  # type: ignore[no-untyped-def]
        raise RuntimeError("kaput")


def _guard(workspace, layers):  # type: ignore[no-untyped-def]
    return Guard(workspace, {"system.health": 90, "memory.backend": "history"}, layers=layers)


def test_default_order_is_static_behavior_fusion(make_guard) -> None:  # type: ignore[no-untyped-def]
    g = make_guard()
    assert g.chain.names == DEFAULT_ORDER == ("static", "behavior", "fusion")
    rec = g.decide("bash", {"command": "ls"})
    assert [v.layer for v in rec.layers] == ["static", "behavior", "fusion"]
    assert all(v.elapsed_us >= 0 for v in rec.layers)


def test_block_short_circuits_later_layers(workspace) -> None:  # type: ignore[no-untyped-def]
    later = Fixed("later", score=99.0, decision=AUTO_ALLOW)
    g = _guard(workspace, [Fixed("first", risk=Risk.CRITICAL, decision=BLOCK), later])
    rec = g.decide("bash", {"command": "x"})
    assert rec.decision == BLOCK and later.calls == 0
    assert [v.layer for v in rec.layers] == ["first"]
    g.close()


def test_high_risk_is_never_auto_allowed(workspace) -> None:  # type: ignore[no-untyped-def]
    g = _guard(
        workspace,
        [Fixed("static", risk=Risk.HIGH, ceiling=REQUEST_CONFIRM), Fixed("fusion", score=99.0, decision=AUTO_ALLOW)],
    )
    rec = g.decide("bash", {"command": "x"})
    assert rec.decision == REQUEST_CONFIRM and rec.risk == Risk.HIGH
    assert any("capped" in n for n in rec.notes)
    g.close()


def test_raising_layer_degrades_to_confirm_and_is_named(workspace) -> None:  # type: ignore[no-untyped-def]
    g = _guard(
        workspace,
        [Fixed("static", risk=Risk.SAFE, floor=AUTO_ALLOW), Boom(), Fixed("fusion", score=99.0, decision=AUTO_ALLOW)],
    )
    rec = g.decide("bash", {"command": "ls"})
    assert rec.decision == REQUEST_CONFIRM
    failed = rec.layer("boom")
    assert failed is not None and "kaput" in (failed.error or "")
    assert "boom" in rec.unavailable
    g.close()


def test_raising_layer_after_high_risk_blocks(workspace) -> None:  # type: ignore[no-untyped-def]
    g = _guard(workspace, [Fixed("static", risk=Risk.HIGH, ceiling=REQUEST_CONFIRM), Boom()])
    assert g.decide("bash", {"command": "x"}).decision == BLOCK
    g.close()


def test_safe_floor_needs_no_ceiling(workspace) -> None:  # type: ignore[no-untyped-def]
    floor = Fixed("static", risk=Risk.SAFE, floor=AUTO_ALLOW)
    asks = Fixed("fusion", score=60.0, decision=REQUEST_CONFIRM)
    g = _guard(workspace, [floor, asks])
    assert g.decide("bash", {"command": "ls"}).decision == AUTO_ALLOW
    g.chain = Chain([floor, Fixed("behavior", ceiling=REQUEST_CONFIRM, reasons=[Reason("G203", "denials")]), asks])
    assert g.decide("bash", {"command": "ls"}).decision == REQUEST_CONFIRM
    g.close()


def test_floor_does_not_lift_a_fusion_block(workspace) -> None:  # type: ignore[no-untyped-def]
    g = _guard(
        workspace, [Fixed("static", risk=Risk.SAFE, floor=AUTO_ALLOW), Fixed("fusion", score=20.0, decision=BLOCK)]
    )
    assert g.decide("bash", {"command": "ls"}).decision == BLOCK
    g.close()


def test_no_scoring_layer_means_confirm(workspace) -> None:  # type: ignore[no-untyped-def]
    g = _guard(workspace, [Fixed("static", risk=Risk.LOW)])
    rec = g.decide("bash", {"command": "x"})
    assert rec.decision == REQUEST_CONFIRM
    g.close()


def test_headless_confirm_acts_as_block(workspace) -> None:  # type: ignore[no-untyped-def]
    g = Guard(workspace, {"system.health": 90, "guard.headless": True})
    rec = g.decide("bash", {"command": "frobnicate --all"})
    assert rec.decision == BLOCK
    assert any("no human present" in n for n in rec.notes)
    assert g.decide("bash", {"command": "ls"}).decision == AUTO_ALLOW
    g.close()


def test_custom_layer_added_to_the_defaults(make_guard, workspace) -> None:  # type: ignore[no-untyped-def]
    g = make_guard()
    deny_prod = Fixed("prod", risk=Risk.CRITICAL, decision=BLOCK, reasons=[Reason("X1", "no prod")])
    g2 = Guard(workspace, {"system.health": 90}, layers=[*g.default_layers()[:2], deny_prod, FusionLayer(g.config)])
    rec = g2.decide("bash", {"command": "ls"})
    assert rec.decision == BLOCK and rec.reasons[0].rule_id == "X1"  # the deciding layer speaks first
    g2.close()


def test_explain_is_not_counted_as_a_dispatch(make_guard) -> None:  # type: ignore[no-untyped-def]
    g = make_guard()
    for _ in range(5):
        g.explain("bash", {"command": "frobnicate"}, session_id="s")
    rec = g.decide("bash", {"command": "frobnicate"}, session_id="s")
    assert not any(r.rule_id.startswith("G20") for r in rec.reasons)  # no loop seen
    for _ in range(4):
        rec = g.decide("bash", {"command": "frobnicate"}, session_id="s")
    assert any(r.rule_id.startswith("G20") for r in rec.reasons)  # real dispatches are


def test_each_layer_is_timed_without_losing_its_verdict(workspace) -> None:  # type: ignore[no-untyped-def]
    import attrs

    @attrs.frozen
    class Tagged(Verdict):  # a custom layer's own verdict type keeps its class and extra field
        origin: str = "custom"

    @attrs.frozen(slots=False)
    class Loose(Verdict):  # not slotted: copied field by field
        origin: str = "loose"

    shared = Tagged("tagged", risk=Risk.LOW, reasons=[Reason("X1", "kept")], tags={"read_only"}, origin="plugin")
    loose = Loose("loose", risk=Risk.LOW)

    def tagged(call, ctx):  # type: ignore[no-untyped-def]  # a plain function goes by its __name__
        return shared

    def untagged(call, ctx):  # type: ignore[no-untyped-def]
        return loose

    g = _guard(workspace, [tagged, untagged])
    rec = g.decide("bash", {"command": "x"})
    first, second = rec.layers
    assert type(first) is Tagged and first.origin == "plugin" and first.reasons == shared.reasons
    assert first.tags == {"read_only"} and first.elapsed_us > 0 and shared.elapsed_us == 0.0  # a copy, not the layer's
    assert type(second) is Loose and second.origin == "loose" and second.elapsed_us > 0
