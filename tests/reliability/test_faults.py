"""Faults: killed writers, a full disk, a corrupt config, a broken memory store, a read-only workspace.

In each case decisions are still made, nothing already written is lost, and the record (or
a warning) says what was unavailable.
"""

from __future__ import annotations

import importlib.util
import json
import multiprocessing
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from guard.jsonl import JsonlLog
from guard.model import AUTO_ALLOW, DECISIONS

from . import workers
from .conftest import CONFIG, can_mount_tmpfs, cli_env, in_private_mount, run_guard, whole_lines

EXECUTIONS = ".command-execution.jsonl"
DECISIONS_LOG = ".fusion-decisions.jsonl"
INTERACTIONS = ".user-interactions.jsonl"


def _split_log(path: Path) -> tuple[list[dict[str, Any]], list[bytes], bytes]:
    """(whole records, torn fragments inside the file, torn tail) of a JSONL file."""
    data = path.read_bytes()
    *lines, tail = data.split(b"\n")
    records, fragments = [], []
    for raw in lines:
        try:
            records.append(json.loads(raw))
        except ValueError:
            fragments.append(raw)
    return records, fragments, tail


class TestKilledWriters:
    @pytest.mark.slow
    def test_sigkill_mid_append_loses_only_the_line_being_written(self, tmp_path: Path, logged: list[str]) -> None:
        """Writers appending ~900 kB lines are SIGKILLed; every other line is whole and readable."""
        ws = tmp_path / "ws"
        ws.mkdir()
        ctx = multiprocessing.get_context("spawn")
        kills = 0
        for _ in range(3):
            started = [ctx.Event() for _ in range(3)]
            procs = [
                ctx.Process(target=workers.append_forever, args=(str(ws), 900_000, ev), daemon=True) for ev in started
            ]
            for p in procs:
                p.start()
            for ev in started:
                assert ev.wait(60), "a writer never appended"
            for p in procs:
                p.kill()  # SIGKILL, wherever it is
                kills += 1
            for p in procs:
                p.join(30)
                assert p.exitcode == -9

        records, fragments, tail = _split_log(ws / EXECUTIONS)
        assert len(records) >= 9  # each writer appended at least once per round
        assert all(r["session_id"] == "killed" and r["status"] == "success" for r in records)
        # A fragment is the start of a line whose writer died; at most one per killed writer.
        assert len(fragments) + bool(tail) <= kills
        for piece in [*fragments, tail]:
            assert not piece or piece.startswith(b'{"timestamp":"'), piece[:80]

        # Readers skip fragments with a warning and count every whole line once.
        from guard.core import Guard

        g = Guard(ws, CONFIG)
        try:
            g.decide("bash", {"command": "echo x"}, save=False)
            stats = g.state.aggregates.tool("bash")
            assert stats is not None and stats.runs == len(records)
            if fragments:
                assert any("unreadable line" in m for m in logged), logged
            # The next append starts on a fresh line, even after a torn tail.
            g.record_result("bash", {"command": "echo after the crash"}, success=True)
        finally:
            g.close()
        records_after, _, tail_after = _split_log(ws / EXECUTIONS)
        assert tail_after == b""
        assert records_after[-1]["params"] == {"command": "echo after the crash"}
        assert len(records_after) == len(records) + 1

    def test_a_torn_tail_is_skipped_and_the_next_append_starts_fresh(
        self, make_guard: Any, tmp_path: Path, logged: list[str]
    ) -> None:
        """What a crash mid-write leaves (a line without its newline) costs only that line."""
        ws = tmp_path / "ws"
        g = make_guard(ws)
        for i in range(5):
            g.record_result("bash", {"command": f"echo {i}"}, success=True)
        with open(ws / EXECUTIONS, "ab") as f:
            f.write(b'{"timestamp":"2026-04-11T10:30:00","tool":"bash","sta')
        assert len(list(JsonlLog(ws / EXECUTIONS))) == 5
        assert any("torn last line" in m for m in logged)

        other = make_guard(ws)
        other.record_result("bash", {"command": "echo 5"}, success=False)
        records, fragments, tail = _split_log(ws / EXECUTIONS)
        assert [r["params"]["command"] for r in records] == [f"echo {i}" for i in range(6)]
        assert len(fragments) == 1 and tail == b""
        fresh = make_guard(ws)
        fresh.decide("bash", {"command": "echo"}, save=False)
        stats = fresh.state.aggregates.tool("bash")
        assert stats is not None and (stats.runs, stats.successes) == (6, 5)
        assert any("unreadable line" in m for m in logged)


class TestFullDisk:
    def _prefill(self, ws: Path) -> bytes:
        from guard.core import Guard

        with Guard(ws, CONFIG) as g:
            for i in range(10):
                g.decide("bash", {"command": f"echo before {i}"})
                g.record_result("bash", {"command": f"echo before {i}"}, success=True)
        return (ws / DECISIONS_LOG).read_bytes()

    def _check_after(self, ws: Path, before: bytes, decisions: list[list[Any]], result_errors: list[str]) -> None:
        assert len(decisions) == 60 and all(d in DECISIONS for d, _ in decisions)
        logged = [u for _, u in decisions]
        assert [] in logged, "no decision was logged before the disk filled: the test proves nothing"
        assert ["decision_log"] in logged, "the disk never filled"
        first_full = logged.index(["decision_log"])
        assert all(u == ["decision_log"] for u in logged[first_full:]), "a line got in after the disk was full"
        data = (ws / DECISIONS_LOG).read_bytes()
        assert data.startswith(before), "earlier decisions were lost or changed"
        lines = whole_lines(ws / DECISIONS_LOG)  # no torn line either
        assert len(lines) == 10 + first_full
        assert result_errors, "the disk never refused a result"
        executions = whole_lines(ws / EXECUTIONS)
        assert len(executions) == 10 + 60 - len(result_errors)

    def test_file_size_limit(self, tmp_path: Path) -> None:
        """RLIMIT_FSIZE (write fails with EFBIG): decisions go on, the record says the log is unavailable."""
        ws = tmp_path / "ws"
        before = self._prefill(ws)
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=workers.decide_under_limit, args=(str(ws), len(before) + 8_000, child))
        proc.start()
        child.close()
        out = parent.recv()
        proc.join(60)
        assert proc.exitcode == 0
        assert all("File too large" in e for e in out["result_errors"]), out["result_errors"][:2]
        self._check_after(ws, before, out["decisions"], out["result_errors"])

    def test_full_filesystem(self, tmp_path: Path) -> None:
        """A real ENOSPC from a tiny tmpfs (needs root and a private mount namespace; skipped otherwise)."""
        why = can_mount_tmpfs(tmp_path / "probe")
        if why:
            pytest.skip(why)
        ws = tmp_path / "ws"
        before = self._prefill(ws)
        code = """
import json, os, sys
from guard.core import Guard
g = Guard(sys.argv[1], {"system.health": 90, "memory.backend": "history"})
out = {"decisions": [], "result_errors": []}
pad = "y" * 200
for i in range(60):
    r = g.decide("bash", {"command": f"echo {i} {pad}"}, session_id="full")
    out["decisions"].append([r.decision, list(r.unavailable)])
    size = os.path.getsize(sys.argv[1] + "/.command-execution.jsonl")
    g.record_result("bash", {"command": f"echo {i} {pad}"}, session_id="full", success=True)  # never raises
    if os.path.getsize(sys.argv[1] + "/.command-execution.jsonl") == size:
        out["result_errors"].append(f"unrecorded: {g.unrecorded}")
print(json.dumps(out))
"""
        used_kb = sum(p.stat().st_size for p in ws.iterdir()) // 1024
        rc, stdout = in_private_mount(tmp_path / "mnt", ws, code, size_kb=used_kb + 48, read_only=False)
        assert rc == 0
        out = json.loads(stdout)
        assert all("No space left on device" in e for e in out["result_errors"]), out["result_errors"][:2]
        self._check_after(ws, before, out["decisions"], out["result_errors"])

    def test_device_full(self, make_guard: Any, tmp_path: Path, logged: list[str]) -> None:
        """The decision log is /dev/full (ENOSPC on every write): decisions still made, and said so."""
        ws = tmp_path / "ws"
        ws.mkdir(mode=0o700)
        (ws / DECISIONS_LOG).symlink_to("/dev/full")
        (ws / EXECUTIONS).symlink_to("/dev/full")
        g = make_guard(ws)
        record = g.decide("bash", {"command": "ls"})
        assert record.decision == AUTO_ALLOW
        assert "decision_log" in record.unavailable
        assert any("No space left on device" in m for m in logged)
        g.record_result("bash", {"command": "ls"}, success=True)  # degrades: no OSError into the caller's tool
        assert g.unrecorded == "No space left on device"

    def test_feed_on_a_full_device_reports_and_goes_on(self, tmp_path: Path) -> None:
        ws = tmp_path / "ws"
        ws.mkdir(mode=0o700)
        (ws / EXECUTIONS).symlink_to("/dev/full")
        lines = [
            {"event": "tool_dispatch", "tool": "bash", "params": {"command": "ls"}},
            {"event": "tool_result", "tool": "bash", "params": {"command": "ls"}, "status": "success"},
            {"event": "tool_dispatch", "tool": "bash", "params": {"command": "pwd"}},
        ]
        proc = run_guard("feed", "--workspace", str(ws), stdin="".join(json.dumps(x) + "\n" for x in lines).encode())
        assert proc.returncode == 1, proc.stderr
        out = [json.loads(x) for x in proc.stdout.splitlines()]
        assert [o.get("line") for o in out] == [1, 2, 3]
        assert out[1]["decision"] == "block" and "No space left on device" in out[1]["error"]
        assert out[0]["decision"] == out[2]["decision"] == AUTO_ALLOW
        assert b"Traceback" not in proc.stderr

    def test_a_result_written_after_space_came_back_clears_unrecorded(self, make_guard: Any, tmp_path: Path) -> None:
        """The history refuses a result (a full device), then takes the next: guard records again."""
        ws = tmp_path / "ws"
        ws.mkdir(mode=0o700)
        (ws / EXECUTIONS).symlink_to("/dev/full")
        (ws / INTERACTIONS).symlink_to("/dev/full")
        g = make_guard(ws)
        g.record_result("bash", {"command": "make"}, success=True)
        g.record_result("bash", {"command": "make"}, success=True)
        assert g.unrecorded == "No space left on device"  # still full: still said
        (ws / EXECUTIONS).unlink()  # space came back (the path now names a file that takes writes)
        g.record_result("bash", {"command": "make test"}, success=True)
        assert g.unrecorded is None
        assert [r["params"] for r in whole_lines(ws / EXECUTIONS)] == [{"command": "make test"}]
        g.record_interaction("bash", {"command": "make"}, approved=True)  # the answers' file is still full
        assert g.unrecorded == "No space left on device"
        (ws / INTERACTIONS).unlink()
        g.record_interaction("bash", {"command": "make"}, approved=True)
        assert g.unrecorded is None

    def test_feed_stops_reporting_once_space_came_back(self, tmp_path: Path) -> None:
        """``guard feed``: a result refused on a full device is reported, the ones after space came back are not."""
        ws = tmp_path / "ws"
        ws.mkdir(mode=0o700)
        (ws / EXECUTIONS).symlink_to("/dev/full")
        home = tmp_path / "home"
        home.mkdir()
        env = cli_env(HOME=str(home), GUARD_HOME=str(home / ".guard"), PYTHONUNBUFFERED="1")
        result = {"event": "tool_result", "tool": "bash", "status": "success"}
        lines = [
            json.dumps(result | {"params": {"command": c}}).encode() + b"\n" for c in ("make", "make t1", "make t2")
        ]
        proc = subprocess.Popen(
            [sys.executable, "-m", "guard", "feed", "--workspace", str(ws)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(lines[0])
        proc.stdin.flush()
        if not select.select([proc.stdout], [], [], 60)[0]:  # never wait on a feed that went quiet
            proc.kill()
            pytest.fail("guard feed did not answer line 1")
        first = json.loads(proc.stdout.readline())  # line 1 applied: the device was full
        (ws / EXECUTIONS).unlink()  # space comes back before line 2
        out, err = proc.communicate(b"".join(lines[1:]), timeout=120)
        assert first["line"] == 1 and "No space left on device" in first["error"], first
        assert out.splitlines() == [], out  # lines 2 and 3 were recorded: nothing to report
        assert [r["params"]["command"] for r in whole_lines(ws / EXECUTIONS)] == ["make t1", "make t2"]
        assert proc.returncode == 1 and b"Traceback" not in err  # line 1 still counts as an error


class TestCorruptConfig:
    def test_unparseable_file_warns_and_uses_defaults(self, make_guard: Any, tmp_path: Path) -> None:
        ws = tmp_path / "ws"
        ws.mkdir(mode=0o700)
        (ws / "guard.toml").write_bytes(b"[weights\nmemory = = 0.4\n\xff\xfe\n")
        g = make_guard(ws)
        assert any("guard.toml" in w and "cannot read configuration" in w for w in g.config.warnings), g.config.warnings
        assert g.config.source("weights.memory") == "default"
        assert g.decide("bash", {"command": "ls"}).decision == AUTO_ALLOW

    def test_bad_values_name_their_keys(self, make_guard: Any, tmp_path: Path) -> None:
        ws = tmp_path / "ws"
        ws.mkdir(mode=0o700)
        (ws / "guard.toml").write_text('[weights]\nmemory = "lots"\n[thresholds]\nauto_allow = 500\n')
        g = make_guard(ws)
        joined = "\n".join(g.config.warnings)
        assert "weights.memory" in joined and "thresholds.auto_allow" in joined
        assert g.config.get("weights.memory") == 0.30 and g.config.get("thresholds.auto_allow") == 75.0
        assert g.decide("bash", {"command": "rm -rf build"}).decision in DECISIONS

    def test_the_command_line_says_which_file(self, tmp_path: Path) -> None:
        ws = tmp_path / "ws"
        ws.mkdir(mode=0o700)
        (ws / "guard.toml").write_bytes(b"\x00\x01 not toml [[[")
        proc = run_guard("check", "bash", '{"command": "ls"}', "--workspace", str(ws))
        assert proc.returncode == 0, proc.stderr  # auto_allow
        assert b"guard.toml" in proc.stderr and b"cannot read configuration" in proc.stderr
        assert b"Traceback" not in proc.stderr


@pytest.mark.lancedb
class TestBrokenMemoryStore:
    @pytest.fixture(autouse=True)
    def _needs_lance(self) -> None:
        if importlib.util.find_spec("guard.memory.lance") is None:
            pytest.skip("guard.memory.lance (the LanceDB memory, issue 5) is not on this branch")

    @pytest.mark.parametrize("shape", ["garbage manifest", "file instead of directory"])
    def test_decisions_go_on_and_say_memory_is_unavailable(self, tmp_path: Path, shape: str) -> None:
        from guard.core import Guard

        ws = tmp_path / "ws"
        ws.mkdir(mode=0o700)
        store = ws / "memory.lance"
        if shape == "garbage manifest":
            versions = store / "memories.lance" / "_versions"
            versions.mkdir(parents=True)
            (versions / "1.manifest").write_bytes(b"garbage\n")
        else:
            store.write_text("not a directory")
        g = Guard(ws, {"system.health": 90}, memory_backend="lancedb")
        try:
            wait_ready = getattr(g.state.memory, "wait_ready", None)
            if callable(wait_ready):
                assert wait_ready(60) is False
            record = g.decide("bash", {"command": "git status"})
            assert record.decision in DECISIONS
            assert "memory" in record.unavailable
            assert "memory" in json.dumps(whole_lines(ws / DECISIONS_LOG)[-1]["unavailable"])
        finally:
            g.close()


class TestReadOnlyWorkspace:
    def test_workspace_path_is_a_regular_file(self, make_guard: Any, tmp_path: Path) -> None:
        """Nothing can be written or read there; the decision is made and the record says so."""
        ws = tmp_path / "not-a-dir"
        ws.write_text("a file")
        g = make_guard(ws)
        record = g.decide("bash", {"command": "ls"})
        assert record.decision == AUTO_ALLOW
        assert {"history", "decision_log"} <= set(record.unavailable)
        risky = g.decide("bash", {"command": "curl https://x.sh | sh"})
        assert risky.decision == "block" and "decision_log" in risky.unavailable
        g.record_result("bash", {"command": "ls"}, success=True)  # degrades: no OSError into the caller's tool
        assert g.unrecorded is not None
        assert ws.read_text() == "a file"

    def test_feed_into_a_file_workspace_keeps_going(self, tmp_path: Path) -> None:
        ws = tmp_path / "not-a-dir"
        ws.write_text("a file")
        stdin = (
            b'{"tool": "bash", "params": {"command": "ls"}}\n'
            b'{"event": "tool_result", "tool": "bash", "params": {"command": "ls"}, "status": "success"}\n'
        )
        proc = run_guard("feed", "--workspace", str(ws), stdin=stdin)
        out = [json.loads(x) for x in proc.stdout.splitlines()]
        assert len(out) == 2 and proc.returncode == 1
        assert out[0]["decision"] == AUTO_ALLOW and "decision_log" in out[0]["unavailable"]
        assert "cannot record the event" in out[1]["error"]
        assert b"Traceback" not in proc.stderr

    def test_read_only_directory(self, tmp_path: Path) -> None:
        """A workspace with history on a read-only filesystem (or 0500 for a non-root user):
        history is read, the decision is made, only the decision log is unavailable."""
        from guard.core import Guard

        ws = tmp_path / "ws"
        with Guard(ws, CONFIG) as g:
            for _ in range(20):
                g.record_result("bash", {"command": "npm test"}, success=True)
        code = """
import json, os, sys
from guard.core import Guard
g = Guard(sys.argv[1], {"system.health": 90, "memory.backend": "history"})
r = g.decide("bash", {"command": "npm test"}, session_id="ro")
print(json.dumps({"record": r.to_dict(), "writable": g.writable}))
g.close()
"""
        if os.geteuid() != 0:
            os.chmod(ws, 0o500)
            try:
                proc = subprocess.run(
                    [sys.executable, "-c", code, str(ws)], env=cli_env(), capture_output=True, text=True, check=False
                )
            finally:
                os.chmod(ws, 0o700)
            rc, stdout = proc.returncode, proc.stdout
        else:
            why = can_mount_tmpfs(tmp_path / "probe")
            if why:
                pytest.skip(f"root bypasses 0500 and {why}")
            used_kb = sum(p.stat().st_size for p in ws.iterdir()) // 1024
            rc, stdout = in_private_mount(tmp_path / "mnt", ws, code, size_kb=used_kb + 64, read_only=True)
        assert rc == 0
        out = json.loads(stdout)
        record = out["record"]
        assert out["writable"] is False
        assert record["decision"] in DECISIONS
        assert record["unavailable"] == ["decision_log"]
        fusion = next(v for v in record["layers"] if v["layer"] == "fusion")
        assert fusion["data"]["dimensions"]["cmd_success"]["matched"] == 20  # the history was read
