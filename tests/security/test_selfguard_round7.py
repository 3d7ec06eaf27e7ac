"""Blinding guard through spellings round 6 left beside the ones it closed (round 7).

Each spelling asked or was allowed on main while its neighbour blocked; each now meets the neighbour's
mechanism:

- Node code that holds ``process.env`` under another name before it starts a host (``const e =
  process.env; delete e.GUARD_HOME``, ``const {env} = process; env.GUARD_HOME = …``, ``const {env: x}
  = process; Object.assign(x, …)``, ``e['GUARD_HOME'] = …``) asked (G182) while ``delete
  process.env.GUARD_HOME`` blocked: the alias is the code's own environment, read as ``process.env``
  (G443).

Near-misses keep their answers: reading an alias, an alias changed before a non-host program starts, a
host started with guard's variables untouched, an alias assigned something else before it is changed.
Driven through ``Guard.decide`` and ``guard hook claude-code`` in a subprocess with a fake HOME and
GUARD_HOME (every command is data, never run).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from guard.core import Guard
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM
from tests.security.conftest import decide, hook_answer

NODE = 'node -e "{}"'
CP = "require('child_process')"
ALIAS_BLOCKED = [  # process.env under another name, changed before a host starts
    NODE.format(f"const e = process.env; delete e.GUARD_HOME; {CP}.execSync('claude')"),
    NODE.format(f"const {{env}} = process; env.GUARD_HOME='/tmp/x'; {CP}.execSync('claude')"),
    NODE.format(f"let {{argv, env: x}} = process; Object.assign(x, {{GUARD_HOME: '/x'}}); {CP}.execSync('claude')"),
    NODE.format(f"var e = process.env; delete e['GUARD_HOME']; {CP}.spawnSync('claude', [])"),
    NODE.format(f"var e = process.env; e['GUARD_HOME']='/x'; {CP}.execSync('claude -p hi')"),
    NODE.format(f"const e = process.env; e.GUARD_THRESHOLDS_AUTO_ALLOW='0'; {CP}.spawnSync('codex', ['exec'])"),
    NODE.format(f"const {{env: e}} = process; delete e.GUARD_HOME; {CP}.execSync('claude', {{env: e}})"),
]
ALIAS_ALLOWED = [  # reading an alias, or changing it before a non-host program
    NODE.format("const {env} = process; console.log(env.HOME)"),
    NODE.format("const {env: e} = process; console.log(e.GUARD_HOME)"),
    NODE.format(f"const e = process.env; delete e.GUARD_HOME; {CP}.execSync('make')"),
]
ALIAS_KEEP = {  # a host started as before (unknown code), or the whole environment printed: asked
    NODE.format("const e = process.env; console.log(e.HOME)"): "G142",
    NODE.format(f"const e = process.env; e.FOO='1'; {CP}.execSync('claude')"): "G182",
    NODE.format(f"const {{env}} = process; env.CI='1'; {CP}.execSync('claude -p hi')"): "G182",
    NODE.format(f"let e = process.env; e = {{...e}}; delete e.GUARD_HOME; {CP}.execSync('claude')"): "G182",
    NODE.format(f"const {{argv}} = process; {CP}.execSync('claude')"): "G182",
}


@pytest.mark.parametrize("command", ALIAS_BLOCKED)
def test_an_alias_of_process_env_changed_before_a_host_blocks(home_guard: Guard, fake_home: Path, command: str) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert (decision, "G443" in rules) == (BLOCK, True), (command, rules)


@pytest.mark.parametrize("command", ALIAS_ALLOWED)
def test_reading_an_alias_or_starting_no_host_stays_allowed(home_guard: Guard, fake_home: Path, command: str) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert decision == AUTO_ALLOW and "G443" not in rules, (command, rules)


@pytest.mark.parametrize(("command", "rule"), ALIAS_KEEP.items())
def test_a_host_started_with_guards_variables_untouched_asks(
    home_guard: Guard, fake_home: Path, command: str, rule: str
) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert decision == REQUEST_CONFIRM and rule in rules and "G443" not in rules, (command, rules)


def test_the_claude_code_hook_denies_an_alias(tmp_path: Path) -> None:
    decision, reason = hook_answer(tmp_path, ALIAS_BLOCKED[0])
    assert decision == "deny" and "G443" in reason, reason


def test_the_claude_code_hook_allows_reading_an_alias(tmp_path: Path) -> None:
    assert hook_answer(tmp_path, ALIAS_ALLOWED[0])[0] == "allow"


def test_the_claude_code_hook_asks_for_a_host_started_with_guards_variables_untouched(tmp_path: Path) -> None:
    assert hook_answer(tmp_path, NODE.format(f"const e = process.env; e.FOO='1'; {CP}.execSync('claude')"))[0] == "ask"
