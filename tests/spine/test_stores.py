"""Workspace stores: concurrent appends intact, torn lines skipped, incremental aggregates, privacy."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import stat
import threading
from pathlib import Path

from guard import log as guard_log
from guard.aggregates import Aggregates
from guard.jsonl import JsonlLog


def _lines(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_100_threads_append_without_loss_or_interleaving(tmp_path: Path) -> None:
    log = JsonlLog(tmp_path / "a.jsonl")
    pad = "x" * 3000  # longer than a pipe buffer's atomic size: interleaving would show

    def work(t: int) -> None:
        for i in range(20):
            log.append({"t": t, "i": i, "pad": pad})

    threads = [threading.Thread(target=work, args=(t,)) for t in range(100)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    recs = _lines(tmp_path / "a.jsonl")
    assert len(recs) == 2000
    assert {(r["t"], r["i"]) for r in recs} == {(t, i) for t in range(100) for i in range(20)}


def _proc_append(path: str, p: int) -> None:
    log = JsonlLog(Path(path))
    for i in range(200):
        log.append({"p": p, "i": i, "pad": "y" * 5000})


def test_several_processes_append_without_loss(tmp_path: Path) -> None:
    path = tmp_path / "b.jsonl"
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_proc_append, args=(str(path), p)) for p in range(4)]
    for pr in procs:
        pr.start()
    for pr in procs:
        pr.join()
        assert pr.exitcode == 0
    recs = _lines(path)
    assert len(recs) == 800 and len({(r["p"], r["i"]) for r in recs}) == 800


def test_files_are_private(make_guard, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    g = make_guard()
    g.decide("bash", {"command": "ls"})
    g.record_result("bash", {"command": "ls"}, success=True)
    g.record_interaction("bash", {"command": "ls"}, approved=True)
    g.flush()
    assert stat.S_IMODE(workspace.stat().st_mode) == 0o700
    for f in workspace.iterdir():
        if f.is_file():
            assert stat.S_IMODE(f.stat().st_mode) == 0o600, f


def test_torn_last_line_is_skipped_with_a_warning_and_next_append_is_clean(tmp_path: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    from loguru import logger

    messages: list[str] = []
    sink = logger.add(messages.append, level="WARNING")
    guard_log.enable()
    try:
        path = tmp_path / "c.jsonl"
        log = JsonlLog(path)
        log.append({"n": 1})
        with open(path, "ab") as f:
            f.write(b'{"n": 2, "tor')  # a writer died mid-line
        assert [r["n"] for r in log] == [1]
        assert any("torn" in m for m in messages)
        log.append({"n": 3})
        assert [r["n"] for r in log] == [1, 3]
        assert any("unreadable line" in m for m in messages)
    finally:
        logger.remove(sink)
        logger.disable("guard")


def test_read_from_leaves_an_unfinished_line_for_later(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": 2')
    recs, offset = JsonlLog(path).read_from(0)
    assert recs == [{"a": 1}] and offset == len(b'{"a": 1}\n')


def _write_history(root: Path, n: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".command-execution.jsonl", "w") as f:
        for i in range(n):
            f.write(
                json.dumps(
                    {"tool": "bash", "status": "success" if i % 4 else "failure", "timestamp": "2026-11-01T10:00:00"}
                )
                + "\n"
            )


def test_aggregates_catch_up_incrementally(tmp_path: Path) -> None:
    _write_history(tmp_path, 100)
    agg = Aggregates(tmp_path, 0, 0)
    assert agg.catch_up() == 100
    assert agg.tool("bash").runs == 100 and agg.tool("Bash").successes == 75
    assert agg.catch_up() == 0  # nothing new: nothing re-read
    with open(tmp_path / ".command-execution.jsonl", "a") as f:
        f.write(json.dumps({"tool": "bash", "status": "success"}) + "\n")
    assert agg.catch_up() == 1 and agg.tool("bash").runs == 101


def test_persisted_state_lets_a_new_process_start_without_rereading(tmp_path: Path) -> None:
    _write_history(tmp_path, 1000)
    agg = Aggregates(tmp_path, 0, 0)
    agg.catch_up()
    agg.save()
    fresh = Aggregates(tmp_path, 0, 0)
    fresh.load()
    assert fresh.catch_up() == 0
    assert fresh.tool("bash").runs == 1000 and fresh.lines_applied == 0


def test_state_with_other_half_lives_is_recounted(tmp_path: Path) -> None:
    _write_history(tmp_path, 10)
    agg = Aggregates(tmp_path, 0, 0)
    agg.catch_up()
    agg.save()
    other = Aggregates(tmp_path, 3600, 0)
    other.load()
    assert other.catch_up() == 10


def test_truncated_history_is_recounted(tmp_path: Path) -> None:
    _write_history(tmp_path, 10)
    agg = Aggregates(tmp_path, 0, 0)
    agg.catch_up()
    _write_history(tmp_path, 3)
    agg.catch_up()
    assert agg.tool("bash").runs == 3


def test_other_programs_lines_in_the_seed_shape_count(tmp_path: Path) -> None:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / ".user-interactions.jsonl").write_text(
        '{"tool": "write", "action": "approved", "satisfaction": 5}\n'
        '{"tool": "write", "action": "denied"}\n'
        '{"tool": "write", "action": "maybe"}\n'
        "[1, 2]\n"
    )
    agg = Aggregates(tmp_path, 0, 0)
    agg.catch_up()
    u = agg.user("write")
    assert (u.interactions, u.approvals, u.satisfaction_count) == (2, 1, 1)


def test_decisions_from_another_guard_are_seen(make_guard, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    a = make_guard()
    b = make_guard()
    a.record_result("bash", {"command": "make"}, success=False)
    rec = b.decide("bash", {"command": "make"})
    assert rec.layer("fusion").data["dimensions"]["cmd_success"]["matched"] == 1
    assert os.path.exists(workspace / ".command-execution.jsonl")
