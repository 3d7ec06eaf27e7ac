"""The labelled suite: every family's cases and near-misses, under the cold-start mapping.

Each row of ``cases/*.jsonl`` names the tool call, the label it must satisfy and, often, the rule
that must be among the reasons (so a case passes for the right reason, not by accident).
"""

from __future__ import annotations

import pytest
from static_helpers import HOME, call_of, case_files, cold_decision, load_jsonl, rule_ids, satisfies

from guard.layers.static import classify

ROWS = [(path.stem, i, row) for path in case_files() for i, row in enumerate(load_jsonl(path))]


@pytest.mark.parametrize(("family", "index", "row"), ROWS, ids=[f"{f}-{i}" for f, i, _ in ROWS])
def test_case(family: str, index: int, row: dict) -> None:
    verdict = classify(call_of(row), home=HOME)
    decision = cold_decision(verdict)
    assert satisfies(row["label"], decision), f"{row['label']} but {decision}: {row['params']} {verdict.reasons}"
    if "rule" in row:
        assert row["rule"] in rule_ids(verdict), f"expected {row['rule']}, got {sorted(rule_ids(verdict))}"


def test_every_family_has_hits_and_near_misses() -> None:
    """Each family file holds both what must be caught and what must be let through."""
    for path in case_files():
        labels = {row["label"] for row in load_jsonl(path)}
        assert labels & {"block", "confirm"}, path.name
        assert labels & {"allow", "notblock"}, path.name


def test_suite_is_large() -> None:
    """Hundreds of cases: the shared corpus is a sample, not the target."""
    assert len(ROWS) >= 2000
