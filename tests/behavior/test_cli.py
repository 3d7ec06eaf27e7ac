"""guard reset and guard stats --session, as a person runs them (real subprocesses, real clock)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import default_guard

ROOT = Path(__file__).resolve().parents[2]
MAKE = {"command": "make deploy"}


def guard(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GUARD_SYSTEM_HEALTH": "90"}
    return subprocess.run(
        [sys.executable, "-m", "guard", *args, "--workspace", str(workspace)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


@pytest.fixture
def tripped(tmp_path: Path) -> Path:
    """Session s1: make deploy failed 5 times (breaker open), a web page was read, a secret too."""
    with default_guard(tmp_path) as g:
        for _ in range(5):
            g.decide("bash", MAKE, session_id="s1")
            g.record_result("bash", MAKE, session_id="s1", success=False)
        g.decide("web_fetch", {"url": "https://example.org/x"}, session_id="s1")
        g.record_result("web_fetch", {"url": "https://example.org/x"}, session_id="s1", success=True)
        g.decide("read", {"file_path": "/home/u/.aws/credentials"}, session_id="s1")  # asked about
        g.record_result("read", {"file_path": "/home/u/.aws/credentials"}, session_id="s1", success=True)  # and ran
        for _ in range(5):
            g.record_result("bash", MAKE, session_id="s2", success=False)
    return tmp_path


def test_stats_session_shows_health_signals_breaker_taint_and_tier(tripped: Path):
    out = guard(tripped, "stats", "--session", "s1")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "health " in text and "G201" in text and "G223" in text
    assert "open" in text and "bash:make deploy" in text and "failCount" in text
    assert "taint: untrusted content from 'web_fetch:https://example.org/x'" in text
    assert "secret read: 'read:/home/u/.aws/credentials'" in text
    assert "tier: Seed" in text and "150 lines per write" in text


def test_stats_session_json(tripped: Path):
    out = guard(tripped, "stats", "--session", "s1", "--json")
    doc = json.loads(out.stdout)
    assert doc["session_id"] == "s1" and doc["health_score"] < 75
    assert {s["id"] for s in doc["signals"]} >= {"G201", "G223"}
    assert doc["breakers"][0]["state"] == "open" and doc["breakers"][0]["failCount"] == 5
    assert doc["tier"]["tier"] == "Seed" and doc["counts"]["failures"] == 5


def test_stats_without_session_is_unchanged(tripped: Path):
    out = guard(tripped, "stats")
    assert out.returncode == 0 and out.stdout.splitlines()[0].split()[:3] == ["tool", "runs", "success"]


def test_stats_of_an_unknown_session(tmp_path: Path):
    out = guard(tmp_path, "stats", "--session", "nope")
    assert out.returncode == 0 and "no behavior recorded for session 'nope'" in out.stdout


def test_reset_task_closes_the_breaker_and_check_runs_again(tripped: Path):
    check = ["check", "bash", json.dumps(MAKE), "--session-id", "s1"]
    assert guard(tripped, *check).returncode == 20
    out = guard(tripped, "reset", "--session", "s1", "--task", "make deploy")
    assert out.returncode == 0 and "closed the breaker of 'bash:make deploy'" in out.stdout
    assert guard(tripped, *check).returncode != 20
    # the other session's breaker is untouched
    assert guard(tripped, "check", "bash", json.dumps(MAKE), "--session-id", "s2").returncode == 20


def test_reset_task_everywhere_by_its_id(tripped: Path):
    doc = json.loads(guard(tripped, "stats", "--session", "s2", "--json").stdout)
    task = doc["breakers"][0]["task"]
    out = guard(tripped, "reset", "--task", task, "--json")
    assert len(json.loads(out.stdout)["reset"]) == 2  # s1 and s2
    assert guard(tripped, "check", "bash", json.dumps(MAKE), "--session-id", "s2").returncode != 20


def test_reset_session_forgets_taint_and_counters(tripped: Path):
    assert "cleared" in guard(tripped, "reset", "--session", "s1").stdout
    doc = json.loads(guard(tripped, "stats", "--session", "s1", "--json").stdout)
    assert doc["known"] is False and doc["signals"] == [] and doc["taint"] is None


def test_reset_all_and_bad_usage(tripped: Path):
    assert guard(tripped, "reset").returncode == 2
    assert guard(tripped, "reset", "--all", "--session", "s1").returncode == 2
    out = guard(tripped, "reset", "--all")
    assert out.returncode == 0 and out.stdout.count("cleared") == 2
    assert guard(tripped, "reset", "--all").stdout.strip() == "nothing to reset"
    assert (tripped / "tiers.json").exists()  # earned points are kept
