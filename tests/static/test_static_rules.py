"""Rules as data: stable ids, sentences, alternatives that are themselves allowed, every rule exercised."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from static_helpers import HOME, call_of, case_files, judge, load_jsonl

from guard.model import BLOCK, Risk
from guard.static.analysis import analyse
from guard.static.families import FAMILIES
from guard.static.rules.catalog import CATALOG, RULES

ROOT = Path(__file__).resolve().parents[2]
# found on the file system at decision time, not in a call's text: tests/security/test_protected_paths.py
ON_DISK = {
    "G415",
    "G417",
    "G451",
    "G445",
}  # G451: the manifest read on disk (tests/security/test_nagging_round2); G445: git objects (tests/security/test_selfguard_git)
SOURCE = ROOT / "guard" / "static"


def test_ids_are_unique_and_in_the_static_range() -> None:
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids))
    # G4xx: the static range continued; G009 (disk fills) sits with guard's own record-level ids
    assert all(re.fullmatch(r"G[14]\d\d|G009", i) for i in ids)


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_rule_reads_as_a_sentence(rule) -> None:
    assert rule.message[0].isupper() and rule.message.endswith("."), rule.message
    assert rule.family and isinstance(rule.risk, Risk)
    assert not rule.ceiling or rule.risk is Risk.MEDIUM  # "cannot see" rules ask, they do not block


@pytest.mark.parametrize("rule", [r for r in RULES if r.alternative], ids=[r.id for r in RULES if r.alternative])
def test_alternative_is_not_blocked(rule) -> None:
    """A safer alternative guard would itself refuse is no alternative (dcg#316)."""
    verdict = judge(rule.alternative)
    assert verdict.decision != BLOCK, (rule.id, rule.alternative, verdict.reasons)
    assert verdict.risk < rule.risk


def test_every_rule_id_in_the_source_exists() -> None:
    used = set()
    for path in SOURCE.rglob("*.py"):
        used |= set(re.findall(r"\"(G1\d\d)\"", path.read_text(encoding="utf-8")))
    assert used - set(CATALOG) == set()


def _hits_over_cases() -> Counter[str]:
    seen: Counter[str] = Counter()
    for path in case_files():
        for row in load_jsonl(path):
            call = call_of(row)
            seen.update(h.rule_id for h in analyse(call.kind, call.tool, call.params, call.cwd, HOME, None).hits)
    return seen


def test_every_rule_is_exercised_by_the_labelled_suite() -> None:
    """Each built-in rule fires on at least one labelled case (user-rule ids are tested separately)."""
    seen = _hits_over_cases()
    # user rules and oversize calls: test_static_layer/userrules; the time budget: tests/security/test_time_budget
    elsewhere = {"G190", "G191", "G192", "G193", "G198", "G420"}
    elsewhere |= ON_DISK
    assert set(CATALOG) - elsewhere - set(seen) == set()


def test_every_high_rule_has_a_named_case() -> None:
    """Cases name the rule they expect for every rule that asks or blocks."""
    named = {row["rule"] for path in case_files() for row in load_jsonl(path) if "rule" in row}
    serious = {r.id for r in RULES if r.risk >= Risk.HIGH and r.family != "user"} - ON_DISK
    assert serious - named == set()


def test_each_command_has_one_home() -> None:
    """A command name belongs to exactly one family table."""
    counts = Counter(name for table in FAMILIES.values() for name in table)
    assert [n for n, c in counts.items() if c > 1] == []


def test_docs_list_every_rule() -> None:
    doc = (ROOT / "docs" / "static-rules.md").read_text(encoding="utf-8")
    missing = [r.id for r in RULES if f"| {r.id} |" not in doc]
    assert missing == []
