"""Memory on without LanceDB in the embedding process (issue 17, step 1).

A process that embeds guard reads the snapshot the workspace's writer publishes and queues its
outcomes; only the writer (``guard serve``, ``guard tidy``, ``memory.write_in_process``) loads
LanceDB. The scores are the writer's own, bit for bit.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from guard import Guard
from guard.config import Config
from guard.memory.base import MemoryEvent
from guard.memory.published import PublishedSnapshot, snapshot_path
from guard.memory.queue import queue_path
from guard.memory.reader import SnapshotMemory
from guard.model import Risk, ToolCall
from guard.signature import signature
from tests.conftest import GUARD_CMD, ROOT, guard_cli_env

QUIET = {"memory.tidy": False, "memory.snapshot_seconds": 0, "memory.flush_seconds": 3600}
COMMANDS = [
    "make build",
    "make test",
    "npm test",
    "npm publish",
    "git push origin main",
    "git status",
    "rm -rf /tmp/build",
    "rm -rf ./dist",
    "pytest -q tests/unit",
    "cargo build --release",
    "docker compose up -d",
    "terraform apply",
]
QUERIES = [
    *COMMANDS,
    "make build2",
    "rm -rf /tmp/build2",
    "npm run test",
    "git push origin feature",
    "ls -la",
    "terraform plan",
    "cargo test",
]


def _config(ws: Path, **extra: Any) -> Config:
    return Config.load(workspace=None, env={}, overrides={"system.health": 90, **QUIET, **extra})


def _events(n: int) -> list[MemoryEvent]:
    out = []
    for i in range(n):
        cmd = COMMANDS[i % len(COMMANDS)] + ("" if i % 5 else f" {i % 17}")
        tool, params = ("Bash", {"command": cmd}) if i % 9 else ("Write", {"file_path": f"src/m{i % 4}.py"})
        out.append(
            MemoryEvent(
                tool,
                signature(tool, params),
                success=i % 4 != 0,
                risk=Risk(i % 5),
                timestamp=datetime(2026, 1, 1, tzinfo=UTC),
            )
        )
    return out


def _ask(memory: Any, command: str) -> Any:
    call = ToolCall("Bash", {"command": command})
    return memory.relevance(call, signature(call.tool, call.params), Risk.LOW, datetime(2026, 1, 2, tzinfo=UTC))


@pytest.fixture
def writer(tmp_path: Path) -> Any:
    pytest.importorskip("lancedb")
    from guard.memory.lance import LanceMemory

    ws = tmp_path / "ws"
    ws.mkdir(mode=0o700)
    m = LanceMemory(str(ws / "memory.lance"), _config(ws), start_background=False, state_dir=ws)
    assert m.open(), m.status
    yield m
    m.close()


@pytest.mark.parametrize("mode", ["guard", "seed"])
def test_snapshot_scores_equal_lancedb_scores(tmp_path: Path, mode: str) -> None:
    pytest.importorskip("lancedb")
    from guard.memory.lance import LanceMemory

    ws = tmp_path / "ws"
    ws.mkdir(mode=0o700)
    config = _config(ws, **{"fusion.mode": mode})
    m = LanceMemory(str(ws / "memory.lance"), config, start_background=False, state_dir=ws)
    assert m.open()
    events = _events(600)
    m._write(events[:300])  # the snapshot extended after a write, published
    m._write(events[300:])  # (within a second of the last: left for the next check)
    m._check()
    reader = SnapshotMemory(ws, config)
    extended = [(_ask(m, q), _ask(reader, q)) for q in QUERIES]
    m.close()
    # A fresh writer builds its snapshot from the table (the other path), and publishes that.
    fresh = LanceMemory(str(ws / "memory.lance"), config, start_background=False, state_dir=ws)
    assert fresh.open()
    reader.refresh()
    rebuilt = [(_ask(fresh, q), _ask(reader, q)) for q in QUERIES]
    fresh.close()
    for lance, mapped in extended + rebuilt:
        assert lance.available and mapped.available
        assert mapped == lance  # score, matched, confidence, rates, note: identical
    assert any(lance.matched for lance, _ in extended) and any(not lance.matched for lance, _ in extended)


def _many(n: int) -> list[MemoryEvent]:
    """``n`` outcomes over many distinct signatures sharing programs, words and paths: ties in
    similarity (``make t1`` and ``make t2`` are equally close to ``make``), hash collisions."""
    programs = ["make", "git", "npm", "rm", "cargo", "docker", "pytest", "ls"]
    words = ["build", "test", "run", "push", "status", "-rf", "--release", "up", "-q", "origin"]
    paths = ["/tmp/b", "./dist", "src/a.py", "~/x", "/etc/hosts", "../up", "/"]
    out = []
    for i in range(n):
        cmd = f"{programs[i % 8]} {words[i * 7 % 10]} t{i % 97}" + (f" {paths[i % 7]}" if i % 3 == 0 else "")
        tool, params = ("Bash", {"command": cmd}) if i % 11 else ("Write", {"file_path": f"src/m{i % 13}.py"})
        ok = (i * 2654435761) % 7 > 1
        out.append(MemoryEvent(tool, signature(tool, params), ok, Risk(i % 5), datetime(2026, 1, 1, tzinfo=UTC)))
    return out


SCALE_QUERIES = [
    "make",  # one heavy feature: every make column is a candidate
    "git",
    "make build t5",
    "git status t1 /tmp/b",
    "rm -rf /",
    "rm -rf t3 ./dist",
    "npm run t40",
    "cargo --release t96 ../up",
    "docker up t7 ~/x && make test t8 | git push origin main; ls -q /etc/hosts src/a.py",  # dense query
    "terraform apply",  # nothing similar
]


@pytest.mark.parametrize(
    ("dim", "similarity", "top_k"),
    [(256, 0.80, 20), (64, 0.80, 3), (64, 0.50, 5), (32, 0.95, 1), (64, 0.0, 4)],
)
def test_snapshot_scores_equal_lancedb_scores_at_scale(tmp_path: Path, dim: int, similarity: float, top_k: int) -> None:
    """Thousands of distinct signatures, dense and sparse queries, ties cut by ``top_k``, a
    threshold of 0 (every column counts): the reader's plain-Python search gives the writer's
    numpy search's numbers bit for bit, for the extended and for the rebuilt snapshot."""
    pytest.importorskip("lancedb")
    from guard.memory.embed import HashingEmbedder
    from guard.memory.lance import LanceMemory

    ws = tmp_path / "ws"
    ws.mkdir(mode=0o700)
    overrides = {"memory.dim": dim, "memory.similarity": similarity, "memory.top_k": top_k, "memory.cache_size": 0}
    config = _config(ws, **overrides)
    embedder = HashingEmbedder(dim=dim)
    m = LanceMemory(str(ws / "memory.lance"), config, start_background=False, state_dir=ws)
    assert m.open()
    events = _many(3000)
    m._write(events[:2000])
    m._write(events[2000:])
    m._publish()
    published = PublishedSnapshot(snapshot_path(ws))
    assert len(published) == len(m._snapshot) > 1000
    pairs = []
    for tool in ("bash", "write"):
        for q in SCALE_QUERIES if tool == "bash" else ["src/m1.py", "src/new.py", "README.md"]:
            sig = signature(tool, {"command": q} if tool == "bash" else {"file_path": q})
            writer_side = m._snapshot.search(tool, embedder.embed(sig), similarity, top_k)
            reader_side = published.search(tool, embedder.sparse(sig), similarity, top_k)
            pairs.append((writer_side, reader_side))
    extended = [(_ask(m, q), _ask(SnapshotMemory(ws, config), q)) for q in SCALE_QUERIES]
    m.close()
    fresh = LanceMemory(str(ws / "memory.lance"), config, start_background=False, state_dir=ws)
    assert fresh.open()
    rebuilt = [(_ask(fresh, q), _ask(SnapshotMemory(ws, config), q)) for q in SCALE_QUERIES]
    fresh.close()
    for writer_side, reader_side in pairs:
        assert reader_side == writer_side  # every float equal, not approximately
    for lance, read in extended + rebuilt:
        assert read == lance
    found = [w for w, _ in pairs if w is not None]
    assert (found and any(w is None for w, _ in pairs)) or similarity == 0.0
    assert any(w.matched > top_k for w in found)  # some answers were cut at top_k among ties


def test_a_snapshot_of_the_older_format_is_unavailable_not_misread(tmp_path: Path) -> None:
    """A file the previous version published (GUARDSN1) is not searched: memory says why until
    the writer publishes again."""
    ws = tmp_path / "ws"
    ws.mkdir()
    snapshot_path(ws).write_bytes(b"GUARDSN1" + bytes(120))
    reader = SnapshotMemory(ws, _config(ws))
    got = _ask(reader, "make build")
    assert not got.available and "older format" in got.note
    assert reader.status.startswith("unreadable snapshot")


def test_published_snapshot_is_private_and_replaced_atomically(writer: Any) -> None:
    ws = writer.published.parent
    writer._write(_events(20))
    path = snapshot_path(ws)
    first = os.stat(path)
    assert stat.S_IMODE(first.st_mode) == 0o600
    writer._write(_events(5))
    assert os.stat(path).st_ino == first.st_ino  # at most one publication a second after writes
    writer.close()  # ... and what is left is published on close (or at the next check)
    assert os.stat(path).st_ino != first.st_ino  # a new file renamed into place, never rewritten
    assert len(PublishedSnapshot(path)) == len(writer._snapshot)  # the rows of both writes
    assert [p.name for p in ws.iterdir() if p.name.endswith(".tmp")] == []


def test_reader_without_snapshot_is_unavailable_not_wrong(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    reader = SnapshotMemory(ws, _config(ws))
    result = _ask(reader, "make build")
    assert not result.available and "no snapshot published yet" in result.note
    snapshot_path(ws).write_bytes(b"garbage")
    assert reader.refresh() is False
    assert "unreadable snapshot" in _ask(reader, "make build").note


def test_queued_outcomes_reach_the_writer_and_come_back_through_the_snapshot(tmp_path: Path) -> None:
    pytest.importorskip("lancedb")
    ws = tmp_path / "ws"
    embedded = Guard(ws, {"system.health": 90, **QUIET})
    assert embedded.state.memory.name == "snapshot"
    for _ in range(6):
        embedded.record_result("bash", {"command": "make build"}, success=True)
        embedded.record_result("bash", {"command": "make flaky"}, success=False)
    lines = queue_path(ws).read_text().splitlines()
    assert len(lines) == 12 and stat.S_IMODE(os.stat(queue_path(ws)).st_mode) == 0o600
    before = embedded.decide("bash", {"command": "make build"})
    assert "memory" in before.unavailable  # nothing published yet
    daemon_like = Guard(ws, {"system.health": 90, **QUIET}, memory_backend="lancedb")  # the writer
    assert daemon_like.state.memory.wait_ready(120)
    assert daemon_like.state.memory.refresh(60)
    assert not queue_path(ws).exists()
    assert embedded.state.memory.refresh()
    good = embedded.decide("bash", {"command": "make build"})
    bad = embedded.decide("bash", {"command": "make flaky"})
    unseen = embedded.decide("bash", {"command": "terraform plan"})
    assert "memory" not in good.unavailable

    def raw(record: Any) -> float:  # the dimension's own value (a low-risk call is floored at its prior)
        return float(record.layer("fusion").data["dimensions"]["memory"]["value"])

    assert raw(good) > 55 > 40 > raw(bad)
    assert unseen.layer("fusion").data["dimensions"]["memory"]["value"] == 40.0
    assert good.components["memory"] == daemon_like.decide("bash", {"command": "make build"}).components["memory"]
    daemon_like.close()
    embedded.close()


def test_guard_tidy_stores_the_queue_and_publishes(tmp_path: Path) -> None:
    pytest.importorskip("lancedb")
    ws = tmp_path / "ws"
    g = Guard(ws, {"system.health": 90, **QUIET})
    for _ in range(4):
        g.record_result("bash", {"command": "npm test"}, success=True)
    g.close()
    env = guard_cli_env() | {"HOME": str(tmp_path / "home"), "GUARD_HOME": str(ws)}
    out = subprocess.run([*GUARD_CMD, "tidy", "--workspace", str(ws)], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert "4 outcome(s) stored" in out.stdout
    assert not queue_path(ws).exists() and snapshot_path(ws).exists()
    reader = SnapshotMemory(ws, _config(ws))
    assert _ask(reader, "npm test").matched == 4
    assert _ask(reader, "npm publish").matched == 0  # a near-miss stays apart


def test_write_in_process_keeps_the_lancedb_writer(tmp_path: Path) -> None:
    g = Guard(tmp_path / "ws", {"system.health": 90, **QUIET, "memory.write_in_process": True})
    assert g.state.memory.name == "lancedb"
    g.close()


PROBE = textwrap.dedent(
    """
    import json, sys
    import guard
    from guard import Guard, MultiSourceFusionEngine, guarded
    ws = sys.argv[1]
    g = Guard(ws, {"system.health": 90})
    g.decide("bash", {"command": "git status"}, session_id="p")
    g.record_result("bash", {"command": "git status"}, success=True)
    matched = g.decide("bash", {"command": "git status"}, session_id="p").layer("fusion").data["dimensions"]["memory"].get("matched")
    g.close()

    @guarded
    def bash(command):
        return "ran"

    bash(command="ls")
    engine = MultiSourceFusionEngine()
    engine.fuse_decision_context("bash", {"command": "ls -la"}, "s")
    print(json.dumps({
        "memory": g.state.memory.name,
        "engine_memory": engine.guard.state.memory.name if hasattr(engine, "guard") else "snapshot",
        "loaded": sorted(m for m in ("lancedb", "pyarrow", "numpy") if m in sys.modules),
        "matched": matched,
    }))
    """
)


def test_embedding_guard_with_memory_on_never_imports_lancedb_or_numpy(tmp_path: Path) -> None:
    """The reader searches the snapshot in plain Python: numpy (≈12 MB resident) stays out too."""
    pytest.importorskip("lancedb")
    ws = tmp_path / "ws"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GUARD_HOME": str(ws), "HOME": str(tmp_path)}
    env["GUARD_SYSTEM_HEALTH"] = "90"
    # A published snapshot, so memory is really read (not merely unavailable).
    writer = Guard(ws, {"system.health": 90, **QUIET}, memory_backend="lancedb")
    writer.record_result("bash", {"command": "git status"}, success=True)
    assert writer.state.memory.wait_ready(120) and writer.state.memory.flush()
    writer.close()
    assert snapshot_path(ws).exists()
    out = subprocess.run([sys.executable, "-c", PROBE, str(ws)], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"memory": "snapshot", "engine_memory": "snapshot", "loaded": [], "matched": 1}


def test_a_queue_nobody_drains_stops_growing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from guard.memory import queue

    monkeypatch.setattr(queue, "MAX_BYTES", 2000)
    ws = tmp_path / "ws"
    ws.mkdir()
    reader = SnapshotMemory(ws, _config(ws))
    for e in _events(40):
        reader.remember(e)
    assert 0 < reader.queued < 40 and reader.queued + reader.dropped == 40
    assert queue_path(ws).stat().st_size <= 2000
