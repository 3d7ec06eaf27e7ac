"""``guard hook`` and ``guard approve`` as the hosts run them: one process per event."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hookhelpers import (
    ALLOW,
    ASK,
    BLOCK,
    decisions,
    executions,
    file_mode,
    hook_env,
    interactions,
    pending,
    run_hook,
    sample,
    with_command,
)

from tests.conftest import GUARD_CMD
from tests.security.ptyrun import person_env, run_on_tty, type_the_code


def claude(event: str, command: str, call_id: str, **extra: Any) -> dict[str, Any]:
    payload = with_command(sample("claude-code", "pretooluse_bash.in.json"), command)
    payload |= {"hook_event_name": event, "tool_use_id": call_id}
    if event == "PostToolUse":
        payload |= {
            "tool_response": {"stdout": "ok", "stderr": "", "interrupted": False, "isImage": False},
            "duration_ms": 12,
        }
    if event == "PostToolUseFailure":
        payload |= {"error": "Exit code 1\nfailed", "is_interrupt": False, "duration_ms": 30}
    return payload | extra


def answer(out: Any) -> str:
    return str(out.json["hookSpecificOutput"]["permissionDecision"])


def test_a_claude_code_session_end_to_end(ws: Path) -> None:
    """PreToolUse → PostToolUse sequences, through the real CLI, and what lands in the workspace."""
    steps = [
        (claude("PreToolUse", ASK, "toolu_1"), "ask"),
        (claude("PostToolUse", ASK, "toolu_1"), None),  # ran: the person approved
        (claude("PreToolUse", ALLOW, "toolu_2"), "allow"),
        (claude("PostToolUse", ALLOW, "toolu_2"), None),
        (claude("PreToolUse", "npm run deploy", "toolu_3"), "ask"),
        (sample("claude-code", "userpromptsubmit.in.json"), None),  # a new prompt instead: declined
        (claude("PreToolUse", "make test", "toolu_4"), "ask"),
        (claude("PostToolUseFailure", "make test", "toolu_4"), None),
        (claude("PreToolUse", BLOCK, "toolu_5"), "deny"),
    ]
    for payload, expected in steps:
        out = run_hook("claude-code", payload, ws)
        assert out.code == 0, out.stderr
        if expected is None:
            assert out.json == {}
        else:
            assert answer(out) == expected, payload
    assert [(d["decision"], d["call_id"]) for d in decisions(ws)] == [
        ("request_confirm", "toolu_1"),
        ("auto_allow", "toolu_2"),
        ("request_confirm", "toolu_3"),
        ("request_confirm", "toolu_4"),
        ("block", "toolu_5"),
    ]
    assert all(d["host"] == "claude-code" and d["session_id"] == "abc123" for d in decisions(ws))
    assert [(i["params"]["command"], i["action"]) for i in interactions(ws)] == [
        (ASK, "approved"),
        ("npm run deploy", "denied"),
        ("make test", "approved"),
    ]
    assert [(e["params"]["command"], e["status"]) for e in executions(ws)] == [
        (ASK, "success"),
        (ALLOW, "success"),
        ("make test", "failure"),
    ]
    assert pending(ws) == []
    for name in (
        ".fusion-decisions.jsonl",
        ".user-interactions.jsonl",
        ".command-execution.jsonl",
        ".guard-pending.json",
    ):
        assert file_mode(ws / name) == 0o600
    assert file_mode(ws) == 0o700


def test_secrets_in_a_hooked_call_are_redacted_everywhere_guard_writes(ws: Path) -> None:
    token = "ghp_" + "A1b2C3d4" * 5
    run_hook("claude-code", claude("PreToolUse", f"curl -H 'Authorization: token {token}' x.io", "toolu_1"), ws)
    run_hook("claude-code", claude("PostToolUse", f"curl -H 'Authorization: token {token}' x.io", "toolu_1"), ws)
    for name in (
        ".fusion-decisions.jsonl",
        ".guard-pending.json",
        ".user-interactions.jsonl",
        ".command-execution.jsonl",
    ):
        if (ws / name).exists():
            assert token not in (ws / name).read_text(), name


def test_codex_out_of_band_approval_through_guard_approve(ws: Path) -> None:
    payload = with_command(sample("codex", "pretooluse_bash.in.json"), ASK)
    denied = run_hook("codex", payload, ws)
    reason = denied.json["hookSpecificOutput"]["permissionDecisionReason"]
    [entry] = pending(ws)
    assert f"`guard approve {entry['id']}`" in reason
    listing = subprocess.run(
        [*GUARD_CMD, "approve", "--workspace", str(ws)], capture_output=True, text=True, env=hook_env()
    )
    assert entry["id"] in listing.stdout and "bash:rm -rf build" in listing.stdout
    # the person, at their own terminal (tests/security/test_approve_needs_a_person.py: without one, refused)
    approved = run_on_tty([*GUARD_CMD, "approve", entry["id"], "--workspace", str(ws)], person_env(), type_the_code)
    assert approved.code == 0 and "approved" in approved.stdout
    assert [i["action"] for i in interactions(ws)] == ["approved"]
    assert run_hook("codex", payload, ws).stdout == ""  # the retry runs
    assert run_hook("codex", payload, ws).json is not None  # and only that once


def test_guard_approve_deny_and_unknown_ids(ws: Path) -> None:
    run_hook("codex", with_command(sample("codex", "pretooluse_bash.in.json"), ASK), ws)
    missing = subprocess.run(
        [*GUARD_CMD, "approve", "nope", "--workspace", str(ws)], capture_output=True, text=True, env=hook_env()
    )
    assert missing.returncode == 2 and "no call is waiting" in missing.stderr
    denied = subprocess.run(
        [*GUARD_CMD, "approve", "last", "--deny", "--workspace", str(ws)],
        capture_output=True,
        text=True,
        env=hook_env(),
    )
    assert denied.returncode == 0 and [i["action"] for i in interactions(ws)] == ["denied"]
    assert pending(ws) == []


# -- failing closed, per host ----------------------------------------------------------------------------
def refused(host: str, out: Any) -> bool:
    body = out.json
    return {
        "claude-code": lambda: body["hookSpecificOutput"]["permissionDecision"] == "deny",
        "codex": lambda: body["hookSpecificOutput"]["permissionDecision"] == "deny",
        "gemini": lambda: body["decision"] == "deny",
        "cursor": lambda: body["permission"] == "deny" and body["continue"] is False,
        "openclaw": lambda: body["block"] is True,
    }[host]()


UNREADABLE_EXIT = {"claude-code": 2, "codex": 0, "gemini": 2, "cursor": 0, "openclaw": 0}


@pytest.mark.parametrize("host", sorted(UNREADABLE_EXIT))
@pytest.mark.parametrize("raw", [b"", b"{not json", b"[]", b'{"unrelated": true}'])
def test_garbage_or_empty_stdin_is_refused_in_the_hosts_format(host: str, raw: bytes, ws: Path) -> None:
    out = run_hook(host, raw, ws)
    assert out.code == UNREADABLE_EXIT[host]
    assert refused(host, out)
    assert "guard" in out.stderr


WRONG_SHAPE = {
    "claude-code": lambda: sample("claude-code", "pretooluse_bash.in.json") | {"tool_input": "rm -rf build"},
    "codex": lambda: sample("codex", "pretooluse_bash.in.json") | {"tool_name": None},
    "gemini": lambda: sample("gemini", "beforetool.in.json") | {"tool_input": [1]},
    "cursor": lambda: sample("cursor", "beforeshellexecution.in.json") | {"command": 42},
    "openclaw": lambda: {"event": {"toolName": "exec", "params": "rm -rf build"}, "ctx": {}},
}


@pytest.mark.parametrize("host", sorted(WRONG_SHAPE))
def test_a_payload_of_the_wrong_shape_is_denied(host: str, ws: Path) -> None:
    out = run_hook(host, WRONG_SHAPE[host](), ws)
    assert out.code == 0
    body = json.dumps(out.json)
    assert "cannot read" in body and ("deny" in body or '"block": true' in body)
    assert decisions(ws) == []


@pytest.mark.parametrize("host", sorted(WRONG_SHAPE))
@pytest.mark.parametrize("command", [ALLOW, ASK, BLOCK])
def test_an_unusable_workspace_keeps_the_static_verdict(host: str, command: str, tmp_path: Path) -> None:
    """Nothing can be recorded: safe reads may run, everything else is asked about or denied, saying why."""
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    payload = {
        "claude-code": lambda: with_command(sample("claude-code", "pretooluse_bash.in.json"), command),
        "codex": lambda: with_command(sample("codex", "pretooluse_bash.in.json"), command),
        "gemini": lambda: with_command(sample("gemini", "beforetool.in.json"), command),
        "cursor": lambda: with_command(sample("cursor", "beforeshellexecution.in.json"), command),
        "openclaw": lambda: with_command(sample("openclaw", "before_tool_call.event.json"), command),
    }[host]()
    out = run_hook(host, payload, not_a_dir)
    assert out.code in (0, 2), out.stderr
    assert "cannot write its workspace" in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
    body = json.dumps(out.json)
    refused = any(word in body for word in ('"ask"', '"deny"', "requireApproval", '"block": true'))
    assert refused or command == ALLOW, body
    if command == BLOCK:
        assert '"ask"' not in body and "requireApproval" not in body, body


def test_an_unknown_host_is_refused_in_claude_codes_format() -> None:
    proc = subprocess.run([*GUARD_CMD, "hook", "vscode"], input=b"{}", capture_output=True, env=hook_env())
    assert proc.returncode == 2
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert b"unknown host" in proc.stderr


def test_hook_help_goes_to_the_full_parser() -> None:
    proc = subprocess.run([*GUARD_CMD, "hook", "--help"], capture_output=True, text=True, env=hook_env())
    assert proc.returncode == 0 and "claude-code, codex, gemini" in proc.stdout


# -- lean ---------------------------------------------------------------------------------------------------
def imported_modules(stderr: str) -> set[str]:
    return {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_an_in_process_hook_loads_no_lancedb_and_no_parser_for_other_commands(ws: Path) -> None:
    proc = subprocess.run(
        [*GUARD_CMD[:1], "-X", "importtime", *GUARD_CMD[1:], "hook", "claude-code", "--workspace", str(ws)],
        input=json.dumps(claude("PreToolUse", ASK, "toolu_1")).encode(),
        capture_output=True,
        env=hook_env(),
    )
    assert proc.returncode == 0
    modules = imported_modules(proc.stderr.decode())
    assert "guard.core" in modules  # it did decide here
    assert not modules & {"lancedb", "pyarrow", "loguru", "guard.cli.check", "guard.cli.stats", "guard.cli.install"}
    # an archive's reader and what it needs are loaded only by a call that unpacks one (they were ~14 ms
    # of every hook process)
    unpacking = {
        "guard.static.facts.archives",
        "guard.static.facts.renames",
        "guard.static.facts.patches",
        "tarfile",
        "zipfile",
        "lzma",
        "bz2",
    }
    assert not modules & unpacking, modules & unpacking


def test_a_hook_that_unpacks_an_archive_loads_its_reader(ws: Path, tmp_path: Path) -> None:
    """The near-miss: ``tar -xf x.tar`` does load the reader, and reads the members."""
    call = claude("PreToolUse", "tar -xf x.tar", "toolu_1")
    proc = subprocess.run(
        [*GUARD_CMD[:1], "-X", "importtime", *GUARD_CMD[1:], "hook", "claude-code", "--workspace", str(ws)],
        input=json.dumps(call).encode(),
        capture_output=True,
        env=hook_env(),
    )
    assert proc.returncode == 0
    assert "guard.static.facts.archives" in imported_modules(proc.stderr.decode())
