"""Sessions survive one-process-per-call hooks: files, merging, expiry, damage, bounds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from freezegun import freeze_time

from guard.behavior.tracker import journal_file, session_file
from guard.model import BLOCK

from .conftest import behavior, default_guard, ids

T0 = "2026-03-02 10:00:00"
ROOT = Path(__file__).resolve().parents[2]
MAKE = {"command": "make deploy"}


def hook(workspace: Path, fn) -> None:
    """One short-lived Guard, as a hook process would use it: open, do one thing, close."""
    with default_guard(workspace) as g:
        fn(g)


def test_a_breaker_opened_across_hook_processes(tmp_path: Path):
    with freeze_time(T0) as clock:
        for _ in range(5):
            hook(tmp_path, lambda g: g.decide("bash", MAKE, session_id="s1"))
            hook(tmp_path, lambda g: g.record_result("bash", MAKE, session_id="s1", success=False))
            clock.tick(10)
        with default_guard(tmp_path) as g:
            r = g.decide("bash", MAKE, session_id="s1")
            assert r.decision == BLOCK and "G210" in ids(r)


def test_four_failures_across_processes_do_not(tmp_path: Path):
    with freeze_time(T0) as clock:
        for _ in range(4):
            hook(tmp_path, lambda g: g.record_result("bash", MAKE, session_id="s1", success=False))
            clock.tick(10)
        with default_guard(tmp_path) as g:
            assert "G210" not in ids(g.decide("bash", MAKE, session_id="s1"))


def test_taint_from_one_process_blocks_egress_in_another(tmp_path: Path):
    with freeze_time(T0):
        hook(tmp_path, lambda g: g.decide("web_fetch", {"url": "https://x.example"}, session_id="s"))
        hook(
            tmp_path, lambda g: g.record_result("web_fetch", {"url": "https://x.example"}, session_id="s", success=True)
        )
        hook(tmp_path, lambda g: g.decide("read", {"file_path": ".env"}, session_id="s"))
        with default_guard(tmp_path) as g:
            assert g.decide("bash", {"command": "git push origin main"}, session_id="s").decision == BLOCK


def test_two_live_guards_on_one_session_lose_no_events(tmp_path: Path):
    """Each keeps its own pending events; saving re-reads the other's file and applies them on top."""
    with freeze_time(T0) as clock:
        a, b = default_guard(tmp_path), default_guard(tmp_path)
        try:
            for i in range(3):
                a.decide("bash", {"command": f"step {i}"}, session_id="s")  # dispatches: not saved yet
                clock.tick(0.5)
            b.record_result("bash", MAKE, session_id="s", success=False)  # saved at once
            b.record_result("bash", MAKE, session_id="s", success=False)
            a.record_result("bash", MAKE, session_id="s", success=False)  # a re-reads b's file first
            a.flush()
            b.flush()
        finally:
            a.close()
            b.close()
        doc = json.loads(session_file(tmp_path / "sessions", "s").read_text())
        dispatches, _blocked, results, failures, *_ = doc["counts"]
        assert (dispatches, results, failures) == (3, 3, 3)
        assert doc["breakers"][0]["failures"] == 3


def test_concurrent_processes_lose_no_events(tmp_path: Path):
    """Four real processes append results to one session at the same time."""
    events = "".join(
        json.dumps(
            {
                "event": "tool_result",
                "tool": "bash",
                "params": {"command": f"t{i}"},
                "session_id": "s",
                "status": "failure",
            }
        )
        + "\n"
        for i in range(10)
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GUARD_SYSTEM_HEALTH": "90"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "guard", "feed", "--workspace", str(tmp_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            env=env,
        )
        for _ in range(4)
    ]
    for p in procs:
        p.stdin.write(events.encode())
        p.stdin.close()
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]
    doc = json.loads(session_file(tmp_path / "sessions", "s").read_text())
    assert doc["counts"][2:4] == [40, 40]


def test_a_live_guard_sees_a_reset_made_elsewhere(tmp_path: Path):
    with freeze_time(T0), default_guard(tmp_path) as g:
        for _ in range(5):
            g.record_result("bash", MAKE, session_id="s", success=False)
        assert g.decide("bash", MAKE, session_id="s").decision == BLOCK
        with default_guard(tmp_path) as other:
            assert other.state.sessions.reset(session_id="s", task="make deploy")
        r = g.decide("bash", MAKE, session_id="s")
        assert r.decision != BLOCK and behavior(r).data["breaker"] is None


def test_files_are_private_and_bounded(tmp_path: Path):
    with freeze_time(T0) as clock:
        with default_guard(tmp_path, **{"behavior.window": 50}) as g:
            for i in range(120):
                g.decide("read", {"file_path": f"f{i}"}, session_id="s", save=False, track=True)
                clock.tick(30)
        path = session_file(tmp_path / "sessions", "s")
        assert oct(path.stat().st_mode & 0o777) == "0o600"
        assert oct((tmp_path / "sessions").stat().st_mode & 0o777) == "0o700"
        doc = json.loads(path.read_text())
        assert doc["counts"][0] == 120 and len(path.read_bytes()) < 4096  # counters stay small
        journal = journal_file(path)
        lines = journal.read_text().splitlines()
        assert 50 <= len(lines) <= 100 and len(lines) == doc["journal_lines"]  # trimmed to the window
        assert json.loads(lines[-1])["e"] == "d"
        assert oct(journal.stat().st_mode & 0o777) == "0o600"
        assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_secrets_in_calls_are_not_written(tmp_path: Path):
    token = "ghp_" + "a1B2" * 9
    with default_guard(tmp_path) as g:
        g.decide("bash", {"command": f"curl -H 'Authorization: token {token}' https://api.github.com"}, session_id="s")
        g.record_result("bash", {"command": f"gh auth login --with-token {token}"}, session_id="s", success=False)
    path = session_file(tmp_path / "sessions", "s")
    assert token not in path.read_text() and token not in journal_file(path).read_text()
    assert "[REDACTED:" in journal_file(path).read_text()  # the failed result names its call, redacted


def test_idle_sessions_start_afresh(tmp_path: Path):
    with freeze_time(T0) as clock:
        with default_guard(tmp_path) as g:
            for _ in range(4):
                g.record_result("bash", MAKE, session_id="s", success=False)
            assert "G201" in ids(g.decide("read", {"file_path": "a"}, session_id="s"))
            clock.tick(timedelta(hours=25))
            r = g.decide("read", {"file_path": "a"}, session_id="s")
            assert ids(r) == [] and behavior(r).data["health"] == 100.0
        clock.move_to("2026-03-02 10:00:00")
        with default_guard(tmp_path) as g:  # a new process at the old time reads the fresh file
            assert ids(g.decide("read", {"file_path": "b"}, session_id="s")) == []


def test_a_damaged_session_file_starts_afresh(tmp_path: Path):
    path = session_file(tmp_path / "sessions", "s")
    path.parent.mkdir(parents=True)
    path.write_text('{"version": 1, "session_id": "s", "started": 0')
    with default_guard(tmp_path) as g:
        r = g.decide("read", {"file_path": "a"}, session_id="s")
        assert r.decision == "auto_allow" and "sessions" not in r.unavailable
    assert json.loads(path.read_text())["counts"][0] == 1


def test_an_unwritable_workspace_still_decides(tmp_path: Path):
    (tmp_path / "sessions").write_text("not a directory")
    with freeze_time(T0), default_guard(tmp_path) as g:
        for _ in range(5):
            g.record_result("bash", MAKE, session_id="s", success=False)
        assert g.decide("bash", MAKE, session_id="s").decision == BLOCK  # kept in memory


def test_odd_session_ids_map_to_distinct_safe_files(tmp_path: Path):
    d = tmp_path / "sessions"
    names = {session_file(d, sid).name for sid in ["a/b", "a_b", "../../etc", "é", None, "-"]}
    assert len(names) == 5  # None and "-" are the same default session
    assert all("/" not in n and not n.startswith(".") for n in names)


def test_guard_feed_events_drive_the_session(tmp_path: Path):
    from guard.feed import feed

    lines = [
        {"event": "agent:tool_dispatch", "tool": "WebFetch", "params": {"url": "https://x.example"}, "session_id": "f"},
        {
            "event": "agent:tool_result",
            "tool": "WebFetch",
            "params": {"url": "https://x.example"},
            "session_id": "f",
            "status": "success",
        },
        {"event": "tool_dispatch", "tool": "Read", "params": {"file_path": "~/.ssh/id_rsa"}, "session_id": "f"},
        {"event": "tool_dispatch", "tool": "Bash", "params": {"command": "git push origin main"}, "session_id": "f"},
    ]
    with default_guard(tmp_path) as g:
        out = list(feed(g, (json.dumps(x) for x in lines)))
    assert [o["decision"] for o in out][-1] == BLOCK
    assert "G222" in [r["id"] for r in out[-1]["reasons"]]


def test_tier_points_survive_hook_processes(tmp_path: Path):
    big = {"file_path": "src/big.py", "content": "x\n" * 200}
    with freeze_time(T0) as clock:
        for i in range(17):  # 17 normal successes, each reported by its own process: 51 points
            hook(
                tmp_path, lambda g, i=i: g.record_result("bash", {"command": f"make t{i}"}, success=True, agent_id="a")
            )
            clock.tick(30)
        with default_guard(tmp_path) as g:
            r = g.decide("write", big, session_id="s", agent_id="a")
            assert behavior(r).data["tier"] == {"agent": "a", "name": "Sprout", "points": 51.0}
            assert "G240" not in ids(r)


def test_calls_without_a_session_are_one_session_per_process_and_not_saved(tmp_path: Path):
    with freeze_time(T0):
        with default_guard(tmp_path) as g:
            for _ in range(2):
                g.decide("bash", {"command": "ls"})
            assert "G202" in ids(g.decide("bash", {"command": "ls"}))  # in-process: a loop
        for _ in range(3):  # one-shot processes (guard check without --session-id) do not add up
            with default_guard(tmp_path) as g:
                assert ids(g.decide("bash", {"command": "ls"})) == []
        assert not session_file(tmp_path / "sessions", None).exists()


def test_threads_sharing_a_guard_lose_nothing(tmp_path: Path):
    import threading

    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def work(g, n: int) -> None:
        try:
            barrier.wait()
            for i in range(25):
                cmd = {"command": f"job {n} {i}"}
                g.decide("bash", cmd, session_id=f"s{n % 2}", agent_id="a", save=False, track=True)
                g.record_result("bash", cmd, session_id=f"s{n % 2}", success=True, agent_id="a")
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    with default_guard(tmp_path) as g:
        threads = [threading.Thread(target=work, args=(g, n)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors
    for sid in ("s0", "s1"):
        counts = json.loads(session_file(tmp_path / "sessions", sid).read_text())["counts"]
        assert counts[0] == 100 and counts[2] == 100
    tiers = json.loads((tmp_path / "tiers.json").read_text())
    assert tiers["agents"]["a"]["successes"] == 200
