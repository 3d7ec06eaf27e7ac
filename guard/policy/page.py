"""The report as one self-contained HTML page: inline CSS, inline SVG charts, no script, no network.

Every chart is an ``<svg class="chart" id="chart-…">`` whose bars are ``<g class="bar">``
groups (one per day, rule, tool, session or learned rule) with a ``<title>`` tooltip, and a
table under it carries the same numbers for screen readers and copy-paste.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from guard.model import AUTO_ALLOW, BLOCK, DECISIONS, REQUEST_CONFIRM
from guard.policy.report import Report

COLOURS: dict[str, str] = {AUTO_ALLOW: "#2e7d32", REQUEST_CONFIRM: "#f9a825", BLOCK: "#c62828"}
LABELS: dict[str, str] = {AUTO_ALLOW: "auto_allow", REQUEST_CONFIRM: "request_confirm", BLOCK: "block"}
WIDTH = 960
LABEL_W = 230

_CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto; max-width: 1000px;
       color: #1d2329; background: #fff; padding: 0 16px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
.meta { color: #5b6670; margin-top: 0; }
.cards { display: flex; gap: 12px; flex-wrap: wrap; margin: 16px 0; }
.card { border: 1px solid #d8dee4; border-radius: 8px; padding: 10px 14px; min-width: 120px; }
.card b { display: block; font-size: 22px; }
.chart { display: block; max-width: 100%; height: auto; background: #fafbfc; border: 1px solid #e3e7eb;
         border-radius: 6px; }
.chart text { font: 12px system-ui, sans-serif; fill: #1d2329; }
.chart .axis { stroke: #9aa5af; stroke-width: 1; } .chart .grid { stroke: #e3e7eb; stroke-width: 1; }
.legend span { display: inline-block; margin-right: 14px; } .legend i { display: inline-block; width: 11px;
         height: 11px; margin-right: 5px; border-radius: 2px; vertical-align: -1px; }
table { border-collapse: collapse; margin-top: 8px; font-size: 13px; }
td, th { border-bottom: 1px solid #e3e7eb; padding: 3px 10px 3px 0; text-align: left; }
td.n, th.n { text-align: right; } .note { color: #5b6670; font-size: 13px; }
details { margin-top: 6px; }
"""


def render(report: Report) -> str:
    """The whole HTML document."""
    t = report.totals
    n = t["decisions"]
    rate = report.approval_rate
    cards = [
        ("decisions", str(n)),
        ("auto_allow", _share(t[AUTO_ALLOW], n)),
        ("request_confirm", _share(t[REQUEST_CONFIRM], n)),
        ("block", _share(t[BLOCK], n)),
        ("prompts approved", "-" if rate is None else f"{rate:.0%}"),
        ("prompts saved by learned rules", str(report.prompts_saved)),
    ]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>guard report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>guard report</h1>",
        f'<p class="meta">{escape(report.workspace)} · generated {escape(report.generated)}</p>',
        '<div class="cards">'
        + "".join(f'<div class="card"><b>{escape(v)}</b>{escape(k)}</div>' for k, v in cards)
        + "</div>",
    ]
    if rate is not None and rate >= 0.9 and t["answers"] >= 10:
        parts.append(
            '<p class="note">Most prompts are approved: prompts answered by reflex protect nobody. '
            "<code>guard rules suggest</code> proposes allow rules for the habitual ones.</p>"
        )
    parts += _days_section(report)
    parts += _blocking_section(report)
    parts += _tools_section(report)
    parts += _sessions_section(report)
    parts += _saved_section(report)
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


# -- sections ----------------------------------------------------------------------------------------
def _days_section(report: Report) -> list[str]:
    out = ["<h2>Decisions per day</h2>", _legend()]
    out.append(stacked_days(report.days))
    if report.days_left_off:
        out.append(f'<p class="note">{report.days_left_off} earlier day(s) with decisions are not shown.</p>')
    rows = [[d, *(str(c[k]) for k in DECISIONS)] for d, c in report.days]
    out.append(_table(["day", *DECISIONS], rows, numeric=(1, 2, 3), collapsed=True))
    return out


def _blocking_section(report: Report) -> list[str]:
    rows = report.blocking_rules
    out = ["<h2>Rules that blocked most</h2>"]
    out.append(
        hbars(
            "chart-blocking",
            [
                (
                    _rule_label(r),
                    [(float(r["count"]), COLOURS[BLOCK], f"{_rule_label(r)}: {r['count']} block(s). {r['message']}")],
                )
                for r in rows
            ],
        )
    )
    if report.left_off.get("blocking_rules"):
        out.append(f'<p class="note">{report.left_off["blocking_rules"]} more rule id(s) not shown.</p>')
    table_rows = [[str(r["id"]), str(r.get("name") or ""), str(r["count"]), r["message"]] for r in rows]
    out.append(_table(["rule", "name", "blocks", "reason"], table_rows, (2,)))
    return out


def _rule_label(row: Mapping[str, Any]) -> str:
    """``G101 Recursively deletes …``: the id and, when guard knows it, the rule's name."""
    name = str(row.get("name") or "")
    return f"{row['id']} {name}".strip()


def _tools_section(report: Report) -> list[str]:
    out = [
        "<h2>Tools by trust</h2>",
        _legend({"success rate": "#1565c0", "approval rate": "#8e24aa"}),
    ]
    bars = []
    for r in report.tools:
        tool = str(r["tool"])
        pairs = []
        for key, colour, what, count in (
            ("success_rate", "#1565c0", "runs succeeded", r["runs"]),
            ("approval_rate", "#8e24aa", "prompts approved", r["asked"]),
        ):
            value = r[key]
            title = f"{tool}: {'no data' if value is None else f'{value:.0%}'} of {count} {what}"
            pairs.append((100.0 * value if value is not None else 0.0, colour, title))
        bars.append((tool, pairs))
    out.append(hbars("chart-tools", bars, max_value=100.0, unit="%"))
    rows = [
        [str(r["tool"]), str(r["runs"]), _pct(r["success_rate"]), str(r["asked"]), _pct(r["approval_rate"])]
        for r in report.tools
    ]
    out.append(_table(["tool", "runs", "succeeded", "asked", "approved"], rows, (1, 2, 3, 4)))
    return out


def _sessions_section(report: Report) -> list[str]:
    out = ["<h2>Sessions by health</h2>"]
    bars = [
        (
            str(r["session"])[:28],
            [(float(r["health"]), _health_colour(float(r["health"])), _session_title(r))],
        )
        for r in report.sessions
    ]
    out.append(hbars("chart-sessions", bars, max_value=100.0))
    out.append(
        '<p class="note">Worst first. "logged" health comes from the behavior layer; "estimated" is '
        "100 × good / (good + bad) events (successful runs and approvals vs failures, denials and blocks).</p>"
    )
    rows = [
        [
            str(r["session"]),
            f"{r['health']:.0f}",
            str(r["source"]),
            str(r["decisions"]),
            str(r["blocks"]),
            str(r["failures"]),
            str(r["denials"]),
        ]
        for r in report.sessions
    ]
    out.append(
        _table(["session", "health", "source", "decisions", "blocks", "failures", "denials"], rows, (1, 3, 4, 5, 6))
    )
    return out


def _saved_section(report: Report) -> list[str]:
    out = [
        "<h2>Prompts saved by learned rules</h2>",
        _legend({"asked before the rule": COLOURS[REQUEST_CONFIRM], "saved since": COLOURS[AUTO_ALLOW]}),
    ]
    bars = [
        (
            str(r["rule"]),
            [
                (
                    float(r["asked_before"]),
                    COLOURS[REQUEST_CONFIRM],
                    f"{r['rule']}: asked {r['asked_before']} times before",
                ),
                (
                    float(r["saved"]),
                    COLOURS[AUTO_ALLOW],
                    f"{r['rule']}: {r['saved']} prompts saved since it was applied",
                ),
            ],
        )
        for r in report.saved
    ]
    out.append(hbars("chart-saved", bars, empty="no active learned allow rules yet (guard rules suggest / apply)"))
    out.append(
        '<p class="note">A saved prompt: a call the rule covers, logged after the rule was applied, that the '
        "current configuration allows with the learned rules and would have asked (or blocked) without them.</p>"
    )
    rows = [
        [str(r["id"]), str(r["rule"]), str(r["asked_before"]), str(r["covered"]), str(r["saved"])] for r in report.saved
    ]
    out.append(_table(["id", "rule", "asked before", "covered since", "saved"], rows, (2, 3, 4)))
    return out


# -- charts ---------------------------------------------------------------------------------------------
def stacked_days(days: Sequence[tuple[str, Mapping[str, int]]]) -> str:
    """One stacked bar per day, outcomes bottom-up allow, confirm, block."""
    height, top, bottom, left, right = 260, 16, 40, 48, 12
    if not days:
        return _empty("chart-days", "no decisions logged yet")
    plot_w, plot_h = WIDTH - left - right, height - top - bottom
    peak = max(sum(c.values()) for _, c in days) or 1
    slot = plot_w / len(days)
    bar_w = max(1.0, min(slot * 0.78, 56.0))
    parts = [_svg_open("chart-days", WIDTH, height, "Decisions per day, stacked by outcome")]
    for frac in (0.0, 0.5, 1.0):
        y = top + plot_h * (1 - frac)
        parts.append(f'<line class="grid" x1="{left}" y1="{y:.1f}" x2="{WIDTH - right}" y2="{y:.1f}"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{round(peak * frac)}</text>')
    label_every = max(1, len(days) // 12)
    for i, (day, counts) in enumerate(days):
        x = left + i * slot + (slot - bar_w) / 2
        title = f"{day}: " + ", ".join(f"{counts[d]} {d}" for d in DECISIONS)
        parts.append(f'<g class="bar" data-day="{escape(day)}"><title>{escape(title)}</title>')
        y = top + plot_h
        for d in DECISIONS:
            h = plot_h * counts[d] / peak
            if h > 0:
                y -= h
                parts.append(
                    f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w:.1f}" height="{h:.1f}" fill="{COLOURS[d]}"/>'
                )
        parts.append("</g>")
        if i % label_every == 0:
            parts.append(
                f'<text x="{x + bar_w / 2:.1f}" y="{height - bottom + 16}" text-anchor="middle">{escape(day[5:])}</text>'
            )
    parts.append(f'<line class="axis" x1="{left}" y1="{top + plot_h}" x2="{WIDTH - right}" y2="{top + plot_h}"/>')
    parts.append("</svg>")
    return "".join(parts)


def hbars(
    chart_id: str,
    rows: Sequence[tuple[str, Sequence[tuple[float, str, str]]]],
    *,
    max_value: float | None = None,
    unit: str = "",
    empty: str = "no data",
) -> str:
    """Horizontal bars: one ``<g class="bar">`` per row, holding one bar per (value, colour, title)."""
    if not rows:
        return _empty(chart_id, empty)
    per_row = max(len(bars) for _, bars in rows)
    bar_h = 18.0 if per_row == 1 else 13.0
    row_h = bar_h * per_row + 8
    height = 12 + row_h * len(rows)
    peak = max_value or max((v for _, bars in rows for v, _, _ in bars), default=0.0) or 1.0
    plot_w = WIDTH - LABEL_W - 70
    parts = [_svg_open(chart_id, WIDTH, round(height), chart_id.removeprefix("chart-"))]
    for i, (label, bars) in enumerate(rows):
        y0 = 8 + i * row_h
        parts.append(f'<g class="bar"><title>{escape("; ".join(t for _, _, t in bars))}</title>')
        parts.append(
            f'<text x="{LABEL_W - 8}" y="{y0 + bar_h * per_row / 2 + 4:.1f}" text-anchor="end">{escape(_clip(label, 34))}</text>'
        )
        for j, (value, colour, _title) in enumerate(bars):
            w = plot_w * max(0.0, value) / peak
            y = y0 + j * bar_h
            parts.append(f'<rect x="{LABEL_W}" y="{y:.1f}" width="{w:.1f}" height="{bar_h - 1:.1f}" fill="{colour}"/>')
            shown = f"{value:.0f}{unit}"
            parts.append(f'<text x="{LABEL_W + w + 6:.1f}" y="{y + bar_h - 3:.1f}">{escape(shown)}</text>')
        parts.append("</g>")
    parts.append(f'<line class="axis" x1="{LABEL_W}" y1="4" x2="{LABEL_W}" y2="{height - 4:.0f}"/>')
    parts.append("</svg>")
    return "".join(parts)


def _svg_open(chart_id: str, width: int, height: int, label: str) -> str:
    return (
        f'<svg class="chart" id="{escape(chart_id)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}">'
    )


def _empty(chart_id: str, message: str) -> str:
    return (
        _svg_open(chart_id, WIDTH, 48, message).replace('class="chart"', 'class="chart empty"')
        + f'<text x="16" y="29">{escape(message)}</text></svg>'
    )


def _legend(items: Mapping[str, str] | None = None) -> str:
    items = items or {LABELS[d]: COLOURS[d] for d in DECISIONS}
    return (
        '<p class="legend">'
        + "".join(f'<span><i style="background:{c}"></i>{escape(k)}</span>' for k, c in items.items())
        + "</p>"
    )


def _table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] = (), collapsed: bool = False
) -> str:
    if not rows:
        return ""
    head = "".join(f"<th{' class=n' if i in numeric else ''}>{escape(h)}</th>" for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(f"<td{' class=n' if i in numeric else ''}>{escape(c)}</td>" for i, c in enumerate(r)) + "</tr>"
        for r in rows
    )
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    return f"<details><summary>table</summary>{table}</details>" if collapsed else table


def _session_title(r: Mapping[str, object]) -> str:
    return (
        f"{r['session']}: health {float(r['health']):.0f} ({r['source']}); {r['decisions']} decisions, "  # type: ignore[arg-type]
        f"{r['blocks']} blocks, {r['failures']} failures, {r['denials']} denials"
    )


def _health_colour(health: float) -> str:
    return COLOURS[BLOCK] if health < 40 else COLOURS[REQUEST_CONFIRM] if health < 70 else COLOURS[AUTO_ALLOW]


def _share(count: int, total: int) -> str:
    return f"{count} ({count / total:.0%})" if total else "0"


def _pct(x: object) -> str:
    return "-" if not isinstance(x, (int, float)) else f"{x:.0%}"


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
