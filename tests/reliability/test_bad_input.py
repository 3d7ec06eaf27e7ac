"""Bad input: garbage, huge commands, deep nesting, invalid UTF-8, wrong JSON types.

Properties: nothing crashes; ``guard feed`` answers exactly one record per dispatch or
malformed line; nothing unparseable is ever auto-allowed.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guard.core import Guard
from guard.feed import feed
from guard.model import AUTO_ALLOW, BLOCK, DECISIONS

from .conftest import CONFIG, run_guard, whole_lines

DISPATCH_NAMES = {"tool_dispatch", "agent:tool_dispatch", "dispatch"}
OTHER_EVENTS = {"tool_result", "agent:tool_result", "result", "user_confirmation", "user:confirmation", "confirmation"}

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def guard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Guard]:
    g = Guard(tmp_path_factory.mktemp("fuzz") / "ws", CONFIG)
    yield g
    g.close()


# -- strategies -------------------------------------------------------------------------
any_char = st.characters(blacklist_categories=(), blacklist_characters="\n")  # surrogates included
json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(any_char, max_size=30),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)),
    max_leaves=12,
)
event_names = st.sampled_from([*sorted(DISPATCH_NAMES | OTHER_EVENTS), "", "bogus", "TOOL_DISPATCH"])
tools = st.one_of(st.sampled_from(["bash", "Bash", "write", "Read", "mcp__x__y", "", "  "]), json_value)
shell_text = st.lists(
    st.one_of(
        st.text(any_char, max_size=4),
        st.sampled_from(["$(", ")", "`", "'", '"', "|", ";", "&&", ">", "<<", "\\", "rm -rf /", "ls ", "cat ", " "]),
    ),
    max_size=20,
).map("".join)
events = st.fixed_dictionaries(
    {},
    optional={
        "event": st.one_of(event_names, json_value),
        "tool": tools,
        "params": st.one_of(st.fixed_dictionaries({"command": st.one_of(shell_text, json_value)}), json_value),
        "session_id": st.one_of(st.text(max_size=8), json_value),
        "status": st.one_of(st.sampled_from(["success", "failure", "ok"]), json_value),
        "action": st.one_of(st.sampled_from(["approved", "denied", "maybe"]), json_value),
        "satisfaction": st.one_of(st.integers(-2, 7), json_value),
        "duration_ms": json_value,
        "ts": st.one_of(st.sampled_from(["2026-04-11T10:30:00Z", "yesterday", "9999-12-31T23:59:59"]), json_value),
    },
)
lines = st.one_of(
    events.map(lambda e: json.dumps(e, ensure_ascii=False)),
    json_value.map(json.dumps),
    st.text(any_char, max_size=80),
    st.binary(max_size=80).map(lambda b: b.replace(b"\n", b" ")),
    events.map(lambda e: json.dumps(e)[: max(1, len(json.dumps(e)) // 2)]),  # cut short
)


def _as_event(line: str | bytes) -> dict[str, Any] | None:
    """The line as a JSON object if it is one (the oracle, independent of guard's parser)."""
    try:
        text = line.decode("utf-8") if isinstance(line, bytes) else line
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


# -- the feed, in process ---------------------------------------------------------------
class TestFeedFuzz:
    @FUZZ
    @given(batch=st.lists(lines, min_size=1, max_size=8))
    def test_one_answer_per_dispatch_or_malformed_line_and_never_allow_garbage(
        self, guard: Guard, batch: list[str | bytes]
    ) -> None:
        log = guard.state.decisions.path
        log.touch()
        before = len(whole_lines(log))
        outs = list(feed(guard, batch))
        by_line = {o["line"]: o for o in outs}
        assert len(by_line) == len(outs), "two answers for one line"
        decided = 0
        for n, line in enumerate(batch, 1):
            if not line.strip():
                assert n not in by_line
                continue
            event = _as_event(line)
            out = by_line.get(n)
            if event is None:  # not a JSON object: one error record, a block
                assert out is not None and "error" in out and out["decision"] == BLOCK, (line, out)
                continue
            kind = event.get("event", "tool_dispatch")
            if isinstance(kind, str) and kind in DISPATCH_NAMES:
                assert out is not None, line  # a dispatch always gets an answer
            if out is None:
                assert isinstance(kind, str) and kind in OTHER_EVENTS, line
                continue
            assert out["decision"] in DECISIONS
            if "error" in out:
                assert out["decision"] == BLOCK
            else:
                assert isinstance(kind, str) and kind in DISPATCH_NAMES
                decided += 1
            json.dumps(out, default=str)  # printable
        assert len(whole_lines(log)) - before == decided, "one decision line per decided dispatch"

    @FUZZ
    @given(command=shell_text)
    def test_any_command_gets_a_decision(self, guard: Guard, command: str) -> None:
        record = guard.decide("bash", {"command": command}, save=False)
        assert record.decision in DECISIONS
        json.dumps(record.to_dict())
        try:
            shlex.split(command, comments=True)  # ``#'`` is a comment to bash, not an open quote
        except ValueError:  # unbalanced quotes: nobody can say what runs
            assert record.decision != AUTO_ALLOW, command

    @FUZZ
    @given(tool=st.text(any_char, min_size=1, max_size=20).filter(str.strip), params=json_value)
    def test_any_params_get_a_decision(self, guard: Guard, tool: str, params: Any) -> None:
        params = params if isinstance(params, dict) else {"value": params}
        record = guard.decide(tool, params, save=False)
        assert record.decision in DECISIONS
        guard.record_result(tool, params, success=False)  # and the outcome can be recorded


# -- deep and huge ----------------------------------------------------------------------
def _nested_dict(depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    cur = out
    for _ in range(depth):
        cur["a"] = {}
        cur = cur["a"]
    return out


class TestDeepAndHuge:
    @pytest.mark.parametrize(
        "command",
        ["echo " + "$(" * 1000 + "id" + ")" * 1000, "(" * 1000 + "ls" + ")" * 1000, "ls " + "a " * 500_000],
        ids=["subshell-1000", "parens-1000", "1MB-of-words"],
    )
    def test_deep_or_huge_commands_get_a_decision(self, guard: Guard, command: str) -> None:
        record = guard.decide("bash", {"command": command})
        assert record.decision in DECISIONS
        assert whole_lines(guard.state.decisions.path)[-1]["tool"] == "bash"

    @pytest.mark.parametrize(
        "command",
        ["echo " + "`" * 1001, "x" * 1_000_000, "curl " * 200_000 + "| sh", "echo 'unterminated " + "y" * 100_000],
        ids=["1001-backticks", "1MB-word", "1MB-curls-into-sh", "unbalanced-quote-100kB"],
    )
    def test_unparseable_or_risky_huge_commands_are_never_allowed(self, guard: Guard, command: str) -> None:
        record = guard.decide("bash", {"command": command})
        assert record.decision in DECISIONS and record.decision != AUTO_ALLOW

    def test_params_nested_5000_deep(self, guard: Guard) -> None:
        record = guard.decide("mcp__x__y", _nested_dict(5000))
        assert record.decision in DECISIONS
        guard.record_result("mcp__x__y", _nested_dict(5000), success=True)
        guard.record_interaction("mcp__x__y", _nested_dict(5000), approved=False)

    @pytest.mark.parametrize(
        "line",
        ["[" * 1000 + "]" * 1000, '{"tool": "bash", "params": ' + '{"a": ' * 1000 + "1" + "}" * 1001, "9" * 5000],
        ids=["json-1000-deep", "params-1000-deep", "5000-digit-number"],
    )
    def test_unparseable_json_is_one_error_record(self, guard: Guard, line: str) -> None:
        (out,) = feed(guard, [line])
        assert out["decision"] == BLOCK and out["error"].startswith("not JSON")


# -- the command line, in a subprocess --------------------------------------------------
class TestFeedCommand:
    def _feed(self, tmp_path: Path, stdin: bytes) -> tuple[int, list[dict[str, Any]], bytes]:
        proc = run_guard("feed", "--workspace", str(tmp_path / "ws"), stdin=stdin)
        assert b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")[-2000:]
        return proc.returncode, [json.loads(x) for x in proc.stdout.splitlines()], proc.stderr

    def test_hostile_stream(self, tmp_path: Path) -> None:
        """1 MB commands, invalid UTF-8, deep nesting, wrong types and a raw CR: one answer each, in order."""
        stream = [
            json.dumps({"tool": "bash", "params": {"command": "echo " + "x" * 1_000_000}}).encode(),
            b'{"tool": "bash", "params": {"command": "ls \xff\xfe"}}',
            b"\xc3\x28 garbage",
            ("[" * 1000 + "]" * 1000).encode(),
            json.dumps({"tool": "bash", "params": _nested_dict(900)}).encode(),
            b'{"tool": 42, "params": []}',
            b'{"tool": "bash",\r "params": {"command": "pwd"}}',
            b'{"event": "tool_result", "tool": "bash", "params": {"command": "pwd"}, "status": "success"}',
            b'{"tool": "bash", "params": {"command": "ls \\ud800"}}',
            b"",
            b'{"tool": "bash", "params": {"command": "ls"}}',
        ]
        rc, outs, _ = self._feed(tmp_path, b"\n".join(stream) + b"\n")
        assert rc == 1  # some lines were unreadable
        assert [o["line"] for o in outs] == [1, 2, 3, 4, 5, 6, 7, 9, 11]
        by_line = {o["line"]: o for o in outs}
        for n in (2, 3, 4, 6):
            assert by_line[n]["decision"] == BLOCK and "error" in by_line[n], by_line[n]
        assert "not UTF-8" in by_line[2]["error"]
        assert by_line[1]["decision"] != AUTO_ALLOW  # a 1 MB command is not judged safe
        assert by_line[7]["decision"] == AUTO_ALLOW and "error" not in by_line[7]  # CR is JSON whitespace
        assert by_line[11]["decision"] == AUTO_ALLOW
        decisions = whole_lines(tmp_path / "ws" / ".fusion-decisions.jsonl")
        assert len(decisions) == 5  # lines 1, 5, 7, 9 and 11 were decided

    @settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
    @given(batch=st.lists(lines, min_size=5, max_size=30))
    def test_fuzzed_stream_through_the_command(
        self, tmp_path_factory: pytest.TempPathFactory, batch: list[Any]
    ) -> None:
        raw = [(x.encode("utf-8", "surrogatepass") if isinstance(x, str) else x).replace(b"\n", b" ") for x in batch]
        rc, outs, _ = self._feed(tmp_path_factory.mktemp("cli-fuzz"), b"\n".join(raw) + b"\n")
        assert rc in (0, 1)
        assert [o["line"] for o in outs] == sorted({o["line"] for o in outs})
        for o in outs:
            line = raw[o["line"] - 1]
            if _as_event(line) is None:
                assert o["decision"] == BLOCK and "error" in o
            assert o["decision"] in DECISIONS
        unanswered = [n for n, line in enumerate(raw, 1) if line.strip() and n not in {o["line"] for o in outs}]
        for n in unanswered:
            event = _as_event(raw[n - 1])
            assert event is not None and event.get("event") in OTHER_EVENTS, raw[n - 1]
