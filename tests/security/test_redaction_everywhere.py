"""No secret reaches any file guard keeps, through any way in; every file is private.

74 secret shapes (``secret_cases.py``, each with a unique random canary) go through every
entry point: ``guard check --save``, ``guard feed`` (dispatch, result with error text,
confirmation), ``guard hook claude-code`` (PreToolUse, PostToolUse, PostToolUseFailure, a
Write of a ``.env`` body), ``@guarded`` raising with the secret in its message,
``Guard.decide/record_result/record_interaction``, the seed's ``save_decision``, the LanceDB
memory and ``guard report --html``; with a fake HOME and GUARD_HOME. Then every byte of
every file under the workspace and HOME (binary LanceDB data included) is searched for each
canary and its tail, and every mode is checked: 0600 for files, 0700 for folders.
"""

from __future__ import annotations

import importlib.util
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from guard import guarded
from guard.core import Guard
from guard.engine import MultiSourceFusionEngine
from guard.redact import redact_text

from .secret_cases import CASES, NEAR_MISSES, tail

REPO = Path(__file__).resolve().parents[2]
CONFIG = {"system.health": 90, "memory.backend": "history"}
ASK_MOST = "[thresholds]\nauto_allow = 100\nrequest_confirm = 1\n"


def _env(home: Path, ws: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GUARD_")}
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env |= {"HOME": str(home), "GUARD_HOME": str(ws), "GUARD_SYSTEM_HEALTH": "90", "LANCE_LOG": "error"}
    env |= {"GUARD_HOOKS_DAEMON": "off", "GUARD_MEMORY_BACKEND": "history"}
    env.pop("CLAUDE_CODE_CHILD_SESSION", None)
    return env


def _guard_cli(env: dict[str, str], *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "guard", *args], input=stdin, env=env, capture_output=True, timeout=180, check=False
    )


def _files(*roots: Path) -> list[Path]:
    return [p for root in roots for p in root.rglob("*") if p.is_file()]


def leaks(*roots: Path) -> dict[str, list[str]]:
    """case id -> files holding its canary (or the canary's tail), raw bytes of every file."""
    found: dict[str, list[str]] = {}
    blobs = {p: p.read_bytes() for p in _files(*roots)}
    assert blobs, "nothing was written"
    for case_id, _, _, canary in CASES:
        needles = {canary.encode(), tail(canary).encode(), json.dumps(canary)[1:-1].encode()}
        for path, data in blobs.items():
            if any(n in data for n in needles):
                found.setdefault(case_id, []).append(path.name)
    return found


def loose_modes(*roots: Path) -> list[str]:
    """Files not 0600 and folders not 0700 under the roots (the roots included)."""
    bad = []
    for root in roots:
        for p in [root, *root.rglob("*")]:
            mode = stat.S_IMODE(p.lstat().st_mode)
            want = 0o700 if p.is_dir() else 0o600
            if not p.is_symlink() and mode != want:
                bad.append(f"{p.relative_to(root.parent)} {mode:o}")
    return bad


def _error_of(params: dict[str, Any]) -> str:
    return f"exit 1: command failed: {params}\nstderr: {json.dumps(params)}"


def _claude(event: str, tool: str, params: dict[str, Any], **extra: Any) -> dict[str, Any]:
    name = {"bash": "Bash", "write": "Write"}.get(tool, tool)
    return {
        "session_id": "hook-session",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/srv/app",
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": name,
        "tool_input": params,
        "tool_use_id": "toolu_01",
        **extra,
    }


class TestNoSecretReachesAFile:
    @pytest.fixture
    def where(self, tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
        home, ws = tmp_path / "home", tmp_path / "ws"
        home.mkdir(mode=0o700)
        ws.mkdir(mode=0o700)
        (ws / "guard.toml").write_text(ASK_MOST, encoding="utf-8")
        os.chmod(ws / "guard.toml", 0o600)
        return home, ws, _env(home, ws)

    def test_the_in_process_api(self, where: tuple[Path, Path, dict[str, str]]) -> None:
        """decide, explain, record_result (error text), record_interaction, @guarded, save_decision."""
        home, ws, _ = where
        with Guard(ws, CONFIG) as g:
            for i, (_, tool, params, canary) in enumerate(CASES):
                sid = f"api-{i}"
                record = g.decide(tool, params, session_id=sid)
                assert canary in json.dumps(record.call.params)  # the decision saw the real call
                g.explain(tool, params, session_id=sid)
                g.record_result(tool, params, session_id=sid, success=False, error=_error_of(params), duration_ms=3)
                g.record_interaction(tool, params, session_id=sid, approved=i % 2 == 0, satisfaction=3)

            sessions = iter(range(len(CASES)))  # one session per call: no loop or failure streak blocks one

            @guarded(tool="bash", guard=g, confirm=lambda record: True, session_id=lambda: f"dec-{next(sessions)}")
            def run(command: str, **kw: Any) -> None:
                raise RuntimeError(f"auth failed for {command!r} with {kw}")

            for _, _, params, _ in CASES:
                with pytest.raises(RuntimeError):
                    run(params.get("command") or params.get("content") or json.dumps(params), extra=params)

            engine = MultiSourceFusionEngine(guard=g)
            for _, tool, params, _ in CASES:
                engine.save_decision(tool, engine.fuse_decision_context(tool, params, "seed"), "seed")
            g.flush()
        assert leaks(ws, home) == {}
        assert loose_modes(ws) == []

    def test_the_commands(self, where: tuple[Path, Path, dict[str, str]]) -> None:
        """guard feed, guard check --save, guard hook claude-code, guard report --html."""
        home, ws, env = where
        stream = []
        for _, tool, params, _ in CASES:
            stream.append({"event": "tool_dispatch", "tool": tool, "params": params, "session_id": "feed"})
            stream.append(
                {
                    "event": "tool_result",
                    "tool": tool,
                    "params": params,
                    "status": "failure",
                    "error": _error_of(params),
                }
            )
            stream.append({"event": "user_confirmation", "tool": tool, "params": params, "action": "denied"})
        proc = _guard_cli(env, "feed", stdin="".join(json.dumps(e) + "\n" for e in stream).encode())
        assert proc.returncode == 0, proc.stderr

        shell = "\n".join(p["command"] for _, t, p, _ in CASES if t == "bash")
        bodies = "\n".join(p["content"] for _, t, p, _ in CASES if t == "write")
        keyed = {k: v for _, t, p, _ in CASES if t.startswith("mcp") for k, v in p.items()}
        for tool, params in (("bash", {"command": shell}), ("write", {"file_path": ".env", "content": bodies})):
            proc = _guard_cli(env, "check", tool, json.dumps(params), "--save", "--session-id", "cli")
            assert proc.returncode in (0, 10, 20), proc.stderr
        proc = _guard_cli(env, "check", "mcp__vault__put", json.dumps(keyed), "--save")
        assert proc.returncode in (0, 10, 20), proc.stderr

        hooks = [
            _claude("PreToolUse", "bash", {"command": shell}),
            _claude("PreToolUse", "write", {"file_path": "/srv/app/.env", "content": bodies}),
            _claude(
                "PostToolUse",
                "write",
                {"file_path": "/srv/app/.env", "content": bodies},
                tool_response={"success": True},
            ),
            _claude("PostToolUseFailure", "bash", {"command": shell}, error=f"Exit code 1\n{shell}\n{bodies}"),
            _claude("PreToolUse", "mcp__vault__put", keyed),
        ]
        for payload in hooks:
            proc = _guard_cli(env, "hook", "claude-code", stdin=json.dumps(payload).encode())
            assert proc.returncode in (0, 2), proc.stderr
        assert (ws / ".guard-pending.json").exists()  # the asked calls wait for their answer there

        proc = _guard_cli(env, "report", "--html", str(ws / "report.html"))
        assert proc.returncode == 0, proc.stderr
        assert leaks(ws, home) == {}
        assert loose_modes(ws) == []

    @pytest.mark.lancedb
    def test_the_lancedb_memory(self, where: tuple[Path, Path, dict[str, str]]) -> None:
        """Memory rows (signature, session and agent columns) and LanceDB's own files."""
        pytest.importorskip("lancedb")
        home, ws, _ = where
        g = Guard(ws, {"system.health": 90}, memory_backend="lancedb")
        try:
            assert g.state.memory is not None and g.state.memory.wait_ready(60)  # type: ignore[attr-defined]
            for i, (_, tool, params, _) in enumerate(CASES):
                g.record_result(tool, params, session_id=f"mem-{i}", success=i % 3 != 0, agent_id="agent")
            g.flush()
            assert g.state.memory.flush(60)  # type: ignore[attr-defined]
        finally:
            g.close()
        assert any((ws / "memory.lance").rglob("*.lance"))
        assert leaks(ws, home) == {}
        assert loose_modes(ws) == []


class TestTheSearchIsNotVacuous:
    def test_a_raw_canary_is_found(self, tmp_path: Path) -> None:
        params = CASES[0][2]
        (tmp_path / "raw.jsonl").write_text(json.dumps({"params": params}))
        assert CASES[0][0] in leaks(tmp_path)

    @pytest.mark.lancedb
    def test_a_canary_in_lancedb_data_files_is_found_in_their_raw_bytes(self, tmp_path: Path) -> None:
        lancedb = pytest.importorskip("lancedb")
        case_id, _, _, canary = CASES[5]
        db = lancedb.connect(str(tmp_path / "t.lance"))
        db.create_table("t", data=[{"signature": f"bash:echo {canary}", "n": 1}])
        assert case_id in leaks(tmp_path)


class TestWhatStaysReadable:
    @pytest.mark.parametrize("command", NEAR_MISSES)
    def test_ordinary_commands_are_written_as_they_are(self, tmp_path: Path, command: str) -> None:
        with Guard(tmp_path / "ws", CONFIG) as g:
            g.decide("bash", {"command": command}, session_id="s")
        line = json.loads((tmp_path / "ws" / ".fusion-decisions.jsonl").read_text().splitlines()[-1])
        assert line["params"]["command"] == command

    def test_the_same_secret_reads_the_same_in_every_line(self, tmp_path: Path) -> None:
        """Stable placeholders: history, memory and loop detection still see one call."""
        _, tool, params, canary = next(c for c in CASES if c[0] == "mysql-p")
        with Guard(tmp_path / "ws", CONFIG) as g:
            for _ in range(2):
                g.decide(tool, params, session_id="s")
                g.record_result(tool, params, session_id="s", success=True)
        logged = [
            json.loads(line)
            for name in (".fusion-decisions.jsonl", ".command-execution.jsonl")
            for line in (tmp_path / "ws" / name).read_text().splitlines()
        ]
        commands = {rec["params"]["command"] for rec in logged}
        assert len(commands) == 1 and canary not in commands.pop()
        assert len({rec["signature"] for rec in logged if "signature" in rec}) == 1

    def test_redacting_twice_changes_nothing(self) -> None:
        for _, _, params, _ in CASES:
            for text in (json.dumps(params), str(params), *[v for v in params.values() if isinstance(v, str)]):
                once = redact_text(text)
                assert redact_text(once) == once


@pytest.mark.skipif(importlib.util.find_spec("guard.memory.lance") is None, reason="no LanceDB memory module")
def test_every_case_is_masked_by_the_pure_function() -> None:
    """The shapes themselves: a leak here names the shape that is missing."""
    from guard.redact import redact

    missed = [
        case_id
        for case_id, _, params, canary in CASES
        if tail(canary) in json.dumps(redact(params)) or tail(canary) in redact_text(_error_of(params))
    ]
    assert missed == []


def test_a_signature_another_program_wrote_is_not_copied_into_the_state_file(tmp_path: Path) -> None:
    """Other programs may write the history files; guard's aggregates keep only redacted keys."""
    _, _, params, canary = next(c for c in CASES if c[0] == "pgpassword")
    ws = tmp_path / "ws"
    ws.mkdir(mode=0o700)
    line = {"timestamp": "2026-04-11T10:30:00+00:00", "tool": "bash", "status": "success"}
    line["signature"] = "bash:" + params["command"]
    (ws / ".command-execution.jsonl").write_text(json.dumps(line) + "\n")
    with Guard(ws, CONFIG) as g:
        g.decide("bash", {"command": "ls"})
    state = (ws / ".guard-state.json").read_text()
    assert tail(canary) not in state and "PGPASSWORD=[REDACTED:" in state
