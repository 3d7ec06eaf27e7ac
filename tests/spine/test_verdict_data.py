"""The built-in layers' verdict data is typed (``FusionData``, ``BehaviorData``) and reads exactly
as the dicts it replaced: same keys in the same order, same values, plain JSON in ``to_dict``;
the records made without converters (``Verdict.built``, ``DecisionRecord.built``) equal the
ones the constructors make."""

from __future__ import annotations

import itertools
import json
import random
from datetime import datetime
from pathlib import Path
from typing import Any

import attrs
import pytest
from freezegun import freeze_time

from guard.chain import _with_elapsed
from guard.core import Guard
from guard.errors import ConfigError
from guard.layers.data import BehaviorData, FusionData, StaticData
from guard.logline import decision_text
from guard.model import BLOCK, REQUEST_CONFIRM, DecisionRecord, Reason, Risk, ToolCall, Verdict

CONFIG = {"system.health": 90, "memory.backend": "history"}
FUSION_KEYS = ["components", "weights", "health", "mode", "prior", "dimensions"]


def _decide_some(g: Guard) -> list[DecisionRecord]:
    out = []
    for i in range(4):  # the fourth round loops: signals, penalties, a ceiling
        for tool, params in (("bash", {"command": "pytest -q"}), ("write", {"file_path": "a.py", "content": "x\n"})):
            out.append(g.decide(tool, params, session_id="s"))
        g.record_result("bash", {"command": "pytest -q"}, session_id="s", success=i % 2 == 0)
    return out


def test_fusion_data_reads_as_its_dict(tmp_path: Path) -> None:
    """Keys in order, each dimension with value/confidence/note/levels, ``to_dict`` plain JSON."""
    with Guard(tmp_path / "ws", CONFIG) as g:
        for record in _decide_some(g):
            data = record.layer("fusion").data  # type: ignore[union-attr]
            assert isinstance(data, FusionData)
            assert list(data) == FUSION_KEYS and len(data) == 6
            plain = data.to_dict()
            assert data == plain and dict(data) == plain and type(plain) is dict
            assert plain["components"] == dict(record.components)
            assert set(plain["dimensions"]) == {"memory", "cmd_success", "user_pref", "system"}
            levels = plain["dimensions"]["cmd_success"]["levels"]
            assert list(levels) == ["operation", "family", "prior", "inherited"]
            assert data.get("missing", "default") == "default" and "dimensions" in data and "x" not in data
            json.dumps(record.to_dict())  # nothing typed is left in what the record serialises


def test_behavior_data_reads_as_its_dict(tmp_path: Path) -> None:
    """health, signals, breaker, tier, then penalties when a signal fired; the tier as it was then."""
    with Guard(tmp_path / "ws", CONFIG) as g:
        records = _decide_some(g)
        for record in records:
            data = record.layer("behavior").data  # type: ignore[union-attr]
            assert isinstance(data, BehaviorData)
            keys = list(data)
            assert keys[:4] == ["health", "signals", "breaker", "tier"]
            assert ("penalties" in keys) == bool(data["signals"])
            assert data["tier"] == {"agent": "default", "name": data["tier"]["name"], "points": data["tier"]["points"]}
            assert data.to_dict() == data and data["health"] == data.health
        # points earned later do not change what an earlier record shows
        first = records[0].layer("behavior").data["tier"]["points"]  # type: ignore[union-attr]
        assert first == 0.0 and records[-1].layer("behavior").data["tier"]["points"] > first  # type: ignore[union-attr]


def test_blocked_call_keeps_its_scored_data(tmp_path: Path) -> None:
    """After a block the fusion layer still scores; its data gains ``after_block`` as a plain dict."""
    with Guard(tmp_path / "ws", CONFIG) as g:
        record = g.decide("bash", {"command": "rm -rf /"}, session_id="s")
    fusion = record.layer("fusion")
    assert record.decision == BLOCK and fusion is not None
    assert fusion.data["after_block"] is True and set(FUSION_KEYS) <= set(fusion.data)


def test_built_verdicts_equal_constructed_ones() -> None:
    """``Verdict.built`` fills every field as the constructor would (converters given final types)."""
    reasons = (Reason("G302", "fused score 40.0 is below 50"),)
    built = Verdict.built(
        "fusion",
        score=40.0,
        decision=BLOCK,
        ceiling=REQUEST_CONFIRM,
        reasons=reasons,
        data={"a": 1},
        unavailable=("x",),
    )
    made = Verdict(
        "fusion",
        score=40.0,
        decision="block",
        ceiling="request_confirm",
        reasons=list(reasons),
        data={"a": 1},
        unavailable=["x"],
    )
    assert built == made and built.to_dict() == made.to_dict()
    assert Verdict.built("behavior", data={}) == Verdict("behavior", data={})


@freeze_time("2026-04-11 10:30:00")
def test_built_records_equal_constructed_ones() -> None:
    call = ToolCall("bash", {"command": "ls"})
    layers = (Verdict("static", risk=Risk.SAFE, reasons=[Reason("G100", "read-only")]),)
    fields: dict[str, Any] = dict(
        call=call,
        decision=REQUEST_CONFIRM,
        final_score=60.0,
        risk=Risk.SAFE,
        components={"memory": 40.0},
        weights={"memory": 0.3},
        layers=layers,
        unavailable=(),
        notes=("n",),
        timestamp=datetime.now().astimezone(),
        elapsed_us=3.0,
    )
    built, made = DecisionRecord.built(**fields), DecisionRecord(**fields)
    assert built == made and built.to_dict() == made.to_dict() and built.reasons == made.reasons == layers[0].reasons


def test_static_data_reads_as_its_dict(tmp_path: Path) -> None:
    """commands and rules always; lines_written only for a measured write; user_rules only
    when the person's rule matched (written by hand: the dicts the static layer used to build)."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "guard.toml").write_text('[permissions]\nask = ["Bash(git push:*)"]\n')
    with Guard(tmp_path / "ws", CONFIG) as g:
        read = g.decide("bash", {"command": "ls -la"}, session_id="s").layer("static")
        write = g.decide("write", {"file_path": "notes.txt", "content": "a\nb\n"}, session_id="s").layer("static")
        asked = g.decide("bash", {"command": "git push origin feature"}, session_id="s").layer("static")
    assert read is not None and write is not None and asked is not None
    for verdict in (read, write, asked):
        assert isinstance(verdict.data, StaticData)
        assert type(verdict.data.to_dict()) is dict and json.dumps(verdict.data.to_dict())
    assert read.data == {"commands": ["ls -la"], "rules": ["G180"]}  # G180: a read-only command
    assert list(read.data) == ["commands", "rules"] and "lines_written" not in read.data
    assert write.data.get("lines_written") == 2 and write.data.lines_written == 2  # type: ignore[attr-defined]
    assert asked.data["user_rules"] == ["ask: Bash(git push:*)"]
    assert "G191" in {r.rule_id for r in asked.reasons} and asked.data["rules"] == sorted(asked.data["rules"])


@freeze_time("2026-04-11 10:30:00")
def test_built_calls_equal_constructed_ones() -> None:
    """``ToolCall.built`` (``Guard.make_call``'s) fills every slot as the constructor would: params
    copied (the caller's dict may change later), ``declared`` canonical, the redacted forms unmade."""
    params = {"command": "ls", "n": [1, 2]}
    now = datetime.now().astimezone()
    built = ToolCall.built("Bash", params, "s", "/w", "a", now, "Read")
    made = ToolCall(tool="Bash", params=params, session_id="s", cwd="/w", agent_id="a", timestamp=now, declared="Read")
    assert built == made and built.declared == "read" and built.params is not params
    for field in attrs.fields(ToolCall):
        assert getattr(built, field.name) == getattr(made, field.name)
    params["command"] = "rm -rf /"  # data: never run
    assert built.params["command"] == "ls"
    assert ToolCall.built("x", {}, None, None, None, None, None) == ToolCall("x")
    with pytest.raises(ConfigError):
        ToolCall.built("x", {}, None, None, None, None, "no-such-kind")


def test_a_timed_copy_of_a_verdict_keeps_every_field(tmp_path: Path) -> None:
    """The chain times a cached verdict into a copy: every field but ``elapsed_us`` as it was, the
    original untouched (the static layer hands it out again)."""
    original = Verdict(
        "static", risk=Risk.HIGH, score=12.5, ceiling=REQUEST_CONFIRM, reasons=[Reason("G100", "m", "alt")],
        tags={"write"}, data={"k": 1}, error=None, unavailable=("x",),
    )  # fmt: skip
    copy = _with_elapsed(original, 7.5)
    assert copy is not original and copy.elapsed_us == 7.5 and original.elapsed_us == 0.0
    assert attrs.evolve(copy, elapsed_us=0.0) == original
    for field in attrs.fields(Verdict):
        if field.name != "elapsed_us":
            assert getattr(copy, field.name) is getattr(original, field.name)


def _in_order_reference(record: DecisionRecord) -> tuple[Verdict, ...]:
    """``in_order`` as it was written before it became positions (by the verdicts' identity)."""
    layers, decision = record.layers, record.decision
    if decision == "auto_allow" or len(layers) < 2:
        return layers
    lead = [v for v in layers if v.decision == decision or v.ceiling == decision]
    if not lead and decision == BLOCK:
        lead = [v for v in layers if v.ceiling == REQUEST_CONFIRM or v.decision == REQUEST_CONFIRM]
    if not lead or (lead[0] is layers[0] and len(lead) == 1):
        return layers
    first = {id(v) for v in lead}
    return (*lead, *[v for v in layers if id(v) not in first])


def test_the_deciding_layers_lead_as_before_and_the_log_line_agrees() -> None:
    """``in_order`` by positions equals the identity-based order it replaced, for every mix of
    decisions, ceilings and one verdict object standing at two places; the log line (which hands
    the record the order it found by the same inputs) leaves ``reasons`` as a fresh record has them."""
    rng = random.Random(3)
    choices = (None, "auto_allow", "request_confirm", "block")
    pool = [
        Verdict(f"l{i}", decision=d, ceiling=c, reasons=[Reason(f"X{i}", f"m{i}")] if i % 3 else [])
        for i, (d, c) in enumerate(itertools.product(choices, choices))
    ]
    call = ToolCall("bash", {"command": "ls"})
    for _ in range(3000):
        n = rng.randrange(0, 5)
        layers = tuple(rng.choice(pool) for _ in range(n))
        decision = rng.choice(choices[1:])
        made = DecisionRecord(call, decision, 50.0, Risk.LOW, layers=layers)
        assert made.in_order() == _in_order_reference(made)
        assert all(a is b for a, b in zip(made.in_order(), _in_order_reference(made), strict=True))
        logged = DecisionRecord(call, decision, 50.0, Risk.LOW, layers=layers)
        decision_text(logged)
        assert logged.reasons == made.reasons
