"""Crafted inputs against the decision time budget (issue 12): the worst 10-100 KB call, median and max.

    python benchmarks/bench_budget.py            # full run
    python benchmarks/bench_budget.py --quick    # fewer repetitions

Each input is built to be slow to judge (thousands of variables, a 5,000-stage pipeline, 10,000
globs, deep nesting, a doubling variable, 100 KB words, PowerShell, long ``python -c`` programs,
big Write contents and JSON parameters). Every one goes through ``Guard.decide`` with the default
configuration (``decision.budget_ms`` = 200) and the static cache off, so each repetition is judged
from scratch, in a child process (a heap of guard's own, as a hook process has: the runner's heap
would make every collection walk other modules' objects). A row reports the slowest input's median
and max against the budget, and how many inputs were allowed (must be none: past the budget a call
is asked, never let through).
"""

from __future__ import annotations

import json
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.common import child_env, guard_config, row, run_python  # noqa: E402

BUDGET_MS = 200.0


def _bash(command: str) -> tuple[str, dict[str, Any]]:
    return "Bash", {"command": command}


def _nested_quotes(depth: int) -> str:
    text = "ls"
    for _ in range(depth):
        text = "bash -c " + shlex.quote(text)
    return text


CRAFTED: dict[str, Callable[[], tuple[str, dict[str, Any]]]] = {
    "1,600 words with variables (rm -f $x ...)": lambda: _bash("rm -f " + " ".join(f"$x{i % 7}" for i in range(1600))),
    "3,000 words with variables": lambda: _bash("rm -f " + " ".join(f"$x{i % 7}" for i in range(3000))),
    "3,000 globbed paths": lambda: _bash("rm -f " + " ".join(f"/tmp/d{i}/*.log" for i in range(3000))),
    "5,000-stage pipeline": lambda: _bash(" | ".join("a" for _ in range(5000))),
    "nested $( ) 1,000 deep": lambda: _bash("echo " + "$( " * 1000 + "ls" + " )" * 1000),
    'bash -c "$( ... )" 200 deep': lambda: _bash('bash -c "$( ' * 200 + "ls" + ' )"' * 200),
    "bash -c quoted 8 deep": lambda: _bash(_nested_quotes(8)),
    "here-doc of 3,000 lines": lambda: _bash(
        "cat <<EOF > f.txt\n" + "\n".join(f"line {i} $x" for i in range(3000)) + "\nEOF"
    ),
    "4,000 ; commands": lambda: _bash(" ; ".join(f"echo {i}" for i in range(4000))),
    "3,000 && commands": lambda: _bash(" && ".join(f"echo $v{i}" for i in range(3000))),
    "60 KB single word": lambda: _bash("echo " + "a" * 60_000),
    "60 KB word of variables": lambda: _bash("echo " + "a$x" * 20_000),
    "3,000 redirections": lambda: _bash("echo hi " + " ".join(f"> /tmp/o{i}" for i in range(3000))),
    "python -c of 2,000 lines": lambda: _bash(
        "python3 -c " + shlex.quote("\n".join(f"x{i} = open('f{i}').read()" for i in range(2000)))
    ),
    "PowerShell, 3,000 statements": lambda: _bash(
        'powershell -Command "' + "; ".join(f"Get-Item C:\\x{i}" for i in range(3000)) + '"'
    ),
    "Write of 3,000 shell lines": lambda: (
        "Write",
        {"file_path": "/tmp/p/a.sh", "content": "\n".join(f"rm -f /home/u/f{i} ~/x{i}" for i in range(3000))},
    ),
    "JSON params, 2,000 keys": lambda: (
        "mcp__x__y",
        {"data": {f"k{i}": [f"/etc/passwd{i}", {"u": f"http://e{i}.com"}] for i in range(2000)}},
    ),
    "3,000 brace words": lambda: _bash("echo " + " ".join(f"{{a,b}}{i}" for i in range(3000))),
    "doubling variable x=$x$x": lambda: _bash("x=ab; " + 'x="$x$x"; ' * 40 + "echo $x"),
    "2,000 functions": lambda: _bash(" ".join(f"f{i}() {{ f{i - 1}; }};" for i in range(1, 2000)) + " f1999"),
    "3,000 command substitutions": lambda: _bash("rm -f " + " ".join(f"$(echo {i})" for i in range(3000))),
    "rm -rf ~ padded with 100 KB": lambda: _bash("echo " + "a " * 50_000 + "\nrm -rf ~"),
}


def measure(reps: int) -> list[dict[str, Any]]:
    from guard import Guard, pauses

    out = []
    with tempfile.TemporaryDirectory() as ws:
        g = Guard(Path(ws), guard_config(**{"static.cache_size": 0}))
        try:
            g.decide("Bash", {"command": "ls"}, save=False)  # imports and grammar loading
            for name, make in CRAFTED.items():
                tool, params = make()
                size = len(json.dumps(params))
                samples, collected, cpu, decisions = [], [], [], set()
                for _ in range(reps):
                    before = pauses.total
                    c0, t0 = time.thread_time(), time.perf_counter()
                    record = g.decide(tool, params, save=False)
                    samples.append((time.perf_counter() - t0) * 1000)
                    cpu.append((time.thread_time() - c0) * 1000)
                    collected.append((pauses.total - before) * 1000)  # garbage collections in it
                    decisions.add(record.decision)
                # guard's own time, as guard.pauses counts it: the wall less the collections, and
                # no more than the thread's CPU time (a thread that was not running did no work)
                own = [min(wall - paused, c) for wall, paused, c in zip(samples, collected, cpu, strict=True)]
                out.append(
                    {
                        "name": name,
                        "kb": size / 1024,
                        "median": statistics.median(samples),
                        "max": max(samples),
                        "max_collections": collected[samples.index(max(samples))],
                        "max_own": max(own),  # guard's own time (see ``own``)
                        "decisions": sorted(decisions),
                    }
                )
        finally:
            g.close()
    return out


def run(quick: bool = False) -> list[dict[str, Any]]:
    # In a child process, as a hook decides: the runner's own heap by now (LanceDB, 100k-line
    # histories, every earlier module's samples) made each crafted decision's garbage collections
    # walk a million objects that are not guard's (185 ms of a 270 ms decision in one CI run).
    code = f"import json; from benchmarks.bench_budget import measure; print(json.dumps(measure({3 if quick else 10})))"
    out, _ = run_python(code, env=child_env(), timeout=900)
    return rows_of(json.loads(out.strip().splitlines()[-1]))


def rows_of(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from guard.pauses import ALLOWANCE_S  # how far past its deadline collections may carry a decision

    allowance_ms = ALLOWANCE_S * 1000.0
    sized = [r for r in results if 10 <= r["kb"] <= 110] or results
    worst = max(sized, key=lambda r: r["median"])
    slowest = max(sized, key=lambda r: r["max"])
    busiest = max(sized, key=lambda r: r["max_own"])
    allowed = [r["name"] for r in results if "auto_allow" in r["decisions"] and "padded" in r["name"]]
    issue = next(r for r in results if r["name"].startswith("1,600 words"))
    return [
        row(
            "crafted 10-100 KB input, worst median decision",
            worst["median"],
            "ms",
            f"<= {BUDGET_MS:g}",
            note=f"{worst['name']} ({worst['kb']:.0f} KB): {', '.join(worst['decisions'])}",
        ),
        # guard.pauses: a decision is out of time once its wall budget is gone and half of it went on
        # guard's own work, so garbage collections (the whole process's, the host's too) and time
        # the thread was not running can carry it past the budget, never more than ALLOWANCE_S. Guard's own time is bounded by the budget
        # plus one uninterruptible step; the wall by that plus the collections in it.
        row(
            "crafted 10-100 KB input, worst max decision, own time",
            busiest["max_own"],
            "ms",
            f"<= {BUDGET_MS * 1.5:g} (the budget plus one uninterruptible step)",
            note=f"{busiest['name']} ({busiest['kb']:.0f} KB): the wall less the garbage collections in it, at most its CPU time",
        ),
        row(
            "crafted 10-100 KB input, worst max decision, wall",
            slowest["max"],
            "ms",
            f"<= {BUDGET_MS * 1.5 + allowance_ms:g} (plus collections, at most {allowance_ms:g} ms)",
            note=f"{slowest['name']} ({slowest['kb']:.0f} KB); garbage collections in it {slowest['max_collections']:.0f} ms",
        ),
        row(
            "1,600-word rm -f $x ... (22 s before the fix), median",
            issue["median"],
            "ms",
            f"<= {BUDGET_MS:g}",
            note=", ".join(issue["decisions"]),
        ),
        row("padded critical commands allowed", float(len(allowed)), "", "== 0", note=", ".join(allowed) or None),
        row("crafted inputs measured", float(len(results)), ""),
    ]


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    for r in measure(3 if quick else 10):
        print(
            f"{r['name']:45} {r['kb']:6.1f} KB  median {r['median']:7.1f} ms  max {r['max']:7.1f} ms  {r['decisions']}"
        )
