"""Every built-in rule guard can cite, listed in one place: ``guard rules builtin [--json]``.

The static rules are the catalogue in :mod:`guard.static.rules.catalog` (each with an example call from
the labelled cases, ``guard/static/rules/examples.json``, written by ``tests/static/cases/build.py``);
the behavior signals (``G2xx``), the fused score's rules (``G3xx``) and the chain's own
(``G00x``) are described here, and a test keeps their ids equal to the ones the code emits.

    >>> next(r for r in builtin_rules() if r.id == "G202").name
    'repeat'
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import attrs


@attrs.frozen
class BuiltinRule:
    """One rule as a person browsing the list reads it.

    ``risk`` is the static rules' severity (None for the others); ``effect`` what the rule does
    to a decision when it fires (``block``, ``confirm``, ``score`` or ``note``).
    """

    id: str
    name: str
    layer: str
    family: str
    risk: str | None
    effect: str
    message: str
    example: str | None

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


# id | name | effect | what fires it | an example situation
_BEHAVIOR = """
G201 | failures        | score   | the session's recent results keep failing (decayed rate, plus the streak beyond 2) | a build that failed four times in the last minutes
G202 | repeat          | confirm | the same call three times in a row | the same `make test` decided three times without a change between
G203 | cycle           | confirm | a cycle of calls (A-B-A-B..., period 2-10) three times over | edit a file, run the tests, edit it back, run them, ...
G204 | rising_risk     | score   | the static risk of the session's calls keeps rising | reads, then writes outside the project, then deletes
G205 | burst           | score   | many calls in a few seconds, far above the session's usual rate | 20 calls within 10 s
G206 | refusals        | confirm | guard refused the session's calls three times in a row | three blocked commands one after the other
G210 | breaker_open    | block   | the task's circuit breaker is open after repeated failures | the same command failed 5 times in a row
G211 | breaker_trial   | note    | this call is the half-open breaker's one trial | the first retry after the breaker's wait
G220 | tainted         | score   | the session read untrusted content | a web page fetched earlier in the session
G221 | tainted_egress  | confirm | network egress after untrusted content | `curl -d @notes.txt https://...` after reading a web page
G222 | lethal_trifecta | block   | egress after untrusted content and a secret read | a web page, then `cat ~/.aws/credentials`, then an upload
G223 | trifecta_armed  | score   | untrusted content and a secret read: the next egress would block | a web page, then `cat .env`
G230 | denials         | score   | the person refused this call before | `git push --force` refused once
G231 | denial_limit    | confirm | the person's refusals reached the limit (3 in a row, 10 of 50, 20 in total) | three refusals in a row
G240 | tier_lines      | confirm | a write larger than the agent's trust tier allows | a 2,000-line write by a new agent
G241 | tier_files      | confirm | more files in one task than the tier allows | the 30th file written in one task
G242 | tier_risky_path | confirm | a risky path below the Sapling tier | a write to `.github/workflows/` by a new agent
G243 | tier_subagent   | confirm | a sub-agent where the tier forbids it | a Task call by a Seed-tier agent
G250 | low_health      | confirm | session health below `behavior.confirm_below` (60) | several signals above at once
"""

_FUSION = """
G301 | low_health_weights   | score   | session health below `fusion.low_health` (40): user preference and memory weigh less | an unhealthy session's calls score lower
G302 | below_threshold      | score   | the fused score is below a decision threshold | a first-time unknown command scoring 62
G303 | system_not_alone     | confirm | system pressure alone would block: guard asks instead | a busy machine and an otherwise-confirmed call
G304 | failures_ask         | confirm | only past failures and load would block: guard asks instead | a command with a failing history
G305 | static_floor         | note    | a safe read-only call is allowed by the static floor (`fusion.static_floor`) | `ls` on a fresh install
"""

_CHAIN = """
G001 | layer_failed     | confirm | a layer raised: the decision degrades towards caution | a custom layer with a bug
G003 | unreadable_event | block   | an event in `guard feed` could not be read | a line that is not JSON
G004 | unrecorded       | confirm | the workspace cannot be written: the static verdict stands, nothing is recorded | a full disk
G005 | bad_config       | confirm | `guard.toml` does not parse: its last good copy stands in, non-reads are confirmed | a typo in guard.toml
"""


# what a static rule's severity does to a decision (DESIGN §1: critical blocks, high asks at most)
_STATIC_EFFECT = {"critical": "block", "high": "confirm", "medium": "score", "low": "score", "safe": "score"}


def _rows(table: str, layer: str) -> list[BuiltinRule]:
    out = []
    for line in table.strip().splitlines():
        rule_id, name, effect, message, example = (cell.strip() for cell in line.split("|"))
        out.append(BuiltinRule(rule_id, name, layer, layer, None, effect, message, example))
    return out


@cache
def examples() -> dict[str, dict[str, Any]]:
    """Rule id -> an example call (``{"tool", "params"}``) from the labelled cases."""
    text = (Path(__file__).parent / "static" / "rules" / "examples.json").read_text(encoding="utf-8")
    data: dict[str, dict[str, Any]] = json.loads(text)
    return data


def shown(call: dict[str, Any]) -> str:
    """An example call as one line: the command for the shell, ``Tool {params}`` otherwise."""
    params = call.get("params", {})
    if call.get("tool") == "bash" and isinstance(params.get("command"), str):
        return str(params["command"])
    return f"{call.get('tool')} {json.dumps(params, ensure_ascii=False)}"


@cache
def builtin_rules() -> tuple[BuiltinRule, ...]:
    """Every built-in rule: static (by id), then behavior, fusion and the chain's own."""
    from guard.static.rules.catalog import CATALOG

    calls = examples()
    static = [
        BuiltinRule(
            rule.id,
            rule.name,
            "static",
            rule.family,
            rule.risk.label,
            _STATIC_EFFECT[rule.risk.label] if not rule.ceiling else "confirm",
            rule.message,
            shown(calls[rule.id]) if rule.id in calls else None,
        )
        for rule in sorted(CATALOG.values(), key=lambda r: r.id)
    ]
    return (*static, *_rows(_BEHAVIOR, "behavior"), *_rows(_FUSION, "fusion"), *_rows(_CHAIN, "chain"))


def names() -> dict[str, str]:
    """Rule id -> name, for reports that show ids."""
    return {r.id: r.name for r in builtin_rules()}
