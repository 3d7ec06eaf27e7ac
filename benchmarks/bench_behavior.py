"""What the session behavior layer adds to a decision (budget: ≤ 50 µs p50).

Three Guards in one process, timed in interleaved rounds on the same varied calls, four
sessions each making a call every 6 s of (logical) time — an agent at work:

- ``with``: the shipped chain (static → behavior → fusion) and the real session tracker;
- ``without``: static → fusion, and a tracker that does nothing (no behavior at all);
- ``tracker only``: static → fusion with the real tracker (isolates the layer itself);
- ``no-op layer``: static → a layer returning a constant verdict → fusion, no tracker: what
  any third layer costs in this chain (timing, record building), for reference.

Also: the same without pacing (a hot loop: the burst signal is active), a result recorded (``record_result``), a hook process's first look at a session
with a full window (read + parse its file), and ``analyze_session``.

    python benchmarks/bench_behavior.py [--quick]
"""

from __future__ import annotations

import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

BUDGET_US = 50.0
CONFIG = {"system.health": 90}
SESSIONS = ("s1", "s2", "s3", "s4")


class NoopLayer:
    name = "behavior"

    def __call__(self, call: Any, ctx: Any) -> Any:
        from guard.model import Verdict

        return Verdict("behavior", data={"health": 100.0})


class NullTracker:
    """No session tracking at all: the baseline."""

    def on_dispatch(self, call: Any, record: Any) -> None: ...
    def on_result(self, call: Any, success: bool, now: Any) -> None: ...
    def on_interaction(self, call: Any, approved: bool, now: Any) -> None: ...
    def flush(self) -> None: ...
    def close(self) -> None: ...


def _calls(n: int) -> list[tuple[str, dict[str, Any], str]]:
    shapes: list[tuple[str, Callable[[int], dict[str, Any]]]] = [
        ("bash", lambda i: {"command": f"git diff src/mod{i}.py"}),
        ("read", lambda i: {"file_path": f"src/mod{i}.py"}),
        ("bash", lambda i: {"command": f"pytest tests/test_{i}.py -q"}),
        ("grep", lambda i: {"pattern": f"def f{i}", "path": "src"}),
        ("write", lambda i: {"file_path": f"src/new{i}.py", "content": "x = 1\n" * (i % 40)}),
        ("bash", lambda i: {"command": f"ls -la build/{i}"}),
    ]
    return [(shapes[i % len(shapes)][0], shapes[i % len(shapes)][1](i), SESSIONS[i % len(SESSIONS)]) for i in range(n)]


def _tool_calls(n: int, pace_s: float | None) -> list[Any]:
    """ToolCalls; with ``pace_s`` each session's calls are that far apart (an agent at work),
    without it they carry no time and run as fast as the loop goes (a burst)."""
    from guard.model import ToolCall

    start = time.time()
    out = []
    for i, (tool, params, sid) in enumerate(_calls(n)):
        ts = None if pace_s is None else datetime.fromtimestamp(start + i * pace_s / len(SESSIONS)).astimezone()
        out.append(ToolCall(tool, params, session_id=sid, timestamp=ts))
    return out


def _guard(workspace: Path, variant: str) -> Any:
    from guard.core import Guard
    from guard.layers.fusion import FusionLayer
    from guard.layers.static import StaticLayer

    g = Guard(workspace, CONFIG, memory_backend="history")
    if variant != "with":
        middle = [NoopLayer()] if variant == "no-op layer" else []
        g.chain = type(g.chain)([StaticLayer(g.config, workspace=workspace), *middle, FusionLayer(g.config)])
    if variant in ("without", "no-op layer"):
        g.state.sessions.close()
        g.state.sessions = NullTracker()
    return g


def _seed_history(g: Any, n: int) -> None:
    for i, (tool, params, sid) in enumerate(_calls(n)):
        g.record_result(tool, params, session_id=f"old-{sid}", success=i % 7 != 0)


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def _time_decides(guards: dict[str, Any], calls: list[Any], rounds: int) -> dict[str, list[float]]:
    """Per-call µs for each guard, interleaved in rounds (order alternating) so drift hits all alike."""
    out: dict[str, list[float]] = {k: [] for k in guards}
    per_round = len(calls) // rounds
    for r in range(rounds):
        chunk = calls[r * per_round : (r + 1) * per_round]
        order = list(guards.items())
        if r % 2:
            order.reverse()
        for name, g in order:
            gc.collect()
            times = out[name]
            for call in chunk:
                t0 = time.perf_counter_ns()
                g.decide_call(call, save=False)
                times.append((time.perf_counter_ns() - t0) / 1000)
    return out


def _added(times: dict[str, list[float]], a: str, b: str, rounds: int) -> float:
    """Median over rounds of (p50 of a − p50 of b): robust to a machine whose speed drifts."""
    n = len(times[a]) // rounds
    return statistics.median(
        statistics.median(times[a][i * n : (i + 1) * n]) - statistics.median(times[b][i * n : (i + 1) * n])
        for i in range(rounds)
    )


def run(quick: bool = False) -> list[dict[str, Any]]:
    from guard.behavior.analyzer import SessionBehaviorAnalyzer
    from guard.behavior.tracker import SessionTracker
    from guard.config import Config

    n_calls, rounds, history = (3_000, 6, 1_000) if quick else (24_000, 12, 10_000)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        guards = {}
        for variant in ("with", "without", "tracker only", "no-op layer"):
            ws = root / variant.replace(" ", "_")
            guards[variant] = _guard(ws, variant)
            _seed_history(guards[variant], history)
        paced = _tool_calls(n_calls, pace_s=6.0)  # each session: a call every 6 s; all four: every 1.5 s
        _time_decides(guards, _tool_calls(600, pace_s=None), 2)  # warm up
        times = _time_decides(guards, paced, rounds)
        p50 = {k: statistics.median(v) for k, v in times.items()}
        p99 = {k: _pct(v, 0.99) for k, v in times.items()}
        added = _added(times, "with", "without", rounds)
        rows += [
            _row("decide p50, with behavior", p50["with"], "µs"),
            _row("decide p50, without behavior", p50["without"], "µs"),
            _row("behavior adds to decide, p50 (layer + tracker)", added, "µs", BUDGET_US, added <= BUDGET_US),
            _row("  of which the layer itself, p50", _added(times, "with", "tracker only", rounds), "µs"),
            _row("  (a no-op third layer adds, p50)", _added(times, "no-op layer", "without", rounds), "µs"),
            _row("decide p90, with behavior", _pct(times["with"], 0.90), "µs"),
            _row("decide p90, without behavior", _pct(times["without"], 0.90), "µs"),
            _row("decide p99, with behavior", p99["with"], "µs"),
            _row("decide p99, without behavior", p99["without"], "µs"),
        ]
        hot = _time_decides({k: guards[k] for k in ("with", "without")}, _tool_calls(n_calls // 2, pace_s=None), rounds)
        rows.append(
            _row("behavior adds, p50, unpaced loop (burst signal active)", _added(hot, "with", "without", rounds), "µs")
        )

        # record_result: a result is saved to the session file at once
        res: dict[str, list[float]] = {"with": [], "without": []}
        n_res = 300 if quick else 2_000
        for i, (tool, params, sid) in enumerate(_calls(n_res)):
            for name in ("with", "without") if i % 2 else ("without", "with"):
                t0 = time.perf_counter_ns()
                guards[name].record_result(tool, params, session_id=sid, success=i % 9 != 0)
                res[name].append((time.perf_counter_ns() - t0) / 1000)
        rows.append(
            _row(
                "record_result adds (session saved), p50",
                statistics.median(res["with"]) - statistics.median(res["without"]),
                "µs",
            )
        )
        for g in guards.values():
            g.close()

        # a hook process's first look at a session with a full window
        ws = root / "with"
        config = Config.load(ws, overrides=CONFIG)
        loads = []
        for _ in range(50 if quick else 300):
            tracker = SessionTracker(config, ws)
            t0 = time.perf_counter_ns()
            tracker.get("s1", time.time())
            loads.append((time.perf_counter_ns() - t0) / 1000)
        rows.append(_row("first look at a session (read + parse its file), p50", statistics.median(loads), "µs"))

        analyzer = SessionBehaviorAnalyzer(ws, config)
        an = []
        for _ in range(200 if quick else 2_000):
            t0 = time.perf_counter_ns()
            analyzer.analyze_session("s1")
            an.append((time.perf_counter_ns() - t0) / 1000)
        rows.append(_row("analyze_session, p50", statistics.median(an), "µs"))
    return rows


def _row(name: str, value: float, unit: str, budget: float | None = None, met: bool | None = None) -> dict[str, Any]:
    return {"name": name, "value": round(value, 1), "unit": unit, "budget": budget, "met": met}


def main(argv: list[str]) -> int:
    rows = run(quick="--quick" in argv)
    width = max(len(r["name"]) for r in rows)
    print(f"{'measure':<{width}}  {'value':>9}  unit  budget  met")
    for r in rows:
        budget = "" if r["budget"] is None else f"{r['budget']:g}"
        met = "" if r["met"] is None else ("yes" if r["met"] else "NO")
        print(f"{r['name']:<{width}}  {r['value']:>9.1f}  {r['unit']:<4}  {budget:>6}  {met}")
    return 0 if all(r["met"] is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
