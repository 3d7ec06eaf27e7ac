"""What every benchmark shares: timing, percentiles, rows with budgets, history to decide against.

A row is ``{"name", "value", "unit", "budget", "met"}`` plus an optional ``"note"``:

    row("decide p50, 100k history", 183.2, "µs", "<= 200")
    # {"name": ..., "value": 183.2, "unit": "µs", "budget": "<= 200", "met": True}

``budget`` is ``"<= N"``, ``">= N"``, ``"< N"``, ``"> N"`` or ``"== N"`` in the row's own unit
(text after the number is a comment); ``None`` for rows that only inform. Latency samples
kept with :func:`keep` are drawn by ``benchmarks/plot.py`` in the full run.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

Row = dict[str, Any]

_BUDGET = re.compile(r"^\s*(<=|>=|==|<|>)\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)")


def meets(value: float, budget: str) -> bool:
    """``meets(180, "<= 200") is True``; an unreadable budget raises ValueError."""
    m = _BUDGET.match(budget)
    if m is None:
        raise ValueError(f"budget must look like '<= 200', got {budget!r}")
    op, limit = m.group(1), float(m.group(2))
    return {
        "<=": value <= limit,
        ">=": value >= limit,
        "==": value == limit,
        "<": value < limit,
        ">": value > limit,
    }[op]


def row(name: str, value: float | None, unit: str, budget: str | None = None, note: str | None = None) -> Row:
    """One result; ``met`` is computed from the budget (None when there is none or no value)."""
    if isinstance(value, float):
        value = round(value, 3 if abs(value) < 100 else 1)
    out: Row = {
        "name": name,
        "value": value,
        "unit": unit,
        "budget": budget,
        "met": None if budget is None or value is None else meets(value, budget),
    }
    if note:
        out["note"] = note
    return out


# -- timing -----------------------------------------------------------------------------
def time_us(fn: Callable[[], object], n: int, warmup: int = 0) -> list[float]:
    """Wall time of each of ``n`` calls of ``fn``, in microseconds."""
    for _ in range(warmup):
        fn()
    clock = time.perf_counter_ns
    out = []
    for _ in range(n):
        t0 = clock()
        fn()
        out.append((clock() - t0) / 1000.0)
    return out


def percentile(samples: Sequence[float], q: float) -> float:
    """Nearest-rank percentile, ``q`` in 0-100."""
    if not samples:
        raise ValueError("no samples")
    ordered = sorted(samples)
    k = math.ceil(q * len(ordered) / 100.0)  # the smallest value with q% of samples at or below it
    return ordered[max(0, min(len(ordered), k) - 1)]


def median(samples: Sequence[float]) -> float:
    return percentile(samples, 50)


# -- what the plot draws ----------------------------------------------------------------
SAMPLES: dict[str, tuple[list[float], float | None]] = {}


def keep(name: str, samples_us: Sequence[float], budget_us: float | None = None) -> None:
    """Keep a latency distribution (µs) for the plot; ``budget_us`` draws a red mark."""
    SAMPLES[name] = (list(samples_us), budget_us)


# -- progress ---------------------------------------------------------------------------
_progress: list[Callable[[str], None]] = []


def progress(label: str) -> None:
    """Tell the runner what is being measured now (drives the progress bar)."""
    for fn in _progress:
        fn(label)


def on_progress(fn: Callable[[str], None] | None) -> None:
    _progress.clear()
    if fn is not None:
        _progress.append(fn)


# -- environment ------------------------------------------------------------------------
def guard_config(**extra: Any) -> dict[str, Any]:
    """Pinned system health (no psutil noise) and the history-file memory."""
    return {"system.health": 90, "memory.backend": "history"} | extra


def child_env(**extra: str) -> dict[str, str]:
    """Environment for a benchmark subprocess: this checkout first on the path, health pinned."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GUARD_")}
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["GUARD_SYSTEM_HEALTH"] = "90"
    env["LANCE_LOG"] = "error"
    env.update(extra)
    return env


def run_python(code: str, *, env: dict[str, str] | None = None, timeout: float = 120) -> tuple[str, float]:
    """Run ``python -c code``; its stdout and the wall time in ms. Raises on failure."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=env or child_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    wall = (time.perf_counter() - t0) * 1000.0
    if proc.returncode != 0:
        raise RuntimeError(f"child failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
    return proc.stdout, wall


# -- history ----------------------------------------------------------------------------
_COMMON = (
    "git status",
    "git diff",
    "git log --oneline -5",
    "ls -la",
    "cat README.md",
    "npm test",
    "pytest -q",
    "make build",
    "rm -rf build/",
    "docker ps",
)


def history_commands(rng: random.Random, n: int) -> list[str]:
    """A realistic spread: a few commands very often, a long tail of one-offs."""
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.6:
            out.append(rng.choice(_COMMON))
        elif r < 0.9:
            out.append(f"pytest -q tests/test_{rng.randrange(300)}.py")
        else:
            out.append(f"grep -rn item{rng.randrange(5000)} src/")
    return out


def write_history(workspace: Path, records: int, *, seed: int = 7) -> dict[str, int]:
    """Write ``records`` history lines in the seed's shapes, straight to the files.

    Four fifths go to ``.command-execution.jsonl`` (about 90% successes), one fifth to
    ``.user-interactions.jsonl`` (about 85% approvals), spread over the last 30 days.
    """
    from guard.signature import signature

    workspace.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    executions = records * 4 // 5
    interactions = records - executions
    start = datetime.now().astimezone() - timedelta(days=30)
    step = timedelta(days=30) / max(1, records)
    sessions = [f"hist-{i}" for i in range(200)]
    sig_cache: dict[str, str] = {}
    with open(workspace / ".command-execution.jsonl", "w", encoding="utf-8") as f:
        for i, cmd in enumerate(history_commands(rng, executions)):
            sig = sig_cache.get(cmd)
            if sig is None:
                sig = sig_cache[cmd] = signature("bash", {"command": cmd})
            ok = rng.random() < 0.9
            line = {
                "timestamp": (start + step * i).isoformat(timespec="seconds"),
                "tool": "bash",
                "status": "success" if ok else "failure",
                "session_id": sessions[i % len(sessions)],
                "duration_ms": round(rng.uniform(2, 900), 1),
                "error": None if ok else "exit status 1",
                "signature": sig,
                "risk": "medium",
                "params": {"command": cmd},
            }
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
    with open(workspace / ".user-interactions.jsonl", "w", encoding="utf-8") as f:
        for i in range(interactions):
            tool = rng.choice(("bash", "bash", "write", "edit"))
            line = {
                "timestamp": (start + step * (i * 5)).isoformat(timespec="seconds"),
                "tool": tool,
                "action": "approved" if rng.random() < 0.85 else "denied",
                "satisfaction": rng.choice((None, 3, 4, 5)),
                "session_id": sessions[i % len(sessions)],
                "signature": f"{tool}:x",
                "params": {},
            }
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
    return {"executions": executions, "interactions": interactions}


# What a warm decision benchmark decides: reads, history hits, a write, an unknown tool.
CALL_MIX: tuple[tuple[str, dict[str, Any]], ...] = (
    ("bash", {"command": "git status"}),
    ("bash", {"command": "ls -la src"}),
    ("bash", {"command": "pytest -q tests/test_17.py"}),
    ("write", {"file_path": "src/app.py", "content": "print('hello')\n" * 20}),
    ("bash", {"command": "rm -rf build/"}),
    ("Read", {"file_path": "/etc/hosts"}),
    ("mcp__github__create_issue", {"title": "flaky test", "body": "see CI run 1234"}),
    ("bash", {"command": "npm test"}),
)
