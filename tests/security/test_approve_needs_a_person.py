"""``guard approve`` is the person's, not the agent's: a controlling terminal, a code typed on it,
no agent host's marker, and one approval for one held call of one session.

Every held call is made by a real ``guard hook codex`` subprocess (Codex cannot ask from a
hook, so guard holds the call and names an id); every approval runs the real ``guard approve``
in a subprocess, on a real pseudo-terminal when a person is meant to be there.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GUARD_CMD
from tests.integrations.hookhelpers import interactions, pending, prepare, run_hook, sample, with_command
from tests.security.ptyrun import never_answer, person_env, run_on_tty, type_the_code, type_this

HELD = "terraform destroy -auto-approve"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return prepare(tmp_path / "ws")


def codex_call(command: str = HELD, session: str = "s1") -> dict[str, Any]:
    return with_command(sample("codex", "pretooluse_bash.in.json"), command) | {"session_id": session}


def hold(ws: Path, command: str = HELD, session: str = "s1") -> dict[str, Any]:
    """A call Codex's hook denies with an id, waiting for the person."""
    reply = run_hook("codex", codex_call(command, session), ws, env=person_env())
    assert "guard approve" in reply.json["hookSpecificOutput"]["permissionDecisionReason"]
    [entry] = [e for e in pending(ws) if e["state"] == "awaiting" and e["params"]["command"] == command]
    return entry


def runs(ws: Path, command: str = HELD, session: str = "s1") -> bool:
    """Does Codex's hook let this call through now? (Codex: no output is "go ahead".)"""
    return run_hook("codex", codex_call(command, session), ws, env=person_env()).stdout == ""


def approve(ws: Path, *args: str, answer: Any = type_the_code, env: dict[str, str] | None = None) -> Any:
    return run_on_tty([*GUARD_CMD, "approve", *args, "--workspace", str(ws)], env or person_env(), answer)


def approve_without_terminal(ws: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """As an agent's tool runs it: a new session with no controlling terminal, stdin and stdout pipes."""
    return subprocess.run(
        [*GUARD_CMD, "approve", *args, "--workspace", str(ws)],
        input=stdin,
        capture_output=True,
        text=True,
        env=person_env(),
        start_new_session=True,
        timeout=60,
    )


def states(ws: Path) -> list[str]:
    return [e["state"] for e in pending(ws)]


# -- the person at their terminal ------------------------------------------------------------------
def test_the_person_sees_the_held_call_types_the_code_and_that_call_runs_once(ws: Path) -> None:
    entry = hold(ws)
    done = approve(ws, entry["id"])
    assert done.code == 0, done.stderr
    for shown in (entry["id"], "codex", "s1", "Bash", HELD, "why"):
        assert shown in done.tty
    code = type_the_code(done.tty)
    assert code is not None and code.strip() not in done.stdout + done.stderr  # the code is on the terminal only
    assert f"approved {entry['id']}" in done.stdout
    assert [i["action"] for i in interactions(ws)] == ["approved"]
    assert not runs(ws, session="s2")  # near miss: the same call in another session
    assert not runs(ws, command="terraform destroy")  # near miss: another call in the session
    assert runs(ws)  # the approved call
    assert not runs(ws)  # once


def test_the_terminal_shows_why_guard_held_the_call(ws: Path) -> None:
    entry = hold(ws)
    done = approve(ws, entry["id"], answer=type_this("\n"))
    why = next(line for line in done.tty.splitlines() if line.strip().startswith("why"))
    assert "request_confirm" in why and "G" in why  # the decision and its rule ids


@pytest.mark.parametrize("typed", ["WXYZ\n", "\n", "\x04"], ids=["wrong-code", "empty-line", "end-of-input"])
def test_anything_but_the_code_approves_nothing(typed: str, ws: Path) -> None:
    entry = hold(ws)
    done = approve(ws, entry["id"], answer=type_this(typed))
    assert done.code == 3 and "not approved" in done.stderr
    assert states(ws) == ["awaiting"] and interactions(ws) == []
    assert not runs(ws)


# -- no person -------------------------------------------------------------------------------------
def test_without_a_controlling_terminal_it_refuses_in_one_line_and_approves_nothing(ws: Path) -> None:
    entry = hold(ws)
    done = approve_without_terminal(ws, entry["id"], stdin="ABCD\n" * 10)  # pipes are not a terminal
    assert done.returncode == 3
    assert done.stderr.strip().splitlines() == [
        "guard: error: guard approve needs your terminal: run it yourself in a terminal, not through the agent"
    ]
    assert states(ws) == ["awaiting"] and interactions(ws) == []
    assert not runs(ws)


def test_last_without_a_terminal_is_refused_too(ws: Path) -> None:
    """What the agent ran under Codex: ``guard approve last``."""
    hold(ws)
    assert approve_without_terminal(ws, "last").returncode == 3
    assert states(ws) == ["awaiting"] and not runs(ws)


@pytest.mark.parametrize("marker", ["CLAUDECODE", "CODEX_SANDBOX", "CODEX_THREAD_ID", "GEMINI_CLI", "CURSOR_AGENT"])
def test_inside_an_agent_hosts_shell_it_refuses_even_with_a_terminal(marker: str, ws: Path) -> None:
    entry = hold(ws)
    done = approve(ws, entry["id"], answer=never_answer, env=person_env() | {marker: "1"})
    assert done.code == 3 and f"{marker} is set" in done.stderr and "not through the agent" in done.stderr
    assert "type" not in done.tty  # no code was ever shown
    assert states(ws) == ["awaiting"] and not runs(ws)


def test_a_person_exporting_codex_home_is_not_taken_for_codex(ws: Path) -> None:
    """Near miss: CODEX_HOME is the person's own setting, not a marker of Codex's tool shell."""
    entry = hold(ws)
    assert approve(ws, entry["id"], env=person_env() | {"CODEX_HOME": "/tmp/codex"}).code == 0


def test_refusing_needs_no_terminal(ws: Path) -> None:
    """--deny only ever stops a call, so the agent may run it."""
    entry = hold(ws)
    done = approve_without_terminal(ws, entry["id"], "--deny")
    assert done.returncode == 0 and [i["action"] for i in interactions(ws)] == ["denied"]
    assert pending(ws) == [] and not runs(ws)


def test_listing_needs_no_terminal_and_names_the_sessions(ws: Path) -> None:
    a, b = hold(ws, session="s1"), hold(ws, "terraform apply -auto-approve", session="s2")
    listing = approve_without_terminal(ws)
    assert listing.returncode == 0
    for text in (a["id"], b["id"], "s1", "s2"):
        assert text in listing.stdout
    rows = json.loads(approve_without_terminal(ws, "--json").stdout)
    assert {(r["id"], r["session_id"]) for r in rows} == {(a["id"], "s1"), (b["id"], "s2")}


# -- one call of one session -----------------------------------------------------------------------
def test_last_with_calls_in_several_sessions_lists_them_and_asks_which(ws: Path) -> None:
    hold(ws, session="s1")
    hold(ws, "terraform apply -auto-approve", session="s2")
    done = approve(ws, "last", answer=never_answer)
    assert done.code == 2 and "several sessions" in done.stderr and "--session" in done.stderr
    assert "s1" in done.stderr and "s2" in done.stderr
    assert states(ws) == ["awaiting", "awaiting"]


def test_session_picks_that_sessions_newest_call_and_only_it(ws: Path) -> None:
    hold(ws, session="s1")
    hold(ws, "terraform apply -auto-approve", session="s2")
    newest = hold(ws, "terraform destroy -target=x -auto-approve", session="s2")
    done = approve(ws, "--session", "s2")
    assert done.code == 0 and newest["id"] in done.tty
    assert not runs(ws, session="s1")
    assert not runs(ws, "terraform apply -auto-approve", session="s2")
    assert runs(ws, "terraform destroy -target=x -auto-approve", session="s2")


def test_last_with_one_session_waiting_takes_its_newest(ws: Path) -> None:
    hold(ws, "terraform apply -auto-approve")
    newest = hold(ws)
    done = approve(ws, "last")
    assert done.code == 0 and newest["id"] in done.tty
    assert runs(ws) and not runs(ws, "terraform apply -auto-approve")


def test_an_id_from_another_session_is_not_found_under_session(ws: Path) -> None:
    entry = hold(ws, session="s1")
    done = approve(ws, entry["id"], "--session", "s2", answer=never_answer)
    assert done.code == 2 and "no call is waiting" in done.stderr
    assert states(ws) == ["awaiting"]


def test_the_stored_approval_is_bound_to_host_session_and_call_key(ws: Path) -> None:
    entry = hold(ws)
    approve(ws, entry["id"])
    [stored] = pending(ws)
    assert (stored["state"], stored["host"], stored["session_id"], stored["key"]) == (
        "approved",
        "codex",
        "s1",
        entry["key"],
    )
    assert runs(ws) and pending(ws) == []  # consumed by the one call it was for
