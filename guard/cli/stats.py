"""guard stats: per-tool statistics from the history files; ``--session S``: one session's behavior."""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from typing import Any

from guard import workspace as ws
from guard.cli import add_workspace
from guard.cli.common import print_json, table
from guard.jsonl import JsonlLog
from guard.outcomes import execution_ok, interaction_ok
from guard.toolnames import canonical_tool


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "stats",
        help="per-tool statistics",
        description="Per-tool runs, success rate, approvals and decisions, from the workspace's history.",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--session", metavar="S", help="show session S instead: health, signals, circuit breakers, taint, trust tier"
    )
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
        ok = execution_ok(rec)  # counted exactly as the decisions count them
        if ok is not None:
            t = tools[canonical_tool(rec["tool"])]
            t["runs"] += 1
            t["successes"] += ok
    for rec in JsonlLog(root / ws.INTERACTIONS):
        ok = interaction_ok(rec)
        if ok is not None:
            t = tools[canonical_tool(rec["tool"])]
            t["interactions"] += 1
            t["approvals"] += ok
    for rec in JsonlLog(root / ws.DECISIONS):
        if isinstance(rec.get("tool"), str) and isinstance(rec.get("decision"), str):
            tools[canonical_tool(rec["tool"])]["decisions"][rec["decision"]] += 1
    return {k: v | {"decisions": dict(v["decisions"])} for k, v in sorted(tools.items())}


def run(args: argparse.Namespace) -> int:
    root = ws.resolve(args.workspace)
    if args.session is not None:
        return session_report(root, args.session, as_json=args.json)
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


def session_report(root: Any, session_id: str, *, as_json: bool) -> int:
    from guard.behavior.analyzer import SessionBehaviorAnalyzer

    metrics = SessionBehaviorAnalyzer(root).analyze_session(session_id)
    if as_json:
        print_json(metrics.to_dict())
        return 0
    if not metrics.known:
        print(f"no behavior recorded for session {session_id!r} in {root}")
        return 0
    print(session_text(metrics))
    return 0


def session_text(m: Any) -> str:
    c = m.counts
    lines = [
        f"session {m.session_id}   updated {m.updated}",
        f"  {c['dispatches']} calls ({c['blocked']} blocked), {c['results']} results ({c['failures']} failed), "
        f"{c['approvals']} approved, {c['denials']} denied; {m.events} events kept",
        f"health {m.health_score:.0f}/100",
    ]
    if m.signals:
        lines.append("signals:")
        for s in m.signals:
            effect = f"  [{s.effect}]" if s.effect else ""
            lines.append(f"  {s.id}  {s.name:<16} -{s.penalty:<5.1f} {s.message}{effect}")
    else:
        lines.append("signals: none")
    if m.breakers:
        lines.append("circuit breakers:")
        rows = [
            [
                b["task"],
                b["state"],
                b["failures_in_a_row"],
                b["failCount"],
                b["nextRetryAt"] or "-",
                "yes" if b["requireHuman"] else "no",
                b["call"],
            ]
            for b in m.breakers
        ]
        table_text = table(rows, ["task", "state", "failing", "failCount", "nextRetryAt", "requireHuman", "call"])
        lines += ["  " + line for line in table_text.splitlines()]
        lines.append("  close one with: guard reset --session SESSION --task TASK")
    else:
        lines.append("circuit breakers: none")
    if m.taint:
        untrusted, secret = m.taint.get("untrusted"), m.taint.get("secret")
        if untrusted:
            lines.append(f"taint: untrusted content from '{untrusted.get('call')}'")
        if secret:
            lines.append(f"secret read: '{secret.get('call')}'")
    if m.recent:
        lines.append(f"last {len(m.recent)} events:")
        for e in m.recent:
            what = e.get("decision") or e.get("outcome") or ""
            facts = f"  [{', '.join(e['facts'])}]" if e.get("facts") else ""
            lines.append(f"  {e['at']}  {e['event']:<8} {what:<15} {e.get('call', e.get('task'))}{facts}")
    t = m.tier
    if t:
        p = t["permissions"]
        nxt = f"; next {t['next']['tier']} at {t['next']['points']}" if t["next"] else ""
        lines.append(
            f"tier: {t['tier']} (agent {t['agent']}, {t['points']:g} points{nxt}): "
            f"{_limit(p['max_lines_per_write'])} lines per write, {_limit(p['max_files_per_task'])} files per task, "
            f"risky paths {'yes' if p['risky_paths'] else 'no'}, sub-agents {'yes' if p['subagents'] else 'no'}"
        )
    return "\n".join(lines)


def _limit(value: Any) -> str:
    return "unlimited" if value is None else str(value)
