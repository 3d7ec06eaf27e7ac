"""Hostile input gets exit 2 and one line, never a traceback; hooks answer with a safe refusal.

Deep nesting (RecursionError), 5000-digit integers (Python's int-to-text limit), invalid
UTF-8, lone surrogates, NaN/Infinity, parameters whose ``repr`` raises: through ``guard
check``, ``guard explain``, ``guard feed``, ``guard hook HOST``, the Python API and the daemon.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guard.core import Guard
from guard.errors import InputError
from guard.model import AUTO_ALLOW, BLOCK, DECISIONS
from tests.conftest import ROOT, guard_cli_env

DEEP = "[" * 5000 + "]" * 5000
BIG_INT = '{"command": ' + "9" * 5000 + "}"
HOSTILE_PARAMS = {
    "nested-5000": DEEP,
    "nested-in-params": '{"command": "ls", "x": ' + "[" * 5000 + "]" * 5000 + "}",
    "5000-digit-int": BIG_INT,
    "lone-surrogate": '{"command": "rm -rf ~ \\ud800"}',
    "surrogate-key": '{"\\udfff": "x", "command": "ls"}',
    "nan": '{"command": NaN}',
    "infinity": '{"command": "ls", "n": Infinity, "m": -Infinity}',
}
CONFIG = {"system.health": 90, "memory.backend": "history"}


def guard_cli(*args: str | bytes, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "guard", *args],
        input=stdin,
        capture_output=True,
        env=guard_cli_env() | {"GUARD_HOOKS_DAEMON": "off"},
        cwd=ROOT,
        timeout=120,
    )


def one_line_or_none(stderr: bytes) -> None:
    text = stderr.decode("utf-8", "replace")
    assert "Traceback" not in text, text[-2000:]
    assert len(text.strip().splitlines()) <= 1, text


# -- guard check / guard explain -----------------------------------------------------------
@pytest.mark.parametrize("verb", ["check", "explain"])
@pytest.mark.parametrize("params", ["nested-5000", "5000-digit-int"])
def test_unusable_json_is_exit_2_and_one_line(tmp_path: Path, verb: str, params: str) -> None:
    proc = guard_cli(verb, "bash", HOSTILE_PARAMS[params], "--workspace", str(tmp_path / "ws"))
    assert proc.returncode == 2, proc.stderr[-2000:]
    one_line_or_none(proc.stderr)
    assert proc.stderr.startswith(b"guard: error: PARAMS_JSON")


@pytest.mark.parametrize("verb", ["check", "explain"])
@pytest.mark.parametrize("params", ["nested-in-params", "lone-surrogate", "surrogate-key", "nan", "infinity"])
def test_odd_but_readable_json_gets_a_decision(tmp_path: Path, verb: str, params: str) -> None:
    """Near misses: JSON that Python reads is decided (or refused as input), never a traceback."""
    proc = guard_cli(verb, "bash", HOSTILE_PARAMS[params], "--workspace", str(tmp_path / "ws"))
    assert proc.returncode in ((0, 10, 20, 2) if verb == "check" else (0, 2)), proc.stderr[-2000:]
    one_line_or_none(proc.stderr)


def test_a_lone_surrogate_does_not_hide_a_delete(tmp_path: Path) -> None:
    proc = guard_cli("check", "bash", HOSTILE_PARAMS["lone-surrogate"], "--workspace", str(tmp_path / "ws"))
    assert proc.returncode == 20


@pytest.mark.parametrize("verb", ["check", "explain"])
def test_invalid_utf8_on_the_command_line(tmp_path: Path, verb: str) -> None:
    proc = guard_cli(verb, "bash", b'{"command": "rm -rf ~ \xff"}', "--workspace", str(tmp_path / "ws"))
    assert proc.returncode in ((2, 10, 20) if verb == "check" else (0, 2)), proc.stderr[-2000:]
    one_line_or_none(proc.stderr)


# -- guard feed --------------------------------------------------------------------------
def test_feed_bad_lines_are_one_error_each_and_the_rest_is_processed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    good = {"event": "tool_result", "tool": "bash", "params": {"command": "make"}, "status": "success"}
    lines = [
        json.dumps(good).encode(),
        DEEP.encode(),
        b'{"tool": "bash", "params": {"command": "ls \xff"}}',
        ('{"tool": "bash", "params": {"n": ' + "9" * 5000 + "}}").encode(),
        b'{"tool": "bash", "params": {"command": "ls"}, "ts": "0001-01-01T00:00:00"}',
        b'{"tool": "bash", "params": {"command": "ls"}, "ts": "9999-12-31T23:59:59+14:00"}',
        b'{"tool": "bash", "params": {"command": "ls \\ud800"}}',
        b'{"tool": "bash", "params": {"command": NaN}}',
        json.dumps(good).encode(),
        json.dumps({"tool": "bash", "params": {"command": "ls"}}).encode(),
    ]
    proc = guard_cli("feed", "--workspace", str(ws), stdin=b"\n".join(lines) + b"\n")
    assert b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")[-2000:]
    out = [json.loads(x) for x in proc.stdout.splitlines()]
    by_line = {o["line"]: o for o in out}
    assert set(by_line) == {2, 3, 4, 5, 6, 7, 8, 10}  # the two results are recorded, not printed
    for n in (2, 3, 4):
        assert "error" in by_line[n] and by_line[n]["decision"] == BLOCK
    assert all(o["decision"] in DECISIONS for o in out)
    assert by_line[10]["decision"] == AUTO_ALLOW
    executions = (ws / ".command-execution.jsonl").read_text().splitlines()
    assert len(executions) == 2  # nothing recorded is lost
    assert proc.returncode == 1  # documented: 1 when any line was unreadable


# -- guard hook HOST ------------------------------------------------------------------------
def hook(ws: Path, data: bytes, host: str = "claude-code") -> subprocess.CompletedProcess[bytes]:
    return guard_cli("hook", host, "--workspace", str(ws), stdin=data)


def pre_tool_use(command: Any) -> dict[str, Any]:
    return {
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "cwd": "/tmp",
    }


HOSTILE_HOOK_INPUT = {
    "nested-5000": DEEP.encode(),
    "nested-tool-input": json.dumps(pre_tool_use("ls"))[:-1].encode() + b', "x": ' + DEEP.encode() + b"}",
    "5000-digit-int": json.dumps(pre_tool_use(0)).replace("0}", "9" * 5000 + "}").encode(),
    "invalid-utf8": json.dumps(pre_tool_use("ls X")).encode().replace(b"X", b"\xff"),
    "lone-surrogate": json.dumps(pre_tool_use("rm -rf ~ \ud800")).encode(),
    "nan": json.dumps(pre_tool_use(float("nan"))).encode(),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_HOOK_INPUT))
def test_hook_answers_hostile_input_with_a_refusal(tmp_path: Path, name: str) -> None:
    proc = hook(tmp_path / "ws", HOSTILE_HOOK_INPUT[name])
    assert b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")[-2000:]
    reply = json.loads(proc.stdout)
    decision = reply["hookSpecificOutput"]["permissionDecision"]
    if name == "nested-tool-input":
        assert decision in ("allow", "ask", "deny")  # readable: decided like any other call
    else:
        assert decision in ("deny", "ask"), reply


def test_hook_lone_surrogate_rm_is_denied(tmp_path: Path) -> None:
    proc = hook(tmp_path / "ws", HOSTILE_HOOK_INPUT["lone-surrogate"])
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


# -- the Python API ---------------------------------------------------------------------------
class Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("repr refuses")

    __str__ = __repr__


@pytest.fixture
def g(tmp_path: Path) -> Iterator[Guard]:
    guard = Guard(tmp_path / "ws", CONFIG)
    yield guard
    guard.close()


@pytest.mark.parametrize(
    "params",
    [
        {"command": "ls", "x": Unprintable()},
        {"command": Unprintable()},
        {Unprintable(): 1},
        {(1, 2): "tuple key"},
        {"command": "ls", "n": 10**5000},
        {"command": "ls", "deep": [[[10**5000]]]},
    ],
    ids=["value-repr-raises", "command-repr-raises", "key-repr-raises", "tuple-key", "huge-int", "deep-huge-int"],
)
def test_api_refuses_params_it_could_not_record(g: Guard, params: dict[Any, Any]) -> None:
    for call in (
        lambda: g.decide("bash", params),
        lambda: g.record_result("bash", params, success=True),
        lambda: g.record_interaction("bash", params, approved=True),
        lambda: g.explain("bash", params),
    ):
        with pytest.raises(InputError):
            call()


def test_api_near_misses_are_decided(g: Guard) -> None:
    """Deep, NaN, surrogates and 4000-digit numbers are data guard can write down."""
    deep: dict[str, Any] = {}
    cur = deep
    for _ in range(5000):
        cur["a"] = {}
        cur = cur["a"]
    for params in (
        {"command": "ls", "deep": deep},
        {"command": "ls", "x": float("nan"), "y": float("inf")},
        {"command": "ls \ud800"},
        {"command": "ls", "n": 10**4000},
        {"command": "ls", "b": b"bytes", "s": {1, 2}},
    ):
        assert g.decide("bash", params).decision in DECISIONS


# -- the daemon ---------------------------------------------------------------------------
@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Path]:
    """A foreground ``guard serve`` we started in a temporary workspace; stopped by its pid."""
    ws = tmp_path / "ws"
    ws.mkdir(mode=0o700)
    proc = subprocess.Popen(
        [sys.executable, "-m", "guard", "serve", "--workspace", str(ws)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=guard_cli_env() | {"GUARD_HOOKS_DAEMON": "auto"},
        cwd=ROOT,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("guard serve: listening on"), line
    yield Path(line.split("listening on", 1)[1].strip())
    proc.terminate()
    _, err = proc.communicate(timeout=20)
    assert "Traceback" not in err, err[-2000:]


def ask_daemon(sock_path: Path, payload: bytes) -> dict[str, Any]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(30)
        s.connect(str(sock_path))
        s.sendall(payload + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    answer: dict[str, Any] = json.loads(data)
    return answer


def hook_request(text: str) -> bytes:
    from guard import __version__

    return json.dumps({"v": 1, "op": "hook", "host": "claude-code", "input": text, "version": __version__}).encode()


@pytest.mark.parametrize(
    "payload",
    [
        DEEP.encode(),
        b'{"op": "hook", "x": ' + DEEP.encode() + b"}",
        b'{"op": "hook", "n": ' + b"9" * 5000 + b"}",
        b"\xff\xfe not utf-8",
        hook_request(DEEP),
        hook_request(json.dumps(pre_tool_use("rm -rf ~ \ud800"))),
        hook_request(json.dumps(pre_tool_use(0)).replace("0}", "9" * 5000 + "}")),
    ],
    ids=["deep-request", "deep-field", "huge-int", "not-utf8", "deep-hook", "surrogate-hook", "huge-int-hook"],
)
def test_daemon_survives_hostile_requests(daemon: Path, payload: bytes) -> None:
    first = ask_daemon(daemon, payload)
    assert "error" in first or first.get("stdout"), first
    if first.get("stdout"):
        decision = json.loads(first["stdout"])["hookSpecificOutput"]["permissionDecision"]
        assert decision in ("deny", "ask")
    normal = ask_daemon(daemon, hook_request(json.dumps(pre_tool_use("ls -la"))))
    assert json.loads(normal["stdout"])["hookSpecificOutput"]["permissionDecision"] in ("allow", "ask")
    ping = ask_daemon(daemon, b'{"v": 1, "op": "ping"}')
    assert ping["pid"]


# -- random hostile JSON ---------------------------------------------------------------------
any_char = st.characters(blacklist_categories=(), blacklist_characters="\n")
leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(any_char, max_size=20),
)
hostile_json = st.recursive(
    leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(any_char, max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(params=hostile_json, command=st.one_of(st.text(any_char, max_size=40), hostile_json))
def test_random_hostile_json_is_decided_or_refused_as_input(g: Guard, params: Any, command: Any) -> None:
    body = {"command": command, "extra": params}
    try:
        record = g.decide("bash", body)
    except InputError:
        return
    assert record.decision in DECISIONS
    from guard.integrations.hosts import get_host
    from guard.integrations.hosts.flow import run

    text = json.dumps(pre_tool_use(command) | {"extra": params})
    reply = run(get_host("claude-code"), text, lambda: g, env={})
    decision = json.loads(reply.stdout)["hookSpecificOutput"]["permissionDecision"]
    assert decision in ("allow", "ask", "deny")
