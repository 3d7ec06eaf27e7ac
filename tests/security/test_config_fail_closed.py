"""Configuration that fails closed: a guard.toml that stops parsing never silently drops its deny and ask rules.

Before, a typo in guard.toml dropped every rule with one stderr warning ("using environment and
defaults") that a hook's host never shows. Now the last good copy stands in (without its allow
rules), every call that is not a safe read is confirmed naming the file and line (G005), and
``guard config --check`` says what is wrong before it matters.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from guard.configfile import GOOD_COPY
from tests.conftest import ROOT, guard_cli_env

GOOD = """\
[system]
health = 90

[permissions]
deny = ["Bash(make deploy:*)"]
ask = ["Bash(make release:*)"]
allow = ["Bash(git push origin main)"]
"""
BROKEN = GOOD.replace('ask = ["Bash(make release:*)"]', 'ask = ["Bash(make release:*)"\n')  # unclosed array


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def run(ws: Path, home: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "guard", *args],
        input=stdin.decode(),
        capture_output=True,
        text=True,
        env=guard_cli_env() | {"HOME": str(home), "GUARD_HOME": str(ws), "GUARD_HOOKS_DAEMON": "off"},
        cwd=ROOT,
        timeout=60,
    )


def check(ws: Path, home: Path, command: str) -> tuple[int, dict[str, Any], str]:
    proc = run(ws, home, "check", "bash", json.dumps({"command": command}), "--json")
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def hook(ws: Path, home: Path, command: str, *flags: str) -> dict[str, Any]:
    payload = {
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "cwd": "/tmp",
    }
    proc = run(ws, home, "hook", "claude-code", *flags, stdin=json.dumps(payload).encode())
    assert "Traceback" not in proc.stderr, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)["hookSpecificOutput"]
    return out


def break_it(ws: Path, home: Path, text: str = BROKEN) -> None:
    (ws / "guard.toml").write_text(GOOD)
    assert check(ws, home, "ls")[0] == 0  # guard reads the good file once and keeps a copy
    (ws / "guard.toml").write_text(text)


# -- the last good copy ------------------------------------------------------------------------
def test_a_parsed_file_is_kept_privately(ws: Path, home: Path) -> None:
    (ws / "guard.toml").write_text(GOOD)
    check(ws, home, "ls")
    copy = ws / GOOD_COPY
    assert copy.read_text() == GOOD
    assert os.stat(copy).st_mode & 0o777 == 0o600


def test_deny_rules_survive_a_broken_file(ws: Path, home: Path) -> None:
    break_it(ws, home)
    code, record, err = check(ws, home, "make deploy prod")
    assert code == 20 and record["decision"] == "block"
    assert "guard.toml:8:" in err  # the warning names the file and line


def test_ask_rules_survive_a_broken_file(ws: Path, home: Path) -> None:
    break_it(ws, home)
    code, _, _ = check(ws, home, "make release v1")
    assert code in (10, 20)


def test_allow_rules_do_not_survive_a_broken_file(ws: Path, home: Path) -> None:
    (ws / "guard.toml").write_text(GOOD)
    assert check(ws, home, "git push origin main")[0] == 0  # allowed by the user's rule
    (ws / "guard.toml").write_text(BROKEN)
    code, record, _ = check(ws, home, "git push origin main")
    assert code == 10
    assert any(r["id"] == "G005" and "guard.toml:8:" in r["message"] for r in record["reasons"])


def test_a_file_broken_from_the_start_still_confirms_everything_but_reads(ws: Path, home: Path) -> None:
    (ws / "guard.toml").write_text(BROKEN)
    assert check(ws, home, "make build")[0] == 10
    assert check(ws, home, "rm -rf /")[0] == 20
    assert check(ws, home, "ls -la")[0] == 0  # near miss: safe reads still run


def test_invalid_utf8_names_the_line(ws: Path, home: Path) -> None:
    (ws / "guard.toml").write_bytes(b"[system]\nhealth = 90\n# caf\xe9\n")
    code, record, _ = check(ws, home, "make build")
    assert code == 10
    assert any(r["id"] == "G005" and "guard.toml:3:" in r["message"] for r in record["reasons"])


def test_fixing_the_file_ends_the_confirmations(ws: Path, home: Path) -> None:
    break_it(ws, home)
    assert check(ws, home, "make build")[0] == 10
    (ws / "guard.toml").write_text(GOOD)
    _, record, _ = check(ws, home, "make build")
    assert "G005" not in [r["id"] for r in record["reasons"]]


# -- through the hook -------------------------------------------------------------------------
def test_hook_asks_about_non_reads_naming_file_and_line(ws: Path, home: Path) -> None:
    break_it(ws, home)
    out = hook(ws, home, "make build")
    assert out["permissionDecision"] == "ask"
    assert "guard.toml:8:" in out["permissionDecisionReason"] and "G005" in out["permissionDecisionReason"]


def test_headless_hook_denies_non_reads_naming_file_and_line(ws: Path, home: Path) -> None:
    break_it(ws, home)
    out = hook(ws, home, "make build", "--headless")
    assert out["permissionDecision"] == "deny"
    assert "guard.toml:8:" in out["permissionDecisionReason"]


def test_hook_keeps_deny_rules_and_allows_reads(ws: Path, home: Path) -> None:
    break_it(ws, home)
    assert hook(ws, home, "make deploy prod")["permissionDecision"] == "deny"
    assert hook(ws, home, "ls -la")["permissionDecision"] == "allow"


# -- guard config --check ----------------------------------------------------------------------
def config_check(tmp_path: Path, text: str | bytes, *extra: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "candidate.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return subprocess.run(
        [sys.executable, "-m", "guard", "config", "--check", str(path), *extra],
        capture_output=True,
        text=True,
        env=guard_cli_env(),
        cwd=ROOT,
        timeout=60,
    )


def test_check_a_good_file(tmp_path: Path) -> None:
    proc = config_check(tmp_path, GOOD)
    assert proc.returncode == 0 and proc.stdout.strip().endswith(": ok")


def test_check_a_parse_error_with_line_and_column(tmp_path: Path) -> None:
    proc = config_check(tmp_path, "[weights]\nmemory = = 0.3\n")
    assert proc.returncode == 2
    assert "candidate.toml:2:" in proc.stdout and ": error: " in proc.stdout


def test_check_invalid_utf8(tmp_path: Path) -> None:
    proc = config_check(tmp_path, b"[system]\nhealth = 90 # \xff\n")
    assert proc.returncode == 2 and "candidate.toml:2:" in proc.stdout and "UTF-8" in proc.stdout


def test_check_bad_values_and_bad_rules_are_errors(tmp_path: Path) -> None:
    proc = config_check(tmp_path, '[thresholds]\nauto_allow = "high"\n[permissions]\ndeny = ["((("]\n')
    assert proc.returncode == 2
    assert "candidate.toml:2:1: error: thresholds.auto_allow" in proc.stdout
    assert "candidate.toml:4:1: error: permissions.deny" in proc.stdout


def test_check_unknown_keys_and_weights_are_warnings(tmp_path: Path) -> None:
    proc = config_check(tmp_path, "[weights]\nmemory = 0.5\nmemroy = 0.1\n")
    assert proc.returncode == 0
    assert "candidate.toml:3:1: warning: unknown key 'weights.memroy'" in proc.stdout
    assert "sum to 1.2" in proc.stdout


def test_check_inverted_thresholds_are_an_error(tmp_path: Path) -> None:
    proc = config_check(tmp_path, "[thresholds]\nauto_allow = 40\nrequest_confirm = 60\n")
    assert proc.returncode == 2 and "request_confirm is above" in proc.stdout


def test_check_json(tmp_path: Path) -> None:
    proc = config_check(tmp_path, "a = [1,\n", "--json")
    assert proc.returncode == 2
    out = json.loads(proc.stdout)
    assert out["ok"] is False and out["findings"][0]["level"] == "error" and out["findings"][0]["line"] == 2


def test_check_the_workspace_file_by_default(ws: Path, home: Path) -> None:
    (ws / "guard.toml").write_text(BROKEN)
    proc = run(ws, home, "config", "--check")
    assert proc.returncode == 2 and "guard.toml:8:" in proc.stdout


# -- a project's .guard.toml -------------------------------------------------------------------
def test_a_broken_project_rule_file_confirms_non_reads_naming_the_line(ws: Path, home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / ".guard.toml").write_text('[permissions]\ndeny = ["Bash(make deploy:*)"\n')
    proc = run(ws, home, "check", "bash", json.dumps({"command": "make build"}), "--cwd", str(project), "--json")
    assert proc.returncode == 10, proc.stdout
    reasons = json.loads(proc.stdout)["reasons"]
    assert any(r["id"] == "G005" and ".guard.toml:3:" in r["message"] for r in reasons), reasons
    read = run(ws, home, "check", "bash", json.dumps({"command": "ls"}), "--cwd", str(project))
    assert read.returncode == 0  # near miss: reads still run
