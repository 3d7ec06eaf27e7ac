"""Bugs the reliability work found in the spine, each pinned by the case that showed it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from guard.jsonl import JsonlLog
from guard.redact import MASK, redact, redact_text

from .conftest import whole_lines

PLACEHOLDER = r"\[REDACTED:[a-z-]+:[0-9a-f]{8}\]"


class TestRecordedRisk:
    def test_a_safe_call_is_recorded_as_safe(self, make_guard: Any, tmp_path: Path) -> None:
        """Risk.SAFE is 0: ``risk or MEDIUM`` recorded every safe call as medium."""
        g = make_guard()
        g.record_result("bash", {"command": "ls"}, success=True)
        g.record_result("bash", {"command": "rm -rf src"}, success=True)
        assert [r["risk"] for r in whole_lines(tmp_path / "ws" / ".command-execution.jsonl")] == ["safe", "medium"]


class TestAppend:
    def test_a_lone_surrogate_is_written_as_its_escape(self, make_guard: Any, tmp_path: Path) -> None:
        """A file name decoded with surrogateescape made decide raise UnicodeEncodeError."""
        name = os.fsdecode(b"caf\xe9.txt")
        g = make_guard()
        record = g.decide("write", {"file_path": name, "content": "x"})
        assert record.unavailable == ()
        assert whole_lines(tmp_path / "ws" / ".fusion-decisions.jsonl")[-1]["params"]["file_path"] == name

    def test_the_same_writer_notices_a_fragment_left_by_another(self, tmp_path: Path) -> None:
        """The append skips re-reading its own last byte, but not after someone else wrote."""
        log = JsonlLog(tmp_path / "x.jsonl")
        log.append({"n": 1})
        with open(log.path, "ab") as f:
            f.write(b'{"n": 2, "torn')
        log.append({"n": 3})
        assert log.path.read_bytes().splitlines() == [b'{"n":1}', b'{"n": 2, "torn', b'{"n":3}']

    def test_a_same_size_rewrite_is_noticed(self, tmp_path: Path) -> None:
        """The skip is keyed on (size, mtime): a rewrite to the same size with a new mtime is checked."""
        log = JsonlLog(tmp_path / "x.jsonl")
        log.append({"n": 1})
        size = log.path.stat().st_size
        log.path.write_bytes(b"x" * size)  # same size, no newline at the end
        os.utime(log.path, ns=(0, 0))  # a different mtime, whatever the clock's granularity
        log.append({"n": 2})
        assert log.path.read_bytes().splitlines() == [b"x" * size, b'{"n":2}']


class TestRedaction:
    @pytest.mark.parametrize(
        "text",
        ["a." * 100_000 + "://", "sk-" * 70_000, "PASSWORD" * 25_000, '"password":' * 20_000, "'" * 200_000],
        ids=["url-scheme-run", "sk-run", "secret-name-run", "json-keys", "quotes"],
    )
    def test_hostile_text_is_redacted(self, text: str) -> None:
        """200 kB of each shape that was quadratic (the first took minutes; a regression shows as a
        stalled test; benchmarks/bench_decide.py reports the time)."""
        assert isinstance(redact_text(text), str)

    def test_long_schemes_still_count(self) -> None:
        assert re.fullmatch(
            "a" * 100 + "://user:" + PLACEHOLDER + "@host", redact_text("a" * 100 + "://user:hunter2@host")
        )
        assert re.fullmatch(r"x\.https://u:" + PLACEHOLDER + "@h", redact_text("x.https://u:pw@h"))

    @pytest.mark.parametrize(
        ("text", "secret"),
        [
            ('bash:{"api_key": "wJalr", "x": 1}', "wJalr"),
            ("""curl -d '{"password":"hunter2"}' https://x""", "hunter2"),
            ("failed for {'token': 'abc123', 'user': 'bob'}", "abc123"),
        ],
    )
    def test_quoted_secret_keys(self, text: str, secret: str) -> None:
        out = redact_text(text)
        assert secret not in out and MASK in out

    def test_quoted_keys_that_are_not_secret_stay(self) -> None:
        text = '{"user": "bob", "passes": 3, "tokens_used": 10}'
        assert redact_text(text) == text

    def test_short_strings_are_answered_the_same_from_the_cache(self) -> None:
        text = "token abcdefghijklmnopqrstuvwxyz"
        assert redact_text(text) == redact_text(text)
        assert re.fullmatch("token " + PLACEHOLDER, redact_text(text))
        assert redact({"k": text}) == {"k": redact_text(text)}


class TestSignature:
    def test_params_nested_thousands_deep_can_be_recorded(self, make_guard: Any) -> None:
        params: dict[str, Any] = {}
        cur = params
        for _ in range(5000):
            cur["a"] = {}
            cur = cur["a"]
        g = make_guard()
        g.record_result("mcp__x", params, success=True)
        g.record_interaction("mcp__x", params, approved=True)

    def test_history_is_keyed_by_the_redacted_signature(self, make_guard: Any, tmp_path: Path) -> None:
        """A call carrying a secret finds its own history (the stored key was redacted, the lookup was not)."""
        g = make_guard()
        call = {"command": "curl -H 'Authorization: Bearer abcdefghijklmnop' https://api.x"}
        for _ in range(3):
            g.record_result("bash", call, success=True)
        record = g.decide("bash", call)
        memory = next(v for v in record.layers if v.layer == "fusion").data["dimensions"]["memory"]
        assert memory["matched"] == 3
        assert "abcdefghijklmnop" not in json.dumps(whole_lines(tmp_path / "ws" / ".command-execution.jsonl"))


class TestCountingOwnAppends:
    def test_interleaved_writers_are_each_counted_once(self, make_guard: Any, tmp_path: Path) -> None:
        """A record is applied as written only when nothing landed before it; else it is read back."""
        a, b = make_guard(), make_guard()
        a.record_result("bash", {"command": "make"}, success=True)
        b.record_result("bash", {"command": "make"}, success=False)
        a.record_result("bash", {"command": "make"}, success=True)
        a.record_interaction("bash", {"command": "make"}, approved=True, satisfaction=5)
        for g in (a, b):
            g.state.aggregates.catch_up()
            tool, user = g.state.aggregates.tool("bash"), g.state.aggregates.user("bash")
            assert tool is not None and (tool.runs, tool.successes) == (3, 2)
            assert user is not None and (user.interactions, user.approvals) == (1, 1)
        lines = whole_lines(tmp_path / "ws" / ".command-execution.jsonl")
        assert [r["status"] for r in lines] == ["success", "failure", "success"]


class TestGuardedRecordsTheDecidedRisk:
    def test_sync_and_async_record_the_static_risk_of_the_decision(self, make_guard: Any, tmp_path: Path) -> None:
        import asyncio

        from guard import guarded

        g = make_guard()

        @guarded(tool="bash", guard=g, confirm=lambda record: True)
        def bash(command: str) -> None:
            return None

        @guarded(tool="bash", guard=g, confirm=lambda record: True)
        async def abash(command: str) -> None:
            return None

        bash("ls")
        bash("rm -rf src")
        asyncio.run(abash("cat README.md"))
        lines = whole_lines(tmp_path / "ws" / ".command-execution.jsonl")
        assert [(r["params"]["command"], r["risk"]) for r in lines] == [
            ("ls", "safe"),
            ("rm -rf src", "medium"),
            ("cat README.md", "safe"),
        ]


class TestMovedLogs:
    def test_appends_follow_the_path_after_the_log_is_moved_away(self, make_guard: Any, tmp_path: Path) -> None:
        """A long-lived writer kept appending to the moved file; the workspace lost those lines."""
        ws = tmp_path / "ws"
        g = make_guard(ws)
        g.decide("bash", {"command": "echo 1"})
        g.record_result("bash", {"command": "echo 1"}, success=True)
        (ws / ".fusion-decisions.jsonl").rename(tmp_path / "archived-decisions.jsonl")
        (ws / ".command-execution.jsonl").rename(tmp_path / "archived-executions.jsonl")
        g.decide("bash", {"command": "echo 2"})
        g.record_result("bash", {"command": "echo 2"}, success=False)
        assert [r["params"]["command"] for r in whole_lines(ws / ".fusion-decisions.jsonl")] == ["echo 2"]
        assert [r["status"] for r in whole_lines(ws / ".command-execution.jsonl")] == ["failure"]
        assert len(whole_lines(tmp_path / "archived-decisions.jsonl")) == 1
        stats = g.state.aggregates.tool("bash")
        assert stats is not None and (stats.runs, stats.successes) == (1, 0)  # recounted from the new file


class TestPackageExports:
    def test_importing_the_guarded_module_does_not_shadow_the_decorator(self) -> None:
        """After ``from guard.guarded import ...`` anywhere, ``from guard import guarded`` gave the module."""
        import subprocess
        import sys

        from .conftest import cli_env

        code = (
            "import types\n"
            "from guard.guarded import guarded as direct\n"
            "from guard import guarded\n"
            "assert guarded is direct and not isinstance(guarded, types.ModuleType), guarded\n"
            "import guard\n"
            "assert guard.Guard.__name__ == 'Guard'\n"
        )
        proc = subprocess.run([sys.executable, "-c", code], env=cli_env(), capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr
