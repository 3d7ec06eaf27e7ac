"""Resident memory of an engine without LanceDB, over bare Python, in fresh processes.

Bare: ``python -c`` reading its own ``VmRSS``. Engine: ``import guard``, a ``Guard`` with the
history-file memory, one decision, then ``VmRSS`` (and a check that lancedb was never
imported). The same with a workspace holding 100k history records (from the state file).
Medians of a few runs; the difference is the engine's cost.

Budget (DESIGN §5, the seed): <= 30 MB above bare Python.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from benchmarks.common import Row, guard_config, median, progress, row, run_python, write_history

BUDGET_MB = 30.0

_READ_RSS = """
def _rss():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1]) / 1024
    return out
"""

BARE = _READ_RSS + "import json; print(json.dumps(_rss()))"

ENGINE = (
    _READ_RSS
    + """
import json, sys
from guard.core import Guard
g = Guard(WS, CONFIG)
g.decide("bash", {"command": "git status"}, session_id="rss")
g.decide("write", {"file_path": "a.py", "content": "x = 1"}, session_id="rss")
out = _rss()
out["lancedb"] = "lancedb" in sys.modules
print(json.dumps(out))
"""
)


def _measure(code: str, runs: int) -> tuple[float, float, dict[str, object]]:
    results = [json.loads(run_python(code)[0].strip().splitlines()[-1]) for _ in range(runs)]
    return median([r["VmRSS"] for r in results]), median([r["VmHWM"] for r in results]), results[-1]


def run(quick: bool) -> list[Row]:
    runs = 3 if quick else 7
    rows: list[Row] = []
    progress("rss: bare python")
    bare, bare_peak, _ = _measure(BARE, runs)
    rows.append(row("bare python RSS", bare, "MB"))
    with tempfile.TemporaryDirectory(prefix="guard-bench-rss-") as tmp:
        empty = Path(tmp) / "empty"
        big = Path(tmp) / "big"
        write_history(big, 100_000)
        progress("rss: building the 100k state file")
        from guard.core import Guard

        Guard(big, guard_config()).close()  # catch up once and persist .guard-state.json
        cases = [("empty workspace", empty), ("100k history (state file)", big)]
        if not quick:
            scratch = Path(tmp) / "scratch"
            write_history(scratch, 100_000)
            cases.append(("100k history caught up from scratch", scratch))
        for label, ws in cases:
            progress(f"rss: engine, {label}")
            rss, peak, facts = _measure(f"WS = {str(ws)!r}\nCONFIG = {guard_config()!r}\n" + ENGINE, runs)
            rows.append(
                row(
                    f"engine RSS above bare python, {label}",
                    rss - bare,
                    "MB",
                    f"<= {BUDGET_MB:g}",
                    note=f"engine {rss:.1f} MB, peak {peak - bare_peak:+.1f} MB over bare peak; "
                    f"lancedb imported: {facts['lancedb']}",
                )
            )
    return rows
