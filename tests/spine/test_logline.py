"""The decision-log line built from remembered pieces is, byte for byte, the plain JSON of
``decision_line(record) | extra``: every kind of decision, secrets, non-ASCII text, a failed
layer, notes, missing parts, and extra fields (new, replacing, not named by a string)."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any

import attrs
import pytest

from guard.core import Guard
from guard.layers.base import Context
from guard.logline import decision_line, decision_text
from guard.model import Reason, Risk, ToolCall, Verdict

CONFIG = {"system.health": 90, "memory.backend": "history"}
TOKEN = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("bash", {"command": "git status"}),
    ("bash", {"command": "rm -rf /"}),
    ("bash", {"command": f"curl -H 'Authorization: Bearer {TOKEN}' https://example.com"}),
    ("write", {"file_path": "src/app.py", "content": "print('hello')\n" * 20}),
    ("mcp__x__put", {"api_key": "hunter2-hunter2", "note": "日本語 ü \ud800", "n": [1, 2.5, None, True]}),
    ("Read", {"file_path": "/etc/hosts"}),
]
EXTRAS: list[dict[Any, Any] | None] = [
    None,
    {"host": "claude-code", "event": "PreToolUse", "via": "hook", "call_id": "toolu_1"},
    {"tool": "renamed"},  # replaces a field of the line
    {1: "not a string name"},
]


def plain(line: dict[Any, Any]) -> str:
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"), default=str)


class Broken:
    name = "broken"

    def __call__(self, call: ToolCall, ctx: Context) -> Verdict:
        raise RuntimeError(f"cannot read {TOKEN}")


@pytest.mark.parametrize("extra", EXTRAS)
def test_the_text_is_the_plain_json_of_the_line(tmp_path: Path, extra: dict[Any, Any] | None) -> None:
    with (
        Guard(tmp_path / "ws", CONFIG) as g,
        Guard(tmp_path / "ws2", CONFIG, layers=[*Guard(tmp_path / "ws3", CONFIG).default_layers(), Broken()]) as broken,
    ):
        for guard in (g, broken):
            for i in range(3):  # later rounds: history, loops, notes
                for tool, params in CALLS:
                    record = guard.decide(tool, params, session_id=f"s{i}", save=False)
                    assert decision_text(record, extra) == plain(decision_line(record) | dict(extra or {}))


def test_the_log_holds_that_line(tmp_path: Path) -> None:
    """What ``decide`` appends reads back as the line, with the hook's fields after it."""
    extra = {"host": "claude-code", "event": "PreToolUse", "via": "hook"}
    with Guard(tmp_path / "ws", CONFIG) as g:
        records = [g.decide(tool, params, session_id="s", log_extra=extra) for tool, params in CALLS]
    written = (tmp_path / "ws" / ".fusion-decisions.jsonl").read_text().splitlines()
    assert [json.loads(x) for x in written] == [json.loads(plain(decision_line(r) | extra)) for r in records]
    assert all(TOKEN not in x for x in written)


class Percent:
    """A custom layer whose reason carries ``%`` signs (the line is written through a %-format)."""

    name = "percent"

    def __call__(self, call: ToolCall, ctx: Context) -> Verdict:
        return Verdict("percent", reasons=[Reason("X1", "100% sure, %s and %% and %(x)s stay as written")])


def test_odd_texts_and_numbers_read_as_the_plain_json(tmp_path: Path) -> None:
    """``%`` in a reason, a non-finite or integer time, a timestamp in another zone or naive, within one second."""
    with Guard(tmp_path / "ws", CONFIG, layers=[*Guard(tmp_path / "ws2", CONFIG).default_layers(), Percent()]) as g:
        record = g.decide("bash", {"command": "git status"}, session_id="s", save=False)
        ts = record.timestamp
        variants = [
            record,
            attrs.evolve(record, elapsed_us=float("inf")),
            attrs.evolve(record, elapsed_us=float("nan")),
            attrs.evolve(record, timestamp=ts.astimezone(timezone(timedelta(hours=5, minutes=30)))),
            attrs.evolve(record, timestamp=ts.replace(tzinfo=None)),
            attrs.evolve(record, timestamp=ts.replace(microsecond=0)),
            attrs.evolve(record, final_score=0.0),
            attrs.evolve(record, final_score=50),  # an int score (a custom scorer's)
            attrs.evolve(record, weights={"100% memory": 0.5, "%s": 0.5}),
            attrs.evolve(record, weights={"memory": -0.0, "system": 1}),
            attrs.evolve(record, components={"memory": -0.0, "system": 1, "cmd_success": float("nan")}),
        ]
        for variant in variants:
            for extra in EXTRAS:
                assert decision_text(variant, extra) == plain(decision_line(variant) | dict(extra or {}))


def test_text_only_params_are_written_as_the_plain_json(tmp_path: Path) -> None:
    """Quotes, backslashes, control characters, lone surrogates, U+2028 and emoji in keys and values."""
    alphabet = ["a", '"', "\\", "\n", "\x00", "\x1f", "\x7f", "é", "日", "\ud800", "\udfff", "\u2028", "/", "\t", "😀"]
    rng = random.Random(7)
    with Guard(tmp_path / "ws", CONFIG) as g:
        for _ in range(200):
            params = {
                "".join(rng.choices(alphabet, k=rng.randrange(0, 5))): "".join(
                    rng.choices(alphabet, k=rng.randrange(12))
                )
                for _ in range(rng.randrange(0, 4))
            }
            record = g.decide("mcp__x__put", params, session_id="s", save=False)
            assert decision_text(record) == plain(decision_line(record))


class Reused:
    """A custom layer that hands out the same reasons tuple with another risk, decision or ceiling
    each call, and now and then a new tuple of equal text: the log line's pieces are remembered by
    the identity of what they are made of, so each change must be seen."""

    name = "reused"

    def __init__(self) -> None:
        self.n = 0
        self.reasons = (Reason("X2", "the same reasons object"),)

    def __call__(self, call: ToolCall, ctx: Context) -> Verdict:
        self.n += 1
        if self.n % 5 == 0:
            self.reasons = (Reason("X2", "the same reasons object"),)  # equal, not identical
        if self.n % 7 == 0:
            return Verdict("reused", reasons=(Reason("X3", f"call {self.n}"),))  # a new text each time
        risk = (None, Risk.LOW, Risk.HIGH)[self.n % 3]
        decision = (None, "request_confirm")[self.n % 2]
        ceiling = (None, "request_confirm", None, "auto_allow")[self.n % 4]
        reasons = () if self.n % 3 == 1 else self.reasons  # the record's reasons with and without its own
        return Verdict("reused", risk=risk, decision=decision, ceiling=ceiling, reasons=reasons)


def test_a_layer_reusing_its_reasons_reads_as_the_plain_json(tmp_path: Path) -> None:
    """Same reasons object, another risk/decision/ceiling (so another order of the record's reasons);
    an equal new tuple; a new text per call: every line is the plain JSON of the record."""
    with Guard(tmp_path / "ws", CONFIG, layers=[*Guard(tmp_path / "ws2", CONFIG).default_layers(), Reused()]) as g:
        seen = set()
        for i in range(60):
            tool, params = CALLS[i % len(CALLS)]
            record = g.decide(tool, params, session_id="s", save=False)
            text = decision_text(record)
            assert text == plain(decision_line(record))
            seen.add(json.loads(text)["layers"][-1]["risk"])
        assert seen == {None, "low", "high"}


def lines_twice(tmp_path: Path, cases: list[dict[str, Any]]) -> list[list[str]]:
    """Each case's decision line for an MCP tool, in two rounds (the second answered from what the
    first remembered), each line checked against the plain JSON of its record."""
    rounds = []
    with Guard(tmp_path / "ws", CONFIG) as g:
        for _ in range(2):
            texts = []
            for params in cases:
                record = g.decide("mcp__x__put", params, session_id="s", save=False)
                texts.append(decision_text(record))
                assert texts[-1] == plain(decision_line(record))
            rounds.append(texts)
    return rounds


def test_remembered_params_follow_the_value_and_the_redaction(tmp_path: Path) -> None:
    """One text-only parameter is remembered by its name and value: another value, a secret-named
    key beside a plain one, a value just over the remembered size, all read as the plain JSON."""
    cases = [
        {"command": "echo hi"},
        {"command": "echo hi "},  # near miss: one space more
        {"password": "hunter2-hunter2"},  # a secret-named key: masked whole
        {"passes": "hunter2-hunter2"},  # near miss: not a secret name
        {"command": f"curl -H 'Authorization: Bearer {TOKEN}' x"},
        {"command": "x" * 2048},
        {"command": "x" * 2049},
        {"a": "1", "b": "2"},
        {"a": "1", "b": "3"},
    ]
    for texts in lines_twice(tmp_path, cases):
        assert len({json.dumps(json.loads(t)["params"]) for t in texts}) == len(cases)
        assert "hunter2" not in texts[2] and "hunter2" in texts[3] and TOKEN not in texts[4]


class FallBack(tzinfo):
    """A zone whose clocks go back an hour: the same wall time twice, told apart by ``fold``."""

    def utcoffset(self, dt: datetime | None) -> timedelta:
        return timedelta(hours=-5 if dt is not None and dt.fold else -4)

    def dst(self, dt: datetime | None) -> timedelta | None:
        return None

    def tzname(self, dt: datetime | None) -> str | None:
        return None


def test_remembered_numbers_times_and_zones_follow_the_value(tmp_path: Path) -> None:
    """The components' text is remembered by value, the score and a time are written with ``%.2f``
    and ``%.1f``, a second's text is remembered by its fields and zone: each value that compares
    equal to a remembered one but reads differently (an int score, -0.0, another zone in the same
    second), a number at the edge of the fast forms, reads as the plain JSON right after it."""
    with Guard(tmp_path / "ws", CONFIG) as g:
        record = g.decide("bash", {"command": "git status"}, session_id="s", save=False)
        ts = record.timestamp.replace(microsecond=0)
        fall_back = datetime(2026, 11, 1, 1, 30, tzinfo=FallBack())
        full = {"memory": 90.0, "cmd_success": 80.0, "user_pref": 70.0, "system": 60.0}
        variants = [
            attrs.evolve(record, final_score=90.0, components=full),  # remembered
            attrs.evolve(record, final_score=90, components=full),  # equal, an int: "90"
            attrs.evolve(record, final_score=90.0, components=full | {"memory": 90}),  # an int component: "90.0"
            attrs.evolve(record, final_score=90.004, components=full),  # another key, the same rounding
            attrs.evolve(record, final_score=90.1, components=full | {"memory": 90.1, "system": 12.005}),
            attrs.evolve(record, final_score=99.995, components=full | {"memory": 1e13, "system": 9999999999999.99}),
            attrs.evolve(record, final_score=0.001, components=full | {"memory": -0.001}),  # "0.0", "-0.0"
            attrs.evolve(record, final_score=0.0, components=full | {"system": 0.0}),
            attrs.evolve(record, final_score=0.0, components=full | {"system": -0.0}),  # equal to 0.0: "-0.0"
            attrs.evolve(record, final_score=90.0, components=full | {"system": float("inf")}),
            attrs.evolve(record, elapsed_us=99999999999999.95),  # just below the fast form's bound
            attrs.evolve(record, elapsed_us=1e14),  # at it
            attrs.evolve(record, elapsed_us=1e16),  # JSON writes 1e+16
            attrs.evolve(record, elapsed_us=-0.04),  # "-0.0"
            attrs.evolve(record, elapsed_us=5),  # an int time
            attrs.evolve(record, layers=(attrs.evolve(record.layers[0], elapsed_us=2.25), *record.layers[1:])),
            attrs.evolve(record, layers=(attrs.evolve(record.layers[0], elapsed_us=1e15), *record.layers[1:])),
            attrs.evolve(record, timestamp=ts),  # remembered second
            attrs.evolve(record, timestamp=ts.astimezone(timezone(timedelta(hours=5, minutes=30)))),
            attrs.evolve(record, timestamp=ts.replace(tzinfo=timezone(timedelta(hours=5, minutes=30)))),
            attrs.evolve(record, timestamp=ts.replace(tzinfo=timezone(timedelta(0), "another name"))),
            attrs.evolve(record, timestamp=ts.replace(tzinfo=None)),
            attrs.evolve(record, timestamp=fall_back),  # a zone whose offset is not one: the hour twice
            attrs.evolve(record, timestamp=fall_back.replace(fold=1)),
            attrs.evolve(record, notes=("a note",)),  # remembered
            attrs.evolve(record, notes=("a note", "a second")),
            attrs.evolve(record, notes=("a note",), unavailable=("a note",)),
        ]
        for _ in range(2):  # the second round is answered from what the first remembered
            for variant in variants:
                assert decision_text(variant) == plain(decision_line(variant))


def test_a_remembered_frame_follows_each_layer_the_decision_and_the_weights(tmp_path: Path) -> None:
    """A line's frame is remembered by the decision, risk, weights and each layer's name, reasons,
    risk, decision and ceiling: a record that differs in any one of them (an equal new reasons
    tuple, a reason with a ``%`` in it, another weight, a zero weight, layers swapped) reads as
    the plain JSON right after the one it was remembered from."""
    with Guard(tmp_path / "ws", CONFIG) as g:
        record = g.decide("bash", {"command": "git status"}, session_id="s", save=False)
        first, *rest = record.layers
        said = (Reason("G999", "100% sure: %s %(x)s %%"),)
        variants = [
            record,  # remembered
            attrs.evolve(record, layers=(attrs.evolve(first, reasons=tuple(first.reasons)), *rest)),
            attrs.evolve(record, layers=(attrs.evolve(first, reasons=said), *rest)),
            attrs.evolve(record, layers=(attrs.evolve(first, risk=Risk.HIGH), *rest)),
            attrs.evolve(record, layers=(attrs.evolve(first, ceiling="request_confirm"), *rest)),
            attrs.evolve(record, layers=(attrs.evolve(first, decision="block", reasons=said), *rest)),
            attrs.evolve(record, decision="request_confirm"),
            attrs.evolve(record, risk=Risk.CRITICAL),
            attrs.evolve(record, weights={k: w + 0.125 for k, w in record.weights.items()}),
            attrs.evolve(record, weights={k: 0.0 for k in record.weights}),
            attrs.evolve(record, weights={k: -0.0 for k in record.weights}),
            attrs.evolve(record, weights={"100%": 0.5}),
            attrs.evolve(record, layers=(*rest, first)),
            attrs.evolve(record, layers=rest),
            # asked or blocked by a later layer: its reasons lead (the order is worked out once)
            attrs.evolve(
                record,
                decision="request_confirm",
                layers=(first, attrs.evolve(rest[0], ceiling="request_confirm", reasons=said), *rest[1:]),
            ),
            attrs.evolve(
                record, decision="block", layers=(first, *rest[:-1], attrs.evolve(rest[-1], decision="block"))
            ),
        ]
        for _ in range(2):  # the second round is answered from what the first remembered
            for variant in variants:
                variant = attrs.evolve(variant)  # nothing worked out yet: the line hands its order over
                assert decision_text(variant) == plain(decision_line(variant))
                unprompted = attrs.evolve(variant)  # the order as the record works it out alone
                assert variant.in_order() == unprompted.in_order() and variant.reasons == unprompted.reasons


def test_remembered_text_params_follow_their_count_size_and_types(tmp_path: Path) -> None:
    """Several text-only parameters are remembered by their items up to 8 of them and 2048
    characters of values: at and past each bound, with a number, a list or a None among them
    (first, between, last), with a secret-named key among plain ones, the line is the plain JSON."""
    eight = {f"k{i}": f"v{i}" for i in range(8)}
    cases: list[dict[str, Any]] = [
        eight,
        eight | {"k8": "v8"},  # nine: not remembered
        {"a": "x" * 1024, "b": "y" * 1024},  # 2048 characters: remembered
        {"a": "x" * 1024, "b": "y" * 1025},  # 2049: not
        {"n": 2, "a": "1", "b": "x"},
        {"a": "1", "n": 2.5, "b": "x"},
        {"a": "1", "b": "x", "n": None},
        {"a": "1", "b": ["x", "y"]},
        {"path": "src/a.py", "api_key": "hunter2-hunter2"},
        {"path": "src/a.py", "api_kez": "hunter2-hunter2"},  # near miss: not a secret name
    ]
    for texts in lines_twice(tmp_path, cases):
        assert "hunter2" not in texts[8] and "hunter2" in texts[9]


class Named(str):
    """A ``str`` subclass: equal to its text, but not of type ``str``."""


def test_extra_fields_of_any_kind_read_as_the_plain_json(tmp_path: Path) -> None:
    """A hook's extra fields are written after the line's: text (quotes, non-ASCII, a lone
    surrogate), None, numbers, lists, objects, a ``str`` subclass as value or as a name that
    is (or is not) one of the line's own; each line is the plain JSON of the line and the extra."""
    extras: list[dict[Any, Any]] = [
        {"host": "claude-code", "event": "PreToolUse", "via": None, "call_id": "toolu_1"},
        {'qu"ote': 'a "b" \\ c', "日本": "ü\ud800\u2028"},
        {"n": 3, "f": 2.5, "big": 10**30, "b": True, "l": [1, "x", None], "o": {"k": [1.5]}},
        {"value": Named("a subclass value")},
        {Named("host"): "a subclass name"},
        {Named("tool"): "a subclass name that is the line's"},
        {"": "an empty name"},
    ]
    with Guard(tmp_path / "ws", CONFIG) as g:
        record = g.decide("bash", {"command": "git status"}, session_id="s", save=False)
        for _ in range(2):
            for extra in extras:
                assert decision_text(record, extra) == plain(decision_line(record) | dict(extra))
