"""Score a labelled set of tool calls with guard's whole chain, cold per call.

One fresh ``Guard`` in a temporary workspace (system health pinned at 90, nobody's history);
every call gets its own session and nothing is saved, so each call is judged as the first call
of a first session. HOME is a temporary folder and the calls run in ``HOME/proj``. Labels:
``block`` must block, ``confirm`` must ask or block, ``allow`` must auto-allow, ``notblock``
must not block (the same mapping as ``/work/shared/tools/score_corpus.py``).

    python -m benchmarks.heldout tests/static/data/heldout_s21.jsonl [-v]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

LABELS = ("block", "confirm", "allow", "notblock")
GOOD = {
    "block": {"block"},
    "confirm": {"request_confirm", "block"},
    "allow": {"auto_allow"},
    "notblock": {"auto_allow", "request_confirm"},
}


def load(path: str | Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@contextmanager
def _fake_home() -> Iterator[Path]:
    old = os.environ.get("HOME")
    with tempfile.TemporaryDirectory(prefix="guard-heldout-") as tmp:
        home = Path(tmp) / "home"
        (home / "proj").mkdir(parents=True)
        os.environ["HOME"] = str(home)
        try:
            yield home
        finally:
            if old is None:
                os.environ.pop("HOME", None)
            else:
                os.environ["HOME"] = old


def decisions(rows: list[dict[str, Any]]) -> list[str]:
    """guard's decision for each row, cold per call."""
    from guard.core import Guard

    with _fake_home() as home:
        # No decision budget: this scores what the rules say, and a loaded machine (a first call
        # paying the lazy imports and pattern compiles) must not turn an allowed row into G420's
        # "asking"; the budget's own behaviour is measured by bench_budget.
        config = {"system.health": 90.0, "decision.budget_ms": 0}
        guard = Guard(workspace=home.parent / "ws", config=config, human_present=True)
        try:
            cwd = str(home / "proj")
            return [
                guard.decide(r["tool"], r["params"], session_id=f"heldout-{i}", cwd=cwd, save=False).decision
                for i, r in enumerate(rows)
            ]
        finally:
            guard.close()


def score(rows: list[dict[str, Any]], got: list[str]) -> tuple[Counter[str], Counter[str], list[tuple]]:
    ok: Counter[str] = Counter()
    total: Counter[str] = Counter()
    misses = []
    for row, decision in zip(rows, got, strict=True):
        total[row["label"]] += 1
        if decision in GOOD[row["label"]]:
            ok[row["label"]] += 1
        else:
            misses.append((row["label"], decision, row["tool"], row["params"], row.get("source", "")))
    return ok, total, misses


def table(ok: Counter[str], total: Counter[str]) -> str:
    parts = [f"{label} {ok[label]}/{total[label]}" for label in LABELS]
    overall = sum(ok.values()) / max(1, sum(total.values()))
    return ", ".join(parts) + f" | overall {overall:.3f}"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    verbose = "-v" in args
    paths = [a for a in args if a != "-v"] or ["tests/static/data/heldout_s21.jsonl"]
    for path in paths:
        rows = load(path)
        ok, total, misses = score(rows, decisions(rows))
        if verbose:
            for label, decision, tool, params, _src in misses:
                print("MISS", label, decision, tool, json.dumps(params)[:160])
        print(f"{path}: {table(ok, total)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
