"""Every decision ends in time: crafted inputs are asked or blocked, never left to the host's timeout.

A host lets a call through when its hook times out, so a command built to be slow to judge is an
allow in disguise. These tests drive the real entry points (``guard check``, ``guard hook
claude-code``, ``Guard.decide``) and assert on decisions and on counted work, never on the clock.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guard import Guard
from guard.integrations import daemon
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM
from guard.static.analysis import Limits, analyse
from guard.static.budget import Budget
from tests.conftest import GUARD_CMD, guard_cli_env

NOT_ALLOWED = {REQUEST_CONFIRM, BLOCK}
HOME = "/home/agent"


# -- crafted inputs (data, never run) ---------------------------------------------------------
def many_vars(n: int) -> str:
    return "rm -f " + " ".join(f"$x{i % 7}" for i in range(n))


CRAFTED = {
    "3,000 words with variables": many_vars(3000),
    "5,000-stage pipeline": " | ".join("a" for _ in range(5000)),
    "10,000 globbed paths": "rm -f " + " ".join(f"/tmp/d{i}/*.log" for i in range(10_000)),
    "nested substitutions": "echo " + "$( " * 400 + "ls" + " )" * 400,
    "bash -c in bash -c, 200 deep": 'bash -c "$( ' * 200 + "ls" + ' )"' * 200,
    "doubling variable": "x=ab; " + 'x="$x$x"; ' * 40 + "echo $x",
    "2,000 functions": " ".join(f"f{i}() {{ f{i - 1}; }};" for i in range(1, 2000)) + " f1999",
    "100 KB word": "echo " + "a$x" * 33_000,
}
PADDED_BLOCKS = {  # ``rm -rf ~`` hidden in 100 KB of padding still blocks
    "before": "rm -rf ~; echo " + "a" * 100_000,
    "after": "echo " + "a " * 50_000 + "\nrm -rf ~",
    "between commands": "true; " * 10_000 + "rm -rf ~; " + "true; " * 6_000,
    "more operands": "rm -rf ~ " + "junk " * 20_000,
}
PADDED_ASKS = {  # near misses: padding alone, or the same words quoted, ask and do not block
    "padding only": "echo " + "a" * 100_000,
    "quoted": "echo 'rm -rf ~'; echo " + "a" * 100_000,
}


def cli_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = guard_cli_env()
    env.update({"HOME": str(home), "GUARD_HOME": str(tmp_path / "ws"), "GUARD_HOOKS_DAEMON": "off", **extra})
    env.pop("CLAUDE_CODE_CHILD_SESSION", None)
    return env


def guard_check(tmp_path: Path, command: str, **env: str) -> dict[str, Any]:
    proc = subprocess.run(
        [*GUARD_CMD, "check", "Bash", "-", "--json"],
        input=json.dumps({"command": command}),
        capture_output=True,
        text=True,
        env=cli_env(tmp_path, **env),
    )
    assert proc.stdout, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def claude_hook(tmp_path: Path, command: str, **env: str) -> dict[str, Any]:
    payload = {
        "session_id": "s1",
        "cwd": str(tmp_path),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "toolu_1",
    }
    proc = subprocess.run(
        [*GUARD_CMD, "hook", "claude-code", "--workspace", str(tmp_path / "ws")],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=cli_env(tmp_path, **env),
    )
    out: dict[str, Any] = json.loads(proc.stdout)["hookSpecificOutput"]
    return out


def rule_ids(record: Any) -> set[str]:
    if isinstance(record, dict):
        return {r["id"] for layer in record["layers"] for r in layer.get("reasons", [])}
    return {r.rule_id for layer in record.layers for r in layer.reasons}


@pytest.fixture
def guard_for(tmp_path: Path) -> Any:
    made: list[Guard] = []

    def make(**config: Any) -> Guard:
        g = Guard(tmp_path / f"ws{len(made)}", {"system.health": 90, "memory.backend": "history", **config})
        made.append(g)
        return g

    yield make
    for g in made:
        g.close()


# -- (c) crafted inputs through the real entry points ---------------------------------------
@pytest.mark.parametrize("name", list(CRAFTED))
def test_crafted_input_through_guard_check_is_asked_or_blocked(tmp_path: Path, name: str) -> None:
    assert guard_check(tmp_path, CRAFTED[name])["decision"] in NOT_ALLOWED


@pytest.mark.parametrize("name", ["3,000 words with variables", "5,000-stage pipeline", "10,000 globbed paths"])
def test_crafted_input_through_the_claude_code_hook_is_asked_or_denied(tmp_path: Path, name: str) -> None:
    assert claude_hook(tmp_path, CRAFTED[name])["permissionDecision"] in ("ask", "deny")


@pytest.mark.parametrize("name", list(PADDED_BLOCKS))
def test_critical_command_padded_past_the_size_cap_still_blocks(guard_for: Any, name: str) -> None:
    record = guard_for().decide("Bash", {"command": PADDED_BLOCKS[name]}, save=False)
    assert record.decision == BLOCK and "G101" in rule_ids(record) and "G198" in rule_ids(record)


@pytest.mark.parametrize("name", list(PADDED_ASKS))
def test_padding_alone_past_the_size_cap_asks(guard_for: Any, name: str) -> None:
    record = guard_for().decide("Bash", {"command": PADDED_ASKS[name]}, save=False)
    assert record.decision == REQUEST_CONFIRM and "G198" in rule_ids(record)


def test_padded_block_through_the_hook_is_denied(tmp_path: Path) -> None:
    assert claude_hook(tmp_path, PADDED_BLOCKS["after"])["permissionDecision"] == "deny"


def test_more_operators_than_parse_in_time_asks_without_parsing(guard_for: Any) -> None:
    """The grammar cannot be interrupted: 2,100 pipe stages (16,800 operator units) are not parsed."""
    record = guard_for().decide("Bash", {"command": "true | " * 2100 + "true"}, save=False)
    assert record.decision == REQUEST_CONFIRM and "G420" in rule_ids(record)


def test_as_many_plain_commands_are_still_judged_in_full(guard_for: Any) -> None:
    """(No deadline here: the count alone must not stop it, whatever the machine's load.)"""
    record = guard_for(**{"decision.budget_ms": 0}).decide("Bash", {"command": "true; " * 2100 + "true"}, save=False)
    assert record.decision == AUTO_ALLOW and "G420" not in rule_ids(record)


def test_a_critical_command_among_too_many_operators_still_blocks(guard_for: Any) -> None:
    record = guard_for().decide("Bash", {"command": "true | " * 2100 + "true; rm -rf ~"}, save=False)
    assert record.decision == BLOCK and {"G101", "G420"} <= rule_ids(record)


# -- (b) the budget path, triggered by counted work ------------------------------------------
ECHOES = "; ".join(f"echo {i}" for i in range(300))  # read-only: allowed when judged in full


def test_ordinary_long_read_only_script_is_allowed_within_the_default_budget(guard_for: Any) -> None:
    assert guard_for().decide("Bash", {"command": ECHOES}, save=False).decision == AUTO_ALLOW


def test_step_limit_reached_asks_too_complex_to_check_in_time(guard_for: Any) -> None:
    record = guard_for(**{"static.max_steps": 50}).decide("Bash", {"command": ECHOES}, save=False)
    assert record.decision == REQUEST_CONFIRM and "G420" in rule_ids(record)
    assert any("too complex to check in time" in r.message for v in record.layers for r in v.reasons)


def test_a_block_found_before_the_budget_ran_out_stays_a_block(guard_for: Any) -> None:
    record = guard_for(**{"static.max_steps": 50}).decide("Bash", {"command": "rm -rf ~; " + ECHOES}, save=False)
    assert record.decision == BLOCK and {"G101", "G420"} <= rule_ids(record)


def test_step_limit_through_guard_check(tmp_path: Path) -> None:
    assert guard_check(tmp_path, ECHOES)["decision"] == AUTO_ALLOW
    asked = guard_check(tmp_path, ECHOES, GUARD_STATIC_MAX_STEPS="50")
    assert asked["decision"] == REQUEST_CONFIRM and "G420" in rule_ids(asked)


def test_step_limit_through_the_hook_asks(tmp_path: Path) -> None:
    assert claude_hook(tmp_path, ECHOES, GUARD_STATIC_MAX_STEPS="50")["permissionDecision"] == "ask"


def test_a_tiny_time_budget_asks_even_for_ls(guard_for: Any) -> None:
    """1 µs is spent before the static layer is done: the chain stops and asks (never allows)."""
    assert guard_for().decide("Bash", {"command": "ls"}, save=False).decision == AUTO_ALLOW
    record = guard_for(**{"decision.budget_ms": 0.001}).decide("Bash", {"command": ECHOES}, save=False)
    assert record.decision == REQUEST_CONFIRM and "G420" in rule_ids(record)


def test_zero_budget_means_no_deadline(guard_for: Any) -> None:
    assert guard_for(**{"decision.budget_ms": 0}).decide("Bash", {"command": ECHOES}, save=False).decision == AUTO_ALLOW


def test_an_analysis_cut_short_is_not_cached(guard_for: Any) -> None:
    g = guard_for(**{"static.max_steps": 50})
    first = g.decide("Bash", {"command": ECHOES}, save=False)
    layer = g.chain.layers[0]
    layer.limits = Limits(layer.limits.max_bytes, layer.limits.max_depth, 0)  # the same layer, no step limit
    assert "G420" in rule_ids(first)
    assert g.decide("Bash", {"command": ECHOES}, save=False).decision == AUTO_ALLOW


def test_budget_steps_are_counted_the_same_every_time() -> None:
    counts = set()
    for _ in range(3):
        budget = Budget(None, 0)
        analyse("bash", "Bash", {"command": ECHOES}, None, HOME, None, budget=budget)
        counts.add(budget.steps)
    assert len(counts) == 1 and counts.pop() >= 300


# -- (a) linear work, counted without a clock --------------------------------------------------
def calls_to_judge(command: str) -> int:
    """Python and C function calls made while judging ``command`` (a deterministic count of work)."""
    seen: Counter[str] = Counter()

    def count(frame: Any, event: str, arg: Any) -> None:
        if event in ("call", "c_call"):
            seen["n"] += 1

    analyse("bash", "Bash", {"command": "ls"}, None, HOME, None)  # imports done outside the count
    sys.setprofile(count)
    try:
        analyse("bash", "Bash", {"command": command}, None, HOME, None, budget=Budget(None, 0))
    finally:
        sys.setprofile(None)
    return seen["n"]


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(many_vars, id="words with variables"),
        pytest.param(lambda n: " | ".join("a $x" for _ in range(n)), id="pipeline"),
        pytest.param(lambda n: " && ".join(f"echo $v{i}" for i in range(n // 10)), id="and-list"),
        pytest.param(lambda n: "echo " + " ".join(f"> /tmp/o{i}" for i in range(n)), id="redirections"),
        pytest.param(lambda n: "rm -f " + " ".join(f"$(echo {i})" for i in range(n)), id="substitutions"),
        pytest.param(lambda n: " ".join(f"f{i}() {{ f{i - 1}; }};" for i in range(1, n)), id="functions"),
    ],
)
def test_work_grows_linearly_with_the_input(make: Any) -> None:
    small, large = calls_to_judge(make(400)), calls_to_judge(make(800))
    assert large / small < 3, (small, large)


# -- hosts' timeouts: the hook answers first ---------------------------------------------------
def test_hook_answers_with_a_refusal_when_it_cannot_decide_in_time(tmp_path: Path) -> None:
    """Past hooks.timeout_seconds a watchdog prints a deny: the host never times the hook out.
    (The decision is held up for sure, not by being slow: its log line waits on a lock we hold.)"""
    import fcntl

    assert claude_hook(tmp_path, "ls")["permissionDecision"] == "allow"
    with open(tmp_path / "ws" / ".fusion-decisions.jsonl", "ab") as log:
        fcntl.flock(log, fcntl.LOCK_EX)
        out = claude_hook(tmp_path, "ls", GUARD_HOOKS_TIMEOUT_SECONDS="0.05")
    assert out["permissionDecision"] == "deny" and "no decision within" in out["permissionDecisionReason"]


class _FakeDaemon:
    """A socket where guard's daemon would listen that never answers; with ``says_alive`` it takes
    each connection and writes the blank a live daemon sends, then stays silent."""

    def __init__(self, ws: Path, *, says_alive: bool) -> None:
        self.path = daemon.socket_path(ws)
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(self.path))
        self.server.listen(8)
        self.held: list[socket.socket] = []
        if says_alive:
            threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.held.append(conn)
            conn.sendall(b" ")

    def close(self) -> None:
        self.server.close()
        for conn in self.held:
            conn.close()
        os.unlink(self.path)


def test_hook_refuses_when_a_live_daemon_takes_the_call_and_stays_silent(tmp_path: Path) -> None:
    """The daemon said it was alive, then no answer: deny (deciding again could outlast the host)."""
    ws = tmp_path / "ws"
    ws.mkdir(mode=0o700)
    fake = _FakeDaemon(ws, says_alive=True)
    try:
        out = claude_hook(tmp_path, "ls", GUARD_HOOKS_DAEMON="auto", GUARD_HOOKS_TIMEOUT_SECONDS="4")
    finally:
        fake.close()
    assert out["permissionDecision"] == "deny" and "did not answer" in out["permissionDecisionReason"]


def test_hook_decides_itself_when_the_daemon_never_says_it_is_alive(tmp_path: Path) -> None:
    """A hung daemon (connection queued, no first byte) is given up on and the hook decides in-process."""
    ws = tmp_path / "ws"
    ws.mkdir(mode=0o700)
    fake = _FakeDaemon(ws, says_alive=False)
    try:
        out = claude_hook(tmp_path, "ls", GUARD_HOOKS_DAEMON="auto", GUARD_HOOKS_TIMEOUT_SECONDS="4")
    finally:
        fake.close()
    assert out["permissionDecision"] == "allow"


def test_installed_hook_timeouts_leave_room_for_guard_to_answer() -> None:
    from guard.cli.hook import HOOK_TIMEOUT
    from guard.integrations.install import TARGETS

    for target in TARGETS.values():
        for _event, _matcher, extra in target.events:
            timeout = dict(extra).get("timeout")
            if timeout is not None:
                seconds = timeout / 1000 if target.host == "gemini" else timeout
                assert seconds > HOOK_TIMEOUT, (target.host, timeout)
    assert daemon.ANSWER_TIMEOUT <= HOOK_TIMEOUT / 2


# -- random big inputs never raise -------------------------------------------------------------
_PIECES = st.sampled_from(
    ["rm", "-rf", "~", "$x", "$(", ")", "`", '"', "'", "|", "&&", ";", "\n", "{a,b}", "*", "<<E\n", "E\n", "\\", " "]
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(_PIECES, min_size=1, max_size=60), st.integers(1, 400))
def test_random_big_inputs_never_raise(pieces: list[str], repeat: int) -> None:
    command = "".join(pieces) * repeat
    analysis = analyse("bash", "Bash", {"command": command}, None, HOME, None, budget=Budget.start(200))
    assert analysis.hits


@pytest.mark.parametrize(
    ("command", "answer"),
    [
        # a runtime value deleted after a move: the walk up its folders looped
        ("mv /opt/app /tmp/n; rm -rf $Z", "ask"),
        # a runtime source copied, then unpacked (outside a project: G185)
        ('cp "$SRC" b.tar && tar -xf b.tar', "ask"),
    ],
)
def test_a_name_with_no_folder_ends_every_walk_up_the_folders(tmp_path: Path, command: str, answer: str) -> None:
    """Answered by guard, not by the hook's watchdog (``no decision within 10 s``): a walk that
    cuts a path one folder at a time stops at a name with no ``/``."""
    out = claude_hook(tmp_path, command)
    assert "no decision within" not in out.get("permissionDecisionReason", ""), out
    assert out["permissionDecision"] == answer, out
