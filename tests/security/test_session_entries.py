"""One dispatch is counted once in its session, whichever entry it came through (issue 13, deliverable 3).

The same call repeated is a loop (G202, from the third identical call). Before, the hook path
decided with ``save=False`` (tracking off) and the seed API never tracked: a loop never fired
through hooks, the daemon, ``fuse_decision_context`` or ``classify_with_fusion``. Each entry is
driven the way its users drive it; the first loop signal must come on the third call, not
earlier (counted twice) and not never (counted zero times).
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GUARD_CMD, guard_cli_env

COMMAND = "ls -la"
CALLS = 5
LOOP = "G202"


def first_loop(flags: list[bool]) -> int | None:
    """The 0-based index of the first call that saw the loop signal."""
    return next((i for i, hit in enumerate(flags) if hit), None)


def env(ws: Path, daemon: str = "off") -> dict[str, str]:
    e = guard_cli_env()
    for key in list(e):
        if key.startswith(("CLAUDE_CODE_", "GUARD_")) and key not in ("GUARD_SYSTEM_HEALTH",):
            del e[key]
    return e | {"GUARD_HOME": str(ws), "GUARD_HOOKS_DAEMON": daemon}


def pre(cwd: Path, event: str = "PreToolUse") -> dict[str, Any]:
    return {
        "session_id": "loop-1",
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": "Bash",
        "tool_input": {"command": COMMAND},
    }


def hook(ws: Path, payload: dict[str, Any], daemon: str = "off") -> dict[str, Any]:
    proc = subprocess.run(
        [*GUARD_CMD, "hook", "claude-code", "--workspace", str(ws)],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env(ws, daemon),
        timeout=60,
    )
    return json.loads(proc.stdout) if proc.stdout.strip() else {}


def decision_lines(ws: Path) -> list[dict[str, Any]]:
    path = ws / ".fusion-decisions.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []


def has_loop(line: dict[str, Any]) -> bool:
    return any(r["id"] == LOOP for r in line["reasons"])


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir(mode=0o700)
    (w / "guard.toml").write_text('[system]\nhealth = 90\n[memory]\nbackend = "history"\n')
    return w


@pytest.fixture
def served(ws: Path) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [*GUARD_CMD, "serve", "--workspace", str(ws)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env(ws, "auto"),
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("guard serve: listening on")
    yield proc
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=20)


class TestEveryEntryCountsOnce:
    def test_hook_in_process(self, ws: Path, tmp_path: Path) -> None:
        answers = [hook(ws, pre(tmp_path))["hookSpecificOutput"]["permissionDecision"] for _ in range(CALLS)]
        lines = decision_lines(ws)
        assert first_loop([has_loop(x) for x in lines]) == 2, answers
        assert answers[:2] == ["allow", "allow"] and set(answers[2:]) == {"ask"}
        assert {x["via"] for x in lines} == {"hook"}

    def test_hook_through_the_daemon(self, ws: Path, tmp_path: Path, served: subprocess.Popen[str]) -> None:
        for _ in range(CALLS):
            hook(ws, pre(tmp_path), daemon="auto")
        lines = decision_lines(ws)
        assert {x["via"] for x in lines} == {"daemon"}
        assert first_loop([has_loop(x) for x in lines]) == 2

    def test_a_permission_request_after_its_pre_tool_use_is_not_counted_again(self, ws: Path, tmp_path: Path) -> None:
        for _ in range(CALLS):
            hook(ws, pre(tmp_path))
            hook(ws, pre(tmp_path, "PermissionRequest"))
        pres = [x for x in decision_lines(ws) if x["event"] == "PreToolUse"]
        assert first_loop([has_loop(x) for x in pres]) == 2

    def test_guard_feed(self, ws: Path) -> None:
        lines = "".join(
            json.dumps({"event": "tool_dispatch", "tool": "bash", "params": {"command": COMMAND}, "session_id": "s1"})
            + "\n"
            for _ in range(CALLS)
        )
        proc = subprocess.run(
            [*GUARD_CMD, "feed", "-", "--workspace", str(ws)],
            input=lines,
            capture_output=True,
            text=True,
            env=env(ws),
            timeout=60,
        )
        out = [json.loads(x) for x in proc.stdout.splitlines() if x.strip()]
        assert len(out) == CALLS, proc.stderr
        assert first_loop([any(r["id"] == LOOP for r in x["reasons"]) for x in out]) == 2

    def test_guarded(self, make_guard: Any) -> None:
        from guard import guarded

        g = make_guard()
        asked: list[bool] = []

        def confirm(record: Any) -> bool:
            asked.append(True)
            return True

        @guarded(tool="bash", guard=g, session_id="s1", confirm=confirm)
        def run(command: str) -> str:
            return "ok"

        seen = []
        for _ in range(CALLS):
            before = len(asked)
            run(COMMAND)
            seen.append(len(asked) > before)
        assert first_loop(seen) == 2

    def test_seed_api_fuse_then_save_is_one_dispatch(self, workspace: Path) -> None:
        from guard.engine import MultiSourceFusionEngine

        engine = MultiSourceFusionEngine(workspace=workspace)
        try:
            seen = []
            for _ in range(CALLS):
                score = engine.fuse_decision_context("bash", {"command": COMMAND}, "s1")
                engine.save_decision("bash", score, "s1")
                seen.append(LOOP in {r.rule_id for r in score.record.reasons})
            assert first_loop(seen) == 2
            assert len(decision_lines(workspace)) == CALLS  # saved once each, by save_decision
        finally:
            engine.close()

    def test_classify_with_fusion(self, workspace: Path) -> None:
        from guard.engine import MultiSourceFusionEngine
        from guard.integrations.yolo_classifier import classify_with_fusion

        engine = MultiSourceFusionEngine(workspace=workspace)
        try:
            decisions = [
                classify_with_fusion("bash", {"command": COMMAND}, "s1", engine=engine)["decision"]
                for _ in range(CALLS)
            ]
            assert decisions[:2] == ["auto_allow", "auto_allow"] and "auto_allow" not in decisions[2:]
        finally:
            engine.close()
