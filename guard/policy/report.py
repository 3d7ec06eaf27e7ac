"""What guard decided and learned, summarised for a person (``guard report``).

- **decisions per day** by outcome, over the last ``days`` calendar days that end with the
  last logged day (earlier days are counted and reported as left off);
- **top blocking rules**: the reason ids of the layer that imposed each block (a fused
  score below the band: G302; a confirmation with nobody to ask: ``no-human``);
- **tools by trust**: per tool, the share of runs that succeeded and of prompts approved;
- **sessions by health**: the behavior layer's health when the decision log carries it,
  otherwise an estimate, ``100 · good / (good + bad)`` with good = successful runs and
  approvals, bad = failures, denials and blocks (the source is named per session);
- **prompts saved by learned rules**: for each active rule learned by ``guard rules``,
  the logged calls it covers (as the static layer's matcher reads the rule, on the logged
  parameters) after it was applied are re-decided on a scratch copy of the
  history with and without the learned rules; a call that is ``auto_allow`` with them and
  would have been asked (or blocked) without them is a saved prompt. The rule's own
  evidence, the prompts the pattern had before it existed, is shown next to it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs

from guard.config import Config
from guard.model import AUTO_ALLOW, BLOCK, DECISIONS, REQUEST_CONFIRM
from guard.policy import history, rules
from guard.policy.coverage import Coverage
from guard.policy.history import Event
from guard.policy.replay import GuardFactory, Replayer

TOP_RULES = 10
TOP_TOOLS = 12
TOP_SESSIONS = 15


@attrs.frozen
class Report:
    generated: str
    workspace: str
    days: tuple[tuple[str, Mapping[str, int]], ...]
    days_left_off: int
    totals: Mapping[str, int]
    blocking_rules: tuple[Mapping[str, Any], ...]
    tools: tuple[Mapping[str, Any], ...]
    sessions: tuple[Mapping[str, Any], ...]
    saved: tuple[Mapping[str, Any], ...]
    left_off: Mapping[str, int]

    @property
    def prompts_saved(self) -> int:
        return sum(int(r["saved"]) for r in self.saved)

    @property
    def approval_rate(self) -> float | None:
        asked = self.totals.get("answers", 0)
        return self.totals.get("approved", 0) / asked if asked else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "generated": self.generated,
            "workspace": self.workspace,
            "totals": dict(self.totals),
            "approval_rate_of_prompts": None if self.approval_rate is None else round(self.approval_rate, 4),
            "decisions_per_day": [{"day": d, **dict(c)} for d, c in self.days],
            "blocking_rules": [dict(r) for r in self.blocking_rules],
            "tools": [dict(t) for t in self.tools],
            "sessions": [dict(s) for s in self.sessions],
            "prompts_saved": {"total": self.prompts_saved, "rules": [dict(r) for r in self.saved]},
            "left_off": dict(self.left_off) | {"days": self.days_left_off},
        }


def build(
    workspace: Path,
    config: Config | None = None,
    *,
    days: int = 30,
    make_guard: GuardFactory | None = None,
    now: datetime | None = None,
) -> Report:
    config = config or Config.load(workspace if workspace.is_dir() else None)
    decisions = sorted(history.decisions(workspace), key=lambda e: e.ts)
    runs = list(history.executions(workspace))
    answers = list(history.interactions(workspace))
    per_day, left_off_days = _per_day(decisions, days)
    blocking, rules_left = _blocking_rules(decisions)
    tools, tools_left = _tools(runs, answers)
    sessions, sessions_left = _sessions(decisions, runs, answers)
    totals = Counter(e.outcome for e in decisions)
    totals_out = {d: totals.get(d, 0) for d in DECISIONS} | {
        "decisions": len(decisions),
        "runs": len(runs),
        "answers": len(answers),
        "approved": sum(1 for a in answers if a.outcome == "approved"),
    }
    return Report(
        generated=(now or datetime.now().astimezone()).isoformat(timespec="seconds"),
        workspace=str(workspace),
        days=per_day,
        days_left_off=left_off_days,
        totals=totals_out,
        blocking_rules=blocking,
        tools=tools,
        sessions=sessions,
        saved=saved_by_rules(workspace, config, decisions, make_guard),
        left_off={"blocking_rules": rules_left, "tools": tools_left, "sessions": sessions_left},
    )


def _per_day(decisions: list[Event], days: int) -> tuple[tuple[tuple[str, Mapping[str, int]], ...], int]:
    if not decisions:
        return (), 0
    counts: dict[date, Counter[str]] = defaultdict(Counter)
    for e in decisions:
        counts[e.when.date()][e.outcome] += 1
    last = max(counts)
    first = max(min(counts), last - timedelta(days=max(1, days) - 1))
    out = []
    day = first
    while day <= last:
        c = counts.get(day, Counter())
        out.append((day.isoformat(), {d: c.get(d, 0) for d in DECISIONS}))
        day += timedelta(days=1)
    left = sum(1 for d in counts if d < first)
    return tuple(out), left


def _blocking_rules(decisions: Iterable[Event]) -> tuple[tuple[Mapping[str, Any], ...], int]:
    counts: Counter[str] = Counter()
    messages: dict[str, str] = {}
    for e in decisions:
        if e.outcome != BLOCK:
            continue
        for rid, message in _why_blocked(e.raw):
            counts[rid] += 1
            messages.setdefault(rid, message)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    from guard.rulebook import names

    named = names()
    top = tuple(
        {"id": rid, "name": named.get(rid, ""), "count": n, "message": messages[rid]} for rid, n in ranked[:TOP_RULES]
    )
    return top, max(0, len(ranked) - TOP_RULES)


def _why_blocked(raw: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The reasons of the layer(s) that imposed the block, each rule id once."""
    layers = [v for v in raw.get("layers") or () if isinstance(v, Mapping)]
    reasons = [r for v in layers if v.get("decision") == BLOCK for r in v.get("reasons") or ()]
    if not reasons:
        notes = [n for n in raw.get("notes") or () if isinstance(n, str)]
        if any("no human present" in n for n in notes):
            return [("no-human", "request_confirm with nobody to ask acts as block")]
        reasons = list(raw.get("reasons") or ())
    out: dict[str, str] = {}
    for r in reasons:
        if isinstance(r, Mapping) and isinstance(r.get("id"), str):
            out.setdefault(r["id"], str(r.get("message", "")))
    return list(out.items()) or [("unknown", "no reason recorded")]


def _tools(runs: Iterable[Event], answers: Iterable[Event]) -> tuple[tuple[Mapping[str, Any], ...], int]:
    stats: dict[str, Counter[str]] = defaultdict(Counter)
    for e in runs:
        stats[e.kind]["runs"] += 1
        stats[e.kind]["successes"] += e.outcome == "success"
    for e in answers:
        stats[e.kind]["asked"] += 1
        stats[e.kind]["approved"] += e.outcome == "approved"
    rows: list[dict[str, Any]] = [
        {
            "tool": tool,
            "runs": s["runs"],
            "success_rate": round(s["successes"] / s["runs"], 4) if s["runs"] else None,
            "asked": s["asked"],
            "approval_rate": round(s["approved"] / s["asked"], 4) if s["asked"] else None,
        }
        for tool, s in stats.items()
    ]
    rows.sort(key=lambda r: (-(r["runs"] + r["asked"]), r["tool"]))
    return tuple(rows[:TOP_TOOLS]), max(0, len(rows) - TOP_TOOLS)


def _logged_health(raw: Mapping[str, Any]) -> float | None:
    for v in raw.get("layers") or ():
        if isinstance(v, Mapping) and v.get("layer") == "behavior":
            data = v.get("data")
            health = data.get("health") if isinstance(data, Mapping) else v.get("health")
            if isinstance(health, (int, float)) and not isinstance(health, bool):
                return float(health)
    return None


def _sessions(
    decisions: Iterable[Event], runs: Iterable[Event], answers: Iterable[Event]
) -> tuple[tuple[Mapping[str, Any], ...], int]:
    stats: dict[str, Counter[str]] = defaultdict(Counter)
    logged: dict[str, float] = {}
    for e in decisions:
        sid = e.session_id or "(none)"
        stats[sid]["decisions"] += 1
        stats[sid]["blocks"] += e.outcome == BLOCK
        health = _logged_health(e.raw)
        if health is not None:
            logged[sid] = health  # decisions are in time order: the last one wins
    for e in runs:
        s = stats[e.session_id or "(none)"]
        s["successes" if e.outcome == "success" else "failures"] += 1
    for e in answers:
        s = stats[e.session_id or "(none)"]
        s["approvals" if e.outcome == "approved" else "denials"] += 1
    rows = []
    for sid, s in stats.items():
        good = s["successes"] + s["approvals"]
        bad = s["failures"] + s["denials"] + s["blocks"]
        if sid in logged:
            health, source = logged[sid], "logged"
        else:
            health, source = (100.0 * good / (good + bad) if good + bad else 100.0), "estimated"
        rows.append(
            {
                "session": sid,
                "health": round(health, 1),
                "source": source,
                "decisions": s["decisions"],
                "blocks": s["blocks"],
                "failures": s["failures"],
                "denials": s["denials"],
            }
        )
    rows.sort(key=lambda r: (r["health"], r["session"]))
    return tuple(rows[:TOP_SESSIONS]), max(0, len(rows) - TOP_SESSIONS)


def saved_by_rules(
    workspace: Path, config: Config, decisions: list[Event], make_guard: GuardFactory | None = None
) -> tuple[Mapping[str, Any], ...]:
    """Per active learned allow rule: prompts before it, calls covered and prompts saved after."""
    learned = [r for r in rules.load(workspace).values() if r.status == "active" and r.kind == "allow"]
    if not learned:
        return ()
    rows: list[dict[str, Any]] = []
    to_check: list[tuple[int, Event]] = []
    coverage = Coverage()
    for r in learned:
        applied = history.parse_date(r.applied_at) if r.applied_at else float("inf")
        row: dict[str, Any] = {
            "id": r.id,
            "rule": r.rule,
            "applied_at": r.applied_at,
            "asked_before": 0,
            "covered": 0,
            "saved": 0,
        }
        rows.append(row)
        for e in decisions:
            if not coverage.covers(r.rule, e.call()):
                continue
            if e.ts < applied:
                row["asked_before"] += e.outcome == REQUEST_CONFIRM
            else:
                row["covered"] += 1
                to_check.append((len(rows) - 1, e))
    if to_check:
        without = _without_learned(config, [r.rule for r in learned])
        with (
            Replayer(config, make_guard, copy_from=workspace) as with_rules,
            Replayer(without, make_guard, copy_from=workspace) as without_rules,
        ):
            for i, e in to_check:
                if with_rules.decide(e).decision == AUTO_ALLOW and without_rules.decide(e).decision != AUTO_ALLOW:
                    rows[i]["saved"] += 1
    return tuple(rows)


def _without_learned(config: Config, learned: Iterable[str]) -> Config:
    drop = set(learned)
    perms = dict(config.section("permissions"))
    allow = perms.get("allow")
    if isinstance(allow, list):
        perms["allow"] = [r for r in allow if r not in drop]
    return attrs.evolve(config, raw_file={**config.raw_file, "permissions": perms})


def text(report: Report) -> str:
    """The report as plain text for a terminal."""
    t = report.totals
    lines = [f"guard report for {report.workspace} ({report.generated})", ""]
    n = t["decisions"]
    if not n:
        lines.append("no decisions logged yet")
    else:
        share = ", ".join(f"{d} {t[d]} ({t[d] / n:.0%})" for d in DECISIONS)
        lines.append(f"decisions: {n}: {share}")
    if report.approval_rate is not None:
        lines.append(f"prompts answered: {t['answers']}, approved {report.approval_rate:.0%}")
        if report.approval_rate >= 0.9 and t["answers"] >= 10:
            lines.append(
                "  most prompts are approved: 'guard rules suggest' proposes allow rules for the habitual ones"
            )
    if report.days:
        lines += ["", "decisions per day (allow / confirm / block):"]
        lines += [f"  {d}  {c[AUTO_ALLOW]:>5} {c[REQUEST_CONFIRM]:>5} {c[BLOCK]:>5}" for d, c in report.days]
        if report.days_left_off:
            lines.append(f"  ({report.days_left_off} earlier day(s) left off)")
    if report.blocking_rules:
        lines += ["", "rules that blocked most:"]
        lines += [
            f"  {r['count']:>5}  {r['id']:<10} {(r.get('name') or r['message'])[:70]}" for r in report.blocking_rules
        ]
    if report.tools:
        lines += ["", "tools by trust (success rate, approval rate):"]
        for r in report.tools:
            lines.append(
                f"  {r['tool']:<14} runs {r['runs']:>5} {_pct(r['success_rate']):>5}"
                f"   asked {r['asked']:>5} {_pct(r['approval_rate']):>5}"
            )
    if report.sessions:
        lines += ["", "sessions by health (worst first):"]
        for r in report.sessions:
            lines.append(
                f"  {r['session'][:24]:<24} {r['health']:>5.0f} ({r['source']})  decisions {r['decisions']}, "
                f"blocks {r['blocks']}, failures {r['failures']}, denials {r['denials']}"
            )
    lines += ["", f"prompts saved by learned rules: {report.prompts_saved}"]
    for r in report.saved:
        lines.append(
            f"  {r['id']}  {r['rule']}: saved {r['saved']} of {r['covered']} covered calls "
            f"(asked {r['asked_before']} times before it)"
        )
    return "\n".join(lines)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"
