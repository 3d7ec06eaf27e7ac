"""guard log: recent decisions as a table."""

from __future__ import annotations

import argparse
from collections import deque

from guard import workspace as ws
from guard.cli import add_workspace
from guard.cli.common import print_json, table
from guard.jsonl import JsonlLog


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "log", help="show recent decisions", description="Show the most recent decisions from .fusion-decisions.jsonl."
    )
    p.add_argument("-n", "--limit", type=int, default=20, help="how many (default 20)")
    p.add_argument("--session-id", help="only this session")
    p.add_argument("--decision", choices=("auto_allow", "request_confirm", "block"), help="only this decision")
    p.add_argument("--json", action="store_true", help="one JSON record per line")
    add_workspace(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    path = ws.resolve(args.workspace) / ws.DECISIONS
    recent: deque[dict] = deque(maxlen=max(1, args.limit))  # type: ignore[type-arg]
    for rec in JsonlLog(path):
        if args.session_id and rec.get("session_id") != args.session_id:
            continue
        if args.decision and rec.get("decision") != args.decision:
            continue
        recent.append(rec)
    if args.json:
        for rec in recent:
            print_json(rec)
        return 0
    if not recent:
        print(f"no decisions recorded in {path}")
        return 0
    rows = []
    for rec in recent:
        reasons = rec.get("reasons") or []
        first = reasons[0] if reasons and isinstance(reasons[0], dict) else {}
        score = rec.get("fusion_score")
        rows.append(
            [
                str(rec.get("timestamp", ""))[:19],
                rec.get("tool"),
                rec.get("session_id") or "-",
                rec.get("decision"),
                f"{score:.1f}" if isinstance(score, (int, float)) else "-",
                rec.get("risk", "-"),
                f"{first.get('id', '')} {first.get('message', '')}"[:70],
            ]
        )
    print(table(rows, ["time", "tool", "session", "decision", "score", "risk", "first reason"]))
    return 0
