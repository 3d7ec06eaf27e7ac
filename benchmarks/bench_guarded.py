"""``@guarded`` overhead on a no-op tool, sync and async.

The overhead is the guarded call's time minus the bare function's: the decision before and
the result recorded after. The tool is a read, which the chain allows, so nothing waits on a
person. Sync pairs (bare, guarded), async pairs and plain ``Guard.decide`` calls alternate in
small blocks inside one event loop, so a busy neighbour slows all of them alike and the
ratios between them hold.

Budget (DESIGN §5): <= 300 µs p50.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import Row, guard_config, keep, median, percentile, progress, row

BUDGET_US = 300.0
BLOCK = 50


async def _samples(guard: Any, n: int) -> dict[str, list[float]]:
    """Wall times (µs) of bare/guarded sync and async calls and of ``decide``, in blocks."""
    from guard import guarded

    def read_file(file_path: str) -> None:
        return None

    async def read_file_async(file_path: str) -> None:
        return None

    sync_tool = guarded(tool="read", guard=guard)(read_file)
    async_tool = guarded(tool="read", guard=guard)(read_file_async)
    out: dict[str, list[float]] = {k: [] for k in ("bare", "sync", "abare", "async", "decide")}
    clock = time.perf_counter_ns
    # Distinct files in a long rotation: the same read over and over is a loop to the session
    # layer, which would rightly ask about it (and measure a prompt, not the overhead).
    files = [f"src/module_{i}.py" for i in range(97)]
    k = 0
    for warm in (True, False):
        for block in range(0, 200 if warm else n, BLOCK):
            for _ in range(min(BLOCK, n - block)):
                path = files[k % len(files)]
                k += 1
                t0 = clock()
                read_file(path)
                t1 = clock()
                sync_tool(path)
                t2 = clock()
                if not warm:
                    out["bare"].append((t1 - t0) / 1000.0)
                    out["sync"].append((t2 - t1) / 1000.0)
            for _ in range(min(BLOCK, n - block)):
                path = files[k % len(files)]
                k += 1
                t0 = clock()
                await read_file_async(path)
                t1 = clock()
                await async_tool(path)
                t2 = clock()
                if not warm:
                    out["abare"].append((t1 - t0) / 1000.0)
                    out["async"].append((t2 - t1) / 1000.0)
            for _ in range(BLOCK // 5):
                path = files[k % len(files)]
                k += 1
                t0 = clock()
                guard.decide("read", {"file_path": path})
                if not warm:
                    out["decide"].append((clock() - t0) / 1000.0)
    return out


def run(quick: bool) -> list[Row]:
    from guard.core import Guard

    n = 3_000 if quick else 30_000
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="guard-bench-guarded-") as tmp:
        g = Guard(Path(tmp), guard_config())
        if g.decide("read", {"file_path": "README.md"}, save=False).decision != "auto_allow":
            raise RuntimeError("the benchmark's read was not auto-allowed; the overhead would include a prompt")
        progress(f"@guarded: {n} sync and {n} async calls")
        s = asyncio.run(_samples(g, n))
        g.close()
    decide = median(s["decide"])
    for mode, bare_key in (("sync", "bare"), ("async", "abare")):
        base = median(s[bare_key])
        overhead = [w - base for w in s[mode]]
        keep(f"@guarded {mode} overhead", overhead, BUDGET_US)
        rows.append(row(f"@guarded overhead p50, {mode} no-op", median(overhead), "µs", f"<= {BUDGET_US:g}"))
        rows.append(row(f"@guarded overhead p99, {mode} no-op", percentile(overhead, 99), "µs"))
        rows.append(
            row(
                f"@guarded {mode} overhead p50 ÷ Guard.decide p50",
                median(overhead) / decide,
                "×",
                note=f"decide {decide:.0f} µs in the same blocks; the rest is recording the result",
            )
        )
    return rows
