"""The chain's contract: layers are found by name, wherever a custom layer stands.

The commands below are data handed to ``Guard.decide`` / ``record_result``; nothing runs them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from guard import Guard, guarded
from guard.chain import DEFAULT_ORDER, FUSION, STATIC, Chain
from guard.errors import ConfigError
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM, Decision, Reason, Verdict
from guard.workspace import DECISIONS, EXECUTIONS

CONFIG = {"system.health": 90, "memory.backend": "history"}
WIPE_HOME = "rm -rf ~"  # critical: blocked
RESET = "git reset --hard HEAD~3"  # high: asked
UNKNOWN = "frobnicate --all"  # medium: asked
LIST = "ls"  # safe: allowed


class Audit:
    """A custom layer with an opinion on nothing: it must change no decision and no risk."""

    name = "audit"

    def __call__(self, call: Any, ctx: Any) -> Verdict:
        return Verdict(self.name, reasons=[Reason("X100", "seen by the audit layer")])


class Optimist:
    """A custom layer that scores every call 99 and would allow it: it is not the fused band."""

    name = "optimist"

    def __call__(self, call: Any, ctx: Any) -> Verdict:
        return Verdict(self.name, score=99.0, decision=AUTO_ALLOW)


def _with(layer: Any, at: int, workspace: Path) -> list[Any]:
    layers = Guard(workspace, CONFIG).default_layers()
    layers.insert(at, layer)
    return layers


def _recorded_risks(workspace: Path) -> list[str]:
    lines = (workspace / EXECUTIONS).read_text().splitlines()
    return [json.loads(line)["risk"] for line in lines]


POSITIONS = pytest.mark.parametrize("at", [0, 1, 3], ids=["first", "middle", "last"])


# -- a custom layer anywhere in the order -------------------------------------------------------
@POSITIONS
def test_a_custom_layer_anywhere_keeps_the_recorded_risk(at: int, workspace: Path, tmp_path: Path) -> None:
    """``rm -rf ~`` is recorded critical (not medium) wherever the custom layer stands."""
    with Guard(workspace, CONFIG, layers=_with(Audit(), at, tmp_path / "spare")) as g:
        for command in (WIPE_HOME, RESET, LIST):
            g.record_result("bash", {"command": command}, success=True, duration_ms=1)
    assert _recorded_risks(workspace) == ["critical", "high", "safe"]


@POSITIONS
def test_a_custom_layer_anywhere_keeps_the_decisions(at: int, workspace: Path, tmp_path: Path) -> None:
    """Block, ask and allow are what the default chain says; the custom layer is in the record."""
    with Guard(workspace, CONFIG, layers=_with(Audit(), at, tmp_path / "spare")) as g:
        assert g.chain.names[at] == "audit"
        wipe = g.decide("bash", {"command": WIPE_HOME})
        assert wipe.decision == BLOCK and wipe.risk.label == "critical"
        reset = g.decide("bash", {"command": RESET})
        assert reset.decision == REQUEST_CONFIRM and reset.risk.label == "high"
        assert g.decide("bash", {"command": UNKNOWN}).decision == REQUEST_CONFIRM
        listing = g.decide("bash", {"command": LIST})
        assert listing.decision == AUTO_ALLOW and listing.layer("audit") is not None


@POSITIONS
def test_guarded_with_a_custom_layer_records_the_static_risk(at: int, workspace: Path, tmp_path: Path) -> None:
    """``@guarded`` over a chain with a custom layer: a confirmed high-risk call is recorded high."""
    g = Guard(workspace, CONFIG, layers=_with(Audit(), at, tmp_path / "spare"))

    @guarded(tool="bash", guard=g, confirm=lambda record: True)
    def bash(command: str) -> str:
        return "not run: a test double"  # the command is data; this body never runs it

    assert bash(RESET) == "not run: a test double"
    assert bash(LIST) == "not run: a test double"
    g.close()
    assert _recorded_risks(workspace) == ["high", "safe"]


def test_a_scoring_custom_layer_before_fusion_is_not_the_fused_band(workspace: Path, tmp_path: Path) -> None:
    """A custom layer's score does not stand in for fusion's: an unknown command is still asked."""
    with Guard(workspace, CONFIG, layers=_with(Optimist(), 0, tmp_path / "spare")) as g:
        record = g.decide("bash", {"command": UNKNOWN})
        fusion = record.layer(FUSION)
        assert record.decision == REQUEST_CONFIRM
        assert fusion is not None and record.final_score == pytest.approx(fusion.score or 0.0, abs=0.01)
        assert g.decide("bash", {"command": WIPE_HOME}).decision == BLOCK


def test_the_static_layer_is_found_by_name_not_position(workspace: Path, tmp_path: Path) -> None:
    """``chain.layer("static")`` finds it after a custom layer; the order is ``DEFAULT_ORDER``."""
    with Guard(workspace, CONFIG) as g:
        assert g.chain.names == DEFAULT_ORDER
    with Guard(workspace, CONFIG, layers=_with(Audit(), 0, tmp_path / "spare")) as g:
        static = g.chain.layer(STATIC)
        assert static is not None and static is g.chain.layers[1]
        assert g.chain.layer("missing") is None


# -- chains without the built-ins ---------------------------------------------------------------
def test_a_chain_without_fusion_still_combines(workspace: Path, tmp_path: Path) -> None:
    """No fusion layer: blocks stay blocks, safe reads run on the static floor, the rest is asked."""
    layers = [layer for layer in Guard(tmp_path / "spare", CONFIG).default_layers() if layer.name != FUSION]
    with Guard(workspace, CONFIG, layers=[*layers, Optimist()]) as g:
        assert g.decide("bash", {"command": WIPE_HOME}).decision == BLOCK
        assert g.decide("bash", {"command": LIST}).decision == AUTO_ALLOW
        unknown = g.decide("bash", {"command": UNKNOWN})
        assert unknown.decision == REQUEST_CONFIRM  # the optimist's 99 is no fused score
        assert "no layer scored the call; asking" in unknown.notes and unknown.final_score == 0.0


def test_a_chain_without_static_records_medium(workspace: Path) -> None:
    """No static layer: a result is recorded medium (unknown is not safe), not guessed."""
    with Guard(workspace, CONFIG, layers=[Audit()]) as g:
        g.record_result("bash", {"command": LIST}, success=True)
    assert _recorded_risks(workspace) == ["medium"]


# -- names are unique ----------------------------------------------------------------------------
def test_two_layers_with_one_name_are_refused(workspace: Path, tmp_path: Path) -> None:
    """A duplicate name raises ``ConfigError`` (a ``ValueError``) naming it, before any store opens."""
    with pytest.raises(ConfigError, match=r"two layers named 'audit'") as caught:
        Guard(workspace, CONFIG, layers=[Audit(), *Guard(tmp_path / "spare", CONFIG).default_layers(), Audit()])
    assert isinstance(caught.value, ValueError)
    assert not (workspace / DECISIONS).exists()
    spare = Guard(tmp_path / "spare", CONFIG).default_layers()
    with pytest.raises(ConfigError, match=r"two layers named 'static'"):
        Chain([*spare, spare[0]])


def test_distinct_names_are_accepted(tmp_path: Path) -> None:
    """The near miss: a custom layer beside the built-ins with its own name builds."""
    assert Chain([Audit(), Optimist()]).names == ("audit", "optimist")


# -- decisions are a StrEnum ---------------------------------------------------------------------
def test_decisions_are_a_str_enum_with_the_seed_strings(workspace: Path) -> None:
    """``record.decision`` is a ``Decision`` that equals and logs as the seed's plain string."""
    assert [AUTO_ALLOW, REQUEST_CONFIRM, BLOCK] == ["auto_allow", "request_confirm", "block"]
    assert AUTO_ALLOW is Decision.AUTO_ALLOW and isinstance(BLOCK, str)
    assert Verdict("custom", decision="block").decision is Decision.BLOCK  # a layer may hand a plain string
    with pytest.raises(ValueError, match="decision must be one of"):
        Verdict("custom", decision="allow")
    with Guard(workspace, CONFIG) as g:
        record = g.decide("bash", {"command": WIPE_HOME})
    assert record.decision is Decision.BLOCK and record.decision == "block"
    assert json.dumps(record.to_dict()["decision"]) == '"block"'
    [line] = (workspace / DECISIONS).read_text().splitlines()
    assert json.loads(line)["decision"] == "block"
