"""Time is clamped: a timestamp from the future (an event, a file, another writer) counts as now + a small skew.

Before, one result dated 9999 froze the decayed history: every later failure counted as
ancient and the success score never moved again. Past timestamps are left as they are.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

from guard.core import Guard
from guard.model import ToolCall
from guard.workspace import EXECUTIONS, SESSIONS_DIR, STATE
from tests.conftest import ROOT, guard_cli_env

CONFIG = {"system.health": 90, "memory.backend": "history"}
# medium risk: a safe or low call's own failures never pull it below its prior (the dev loop),
# so they could not show whether learning froze
CMD = {"command": "ssh build-host uptime"}
NOW = "2026-11-20 12:00:00"


@pytest.fixture
def make(tmp_path: Path) -> Iterator[Any]:
    made: list[Guard] = []

    def make_guard(**config: Any) -> Guard:
        g = Guard(tmp_path / "ws", CONFIG | config)
        made.append(g)
        return g

    yield make_guard
    for g in made:
        g.close()


def success_score(g: Guard) -> float:
    """The fused cmd_success component, in a session of its own (no breaker of the failures' sessions)."""
    record = g.decide("bash", CMD, session_id="fresh", save=False)
    assert record.layer("fusion") is not None, record.reasons
    return float(record.components["cmd_success"])


def fail_40(g: Guard) -> None:
    for i in range(40):  # each in its own session: the failure streak must not open a breaker
        g.record_result("bash", CMD, session_id=f"f{i}", success=False)


def feed_lines(ws: Path, lines: list[dict[str, Any]]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "guard", "feed", "--workspace", str(ws)],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        env=guard_cli_env(),
        cwd=ROOT,
        timeout=120,
    )


def result(status: str, ts: str | None = None) -> dict[str, Any]:
    line: dict[str, Any] = {"event": "tool_result", "tool": "bash", "params": CMD, "status": status}
    if ts is not None:
        line["ts"] = ts
    return line


# -- the Python API ------------------------------------------------------------------------
def test_a_result_dated_9999_does_not_freeze_learning(make: Any) -> None:
    with freeze_time(NOW):
        g = make()
        g.record_result("bash", CMD, success=True, timestamp=datetime(9999, 1, 1, tzinfo=UTC))
        before = success_score(g)
        fail_40(g)
        after = success_score(g)
    assert after < before - 20, (before, after)


def test_a_future_interaction_does_not_freeze_the_approval_rate(make: Any) -> None:
    with freeze_time(NOW):
        g = make()
        g.record_interaction("bash", CMD, approved=True, timestamp=datetime(9999, 1, 1, tzinfo=UTC))
        before = float(g.decide("bash", CMD, session_id="fresh", save=False).components["user_pref"])
        for i in range(40):
            g.record_interaction("bash", CMD, session_id=f"f{i}", approved=False)
        after = float(g.decide("bash", CMD, session_id="fresh", save=False).components["user_pref"])
    assert after < before - 10, (before, after)


def test_past_timestamps_still_count_as_old(make: Any) -> None:
    """Near miss: clamping is only for the future; a result from last year is decayed as before."""
    with freeze_time(NOW):
        g = make()
        g.record_result("bash", CMD, success=False, timestamp=datetime(2025, 1, 1, tzinfo=UTC))
        old = g.state.aggregates.tool("bash")
        assert old is not None
        assert old.decayed.t == datetime(2025, 1, 1, tzinfo=UTC).timestamp()


def test_the_recorded_line_carries_the_clamped_time(make: Any, tmp_path: Path) -> None:
    with freeze_time(NOW):
        g = make()
        g.record_result("bash", CMD, success=True, timestamp=datetime(9999, 1, 1, tzinfo=UTC))
    line = json.loads((tmp_path / "ws" / EXECUTIONS).read_text().splitlines()[-1])
    assert line["timestamp"].startswith("2026-11-20T12:05")


def test_the_skew_is_a_setting(make: Any) -> None:
    with freeze_time(NOW):
        g = make(**{"guard.clock_skew_seconds": 3600})
        in_an_hour = datetime.now(UTC) + timedelta(minutes=50)
        g.record_result("bash", CMD, success=True, timestamp=in_an_hour)
        stats = g.state.aggregates.tool("bash")
        assert stats is not None and stats.decayed.t == in_an_hour.timestamp()


def test_a_future_dispatch_time_is_clamped(make: Any) -> None:

    with freeze_time(NOW):
        g = make()
        call = ToolCall("bash", CMD, "s1", timestamp=datetime(9999, 1, 1, tzinfo=UTC))
        record = g.decide_call(call)
    assert record.timestamp.year == 2026


# -- files other programs write --------------------------------------------------------------
def test_a_future_line_in_the_execution_log_does_not_freeze_it(make: Any, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir(mode=0o700)
    with (ws / EXECUTIONS).open("w") as f:  # another program, with a clock far ahead
        f.write(json.dumps({"timestamp": "9999-12-31T00:00:00+00:00", "tool": "bash", "status": "success"}) + "\n")
    with freeze_time(NOW):
        g = make()
        before = success_score(g)
        fail_40(g)
        after = success_score(g)
    assert after < before - 20, (before, after)


def test_a_future_state_file_does_not_freeze_it(make: Any, tmp_path: Path) -> None:
    with freeze_time(NOW):
        g = make()
        g.record_result("bash", CMD, success=True)
        g.close()
    state_path = tmp_path / "ws" / STATE
    state = json.loads(state_path.read_text())
    tables = [*state["tools"].values(), *state["users"].values()]
    tables += [stats for name in ("op_tools", "family_tools", "op_users", "family_users") for _, stats in state[name]]
    assert len(tables) >= 3  # the tool, its operation and its family
    for stats in tables:
        stats["decayed"][2] = 253402214400.0  # year 9999, at every level of the hierarchy
    state_path.write_text(json.dumps(state))
    with freeze_time(NOW):
        g = make()
        before = success_score(g)
        fail_40(g)
        after = success_score(g)
    assert after < before - 20, (before, after)


def test_a_future_session_file_is_clamped(make: Any, tmp_path: Path) -> None:
    with freeze_time(NOW):
        g = make()
        g.decide("bash", CMD, session_id="s1")
        g.record_result("bash", CMD, session_id="s1", success=False)
        g.close()
    files = [p for p in (tmp_path / "ws" / SESSIONS_DIR).glob("*.json") if not p.name.endswith(".events.jsonl")]
    assert files
    for path in files:
        doc = json.loads(path.read_text())
        if "fail" in doc:
            doc["fail"][2] = 253402214400.0
            doc["updated"] = 253402214400.0
            path.write_text(json.dumps(doc))
    with freeze_time(NOW):
        g = make()
        state = g.state.sessions.get("s1")
        assert state.fail_t < 2e9 and state.updated < 2e9


# -- guard feed ----------------------------------------------------------------------------
def test_guard_feed_a_9999_result_then_40_failures(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    dispatch = {"event": "tool_dispatch", "tool": "bash", "params": CMD, "session_id": "fresh"}
    proc = feed_lines(ws, [result("success", "9999-12-31T00:00:00Z"), dispatch])
    assert proc.returncode == 0, proc.stderr
    before = json.loads(proc.stdout.splitlines()[-1])["components"]["cmd_success"]
    failures = [result("failure") | {"session_id": f"f{i}"} for i in range(40)]
    proc = feed_lines(ws, [*failures, dispatch])
    assert proc.returncode == 0, proc.stderr
    after = json.loads(proc.stdout.splitlines()[-1])["components"]["cmd_success"]
    assert after < before - 20, (before, after)
