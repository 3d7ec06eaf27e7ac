"""100 threads and 100 asyncio tasks deciding on one ``Guard``: throughput, p99, nothing lost.

Threads: each decides then records the result, ``k`` times, all released at once by a
barrier; a decision's latency includes waiting for the GIL and the file lock, which is
what a caller sees. Asyncio: 100 tasks each await an ``@guarded`` async tool ``k`` times.
Afterwards every decision and every result must be in the logs (counted from the files).
The baseline is one thread doing the same work in this run.

Budget (DESIGN §5): >= 100 concurrent callers, nothing lost, p99 within the seed's 200 ms.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.common import Row, guard_config, keep, percentile, progress, row

CALLERS = 100
P99_BUDGET_MS = 200.0


def _count_lines(path: Path, key: str, prefix: str) -> int:
    """Lines whose params[key] starts with ``prefix``: what this run wrote."""
    n = 0
    with open(path, "rb") as f:
        for raw in f:
            rec = json.loads(raw)
            value = (rec.get("params") or {}).get(key)
            n += isinstance(value, str) and value.startswith(prefix)
    return n


def _threads(guard: object, callers: int, k: int, tag: str) -> tuple[list[float], float]:
    """Latencies (µs) of every decision, and the wall time (s) of the whole burst."""
    barrier = threading.Barrier(callers + 1)
    latencies: list[list[float]] = [[] for _ in range(callers)]
    decide = guard.decide  # type: ignore[attr-defined]
    record = guard.record_result  # type: ignore[attr-defined]
    clock = time.perf_counter_ns

    def caller(i: int) -> None:
        mine = latencies[i]
        barrier.wait()
        for j in range(k):
            params = {"command": f"echo {tag}-{i}-{j}"}
            t0 = clock()
            decide("bash", params, session_id=f"{tag}-{i}")
            mine.append((clock() - t0) / 1000.0)
            record("bash", params, session_id=f"{tag}-{i}", success=True, duration_ms=1.0)

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(callers)]
    for t in threads:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    return [x for lat in latencies for x in lat], time.perf_counter() - t0


async def _tasks(tool: object, callers: int, k: int, tag: str) -> tuple[list[float], float]:
    latencies: list[float] = []
    clock = time.perf_counter_ns
    start = asyncio.Event()

    async def caller(i: int) -> None:
        await start.wait()
        for j in range(k):
            t0 = clock()
            await tool(f"echo {tag}-{i}-{j}")  # type: ignore[operator]
            latencies.append((clock() - t0) / 1000.0)

    tasks = [asyncio.create_task(caller(i)) for i in range(callers)]
    await asyncio.sleep(0)
    t0 = time.perf_counter()
    start.set()
    await asyncio.gather(*tasks)
    return latencies, time.perf_counter() - t0


def run(quick: bool) -> list[Row]:
    from guard import guarded
    from guard.core import Guard

    k = 20 if quick else 100
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="guard-bench-concurrency-") as tmp:
        ws = Path(tmp)
        g = Guard(ws, guard_config())
        g.decide("bash", {"command": "echo warm"})

        progress("concurrency: one thread (baseline)")
        one, one_wall = _threads(g, 1, k * 20, "one")
        base_rate = len(one) / one_wall

        progress(f"concurrency: {CALLERS} threads × {k}")
        lat, wall = _threads(g, CALLERS, k, "thr")
        rate = len(lat) / wall
        keep(f"{CALLERS} threads: decision latency", lat, P99_BUDGET_MS * 1000)
        decided = _count_lines(ws / ".fusion-decisions.jsonl", "command", "echo thr-")
        recorded = _count_lines(ws / ".command-execution.jsonl", "command", "echo thr-")
        lost = (CALLERS * k - decided) + (CALLERS * k - recorded)
        rows.append(row(f"{CALLERS} threads: decisions/s", rate, "1/s", note=f"one thread: {base_rate:,.0f}/s"))
        rows.append(row(f"{CALLERS} threads ÷ one thread throughput", rate / base_rate, "×", note="GIL-bound: ~1"))
        rows.append(row(f"{CALLERS} threads: decision p50", percentile(lat, 50) / 1000, "ms"))
        rows.append(row(f"{CALLERS} threads: decision p99", percentile(lat, 99) / 1000, "ms", f"<= {P99_BUDGET_MS:g}"))
        rows.append(
            row(
                f"{CALLERS} threads: records lost",
                lost,
                "",
                "== 0",
                note=f"{decided} decisions + {recorded} results logged of {CALLERS * k} each",
            )
        )

        progress(f"concurrency: {CALLERS} asyncio tasks × {k}")

        async def bash(command: str) -> None:
            await asyncio.sleep(0)

        tool = guarded(tool="bash", guard=g, confirm=lambda record: True)(bash)
        lat_a, wall_a = asyncio.run(_tasks(tool, CALLERS, k, "task"))
        keep(f"{CALLERS} asyncio tasks: call latency", lat_a, P99_BUDGET_MS * 1000)
        decided = _count_lines(ws / ".fusion-decisions.jsonl", "command", "echo task-")
        recorded = _count_lines(ws / ".command-execution.jsonl", "command", "echo task-")
        lost = (CALLERS * k - decided) + (CALLERS * k - recorded)
        rows.append(row(f"{CALLERS} asyncio tasks: guarded calls/s", len(lat_a) / wall_a, "1/s"))
        rows.append(
            row(f"{CALLERS} asyncio tasks: call p99", percentile(lat_a, 99) / 1000, "ms", f"<= {P99_BUDGET_MS:g}")
        )
        rows.append(
            row(
                f"{CALLERS} asyncio tasks: records lost",
                lost,
                "",
                "== 0",
                note=f"{decided} decisions + {recorded} results logged of {CALLERS * k} each",
            )
        )
        g.close()
    return rows
