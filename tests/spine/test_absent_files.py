"""Files that do not exist yet are watched without raising, and still seen the moment they appear.

A new workspace has no results or answers and a new session has no file: ``decide`` used to
``stat`` each of them and pay a ``FileNotFoundError`` on every call. A file missing at the last
look is now asked after with ``access`` until it appears. What must not change: a long-lived
process (the daemon, an embedding application) sees another process's first result, answer and
session file on its very next decision. The other process here is a real one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from guard.behavior import files
from guard.behavior.tracker import session_file
from tests.conftest import guard_cli_env

WRITER = """
import sys
from guard import Guard
g = Guard(sys.argv[1], {"system.health": 90, "memory.backend": "history"})
for _ in range(3):
    g.record_result("bash", {"command": "pytest -q"}, session_id="s1", success=False)
g.record_interaction("bash", {"command": "pytest -q"}, session_id="s1", approved=False)
g.close()
"""


def _other_process_writes(workspace: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", WRITER, str(workspace)],
        env=guard_cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr


def _ids(record: Any) -> set[str]:
    return {r.rule_id for v in record.layers for r in v.reasons}


def _matched(record: Any) -> tuple[int, int]:
    """How many runs and answers of this very call the fused score weighed."""
    dims = record.layer("fusion").data["dimensions"]
    return dims["cmd_success"].get("matched", 0), dims["user_pref"].get("matched", 0)


def test_a_long_lived_guard_sees_files_another_process_creates(make_guard: Any, workspace: Path) -> None:
    g = make_guard()
    first = g.decide("bash", {"command": "pytest -q"}, session_id="s1")
    again = g.decide("bash", {"command": "pytest -q"}, session_id="s1")
    history = [workspace / ".command-execution.jsonl", workspace / ".user-interactions.jsonl"]
    assert not any(p.exists() for p in history)  # near-miss: nothing to read, nothing read
    assert g.state.aggregates.lines_applied == 0
    assert "G201" not in _ids(again)
    assert _matched(again) == _matched(first) == (0, 0)

    _other_process_writes(workspace)
    assert all(p.exists() for p in history) and session_file(workspace / "sessions", "s1").exists()

    after = g.decide("bash", {"command": "pytest -q"}, session_id="s1")
    assert g.state.aggregates.lines_applied == 4  # three results and one answer, read on this decision
    assert "G201" in _ids(after)  # the session file's failures: "3 failed result(s) in this session"
    assert _matched(after) == (3, 1)  # the fused score weighs them: 3 runs, 1 answer of this call


def test_unchanged_reads_absent_present_and_changed(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    assert files.unchanged(path, None)  # absent, and still absent
    path.write_text(json.dumps({"a": 1}))
    assert not files.unchanged(path, None)  # it appeared
    seen = files.stamp(path)
    assert files.unchanged(path, seen)
    path.write_text(json.dumps({"a": 22}))
    assert not files.unchanged(path, seen)  # rewritten
    os.unlink(path)
    assert not files.unchanged(path, seen)  # it went away
