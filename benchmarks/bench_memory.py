"""Memory benchmarks: relevance latency at 1k/10k/100k memories, embedding cost, import cost.

    python benchmarks/bench_memory.py [--quick]

``run(quick)`` returns rows ``{"name", "value", "unit", "budget", "met"}``; ``budget`` and
``met`` are ``None`` for rows that only inform. Budgets (DESIGN §5 and the memory issue):
a cached relevance answer ≤ 50 µs p99, an uncached one ≤ 10 ms p99 at 100k memories, and a
hot path (``import guard`` plus the history-only memory) that never loads LanceDB.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("LANCE_LOG", "error")

HIT_P99_US = 50.0
MISS_P99_US = 10_000.0
EMBED_P50_US = 10.0

_PROGRAMS = ["git", "npm", "pytest", "make", "docker", "kubectl", "rm", "ls", "cat", "python", "cargo", "curl"]
_SUBS = ["status", "test", "build", "run", "apply", "get", "push", "install", "diff", "log", "-la", "-rf"]
_DIRS = ["src", "tests", "/tmp/build", "docs", "~/.config", "/etc", "lib/core", "scripts"]


def synthetic_signature(i: int) -> tuple[str, str]:
    """A distinct, realistic-looking (tool, signature) for every ``i``."""
    r = (i * 2654435761) & 0xFFFFFFFF
    d = _DIRS[(r >> 8) % len(_DIRS)]
    if r % 10 < 7:
        prog, sub = _PROGRAMS[r % len(_PROGRAMS)], _SUBS[(r >> 4) % len(_SUBS)]
        return "bash", f"bash:{prog} {sub} {d}/item{i // 7} --n {i % 97}"
    kind = ("write", "edit", "read")[r % 3]
    return kind, f"{kind}:{d}/module{i // 11}/file{i}.py"


def _percentiles(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return samples[len(samples) // 2], samples[min(len(samples) - 1, int(len(samples) * 0.99))]


def _time_us(fn: Callable[[], Any], n: int) -> tuple[float, float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1e6)
    return _percentiles(out)


def _row(name: str, value: float, unit: str, budget: float | None, lower_is_better: bool = True) -> dict[str, Any]:
    met = None if budget is None else (value <= budget if lower_is_better else value >= budget)
    return {"name": name, "value": round(value, 2), "unit": unit, "budget": budget, "met": met}


def bench_embed(n: int) -> list[dict[str, Any]]:
    from guard.memory.embed import HashingEmbedder

    e = HashingEmbedder(cache_size=0)
    sigs = [synthetic_signature(i)[1] for i in range(n)]
    it = iter(sigs * 2)
    p50, p99 = _time_us(lambda: e.embed(next(it)), n)
    cached = HashingEmbedder()
    cached.embed(sigs[0])
    c50, _ = _time_us(lambda: cached.embed(sigs[0]), n)
    return [
        _row("embed, uncached, p50", p50, "µs", EMBED_P50_US),
        _row("embed, uncached, p99", p99, "µs", None),
        _row("embed, cached, p50", c50, "µs", None),
    ]


def bench_relevance(size: int, queries: int, lance_path: bool) -> list[dict[str, Any]]:
    from guard.config import Config
    from guard.memory.base import MemoryEvent
    from guard.memory.lance import LanceMemory
    from guard.model import Risk, ToolCall

    settings = {"memory.tidy": False, "memory.snapshot_seconds": 0, "memory.flush_seconds": 3600}
    config = Config.load(env={}, overrides=settings)
    now = datetime.now(UTC)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="guard-bench-") as tmp:
        uri = str(Path(tmp) / "memory.lance")
        memory = LanceMemory(uri, config, start_background=False)
        if not memory.open():
            raise RuntimeError(memory.status)
        t = time.perf_counter()
        for i in range(size):
            tool, sig = synthetic_signature(i)
            memory.remember(MemoryEvent(tool, sig, i % 5 != 0, Risk.LOW, now))
        memory.flush()
        load_s = time.perf_counter() - t

        def ask(tool: str, sig: str) -> Any:
            return memory.relevance(ToolCall(tool, {}), sig, Risk.LOW, now)

        tool, sig = synthetic_signature(size // 2)
        ask(tool, sig)
        hit = _time_us(lambda: ask(tool, sig), queries * 4)
        # Misses: signatures never asked before (fresh embedding too), half near a stored one.
        fresh = iter(range(size * 3, size * 3 + queries))
        near = iter(range(queries))

        def miss() -> Any:
            j = next(fresh)
            tool, sig = synthetic_signature(j if j % 2 else next(near) * (size // queries or 1))
            return ask(tool, sig + (" --again" if j % 2 == 0 else ""))

        missed = _time_us(miss, queries)
        t = time.perf_counter()
        memory._check(force=True)  # what the background thread does after maintenance
        reload_s = time.perf_counter() - t
        snapshot_mb = memory._snapshot.nbytes / 1e6 if memory._snapshot is not None else 0.0
        memory.close()
        rows += [
            _row(f"relevance hit p50 @{size:,}", hit[0], "µs", None),
            _row(f"relevance hit p99 @{size:,}", hit[1], "µs", HIT_P99_US),
            _row(f"relevance miss p50 @{size:,}", missed[0], "µs", None),
            _row(f"relevance miss p99 @{size:,}", missed[1], "µs", MISS_P99_US),
            _row(f"store {size:,} memories (embed + one batch write)", load_s, "s", None),
            _row(f"snapshot reload from LanceDB @{size:,} (background)", reload_s, "s", None),
            _row(f"snapshot arrays @{size:,}", snapshot_mb, "MB", None),
        ]
        if lance_path:
            # The fallback for tables above memory.snapshot_max_rows: a LanceDB query per miss.
            big = Config.load(env={}, overrides={**settings, "memory.snapshot_max_rows": 0, "memory.cache_size": 0})
            direct = LanceMemory(uri, big, start_background=False)
            direct.open()
            it = iter(range(queries))

            def query() -> Any:
                return direct.relevance(ToolCall("bash", {}), synthetic_signature(next(it))[1], Risk.LOW, now)

            q = _time_us(query, min(queries, 200))
            direct.close()
            rows += [
                _row(f"LanceDB query path p50 @{size:,}", q[0], "µs", None),
                _row(f"LanceDB query path p99 @{size:,}", q[1], "µs", None),
            ]
    return rows


_PROBE = """
import json, sys, time
t = time.perf_counter()
import guard
import_ms = (time.perf_counter() - t) * 1000
from datetime import datetime
from guard.config import Config
from guard.memory import HistoryMemory
from guard.memory.lance import LanceMemory
from guard.model import Risk, ToolCall

class NoHistory:
    def pattern(self, signature):
        return None

call = ToolCall("Bash", {"command": "ls"})
HistoryMemory(NoHistory()).relevance(call, "bash:ls", Risk.SAFE, datetime.now())
LanceMemory("/nonexistent/memory.lance", Config.load(env={}), start_background=False).relevance(
    call, "bash:ls", Risk.SAFE, datetime.now())
print(json.dumps({"import_ms": import_ms, "heavy": [m for m in ("lancedb", "pyarrow") if m in sys.modules]}))
"""


def bench_imports(runs: int) -> list[dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    results = [
        json.loads(
            subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, env=env).stdout
        )
        for _ in range(runs)
    ]
    code = "import time; t = time.perf_counter(); import lancedb; print((time.perf_counter() - t) * 1000)"
    lance_ms = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    heavy = sum(len(r["heavy"]) for r in results)
    return [
        _row("import guard", statistics.median(r["import_ms"] for r in results), "ms", None),
        _row("heavy modules after the history-only hot path (lancedb, pyarrow)", heavy, "modules", 0),
        _row("import lancedb (paid by the background loader only)", lance_ms, "ms", None),
    ]


def run(quick: bool) -> list[dict[str, Any]]:
    """All memory benchmarks; ``quick`` stops at 10k memories and takes fewer samples."""
    sizes = (1_000, 10_000) if quick else (1_000, 10_000, 100_000)
    queries = 200 if quick else 1000
    rows = bench_embed(2000 if quick else 10_000)
    for size in sizes:
        rows += bench_relevance(size, queries, lance_path=True)
    rows += bench_imports(3 if quick else 7)
    return rows


def main(argv: list[str]) -> int:
    rows = run(quick="--quick" in argv)
    if "--json" in argv:
        print(json.dumps(rows, indent=2))
        return 0
    width = max(len(r["name"]) for r in rows)
    print(f"{'benchmark':<{width}}  {'value':>10}  unit     budget    met")
    for r in rows:
        budget = "" if r["budget"] is None else f"{r['budget']:g}"
        met = "" if r["met"] is None else ("yes" if r["met"] else "NO")
        print(f"{r['name']:<{width}}  {r['value']:>10,.2f}  {r['unit']:<7}  {budget:>7}  {met:>4}")
    return 0 if all(r["met"] is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
