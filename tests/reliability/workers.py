"""Child-process bodies for the reliability suite (imported by ``multiprocessing`` spawn children).

Kept free of pytest so a spawned child imports only guard and the standard library.
"""

from __future__ import annotations

import threading
import time
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

CONFIG = {"system.health": 90, "memory.backend": "history"}


def expected_status(i: int) -> bool:
    """Call ``i`` of a thread succeeds unless i % 4 == 0."""
    return i % 4 != 0


def load_params(proc: int, thread: int, i: int) -> dict[str, str]:
    # Few distinct commands keep the per-pattern counters comparable; ``seq`` names the call.
    return {"command": f"echo load {thread % 10}", "seq": f"p{proc}-t{thread}-{i}"}


def load(workspace: str, proc: int, threads: int, seconds: float, conn: Connection) -> None:
    """``threads`` threads deciding, recording results and (every 5th call) the user's answer."""
    from guard.core import Guard

    g = Guard(workspace, CONFIG)
    counts = [0] * threads
    errors: list[str] = []
    barrier = threading.Barrier(threads)

    def body(t: int) -> None:
        sid = f"p{proc}-t{t}"
        barrier.wait()
        deadline = time.monotonic() + seconds
        i = 0
        try:
            while time.monotonic() < deadline:
                params = load_params(proc, t, i)
                g.decide("bash", params, session_id=sid)
                g.record_result("bash", params, session_id=sid, success=expected_status(i), duration_ms=1.0)
                if i % 5 == 0:
                    g.record_interaction(
                        "bash", params, session_id=sid, approved=i % 10 == 0, satisfaction=(i // 5) % 5 + 1
                    )
                i += 1
        except Exception as exc:  # reported to the parent, which fails the test
            errors.append(f"{sid} call {i}: {type(exc).__name__}: {exc}")
        counts[t] = i

    workers = [threading.Thread(target=body, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    g.close()  # persists .guard-state.json: the last process to close wins
    conn.send({"counts": counts, "errors": errors})
    conn.close()


def append_forever(workspace: str, size: int, started: Event) -> None:
    """Record results with ``size``-byte commands until killed (SIGKILL mid-append)."""
    from guard.core import Guard

    g = Guard(workspace, CONFIG)
    i = 0
    while True:
        g.record_result("bash", {"command": f"echo {i} " + "x" * size}, session_id="killed", success=True)
        i += 1
        started.set()


def decide_under_limit(workspace: str, limit: int, conn: Connection) -> None:
    """Decide and record under a file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored)."""
    import resource
    import signal

    from guard.core import Guard

    g = Guard(workspace, CONFIG)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    out: dict[str, Any] = {"decisions": [], "result_errors": []}
    for i in range(60):
        r = g.decide("bash", {"command": f"echo {i} " + "y" * 200}, session_id="full")
        out["decisions"].append([r.decision, list(r.unavailable)])
        before = _size(Path(workspace) / ".command-execution.jsonl")
        # a full disk does not raise into the caller: the result is simply not recorded, and said so
        g.record_result("bash", {"command": f"echo {i} " + "y" * 200}, session_id="full", success=True)
        if _size(Path(workspace) / ".command-execution.jsonl") == before:
            out["result_errors"].append(f"unrecorded: {g.unrecorded}")
    conn.send(out)
    conn.close()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0
