"""The labelled suite: every family's cases and near-misses, under the cold-start mapping.

Each row of ``cases/*.jsonl`` names the tool call, the label it must satisfy and, often, the rule
that must be among the reasons (so a case passes for the right reason, not by accident). A case's
id (``family-<hash>``) comes from its content, so inserting a seed renames no other case.
"""

from __future__ import annotations

import importlib.util

import pytest
from static_helpers import CASES, HOME, call_of, case_files, cold_decision, load_jsonl, rule_ids, satisfies

from guard.layers.static import classify

ROWS = [row for path in case_files() for row in load_jsonl(path)]


@pytest.mark.parametrize("row", ROWS, ids=[row["id"] for row in ROWS])
def test_case(row: dict) -> None:
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


def _build() -> object:
    spec = importlib.util.spec_from_file_location("cases_build", CASES / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_case_files_are_what_build_py_writes() -> None:
    """The committed ``*.jsonl`` are fresh: rerun ``python tests/static/cases/build.py`` after a seed changes."""
    build = _build()
    expected = {name: build.render(rows) for name, rows in build.generate().items()}  # type: ignore[attr-defined]
    committed = {path.stem: path.read_text(encoding="utf-8") for path in case_files()}
    assert sorted(committed) == sorted(expected), "a case file without a family in build.py, or the reverse"
    stale = [name for name in expected if committed[name] != expected[name]]
    examples = build.EXAMPLES.read_text(encoding="utf-8") == build.examples(build.generate())  # type: ignore[attr-defined]
    assert stale == [] and examples, f"stale case files (run python tests/static/cases/build.py): {stale}"


def test_case_ids_are_unique_and_come_from_content() -> None:
    """Ids are unique and stay put when a seed is inserted before a row."""
    build = _build()
    assert len({row["id"] for row in ROWS}) == len(ROWS)
    row = {"label": "block", "tool": "bash", "params": {"command": "rm -rf /"}, "rule": "G101"}
    first = build._with_ids("filesystem", [row])  # type: ignore[attr-defined]
    shifted = build._with_ids("filesystem", [{"label": "allow", "tool": "bash", "params": {"command": "ls"}}, row])  # type: ignore[attr-defined]
    assert first[0]["id"] == shifted[1]["id"] == next(r["id"] for r in ROWS if r["params"] == {"command": "rm -rf /"})
