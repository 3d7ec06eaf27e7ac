"""``guard explain`` for the static layer: the parse, the commands guard unwrapped, and why it decided."""

from __future__ import annotations

from typing import Any

from guard.model import ToolCall, Verdict
from guard.static.analysis import Analysis
from guard.static.rules.catalog import CATALOG
from guard.static.rules.userrules import RuleSet, user_rule_matches


def explain(call: ToolCall, analysis: Analysis, rules: RuleSet, verdict: Verdict) -> dict[str, Any]:
    """A JSON-ready account of one static judgement.

    ``parse`` is tree-sitter's s-expression of the shell command (``None`` for other tools),
    ``segments`` the top-level commands as written, ``commands`` every command after unwrapping
    (``sudo``, ``bash -c``, ``xargs``, ``find -exec`` …), ``rules`` each rule that fired, with the
    ``handler`` (``module:function``) that fired it.
    """
    parse = None
    if analysis.kind == "bash" and analysis.text is not None:
        from guard.static.reading.parser import sexp

        parse = sexp(analysis.text[:20000])
    return {
        "tool": call.tool,
        "kind": analysis.kind,
        "cwd": call.cwd,
        "command": analysis.text,
        "parse": parse,
        "segments": list(analysis.segments),
        "commands": list(analysis.commands),
        "effects": [{"effect": e, "path": p} for e, p in analysis.effects],
        "urls": list(analysis.urls),
        "rules": [
            {
                "id": h.rule_id,
                "risk": CATALOG[h.rule_id].risk.label,
                "family": CATALOG[h.rule_id].family,
                "message": CATALOG[h.rule_id].message,
                "detail": h.detail,
                "handler": h.handler,
                "alternative": CATALOG[h.rule_id].alternative,
            }
            for h in analysis.hits
        ],
        "user_rules": [
            {"action": m.action, "rule": m.rule.text, "origin": m.rule.origin}
            for m in user_rule_matches(call, analysis, rules)
        ],
        "ignored_rules": list(rules.ignored),
        "invalid_rules": list(rules.invalid),
        "verdict": verdict.to_dict(),
    }


def rules_table() -> str:
    """The rule catalogue as a Markdown table (``docs/static-rules.md`` is generated from this)."""
    rows = ["| id | severity | family | reason | safer alternative |", "|---|---|---|---|---|"]
    for rule in CATALOG.values():
        alternative = f"`{rule.alternative}`" if rule.alternative else ""
        severity = rule.risk.label + (" (asks)" if rule.ceiling else "")
        cells = (rule.id, severity, rule.family, rule.message, alternative)
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")  # a | would end the cell
    return "\n".join(rows)
