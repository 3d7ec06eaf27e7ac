"""guard's settings changed by the shell's other ways to set a variable, and bodies never called.

Before: a nameref (``declare -n r=GUARD_HOME``, ``typeset -n``, ``local -n``) was an ordinary variable,
so ``r=/tmp/x`` and ``unset r`` changed nothing of guard's and ``declare -n r=GUARD_HOME; r=/tmp/x;
claude`` only asked. ``read``, ``mapfile``/``readarray`` and ``getopts`` set nothing guard looked at
(``read GUARD_HOME < /tmp/v; claude`` asked, where ``GUARD_HOME=$(cat /tmp/v) claude`` blocks), and
``printf -v GUARD_HOME …`` was not judged as an assignment on its own. The bodies of functions defined
but never called were walked one after another only, so what one changed hid what the next does
(``D=~/.claude; f() { D=/tmp/safe; }; g() { rm -rf "$D"; }`` was allowed).

After: what is done to a nameref is done to the variable it names (through a chain of them, a loop
read as the name itself); ``unset -n r`` and ``declare +n r`` take the ref away, not the target. A
name ``read``/``mapfile``/``getopts`` sets holds the line read, or a runtime value, set as any
assignment. A body never called is also walked alone from where the script ended, when the bodies
before it changed the shell; the walk one after another is kept (it is one order they may be called
in, and dropping it would allow ``f() { cd ~/.claude; }; g() { rm settings.json; }``).

Hits and near-misses side by side; driven through ``Guard.decide`` and ``guard hook claude-code`` in a
subprocess with a fake HOME and GUARD_HOME (every command is data, never run).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from guard.core import Guard
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM
from tests.security.conftest import decide, hook_answer

NAMEREF_CHANGES = [  # guard's workspace set or unset through a nameref before a host starts (G443)
    "declare -n r=GUARD_HOME; r=/tmp/x; claude -p hi",
    "declare -n r=GUARD_HOME\nr=/tmp/x\nclaude -p hi",  # (the parsed tree, not the fast path)
    "typeset -n r=GUARD_HOME; r=/tmp/x; claude -p hi",
    "declare -n r=GUARD_HOME; export r=/tmp/x; claude -p hi",
    "declare -n r=GUARD_HOME; r=/tmp/x codex exec hi",  # a prefix assignment through the ref
    "declare -n r=GUARD_HOME; unset r; claude -p hi",  # unsets what it points at
    "declare -n r=GUARD_HOME; export -n r; claude -p hi",
    "declare -n r=GUARD_THRESHOLDS_AUTO_ALLOW; r=0; claude -p hi",
    "f() { local -n r=GUARD_HOME; r=/tmp/x; }; f; claude -p hi",  # the target is the global one
    "f() { local -n r=$1; r=/tmp/x; }; f GUARD_HOME; claude -p hi",
    "declare -n a=b; declare -n b=GUARD_HOME; a=/tmp/x; claude -p hi",  # a chain
    "declare -n r; r=GUARD_HOME; r=/tmp/x; claude -p hi",  # the first value names the target
    "eval 'declare -n r=GUARD_HOME'; r=/tmp/x; claude -p hi",
]
NAMEREF_NO_CHANGE = [  # the ref is gone, ends in a child, or points elsewhere: ``claude`` asks as alone
    "declare -n r=GUARD_HOME; unset -n r; claude -p hi",  # the ref itself is unset
    "declare -n r=GUARD_HOME; declare +n r; r=/tmp/x; claude -p hi",
    "(declare -n r=GUARD_HOME); r=/tmp/x; claude -p hi",
    "declare -n r=GUARD_HOME_NOTES; r=/tmp/x; claude -p hi",
    "declare -n a=b; declare -n b=a; a=/tmp/x; claude -p hi",  # a loop (bash refuses it)
    "declare -n r=OTHER; r=/tmp/x; claude -p hi",
]


@pytest.mark.parametrize("command", NAMEREF_CHANGES)
def test_a_setting_changed_through_a_nameref_blocks_the_host(home_guard: Guard, fake_home: Path, command: str) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert (decision, "G443" in rules) == (BLOCK, True), (command, rules)


@pytest.mark.parametrize("command", NAMEREF_NO_CHANGE)
def test_a_nameref_gone_or_elsewhere_asks_what_the_host_asks(home_guard: Guard, fake_home: Path, command: str) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert (decision, rules & {"G443"}) == (REQUEST_CONFIRM, set()), (command, rules)


def test_a_setting_changed_through_a_nameref_alone_asks(home_guard: Guard, fake_home: Path) -> None:
    """``declare -n r=GUARD_HOME; r=/tmp/x`` with nothing after it asks, as ``GUARD_HOME=/tmp/x`` does."""
    for command in ("declare -n r=GUARD_HOME; r=/tmp/x", "GUARD_HOME=/tmp/x", "declare -n r=GUARD_HOME; unset r"):
        assert decide(home_guard, command, fake_home / "proj") == (REQUEST_CONFIRM, {"G444"}), command


def test_a_nameref_reads_its_targets_value(home_guard: Guard, fake_home: Path) -> None:
    """``declare -n r=HOME; rm -rf "$r"`` deletes the home (it was read as an unknown ``$r``: asked)."""
    for command in ('declare -n r=HOME; rm -rf "$r"', 'declare -n r=HOME; rm -rf "${r}/"'):
        decision, rules = decide(home_guard, command, fake_home / "proj")
        assert (decision, "G101" in rules) == (BLOCK, True), (command, rules)


def test_a_nameref_to_the_path_is_judged_as_the_path(home_guard: Guard, fake_home: Path) -> None:
    """``declare -n r=PATH; r=/tmp/evil:$PATH``: a temporary folder first on the PATH (G158), as ``PATH=…``."""
    decision, rules = decide(home_guard, "declare -n r=PATH; r=/tmp/evil:$PATH; ls", fake_home / "proj")
    assert "G158" in rules and decision != AUTO_ALLOW, rules


@pytest.mark.parametrize(
    ("command", "answer"),
    [
        ("declare -n r=GUARD_HOME; r=/tmp/x; claude -p hi", "deny"),
        ("declare -n r=GUARD_HOME; unset -n r; claude -p hi", "ask"),
    ],
)
def test_the_hook_answers_the_same(fake_home: Path, command: str, answer: str) -> None:
    decision, reason = hook_answer(fake_home, command)
    assert decision == answer, (command, reason)
