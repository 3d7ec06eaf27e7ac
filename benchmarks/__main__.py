"""``python -m benchmarks [--quick] [--json FILE] [--plot FILE] [--markdown FILE] [--only NAMES]``.

Runs every ``benchmarks/bench_*.py`` module it finds, prints one table, and optionally
writes the rows as JSON. A module that fails to import or raises becomes a row with a
note; the run goes on. A missed budget is reported, never an error: the exit status is 0
unless the runner itself failed (2 for bad arguments).
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import pkgutil
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import benchmarks
from benchmarks import common

# The table's order; modules not listed here follow alphabetically.
ORDER = ("static", "decide", "guarded", "concurrency", "memory", "behavior", "sessions", "hook", "rss")


def discover() -> list[str]:
    """Names (``decide``, ``static``...) of the ``bench_*`` modules present."""
    found = {m.name[len("bench_") :] for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith("bench_")}
    known = [n for n in ORDER if n in found]
    return known + sorted(found - set(known))


def run_module(name: str, quick: bool) -> list[dict[str, Any]]:
    """The module's rows, each tagged with ``group``; failures become a single note row."""
    module_name = f"benchmarks.bench_{name}"
    t0 = time.perf_counter()
    try:
        module = importlib.import_module(module_name)
        run = module.run
    except Exception as exc:
        return [_failure(name, "not run: import failed", exc)]
    try:
        rows = run(quick)
    except Exception as exc:
        return [_failure(name, "failed", exc)]
    seconds = time.perf_counter() - t0
    out = []
    for r in rows if isinstance(rows, list) else []:
        if not isinstance(r, dict) or "name" not in r:
            out.append(_note_row(name, f"{name}: malformed row", repr(r)[:200]))
            continue
        r = (
            {"name": r["name"], "value": _number(r.get("value")), "unit": r.get("unit", "")}
            | {
                "budget": r.get("budget"),
                "met": r.get("met"),
            }
            | {k: v for k, v in r.items() if k not in ("name", "value", "unit", "budget", "met")}
        )
        r.setdefault("group", name)
        out.append(r)
    if not isinstance(rows, list):
        out.append(_note_row(name, f"{name}: run() returned {type(rows).__name__}, not a list of rows", ""))
    if out:
        out[-1].setdefault("seconds", round(seconds, 1))
    return out


def _number(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None  # NaN/inf are not JSON
    return value


def _failure(name: str, what: str, exc: BaseException) -> dict[str, Any]:
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    at = f" at {Path(where.filename).name}:{where.lineno}" if where else ""
    return _note_row(name, f"{name}: {what}", f"{type(exc).__name__}: {exc}{at}")


def _note_row(group: str, name: str, note: str) -> dict[str, Any]:
    return {"name": name, "value": None, "unit": "", "budget": None, "met": None, "note": note, "group": group}


# -- output -----------------------------------------------------------------------------
def fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value == 0:
            return "0"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        if abs(value) >= 100:
            return f"{value:.1f}"
        if abs(value) >= 10:
            return f"{value:.1f}"
        return f"{value:.2f}"
    return str(value)


def table(rows: Sequence[dict[str, Any]]) -> str:
    """The rows as an aligned text table (also the Markdown body in docs/benchmarks.md)."""
    header = ["benchmark", "value", "unit", "budget", "met", "note"]
    body = [
        [
            str(r["name"]),
            fmt(r.get("value")),
            str(r.get("unit") or ""),
            str(r.get("budget") or ""),
            {True: "yes", False: "NO", None: ""}[r.get("met") if isinstance(r.get("met"), bool) else None],
            str(r.get("note") or ""),
        ]
        for r in rows
    ]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header) - 1)]
    out = []
    for cells in [header, ["-" * w for w in widths] + ["----"], *body]:
        left = "  ".join(
            c.rjust(w) if i == 1 else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=False))
        )
        out.append(f"{left}  {cells[-1]}".rstrip())
    return "\n".join(out)


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    lines = ["| benchmark | value | unit | budget | met | note |", "|---|---:|---|---|---|---|"]
    for r in rows:
        met = {True: "yes", False: "**no**"}.get(r.get("met"), "")  # type: ignore[arg-type]
        note = str(r.get("note") or "").replace("|", "\\|")
        lines.append(
            f"| {r['name']} | {fmt(r.get('value'))} | {r.get('unit') or ''} | {r.get('budget') or ''} | {met} | {note} |"
        )
    return "\n".join(lines)


class Progress:
    """A one-line ``\\r`` progress bar on stderr (plain lines when stderr is not a terminal)."""

    def __init__(self, total: int, bar: bool) -> None:
        self.total = total
        self.done = 0
        self.bar = bar
        self.module = ""
        self.t0 = time.perf_counter()

    def start(self, module: str) -> None:
        self.module = module
        self.show(f"{module}")

    def finish(self) -> None:
        self.done += 1

    def show(self, label: str) -> None:
        elapsed = time.perf_counter() - self.t0
        if self.bar:
            width = 24
            filled = int(width * self.done / max(1, self.total))
            line = f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {elapsed:5.0f}s  {label}"
            sys.stderr.write("\r" + line[:110].ljust(110))
        else:
            sys.stderr.write(f"[{self.done + 1}/{self.total} {elapsed:.0f}s] {label}\n")
        sys.stderr.flush()

    def close(self) -> None:
        if self.bar:
            sys.stderr.write("\r" + " " * 110 + "\r")
            sys.stderr.flush()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[1])
    p.add_argument("--quick", action="store_true", help="fewer iterations, fits in ~2 minutes (CI)")
    p.add_argument("--json", metavar="FILE", help="write the rows as a JSON list")
    p.add_argument(
        "--plot", metavar="FILE", help="write a PNG of the latency distributions (default in a full run: bench.png)"
    )
    p.add_argument("--no-plot", action="store_true", help="no PNG, even in a full run")
    p.add_argument("--markdown", metavar="FILE", help="also write the table as Markdown (for docs/benchmarks.md)")
    p.add_argument("--only", metavar="NAMES", help="comma-separated modules to run (e.g. decide,rss)")
    p.add_argument("--list", action="store_true", help="list the benchmark modules found and exit")
    args = p.parse_args(argv)

    names = discover()
    if args.list:
        print("\n".join(names))
        return 0
    if args.only:
        wanted = [n.strip().removeprefix("bench_") for n in args.only.split(",") if n.strip()]
        unknown = [n for n in wanted if n not in names]
        if unknown:
            p.error(f"no benchmark module named {', '.join(unknown)} (found: {', '.join(names)})")
        names = [n for n in names if n in wanted]

    os.environ.setdefault("LANCE_LOG", "error")
    bar = Progress(len(names), bar=not args.quick and sys.stderr.isatty())
    common.on_progress(bar.show if not args.quick else None)
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for name in names:
        bar.start(f"bench_{name}")
        rows.extend(run_module(name, args.quick))
        bar.finish()
    bar.close()
    common.on_progress(None)
    total = time.perf_counter() - t0

    mode = "quick" if args.quick else "full"
    print(f"guard benchmarks ({mode} run, {total:.0f} s, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs)")
    print(table(rows))
    missed = [r["name"] for r in rows if r.get("met") is False]
    print(f"\n{sum(r.get('met') is True for r in rows)} budgets met, {len(missed)} missed" + (":" if missed else "."))
    for name in missed:
        print(f"  - {name}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.markdown:
        Path(args.markdown).write_text(markdown(rows) + "\n", encoding="utf-8")
    plot_path = args.plot or (None if args.quick or args.no_plot else "bench.png")
    if plot_path and not args.no_plot and common.SAMPLES:
        from benchmarks.plot import write_png

        write_png(Path(plot_path), common.SAMPLES)
        print(f"latency plot: {plot_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
