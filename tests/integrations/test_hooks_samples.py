"""Every recorded host payload goes through ``guard hook`` and comes out in the host's exact shape."""

from __future__ import annotations

import filecmp
import json
from pathlib import Path
from typing import Any

import pytest
from hookhelpers import (
    ALLOW,
    ASK,
    BLOCK,
    HOST_DIRS,
    PROTOCOLS,
    SHARED_PROTOCOLS,
    run_hook,
    sample,
    with_command,
)

INPUTS = sorted(
    (host, p.name)
    for host, d in HOST_DIRS.items()
    for p in (PROTOCOLS / d).glob("*.json")
    if p.name.endswith((".in.json", ".event.json"))
)

# Fields whose value is part of the protocol (an enum), not free text.
ENUMS = {
    "hookEventName",
    "permissionDecision",
    "behavior",
    "decision",
    "permission",
    "severity",
    "allowedDecisions",
    "block",
    "interrupt",
    "continue",
}


def assert_shape(ours: Any, theirs: Any, path: str = "$") -> None:
    """Same keys everywhere, same enum values, same types; free text just has to be there."""
    if isinstance(theirs, dict):
        assert isinstance(ours, dict), f"{path}: expected an object, got {ours!r}"
        assert sorted(ours) == sorted(theirs), f"{path}: keys {sorted(ours)} != {sorted(theirs)}"
        for key, value in theirs.items():
            if key in ENUMS and not isinstance(value, dict):
                assert ours[key] == value, f"{path}.{key}: {ours[key]!r} != {value!r}"
            else:
                assert_shape(ours[key], value, f"{path}.{key}")
    else:
        assert type(ours) is type(theirs), f"{path}: {type(ours).__name__} != {type(theirs).__name__}"
        if isinstance(theirs, str) and theirs:
            assert ours.strip(), f"{path}: empty text"


# -- what each host accepts ----------------------------------------------------------------------
def valid_claude(event: str, out: Any) -> None:
    if out in ({}, None):
        return
    hso = out.get("hookSpecificOutput", {})
    if event == "PreToolUse":
        assert set(out) == {"hookSpecificOutput"}
        assert set(hso) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}
        assert hso["hookEventName"] == "PreToolUse" and hso["permissionDecision"] in ("allow", "ask", "deny")
        assert hso["permissionDecisionReason"].startswith("guard")
    elif event == "PermissionRequest":
        assert set(out) == {"hookSpecificOutput"} and hso["hookEventName"] == "PermissionRequest"
        assert hso["decision"]["behavior"] in ("allow", "deny")
    elif event == "UserPromptSubmit":
        assert out["decision"] == "block" and out["reason"]
    else:
        assert set(out) <= {"systemMessage"}


def valid_codex(event: str, out: Any) -> None:
    """Codex's schemas allow no unknown field, and a plain allow or an ask fails the hook (= runs)."""
    if out is None:
        return
    assert set(out) <= {
        "continue",
        "decision",
        "reason",
        "hookSpecificOutput",
        "stopReason",
        "suppressOutput",
        "systemMessage",
    }
    hso = out.get("hookSpecificOutput")
    if event == "PreToolUse":
        assert set(out) == {"hookSpecificOutput"}
        assert set(hso) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}
        assert hso["permissionDecision"] == "deny" and hso["permissionDecisionReason"].strip()
    elif event == "PermissionRequest":
        assert set(hso) == {"hookEventName", "decision"}
        assert set(hso["decision"]) <= {"behavior", "message"} and hso["decision"]["behavior"] in ("allow", "deny")


def valid_gemini(event: str, out: Any) -> None:
    if out == {}:
        return
    if event == "BeforeTool":
        assert out["decision"] in ("allow", "ask", "deny")
        assert (
            set(out)
            == {"allow": {"decision"}, "ask": {"decision", "systemMessage"}, "deny": {"decision", "reason"}}[
                out["decision"]
            ]
        )
    else:
        assert set(out) <= {"systemMessage", "decision", "reason"}


def valid_cursor(event: str, out: Any) -> None:
    if event.startswith("before") and event != "beforeSubmitPrompt":
        assert out["permission"] in ("allow", "ask", "deny")
        assert set(out) <= {"permission", "user_message", "agent_message"}
    elif event == "beforeSubmitPrompt":
        assert isinstance(out["continue"], bool)
    else:
        assert out == {}


def valid_openclaw(event: str, out: Any) -> None:
    if out == {}:
        return
    if "block" in out:
        assert out["block"] is True and set(out) == {"block", "blockReason"}
    else:
        req = out["requireApproval"]
        assert set(out) == {"requireApproval"}
        assert len(req["title"]) <= 80 and len(req["description"]) <= 512
        assert req["severity"] in ("info", "warning", "critical")
        assert set(req["allowedDecisions"]) <= {"allow-once", "allow-always", "deny"}


VALID = {
    "claude-code": valid_claude,
    "codex": valid_codex,
    "gemini": valid_gemini,
    "cursor": valid_cursor,
    "openclaw": valid_openclaw,
}


@pytest.mark.parametrize(("host", "name"), INPUTS)
def test_every_recorded_payload_gets_a_valid_answer(host: str, name: str, ws: Path) -> None:
    """Each sample, through the real CLI: exit 0 and output the host accepts."""
    payload = sample(host, name)
    out = run_hook(host, payload, ws)
    assert out.code == 0, out.stderr
    event = payload.get("hook_event_name") or name.split(".")[0]
    VALID[host](event, out.json)


def test_the_samples_cover_every_host() -> None:
    assert {h for h, _ in INPUTS} == set(HOST_DIRS)


@pytest.mark.skipif(not SHARED_PROTOCOLS.is_dir(), reason="../shared/protocols is not next to this checkout")
def test_copies_match_the_shared_samples() -> None:
    for directory in HOST_DIRS.values():
        shared = sorted(p.name for p in (SHARED_PROTOCOLS / directory).iterdir())
        assert shared == sorted(p.name for p in (PROTOCOLS / directory).iterdir())
        for name in shared:
            assert filecmp.cmp(SHARED_PROTOCOLS / directory / name, PROTOCOLS / directory / name, shallow=False)


# -- the documented answers, shape for shape -------------------------------------------------------
EXPECTED = [
    # host, input sample, command (None: as recorded), expected-output sample
    ("claude-code", "pretooluse_bash.in.json", ALLOW, "pretooluse_allow.out.json"),
    ("claude-code", "pretooluse_bash.in.json", ASK, "pretooluse_ask.out.json"),
    ("claude-code", "pretooluse_bash.in.json", BLOCK, "pretooluse_deny.out.json"),
    ("claude-code", "permissionrequest.in.json", BLOCK, "permissionrequest_deny.out.json"),
    ("codex", "pretooluse_bash.in.json", ASK, "pretooluse_deny.out.json"),
    ("codex", "pretooluse_bash.in.json", BLOCK, "pretooluse_deny.out.json"),
    ("codex", "permissionrequest.in.json", ALLOW, "permissionrequest_allow.out.json"),
    ("gemini", "beforetool.in.json", ASK, "beforetool_ask.out.json"),
    ("gemini", "beforetool.in.json", BLOCK, "beforetool_deny.out.json"),
    ("cursor", "beforeshellexecution.in.json", ASK, "beforeshellexecution_ask.out.json"),
    ("openclaw", "before_tool_call.event.json", ASK, "before_tool_call.require_approval.result.json"),
    ("openclaw", "before_tool_call.event.json", BLOCK, "before_tool_call.block.result.json"),
]


@pytest.mark.parametrize(("host", "given", "command", "expected"), EXPECTED)
def test_answers_have_the_documented_shape(host: str, given: str, command: str, expected: str, in_process: Any) -> None:
    reply = in_process(host, with_command(sample(host, given), command))
    assert reply.exit_code == 0
    assert_shape(reply.output, sample(host, expected))


def test_a_prompt_with_a_secret_is_blocked_in_the_documented_shape(ws: Path, in_process: Any) -> None:
    (ws / "guard.toml").write_text("[hooks]\nblock_prompt_secrets = true\n")
    payload = sample("claude-code", "userpromptsubmit.in.json")
    assert in_process("claude-code", payload).output == {}
    payload["prompt"] = "use this key: sk-ant-" + "a1B2" * 10
    reply = in_process("claude-code", payload)
    assert_shape(reply.output, sample("claude-code", "userpromptsubmit_block.out.json"))
    assert "sk-ant" not in json.dumps(reply.output)


def test_prompt_secrets_pass_unless_the_setting_is_on(in_process: Any) -> None:
    payload = sample("claude-code", "userpromptsubmit.in.json") | {"prompt": "key sk-ant-" + "a1B2" * 10}
    assert in_process("claude-code", payload).output == {}


def test_codex_allow_and_quiet_events_print_nothing(in_process: Any) -> None:
    """Codex rejects a plain allow: nothing on stdout is its allow."""
    assert in_process("codex", with_command(sample("codex", "pretooluse_bash.in.json"), ALLOW)).stdout == ""
    assert in_process("codex", sample("codex", "permissionrequest.in.json")).stdout == ""  # the person answers


def test_after_events_answer_nothing_to_decide(in_process: Any) -> None:
    assert in_process("claude-code", sample("claude-code", "posttooluse_write.in.json")).output == {}
    assert in_process("gemini", sample("gemini", "aftertool.in.json")).output == {}
    assert in_process("openclaw", sample("openclaw", "after_tool_call.event.json")).output == {}
