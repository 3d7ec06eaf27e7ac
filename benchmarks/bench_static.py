"""Static layer latency over the shared corpus, and the cc-safety-net peer measured in the same run.

    python benchmarks/bench_static.py            # full run
    python benchmarks/bench_static.py --quick    # fewer repetitions

Reports p50/p99 per call of ``StaticLayer.judge`` in-process, with a cold analysis cache (every call
parsed and judged from scratch) and a warm one (the cache a long-lived process has), against the
budget (p50 <= 50 us, p99 <= 500 us). When ``node`` and ``npm`` are available, cc-safety-net 2.4.5 is
installed into ``${XDG_CACHE_HOME:-~/.cache}/guard-peer`` (as ``../shared/tools/peer_compare.sh``
does) and its in-process ``checkCommand`` is timed over the same shell commands; the ratio is
guard / peer (below 1: guard is faster).
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PEER_VERSION = "2.4.5"
BUDGET_P50_US = 50.0
BUDGET_P99_US = 500.0
WARMUP_PASSES = 3

_PEER_SCRIPT = r"""
import { readFileSync } from 'node:fs';
import { checkCommand } from 'cc-safety-net/api';
const { commands, reps, cwd } = JSON.parse(readFileSync(process.argv[2], 'utf8'));
for (const c of commands) checkCommand({ command: c, cwd });  // warm up the JIT
const samples = [];
for (let r = 0; r < reps; r++) {
  for (const c of commands) {
    const t = process.hrtime.bigint();
    checkCommand({ command: c, cwd });
    samples.push(Number(process.hrtime.bigint() - t) / 1000);
  }
}
console.log(JSON.stringify(samples));
"""


def corpus_path() -> Path:
    shared = ROOT.parent / "shared" / "corpus" / "tool_calls.jsonl"
    return shared if shared.is_file() else ROOT / "tests" / "static" / "data" / "shared_corpus.jsonl"


def load_corpus() -> list[dict[str, Any]]:
    with open(corpus_path(), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def _time_calls(layer: Any, calls: list[Any], reps: int, cold: bool) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU (this thread's) microseconds per call; CPU time shrugs off a busy machine."""
    wall: list[float] = []
    cpu: list[float] = []
    judge, clear = layer.judge, layer.analyser.cache_clear
    clock, cpu_clock = time.perf_counter_ns, time.thread_time_ns
    gc_was = gc.isenabled()
    gc.disable()  # a collection in the middle of a 20 us call is noise, not the layer's cost
    try:
        for _ in range(reps):
            for call in calls:
                if cold:
                    clear()
                start, cpu_start = clock(), cpu_clock()
                judge(call)
                cpu.append((cpu_clock() - cpu_start) / 1000)
                wall.append((clock() - start) / 1000)
    finally:
        if gc_was:
            gc.enable()
    return wall, cpu


def measure_guard(rows: list[dict[str, Any]], reps: int) -> dict[str, list[float]]:
    from guard.config import Config
    from guard.layers.static import StaticLayer
    from guard.model import ToolCall

    layer = StaticLayer(Config.load(None, env={}), home="/home/bench")
    calls = [ToolCall(r["tool"], r["params"]) for r in rows]
    bash = [c for c in calls if c.kind == "bash"]
    for call in calls:  # load the grammar, fill the cache
        layer.judge(call)
    # a few untimed cold passes: Python specialises a function's code after it has run a few
    # times, so the first timed pass ran the rarer handlers unspecialised and made a quick run's
    # cold p50 (timed first, 3 passes) several microseconds worse than a full run's
    _time_calls(layer, calls, WARMUP_PASSES, cold=True)
    cold, cold_cpu = _time_calls(layer, calls, reps, cold=True)
    warm, warm_cpu = _time_calls(layer, calls, reps, cold=False)
    bash_cold, _ = _time_calls(layer, bash, reps, cold=True)
    return {"cold": cold, "cold_cpu": cold_cpu, "warm": warm, "warm_cpu": warm_cpu, "bash_cold": bash_cold}


def peer_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(os.environ.get("PEER_DIR") or os.path.join(base, "guard-peer"))


def ensure_peer() -> tuple[Path | None, str]:
    if not shutil.which("node") or not shutil.which("npm"):
        return None, "node/npm not found: peer skipped"
    directory = peer_dir()
    if not (directory / "node_modules" / "cc-safety-net").is_dir():
        directory.mkdir(parents=True, exist_ok=True)
        try:
            subprocess.run(["npm", "init", "-y"], cwd=directory, check=True, capture_output=True, timeout=120)
            subprocess.run(
                ["npm", "install", "--silent", f"cc-safety-net@{PEER_VERSION}"],
                cwd=directory,
                check=True,
                capture_output=True,
                timeout=600,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return None, f"cannot install cc-safety-net@{PEER_VERSION} ({exc}): peer skipped"
    return directory, f"cc-safety-net {PEER_VERSION} in {directory}"


def measure_peer(commands: list[str], reps: int) -> tuple[list[float] | None, str]:
    directory, note = ensure_peer()
    if directory is None:
        return None, note
    script = directory / "guard_bench_checkcommand.mjs"
    script.write_text(_PEER_SCRIPT, encoding="utf-8")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as fh:
        json.dump({"commands": commands, "reps": reps, "cwd": tempfile.gettempdir()}, fh)
        payload = fh.name
    try:
        out = subprocess.run(
            ["node", str(script), payload], cwd=directory, check=True, capture_output=True, text=True, timeout=600
        )
        return json.loads(out.stdout.strip().splitlines()[-1]), note
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as exc:
        return None, f"peer run failed ({exc}): peer skipped"
    finally:
        os.unlink(payload)


def _row(name: str, value: float | None, unit: str, budget: float | None = None, note: str = "") -> dict[str, Any]:
    row: dict[str, Any] = {
        "name": name,
        "value": None if value is None else round(value, 2),
        "unit": unit,
        "budget": budget,
        "met": None if budget is None or value is None else value <= budget,
    }
    if note:
        row["note"] = note
    return row


def run(quick: bool = False) -> list[dict[str, Any]]:
    """Rows ``{name, value, unit, budget, met}`` (and ``note`` where there is one)."""
    rows_in = load_corpus()
    reps = 3 if quick else 20
    guard = measure_guard(rows_in, reps)
    commands = [r["params"]["command"] for r in rows_in if r["tool"] == "bash"]
    peer, note = measure_peer(commands, reps)
    out = [
        _row("static p50, cold cache (all calls)", percentile(guard["cold"], 50), "us", BUDGET_P50_US),
        _row("static p99, cold cache (all calls)", percentile(guard["cold"], 99), "us", BUDGET_P99_US),
        _row("static p50, warm cache (all calls)", percentile(guard["warm"], 50), "us", BUDGET_P50_US),
        _row("static p99, warm cache (all calls)", percentile(guard["warm"], 99), "us", BUDGET_P99_US),
        _row("static p50, cold cache (shell commands)", percentile(guard["bash_cold"], 50), "us", BUDGET_P50_US),
        _row("static p99, cold cache (shell commands)", percentile(guard["bash_cold"], 99), "us", BUDGET_P99_US),
        _row(
            "static p50 CPU time, cold cache",
            percentile(guard["cold_cpu"], 50),
            "us",
            BUDGET_P50_US,
            note="thread CPU time: what a call costs when the machine is shared",
        ),
        _row("static p50 CPU time, warm cache", percentile(guard["warm_cpu"], 50), "us", BUDGET_P50_US),
        _row("load average (1 min) during the run", os.getloadavg()[0] if hasattr(os, "getloadavg") else None, ""),
    ]
    if peer is None:
        out.append(_row("cc-safety-net checkCommand p50", None, "us", note=note))
        return out
    peer_p50, peer_p99 = percentile(peer, 50), percentile(peer, 99)
    out += [
        _row("cc-safety-net checkCommand p50", peer_p50, "us", note=note),
        _row("cc-safety-net checkCommand p99", peer_p99, "us"),
        _row(
            "ratio p50 guard cold / peer (shell commands)",
            percentile(guard["bash_cold"], 50) / peer_p50,
            "x",
            note="below 1: guard is faster",
        ),
        _row("ratio p50 guard warm / peer", percentile(guard["warm"], 50) / peer_p50, "x"),
        _row("ratio p99 guard cold / peer (shell commands)", percentile(guard["bash_cold"], 99) / peer_p99, "x"),
    ]
    return out


def _print(rows: list[dict[str, Any]]) -> None:
    width = max(len(r["name"]) for r in rows)
    print(f"corpus: {corpus_path()}")
    print(f"{'measure':<{width}}  {'value':>10}  unit  {'budget':>7}  met")
    for r in rows:
        value = "-" if r["value"] is None else f"{r['value']:.2f}"
        budget = "" if r["budget"] is None else f"{r['budget']:g}"
        met = "" if r["met"] is None else ("yes" if r["met"] else "NO")
        note = f"  ({r['note']})" if r.get("note") else ""
        print(f"{r['name']:<{width}}  {value:>10}  {r['unit']:<4}  {budget:>7}  {met}{note}")


if __name__ == "__main__":
    _print(run(quick="--quick" in sys.argv))
