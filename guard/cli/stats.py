"""guard stats: per-tool statistics from the history files."""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from typing import Any

from guard import workspace as ws
from guard.cli import add_workspace
from guard.cli.common import print_json, table
from guard.stores import JsonlLog
from guard.toolnames import canonical_tool


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "stats",
        help="per-tool statistics",
        description="Per-tool runs, success rate, approvals and decisions, from the workspace's history.",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_workspace(p)
    p.set_defaults(func=run)


def collect(root: Any) -> dict[str, dict[str, Any]]:
    tools: dict[str, dict[str, Any]] = defaultdict(
        lambda: {
            "runs": 0,
            "successes": 0,
            "interactions": 0,
            "approvals": 0,
            "decisions": Counter(),
        }
    )
    for rec in JsonlLog(root / ws.EXECUTIONS):
        if isinstance(rec.get("tool"), str) and rec.get("status") in ("success", "failure"):
            t = tools[canonical_tool(rec["tool"])]
            t["runs"] += 1
            t["successes"] += rec["status"] == "success"
    for rec in JsonlLog(root / ws.INTERACTIONS):
        if isinstance(rec.get("tool"), str) and rec.get("action") in ("approved", "denied"):
            t = tools[canonical_tool(rec["tool"])]
            t["interactions"] += 1
            t["approvals"] += rec["action"] == "approved"
    for rec in JsonlLog(root / ws.DECISIONS):
        if isinstance(rec.get("tool"), str) and isinstance(rec.get("decision"), str):
            tools[canonical_tool(rec["tool"])]["decisions"][rec["decision"]] += 1
    return {k: v | {"decisions": dict(v["decisions"])} for k, v in sorted(tools.items())}


def run(args: argparse.Namespace) -> int:
    root = ws.resolve(args.workspace)
    stats = collect(root)
    if args.json:
        print_json({"tools": stats})
        return 0
    if not stats:
        print(f"no history in {root}")
        return 0
    rows = []
    for tool, s in stats.items():
        rate = f"{s['successes'] / s['runs']:.0%}" if s["runs"] else "-"
        appr = f"{s['approvals'] / s['interactions']:.0%}" if s["interactions"] else "-"
        d = s["decisions"]
        rows.append(
            [
                tool,
                s["runs"],
                rate,
                s["interactions"],
                appr,
                d.get("auto_allow", 0),
                d.get("request_confirm", 0),
                d.get("block", 0),
            ]
        )
    print(table(rows, ["tool", "runs", "success", "asked", "approved", "allowed", "confirmed", "blocked"]))
    return 0
