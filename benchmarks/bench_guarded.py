"""``@guarded`` overhead on a no-op tool, sync and async.

The overhead is the guarded call's time minus the bare function's, both measured in this
run: the decision before, the result recorded after (the execution line appended and read
back into the aggregates). The tool is a read, which the chain allows, so nothing waits on
a person.

Budget (DESIGN §5): <= 300 µs p50.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.common import Row, guard_config, keep, median, percentile, progress, row, time_us

BUDGET_US = 300.0


def run(quick: bool) -> list[Row]:
    from guard.core import Guard
    from guard.guarded import guarded

    n = 3_000 if quick else 30_000
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="guard-bench-guarded-") as tmp:
        g = Guard(Path(tmp), guard_config())

        def read_file(file_path: str) -> None:
            return None

        async def read_file_async(file_path: str) -> None:
            return None

        sync_tool = guarded(tool="read", guard=g)(read_file)
        async_tool = guarded(tool="read", guard=g)(read_file_async)
        if g.decide("read", {"file_path": "README.md"}, save=False).decision != "auto_allow":
            raise RuntimeError("the benchmark's read was not auto-allowed; the overhead would include a prompt")

        progress(f"@guarded: {n} sync calls")
        bare, wrapped = _interleaved(lambda: read_file("README.md"), lambda: sync_tool("README.md"), n)
        base = median(bare)
        overhead = [w - base for w in wrapped]
        keep("@guarded sync overhead", overhead, BUDGET_US)
        rows.append(row("@guarded overhead p50, sync no-op", median(overhead), "µs", f"<= {BUDGET_US:g}"))
        rows.append(row("@guarded overhead p99, sync no-op", percentile(overhead, 99), "µs"))

        progress(f"@guarded: {n} async calls")
        bare_a, wrapped_a = asyncio.run(_async_samples(read_file_async, async_tool, n))
        base_a = median(bare_a)
        overhead_a = [w - base_a for w in wrapped_a]
        keep("@guarded async overhead", overhead_a, BUDGET_US)
        rows.append(row("@guarded overhead p50, async no-op", median(overhead_a), "µs", f"<= {BUDGET_US:g}"))
        rows.append(row("@guarded overhead p99, async no-op", percentile(overhead_a, 99), "µs"))
        rows.append(
            row(
                "@guarded p50 ÷ Guard.decide p50 (same run)",
                median(wrapped) / median(time_us(lambda: g.decide("read", {"file_path": "README.md"}), 2000, 100)),
                "×",
                note="the wrapper's cost beyond the decision: recording the result",
            )
        )
        g.close()
    return rows


def _interleaved(
    bare_fn: Callable[[], object], wrapped_fn: Callable[[], object], n: int
) -> tuple[list[float], list[float]]:
    """Bare and guarded calls alternately, so a busy neighbour slows both alike (µs)."""
    clock = time.perf_counter_ns
    for _ in range(200):
        bare_fn()
        wrapped_fn()
    bare, wrapped = [], []
    for _ in range(n):
        t0 = clock()
        bare_fn()
        t1 = clock()
        wrapped_fn()
        t2 = clock()
        bare.append((t1 - t0) / 1000.0)
        wrapped.append((t2 - t1) / 1000.0)
    return bare, wrapped


async def _async_samples(bare_fn, wrapped_fn, n: int) -> tuple[list[float], list[float]]:  # type: ignore[no-untyped-def]
    clock = time.perf_counter_ns
    for _ in range(200):
        await bare_fn("README.md")
        await wrapped_fn("README.md")
    bare, wrapped = [], []
    for _ in range(n):
        t0 = clock()
        await bare_fn("README.md")
        t1 = clock()
        await wrapped_fn("README.md")
        t2 = clock()
        bare.append((t1 - t0) / 1000.0)
        wrapped.append((t2 - t1) / 1000.0)
    return bare, wrapped
