"""A hook event's parameters are redacted once, where the event enters, and that redacted
form is what every file receives: the decision log, the pending question, the answer and the
result history lines. With a fake HOME and GUARD_HOME, through ``guard hook claude-code``;
then every byte of every file under both is searched for the secrets (not only the files
named here, so renaming a history file cannot hide a leak).
"""

from __future__ import annotations

import json
import os
import secrets
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from guard import workspace as ws_names
from guard.integrations.pending import FILENAME as PENDING

REPO = Path(__file__).resolve().parents[2]


def _env(home: Path, ws: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GUARD_")}
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env |= {"HOME": str(home), "GUARD_HOME": str(ws), "GUARD_SYSTEM_HEALTH": "90", "LANCE_LOG": "error"}
    env |= {"GUARD_HOOKS_DAEMON": "off", "GUARD_MEMORY_BACKEND": "history"}
    env.pop("CLAUDE_CODE_CHILD_SESSION", None)
    return env


def _hook(env: dict[str, str], payload: dict[str, Any]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "guard", "hook", "claude-code"],
        input=json.dumps(payload).encode(),
        env=env,
        capture_output=True,
        timeout=180,
        check=False,
    )
    assert proc.returncode in (0, 2), proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout or b"{}")
    return out


def _event(name: str, params: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "session_id": "redact-once",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/srv/app",
        "permission_mode": "default",
        "hook_event_name": name,
        "tool_name": "mcp__deploy__run",
        "tool_input": params,
        "tool_use_id": "toolu_redact_once",
        **extra,
    }


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _needles(secret: str) -> list[bytes]:
    return [secret.encode(), json.dumps(secret)[1:-1].encode(), secret[-12:].encode()]


@pytest.fixture
def where(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    home, ws = tmp_path / "home", tmp_path / "guard-home"
    home.mkdir()
    return home, ws, _env(home, ws)


def test_one_asked_call_writes_its_secrets_nowhere(where: tuple[Path, Path, dict[str, str]]) -> None:
    """PreToolUse asks (decision line + pending question), PostToolUse answers it (answer +
    result lines): each holds the call, redacted; no file holds a secret; plain values stay."""
    home, ws, env = where
    token = "ghp_" + "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(36))
    password = "pw-" + secrets.token_hex(12)
    params = {"title": "rotate the deploy key", "body": f"use {token} for the deploy", "api_key": password}

    asked = _hook(env, _event("PreToolUse", params))
    assert asked["hookSpecificOutput"]["permissionDecision"] == "ask"
    pending = (ws / PENDING).read_bytes()  # the open question, before the answer takes it
    assert b"rotate the deploy key" in pending and b"[REDACTED" in pending
    assert not any(n in pending for s in (token, password) for n in _needles(s))

    _hook(env, _event("PostToolUse", params, tool_response={"success": True}))

    logs = {
        "decision": _lines(ws / ws_names.DECISIONS),
        "answer": _lines(ws / ws_names.INTERACTIONS),
        "result": _lines(ws / ws_names.EXECUTIONS),
    }
    for name, lines in logs.items():
        mine = [x for x in lines if x.get("tool") == "mcp__deploy__run"]
        assert mine, f"no {name} line for the call"
        for line in mine:
            assert line["params"]["title"] == "rotate the deploy key", name  # the near-miss: kept as is
            assert line["params"]["api_key"].startswith("[REDACTED"), name
            assert "[REDACTED:github" in line["params"]["body"], name
    assert logs["answer"][-1]["action"] == "approved"

    files = [p for root in (ws, home) for p in root.rglob("*") if p.is_file()]
    assert files
    leaked = {p.name for p in files for s in (token, password) for n in _needles(s) if n in p.read_bytes()}
    assert leaked == set()
