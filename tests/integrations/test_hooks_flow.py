"""The shared hook flow: decisions mapped per host, asks paired with what followed, failing closed."""

from __future__ import annotations

import json
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
    interactions,
    pending,
    sample,
    with_command,
)

from guard.integrations.hosts.base import outcome_of


def pre(command: str, call_id: str = "toolu_1", session: str = "s1", **extra: Any) -> dict[str, Any]:
    payload = with_command(sample("claude-code", "pretooluse_bash.in.json"), command)
    return payload | {"tool_use_id": call_id, "session_id": session} | extra


def post(command: str, call_id: str = "toolu_1", session: str = "s1", event: str = "PostToolUse") -> dict[str, Any]:
    payload = pre(command, call_id, session) | {"hook_event_name": event}
    if event == "PostToolUse":
        payload["tool_response"] = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}
        payload["duration_ms"] = 40
    else:
        payload |= {"error": "Exit code 1\nrm: cannot remove", "is_interrupt": False, "duration_ms": 9}
    return payload


def prompt(session: str = "s1") -> dict[str, Any]:
    return sample("claude-code", "userpromptsubmit.in.json") | {"session_id": session}


def decision_of(reply: Any) -> str:
    return str(reply.output["hookSpecificOutput"]["permissionDecision"])


# -- mapping -----------------------------------------------------------------------------------
def test_claude_code_maps_the_three_decisions(in_process: Any, ws: Path) -> None:
    assert decision_of(in_process("claude-code", pre(ALLOW))) == "allow"
    assert decision_of(in_process("claude-code", pre(ASK, "toolu_2"))) == "ask"
    denied = in_process("claude-code", pre(BLOCK, "toolu_3"))
    assert decision_of(denied) == "deny"
    reason = denied.output["hookSpecificOutput"]["permissionDecisionReason"]
    assert "G101" in reason and ("Do not retry" in reason or "Instead:" in reason)  # why, and what to do instead
    assert [d["decision"] for d in decisions(ws)] == ["auto_allow", "request_confirm", "block"]


def test_the_decision_log_names_host_event_call_and_cwd_reaches_the_guard(in_process: Any, ws: Path) -> None:
    in_process("claude-code", pre(ASK, "toolu_9", cwd="/home/user/proj"))
    [line] = decisions(ws)
    assert (line["host"], line["event"], line["call_id"], line["session_id"]) == (
        "claude-code",
        "PreToolUse",
        "toolu_9",
        "s1",
    )


def test_a_blocking_rules_alternative_is_what_the_agent_is_told(in_process: Any, ws: Path) -> None:
    from guard import Guard
    from guard.integrations.hosts import get_host
    from guard.integrations.hosts.flow import run
    from guard.model import BLOCK as BLOCKED
    from guard.model import Reason, Risk, Verdict

    def no_force_push(call: Any, ctx: Any) -> Verdict:
        return Verdict(
            "static",
            Risk.CRITICAL,
            decision=BLOCKED,
            reasons=[Reason("G199", "force-push rewrites shared history", "push to a new branch and open a PR")],
        )

    no_force_push.name = "static"  # type: ignore[attr-defined]
    g = Guard(ws, {"system.health": 90}, layers=[no_force_push])
    reply = run(get_host("claude-code"), json.dumps(pre("git push --force")), lambda: g)
    g.close()
    assert reply.output["hookSpecificOutput"]["permissionDecisionReason"].endswith(
        "Instead: push to a new branch and open a PR"
    )


# -- pairing an ask with what followed ------------------------------------------------------------
def test_an_ask_followed_by_its_result_is_recorded_as_approved(in_process: Any, ws: Path) -> None:
    in_process("claude-code", pre(ASK, "toolu_1"))
    assert [e["state"] for e in pending(ws)] == ["asked"]
    assert in_process("claude-code", post(ASK, "toolu_1")).output == {}
    [answer] = interactions(ws)
    assert (answer["action"], answer["tool"], answer["session_id"]) == ("approved", "Bash", "s1")
    [result] = executions(ws)
    assert (result["status"], result["duration_ms"]) == ("success", 40)
    assert pending(ws) == []


def test_a_failed_result_still_means_the_person_approved(in_process: Any, ws: Path) -> None:
    in_process("claude-code", pre(ASK, "toolu_1"))
    in_process("claude-code", post(ASK, "toolu_1", event="PostToolUseFailure"))
    assert [i["action"] for i in interactions(ws)] == ["approved"]
    [result] = executions(ws)
    assert result["status"] == "failure" and result["error"].startswith("Exit code 1")


def test_another_calls_result_does_not_answer_the_ask(in_process: Any, ws: Path) -> None:
    """Near miss: same command, different tool_use_id."""
    in_process("claude-code", pre(ASK, "toolu_1"))
    in_process("claude-code", post(ASK, "toolu_2"))
    assert interactions(ws) == []
    assert [e["call_id"] for e in pending(ws)] == ["toolu_1"]


def test_a_result_in_another_session_does_not_answer_the_ask(in_process: Any, ws: Path) -> None:
    in_process("claude-code", pre(ASK, "toolu_1", session="s1"))
    in_process("claude-code", post(ASK, "toolu_1", session="s2"))
    assert interactions(ws) == []


def test_a_new_prompt_while_an_ask_is_open_means_denied(in_process: Any, ws: Path) -> None:
    in_process("claude-code", pre(ASK, "toolu_1"))
    in_process("claude-code", prompt(session="other"))  # another session's prompt settles nothing
    assert interactions(ws) == []
    in_process("claude-code", prompt())
    [answer] = interactions(ws)
    assert (answer["action"], answer["params"]["command"]) == ("denied", ASK)
    assert pending(ws) == []


def test_results_without_an_ask_record_only_the_result(in_process: Any, ws: Path) -> None:
    in_process("claude-code", pre(ALLOW, "toolu_1"))
    in_process("claude-code", post(ALLOW, "toolu_1"))
    assert interactions(ws) == []
    assert [e["status"] for e in executions(ws)] == ["success"]


def test_a_user_interrupt_is_not_a_tool_failure(in_process: Any, ws: Path) -> None:
    payload = post(ASK, event="PostToolUseFailure") | {"is_interrupt": True}
    in_process("claude-code", payload)
    assert executions(ws) == []


def test_permission_request_after_guards_ask_stays_neutral_and_pairs_by_content(in_process: Any, ws: Path) -> None:
    in_process("claude-code", pre(ASK, "toolu_1"))
    request = sample("claude-code", "permissionrequest.in.json") | {"session_id": "s1"}
    request["tool_input"] = pre(ASK)["tool_input"]
    assert in_process("claude-code", request).output == {}  # the dialog is guard's ask
    assert len(decisions(ws)) == 1  # not decided twice


def test_permission_request_on_its_own_asks_through_the_dialog_and_learns(in_process: Any, ws: Path) -> None:
    request = sample("claude-code", "permissionrequest.in.json") | {"session_id": "s1"}
    assert in_process("claude-code", request).output == {}
    followed = post("rm -rf node_modules") | {"tool_input": request["tool_input"], "tool_use_id": "toolu_7"}
    in_process("claude-code", followed)
    assert [i["action"] for i in interactions(ws)] == ["approved"]


def test_permission_request_for_a_blocked_call_is_denied(in_process: Any) -> None:
    request = with_command(sample("claude-code", "permissionrequest.in.json"), BLOCK)
    decision = in_process("claude-code", request).output["hookSpecificOutput"]["decision"]
    assert decision["behavior"] == "deny" and "G101" in decision["message"]


def test_claude_does_not_approve_what_its_own_rules_ask_about(in_process: Any) -> None:
    """auto_allow on a PermissionRequest stays neutral: the user's ask rule decided to ask."""
    request = with_command(sample("claude-code", "permissionrequest.in.json"), ALLOW)
    assert in_process("claude-code", request).output == {}


# -- nobody to ask ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "how",
    ["flag", "setting", "dontAsk", "child-session"],
)
def test_headless_never_lets_an_ask_through(how: str, in_process: Any, ws: Path) -> None:
    payload, kw = pre(ASK), {}
    if how == "flag":
        kw["headless"] = True
    elif how == "setting":
        (ws / "guard.toml").write_text((ws / "guard.toml").read_text() + "[hooks]\nheadless = true\n")
    elif how == "dontAsk":
        payload["permission_mode"] = "dontAsk"
    else:
        kw["env"] = {"CLAUDE_CODE_CHILD_SESSION": "1"}
    reply = in_process("claude-code", payload, **kw)
    assert decision_of(reply) == "deny"
    assert "headless" in reply.output["hookSpecificOutput"]["permissionDecisionReason"]
    [line] = decisions(ws)
    assert line["decision"] == "block" and any("no human present" in n for n in line["notes"])
    assert pending(ws) == []


def test_headless_still_allows_what_needs_no_one(in_process: Any) -> None:
    assert decision_of(in_process("claude-code", pre(ALLOW), headless=True)) == "allow"


def test_openclaw_cron_runs_have_nobody_to_ask(in_process: Any) -> None:
    payload = with_command(sample("openclaw", "before_tool_call.event.json"), ASK)
    payload["ctx"]["jobId"] = "nightly"
    assert in_process("openclaw", payload).output["block"] is True


# -- hosts that cannot ask: out-of-band approval ------------------------------------------------------
def codex_pre(command: str, session: str = "sess") -> dict[str, Any]:
    return with_command(sample("codex", "pretooluse_bash.in.json"), command) | {"session_id": session}


def test_codex_confirm_is_a_deny_with_an_approval_id_then_one_retry_runs(in_process: Any, ws: Path) -> None:
    from guard import Guard
    from guard.integrations.pending import Pending

    reply = in_process("codex", codex_pre(ASK))
    reason = reply.output["hookSpecificOutput"]["permissionDecisionReason"]
    [entry] = pending(ws)
    assert entry["state"] == "awaiting" and f"guard approve {entry['id']}" in reason
    assert in_process("codex", codex_pre(ASK)).stdout != ""  # still waiting: denied again
    with Guard(ws, {"system.health": 90}) as g:
        Pending(ws, 3600).resolve("last", approved=True)
        g.record_interaction(entry["tool"], entry["params"], session_id=entry["session_id"], approved=True)
    assert in_process("codex", codex_pre("rm -rf other")).stdout != ""  # near miss: another call
    assert in_process("codex", codex_pre(ASK, session="elsewhere")).stdout != ""  # near miss: another session
    assert in_process("codex", codex_pre(ASK)).stdout == ""  # the approved call runs
    assert in_process("codex", codex_pre(ASK)).stdout != ""  # once


def test_no_ask_turns_any_hosts_ask_into_an_out_of_band_approval(in_process: Any, ws: Path) -> None:
    payload = with_command(sample("cursor", "beforeshellexecution.in.json"), ASK)
    reply = in_process("cursor", payload, may_ask=False)
    assert reply.output["permission"] == "deny" and "guard approve" in reply.output["agent_message"]
    assert [e["state"] for e in pending(ws)] == ["awaiting"]


def test_codex_permission_request_lets_guard_approve_and_deny(in_process: Any) -> None:
    request = sample("codex", "permissionrequest.in.json")
    allow = in_process("codex", with_command(request, ALLOW)).output
    assert allow["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
    deny = in_process("codex", with_command(request, BLOCK)).output["hookSpecificOutput"]["decision"]
    assert deny["behavior"] == "deny" and "G101" in deny["message"]


# -- other hosts' pairing ------------------------------------------------------------------------------
def test_gemini_pairs_by_content_and_records_tool_errors(in_process: Any, ws: Path) -> None:
    before = with_command(sample("gemini", "beforetool.in.json"), ASK)
    assert in_process("gemini", before).output["decision"] == "ask"
    after = sample("gemini", "aftertool.in.json") | {"tool_input": before["tool_input"]}
    after["tool_response"] = {"llmContent": "", "returnDisplay": "", "error": {"message": "permission denied"}}
    in_process("gemini", after)
    assert [i["action"] for i in interactions(ws)] == ["approved"]
    [result] = executions(ws)
    assert (result["status"], result["error"]) == ("failure", "permission denied")


def test_cursor_shell_results_settle_the_ask_but_record_no_unknown_outcome(in_process: Any, ws: Path) -> None:
    before = with_command(sample("cursor", "beforeshellexecution.in.json"), ASK)
    assert in_process("cursor", before).output["permission"] == "ask"
    after = {k: before[k] for k in ("conversation_id", "generation_id", "command", "cwd")}
    in_process("cursor", after | {"hook_event_name": "afterShellExecution", "output": "", "duration": 5})
    assert [i["action"] for i in interactions(ws)] == ["approved"]
    assert executions(ws) == []  # Cursor does not say whether the command succeeded
    in_process("cursor", after | {"hook_event_name": "afterShellExecution", "output": "", "exit_code": 1})
    assert [e["status"] for e in executions(ws)] == ["failure"]


def test_cursor_prompt_gate_answers_continue(in_process: Any) -> None:
    payload = {"hook_event_name": "beforeSubmitPrompt", "conversation_id": "c", "prompt": "hello"}
    assert in_process("cursor", payload).output == {"continue": True}


def test_openclaw_resolution_is_the_persons_answer(in_process: Any, ws: Path) -> None:
    before = with_command(sample("openclaw", "before_tool_call.event.json"), ASK)
    assert "requireApproval" in in_process("openclaw", before).output
    for resolution in ("allow-once", "deny", "timeout", "cancelled", "allow-always"):
        in_process("openclaw", before | {"hook": "approval_resolution", "resolution": resolution})
    assert [i["action"] for i in interactions(ws)] == ["approved", "denied", "approved"]


def test_openclaw_approval_then_result_is_one_approval(in_process: Any, ws: Path) -> None:
    """The resolution answers the question; the call's result must not answer it a second time."""
    before = with_command(sample("openclaw", "before_tool_call.event.json"), ASK)
    assert "requireApproval" in in_process("openclaw", before).output
    in_process("openclaw", before | {"hook": "approval_resolution", "resolution": "allow-once"})
    after = json.loads(json.dumps(before))
    after["event"]["result"] = {"content": [{"type": "text", "text": "done"}]}
    in_process("openclaw", after | {"hook": "after_tool_call"})
    assert [i["action"] for i in interactions(ws)] == ["approved"]
    assert [e["status"] for e in executions(ws)] == ["success"]


def test_openclaw_after_without_result_or_error_records_nothing(in_process: Any, ws: Path) -> None:
    after = sample("openclaw", "after_tool_call.event.json")
    del after["event"]["result"]
    in_process("openclaw", after)
    assert executions(ws) == []
    in_process("openclaw", sample("openclaw", "after_tool_call.event.json"))
    assert [e["status"] for e in executions(ws)] == ["success"]


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ({"filePath": "/a", "success": True}, (True, None)),
        ({"success": False, "error": "disk full"}, (False, "disk full")),
        ({"exit_code": 2}, (False, "Exit code 2")),
        ({"details": {"exitCode": 0}}, (True, None)),
        (
            {"isError": True, "content": [{"type": "text", "text": "nope"}]},
            (False, '[{"type": "text", "text": "nope"}]'),
        ),
        ({"stdout": "", "interrupted": True}, (None, None)),
        ("Exit code: 1\nWall time: 0.1 seconds", (False, "Exit code: 1")),
        ("Exit code: 0\nok", (True, None)),
        ("plain output", (True, None)),
        (None, (None, None)),
    ],
)
def test_outcome_of_reads_each_hosts_result(response: Any, expected: tuple[Any, Any]) -> None:
    assert outcome_of(response) == expected


# -- failing closed ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "raw", [b"", b"   \n", b"not json {", b"[1, 2]", b'"PreToolUse"', b"\xff\xfe", b'{"tool_name": "Bash"}']
)
def test_unreadable_input_is_refused_on_every_channel(raw: bytes, in_process: Any) -> None:
    reply = in_process("claude-code", raw)
    assert reply.exit_code == 2 and reply.stderr.strip()
    assert reply.output["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert reply.output["decision"] == "block"


@pytest.mark.parametrize(
    "broken",
    [
        {"tool_input": "not an object"},
        {"tool_input": None},
        {"tool_name": ""},
        {"tool_name": 7},
        {"session_id": {"nested": True}},
    ],
)
def test_a_known_event_of_the_wrong_shape_is_denied(broken: dict[str, Any], in_process: Any, ws: Path) -> None:
    reply = in_process("claude-code", pre(ASK) | broken)
    assert reply.exit_code == 0
    assert decision_of(reply) == "deny"
    assert "cannot read this PreToolUse event" in reply.output["hookSpecificOutput"]["permissionDecisionReason"]
    assert decisions(ws) == []


def test_an_event_guard_does_not_handle_is_left_alone(in_process: Any) -> None:
    assert in_process("claude-code", {"hook_event_name": "SessionStart", "session_id": "s"}).output == {}


def test_an_unwritable_workspace_keeps_the_static_verdict(in_process: Any, tmp_path: Path) -> None:
    """Nothing can be recorded: a safe read runs, what needs a confirmation is asked (or denied where
    nobody can answer or no approval id can be kept), a block stays a block; each says why."""
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the workspace should be")
    assert decision_of(in_process("claude-code", pre(ALLOW), workspace=blocked)) == "allow"
    asked = in_process("claude-code", pre(ASK), workspace=blocked)
    assert decision_of(asked) == "ask"
    assert "cannot write its workspace" in asked.output["hookSpecificOutput"]["permissionDecisionReason"]
    assert decision_of(in_process("claude-code", pre(BLOCK), workspace=blocked)) == "deny"
    assert decision_of(in_process("claude-code", pre(ASK), workspace=blocked, headless=True)) == "deny"
    codex = in_process("codex", codex_pre(ASK), workspace=blocked).output["hookSpecificOutput"]
    assert codex["permissionDecision"] == "deny" and "cannot write its workspace" in codex["permissionDecisionReason"]
    after = in_process("claude-code", post(ALLOW), workspace=blocked)
    assert "cannot write its workspace" in after.output["systemMessage"]  # a result cannot be refused; it is reported


def test_a_guard_that_cannot_even_open_is_a_refusal(in_process: Any) -> None:
    from guard.integrations.hosts import get_host
    from guard.integrations.hosts.flow import run

    def broken() -> Any:
        raise RuntimeError("disk on fire")

    reply = run(get_host("gemini"), json.dumps(with_command(sample("gemini", "beforetool.in.json"), ALLOW)), broken)
    assert reply.output["decision"] == "ask" and "disk on fire" in reply.output["systemMessage"]
    reply = run(
        get_host("openclaw"), json.dumps(sample("openclaw", "before_tool_call.event.json")), broken, headless=True
    )
    assert reply.output["block"] is True and "disk on fire" in reply.output["blockReason"]


# -- the pending store ---------------------------------------------------------------------------------
def test_open_questions_expire(in_process: Any, ws: Path) -> None:
    from freezegun import freeze_time

    with freeze_time("2026-08-20 12:00:00") as clock:
        in_process("claude-code", pre(ASK, "toolu_1"))
        clock.tick(3601)  # hooks.pending_ttl_seconds defaults to an hour
        in_process("claude-code", post(ASK, "toolu_1"))
    assert interactions(ws) == []  # too late to count as the answer
    assert [e["status"] for e in executions(ws)] == ["success"]  # the result still counts


def test_the_pending_store_keeps_only_the_newest(ws: Path) -> None:
    from guard.integrations.hosts.base import Event
    from guard.integrations.pending import ASKED, Pending

    store = Pending(ws, 3600, limit=3)
    for i in range(5):
        store.add(ASKED, Event("claude-code", "PreToolUse", "pre", tool="Bash", params={"command": f"c{i}"}))
    assert [e.params["command"] for e in store.entries()] == ["c2", "c3", "c4"]
    assert oct(file_mode(ws / ".guard-pending.json")) == oct(0o600)


def test_an_unreadable_pending_file_is_forgotten_not_fatal(in_process: Any, ws: Path) -> None:
    (ws / ".guard-pending.json").write_text("{torn")
    assert decision_of(in_process("claude-code", pre(ASK))) == "ask"
    assert [e["state"] for e in pending(ws)] == ["asked"]
