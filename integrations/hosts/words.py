"""What guard tells the agent and the person, built from a decision record.

Every refusal comes as ``(why, instead)``: the rules that fired, then what the agent should
do instead — the rule's safer alternative when it names one, otherwise not to retry or work
around it and to tell the user. Hosts with one message field join the two.
"""

from __future__ import annotations

from collections.abc import Sequence

from guard.model import BLOCK, DecisionRecord, Reason

DO_NOT_WORK_AROUND = (
    "Do not retry it or work around it with another tool, flag or path; tell the user what you wanted to do and why."
)
PROMPT_SECRET = (
    "guard: the prompt contains what looks like a secret (a token, key or password); "
    "remove it and send the prompt again."
)


def _rules(reasons: Sequence[Reason], limit: int = 3) -> str:
    if not reasons:
        return "no rule vouched for it"
    return "; ".join(f"{r.message} [{r.rule_id}]" for r in reasons[:limit])


def allowed(record: DecisionRecord) -> str:
    return f"guard: {record.reasons[0].message}" if record.reasons else "guard: allowed"


def confirm(record: DecisionRecord) -> str:
    """For the person deciding: why guard asks, with the score behind it."""
    return f"guard: {_rules(record.reasons)} (score {record.final_score:.0f}, risk {record.risk.label})"


def nobody_to_ask(record: DecisionRecord) -> bool:
    """Blocked only because a confirmation had nobody to answer it (no layer blocked)."""
    return record.decision == BLOCK and not any(v.decision == BLOCK for v in record.layers)


def blocked(record: DecisionRecord) -> tuple[str, str]:
    blocking = [r for v in record.layers if v.decision == BLOCK for r in v.reasons] or list(record.reasons)
    why = f"guard: this {record.tool} call is blocked: {_rules(blocking)}."
    alternative = next((r.alternative for r in (*blocking, *record.reasons) if r.alternative), None)
    return why, f"Instead: {alternative}" if alternative else DO_NOT_WORK_AROUND


def headless(record: DecisionRecord) -> tuple[str, str]:
    why = (
        f"guard: this {record.tool} call needs the user's confirmation ({_rules(record.reasons)}) "
        "and nobody can answer here (headless)."
    )
    return why, "Do not retry it; carry on without it and tell the user which call needs their approval."


def out_of_band(record: DecisionRecord, entry_id: str) -> tuple[str, str]:
    why = (
        f"guard: this {record.tool} call needs the user's confirmation ({_rules(record.reasons)}), "
        "and this host cannot ask from a hook."
    )
    instead = (
        f"Ask the user in chat. If they agree, they run `guard approve {entry_id}` and you retry the exact "
        "same call; if they decline, do not retry it."
    )
    return why, instead


def approved(entry_id: str) -> str:
    return f"guard: approved by the user out of band (guard approve {entry_id})"
