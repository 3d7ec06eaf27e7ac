"""What flush() acknowledged survives SIGKILL; a normal exit flushes what is queued."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from memhelpers import ask, make_config

pytestmark = [pytest.mark.lancedb, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]

WRITER = textwrap.dedent(
    """
    import sys
    from datetime import datetime, timezone
    from guard.config import Config
    from guard.memory.base import MemoryEvent
    from guard.memory.lance import LanceMemory
    from guard.model import Risk

    uri, mode = sys.argv[1], sys.argv[2]
    config = Config.load(env={}, overrides={"memory.tidy": False, "memory.flush_seconds": 3600})
    memory = LanceMemory(uri, config)
    assert memory.wait_ready(120), memory.status
    now = datetime.now(timezone.utc)

    def remember(prefix):
        for i in range(50):
            memory.remember(MemoryEvent("Bash", f"bash:echo {prefix} {i}", True, Risk.LOW, now))

    remember("acked")
    if mode == "kill":
        print("ACK" if memory.flush() else "NACK", flush=True)
        remember("unacked")  # queued, never acknowledged
        sys.stdin.read()  # wait for SIGKILL
    else:
        print("EXIT", flush=True)  # no flush: the atexit hook must store the queue
    """
)


def spawn(uri: str, mode: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LANCE_LOG": "error"}
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, uri, mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def stored(uri: str, prefix: str) -> int:
    from guard.memory.lance import LanceMemory

    m = LanceMemory(uri, make_config())
    try:
        assert m.wait_ready(60), m.status
        return int(m._table.count_rows(f"signature LIKE 'bash:echo {prefix} %'"))
    finally:
        m.close()


def test_sigkill_loses_no_acknowledged_memory(lancedb: Any, tmp_path: Path) -> None:
    uri = str(tmp_path / "memory.lance")
    proc = spawn(uri, "kill")
    try:
        line = proc.stdout.readline().strip() if proc.stdout else ""
        assert line == "ACK", (line, proc.stderr.read() if proc.stderr and proc.poll() is not None else "")
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert stored(uri, "acked") == 50
    assert 0 <= stored(uri, "unacked") <= 50  # never acknowledged: may or may not be there


def test_normal_exit_flushes_the_queue(lancedb: Any, tmp_path: Path) -> None:
    """No flush() call: the atexit hook stores the queue, and a fresh reader answers from it."""
    uri = str(tmp_path / "memory.lance")
    proc = spawn(uri, "exit")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and out.strip() == "EXIT", err
    from guard.memory.lance import LanceMemory

    m = LanceMemory(uri, make_config())
    try:
        assert m.wait_ready(60)
        assert m._table.count_rows() == 50
        assert ask(m, "echo acked 7").matched >= 1
    finally:
        m.close()
