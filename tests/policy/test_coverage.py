"""The rules guard writes mean to the shipped static layer what guard means by them.

Learned rules act only through the static layer's ``[permissions]`` matcher. Each shape of rule
``guard rules`` writes goes into guard.toml, and the static layer of a Guard on that workspace is
asked about the call it was learned from, another call the rule covers, and a near-miss.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from guard import Guard
from guard.layers.base import Context
from guard.model import ToolCall
from guard.policy.coverage import Coverage
from guard.policy.patterns import params_for, pattern_of
from guard.toolnames import canonical_tool

CASES = [
    # tool, learned from, also covered, near-miss
    ("Bash", "kubectl apply -f k8s/", "kubectl apply -f k8s/prod/ --prune", "kubectl applyx -f k8s/"),
    ("Bash", "npm run test -- --watch", "npm run test && npm run test:unit", "npm run test && frobnicate"),
    ("Bash", "python -m pytest -x", "python -m pytest tests/a.py", "python -m pytest_cov"),
    ("Write", "src/app/a.py", "src/app/deep/b.py", "src/other/a.py"),
    ("Edit", "~/notes/todo.md", "~/notes/2025/june.md", "~/other/todo.md"),
    ("Edit", "/srv/app/conf/a.py", "/srv/app/conf/b.py", "/srv/app/a.py"),
    ("Read", "docs/guide/a.md", "docs/guide/b/c.md", "docs/other.md"),
    ("Write", "README.md", "./README.md", "docs/README.md"),
    ("WebFetch", "https://docs.python.org/3/", "https://docs.python.org/3/library/json.html", "https://python.org/"),
]


def call(tool: str, text: str) -> ToolCall:
    params = params_for(canonical_tool(tool), text)
    assert params is not None
    return ToolCall(tool, params)


@pytest.mark.parametrize(("tool", "learned", "also", "near_miss"), CASES)
def test_the_static_layer_reads_every_rule_shape_as_guard_writes_it(
    workspace: Path, tool: str, learned: str, also: str, near_miss: str
) -> None:
    pattern = pattern_of(tool, learned)
    assert pattern is not None
    workspace.mkdir()
    (workspace / "guard.toml").write_text(f"[permissions]\nallow = [{pattern.rule!r}]\n")
    with Guard(workspace, {"memory.backend": "history"}) as g:
        static = g.chain.layers[0]
        assert static.name == "static"
        ctx = Context(config=g.config, now=datetime.now(UTC), state=None, human_present=True)
        applied = {
            text: f"allow: {pattern.rule}" in static(call(tool, text), ctx).data.get("user_rules", ())
            for text in (learned, also, near_miss)
        }
    assert applied == {learned: True, also: True, near_miss: False}
    # guard's own question, "does this rule cover that call", gets the same answers.
    assert {text: pattern.covers(tool, text) for text in applied} == applied


def test_deny_rules_match_any_part_of_a_call_and_allow_rules_need_every_part() -> None:
    coverage = Coverage()
    compound = ToolCall("Bash", {"command": "docker system prune && ls"})
    assert coverage.covers("Bash(docker system prune:*)", compound, action="deny")
    assert not coverage.covers("Bash(docker system prune:*)", compound, action="allow")
    assert not coverage.covers("Bash(docker system prune:*)", ToolCall("Bash", {"command": "docker ps"}), "deny")


def test_a_text_the_static_layer_does_not_read_as_a_rule_covers_nothing() -> None:
    assert not Coverage().covers("Bash(npm run test", ToolCall("Bash", {"command": "npm run test"}))
