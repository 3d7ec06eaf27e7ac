"""``mv`` takes its sources away from where they were: a source outside the project is changed
there, as ``rm`` of it would change it, so it asks (G125) even when the destination is the project.

Before, only the destination was judged for an ordinary place: ``mv ~/Downloads ./dl`` emptied the
home's Downloads folder unasked while ``rm ~/Downloads/a.pdf`` asked. All commands here are data.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from guard.core import Guard
from tests.conftest import claude_bash_hook
from tests.security.conftest import decide

ASK, ALLOW, BLOCK = "request_confirm", "auto_allow", "block"


@pytest.mark.parametrize(
    "command",
    [
        "mv ~/Downloads/a.pdf ./organized/",
        "mv ~/Downloads/*.pdf ./organized/",
        "mv ~/Downloads ./dl",  # the whole folder
        "mv ~/notes.txt .",
        "mv -t ./dest ~/Documents/report.docx",  # the destination first
        "mv ../sibling/config.yml ./",  # a folder beside the project
        "mv ~/a.txt ~/b.txt ./both/",  # every source counts
    ],
)
def test_a_source_outside_the_project_asks(home_guard: Guard, fake_home: Path, command: str) -> None:
    decision, rules = decide(home_guard, command, cwd=fake_home / "proj")
    assert (decision, "G125" in rules) == (ASK, True)


@pytest.mark.parametrize(
    "command",
    [
        "mv ./a.txt ./b.txt",  # inside the project
        "mv src/old.py src/new.py",
        "mv build/out.log /var/tmp/",  # into a scratch folder (not /tmp: this test's home is under it)
        "mv /tmp/download.tar.gz ./vendor/",  # from the scratch folder
        "git mv README README.md",
        "cp ~/Downloads/a.pdf ./organized/",  # a copy leaves the source where it was
    ],
)
def test_moves_within_the_project_and_scratch_still_run(home_guard: Guard, fake_home: Path, command: str) -> None:
    decision, rules = decide(home_guard, command, cwd=fake_home / "proj")
    assert decision == ALLOW and "G125" not in rules


@pytest.mark.parametrize(
    ("command", "rule", "decision"),
    [
        ("mv ~/.ssh/id_rsa ./", "G124", ASK),  # a credential store keeps its own rule
        ("mv ~ ./home-copy", "G108", BLOCK),  # the home itself
        ("mv /etc/hosts ./", "G108", BLOCK),
    ],
)
def test_stronger_rules_for_a_source_stay(
    home_guard: Guard, fake_home: Path, command: str, rule: str, decision: str
) -> None:
    got, rules = decide(home_guard, command, cwd=fake_home / "proj")
    assert got == decision and rule in rules and "G125" not in rules


def test_the_claude_code_hook_asks_before_emptying_downloads(fake_home: Path) -> None:
    asked = claude_bash_hook(fake_home, "mv ~/Downloads ./dl", cwd=fake_home / "proj")
    assert asked["permissionDecision"] == "ask"
    assert "outside the project" in asked["permissionDecisionReason"]
    kept = claude_bash_hook(fake_home, "mv ./notes.txt ./docs/notes.txt", cwd=fake_home / "proj")
    assert kept["permissionDecision"] == "allow"
