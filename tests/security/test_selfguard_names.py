"""Switching guard off under the names people and Pythons give it.

- ``pip3.12 uninstall guard-preflight`` only asked (G182, an unknown command): pip installed as
  ``pip3.12`` beside ``python3.12`` is pip, so it is judged as pip (G418 here, the usual pip
  rules for everything else);
- ``pip uninstall -y guard`` (guard's import name spelled as a distribution) only asked (G183):
  removing "guard" can only mean removing guard, so it blocks (G418), under every manager.

Near-misses: installing a package called ``guard`` is still an ordinary install, other packages
whose names start with "guard" keep their rule, ``pip show guard`` and ``pip3.11 list`` stay
allowed, a pip version that does not exist (``pip3.16``) is still an unknown command.
Driven through ``Guard.decide`` and through ``guard hook claude-code`` in a subprocess with a
fake HOME and GUARD_HOME (the command is data, never run).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from guard.core import Guard
from guard.model import AUTO_ALLOW, BLOCK
from tests.conftest import claude_bash_hook
from tests.security.conftest import decide

BLOCKED = [
    "pip3.12 uninstall guard-preflight",
    "pip3.6 uninstall -y guard_preflight",
    "pip2 uninstall guard-preflight",
    "pip3.12 install --force-reinstall guard-preflight",
    "pip uninstall -y guard",
    "pip uninstall Guard==0.1",
    "python3 -m pip uninstall -y guard",
    "uv pip uninstall guard",
    "pipx uninstall guard",
    "uv tool uninstall guard",
    "uv remove guard",
    "poetry remove guard",
    "pip3.12 uninstall -y requests guard",
]
AS_PIP = {  # a versioned pip gets pip's own rules
    "pip3.12 install requests": "G183",
    "pip3.11 uninstall -y requests": "G183",
}
ALLOWED = ["pip3.11 list", "pip3.13 show guard-preflight", "pip2 freeze", "pip show guard"]
KEEP_THEIR_RULE = {
    "pip uninstall -y guardrails": "G183",
    "pip uninstall guard-rails": "G183",
    "pip3.16 list": "G182",  # no such pip: unknown, asked as before
}


@pytest.mark.parametrize("command", BLOCKED)
def test_removing_guard_under_another_name_blocks(module_guard: Guard, command: str) -> None:
    decision, rules = decide(module_guard, command)
    assert (decision, "G418" in rules) == (BLOCK, True), (command, rules)


@pytest.mark.parametrize(("command", "rule"), AS_PIP.items())
def test_a_versioned_pip_is_judged_as_pip(module_guard: Guard, command: str, rule: str) -> None:
    _, rules = decide(module_guard, command)
    assert rule in rules and "G182" not in rules and "G418" not in rules, (command, rules)


@pytest.mark.parametrize("command", ALLOWED)
def test_reading_with_any_pip_stays_allowed(module_guard: Guard, command: str) -> None:
    decision, rules = decide(module_guard, command)
    assert decision == AUTO_ALLOW and "G418" not in rules, (command, rules)


@pytest.mark.parametrize(("command", "rule"), KEEP_THEIR_RULE.items())
def test_near_misses_keep_their_rule(module_guard: Guard, command: str, rule: str) -> None:
    _, rules = decide(module_guard, command)
    assert rule in rules and "G418" not in rules, (command, rules)


@pytest.mark.parametrize("command", ["pip3.12 uninstall -y guard-preflight", "pip uninstall -y guard"])
def test_the_claude_code_hook_denies_it(tmp_path: Path, command: str) -> None:
    out = claude_bash_hook(tmp_path, command)
    assert out["permissionDecision"] == "deny", out
    assert "G418" in out["permissionDecisionReason"], out
