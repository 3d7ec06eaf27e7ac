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
assignment, and so is a ``for``/``select`` variable (``for GUARD_HOME in /tmp/x`` passed). A body never
called is also walked alone from where the script ended, when the bodies before it changed the shell;
the walk one after another is kept (it is one order they may be called in, and dropping it would allow
``f() { cd ~/.claude; }; g() { rm settings.json; }``).

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
    "declare -n r=GUARD_HOME; read r < /tmp/v; claude -p hi",
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


RUNTIME_VALUES = [  # guard's workspace given a value read at runtime before a host starts (G443)
    "read GUARD_HOME < /tmp/v; export GUARD_HOME; claude -p hi",
    "read GUARD_HOME < /tmp/v; claude -p hi",  # (exported already: the new value goes with it)
    "read -r GUARD_HOME; claude -p hi",
    'IFS= read -r GUARD_HOME <<< "$x"; claude -p hi',
    "read -r GUARD_HOME <<< /tmp/x; claude -p hi",  # a value guard knows
    "read a GUARD_HOME < /tmp/v; claude -p hi",
    "read -a GUARD_HOME < /tmp/v; claude -p hi",
    "mapfile -t GUARD_HOME < /tmp/v; claude -p hi",
    "readarray GUARD_HOME < /tmp/v; claude -p hi",
    "getopts a GUARD_HOME; claude -p hi",
    "printf -v GUARD_HOME '%s' /tmp/x; claude -p hi",
    "printf -v GUARD_HOME '%s' \"$x\"; claude -p hi",
    "read GUARD_HOOKS_HEADLESS < /tmp/v; claude -p hi",  # maybe not true any more
    "GUARD_HOME=$(cat /tmp/v) claude -p hi",  # the direct form, for comparison
]
RUNTIME_UNRELATED = [  # another variable, or REPLY: ``claude`` asks as it does alone
    "read x < /tmp/v; claude -p hi",
    "read < /tmp/v; claude -p hi",
    "read -r line <<< hello; claude -p hi",
    "mapfile -t lines < /tmp/v; claude -p hi",
    "getopts ab opt; claude -p hi",
    "printf -v x '%s' /tmp/x; claude -p hi",
    "(read GUARD_HOME < /tmp/v); claude -p hi",  # ends with the subshell: the read alone asks
]


@pytest.mark.parametrize("command", RUNTIME_VALUES)
def test_a_setting_given_a_runtime_value_blocks_the_host(home_guard: Guard, fake_home: Path, command: str) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert (decision, "G443" in rules) == (BLOCK, True), (command, rules)


@pytest.mark.parametrize("command", RUNTIME_UNRELATED)
def test_reading_another_variable_asks_what_the_host_asks(home_guard: Guard, fake_home: Path, command: str) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert (decision, rules & {"G443"}) == (REQUEST_CONFIRM, set()), (command, rules)


@pytest.mark.parametrize(
    "command", ["read GUARD_HOME < /tmp/v", "mapfile -t GUARD_HOME < /tmp/v", "printf -v GUARD_HOME '%s' /tmp/x"]
)
def test_a_setting_read_at_runtime_alone_asks(home_guard: Guard, fake_home: Path, command: str) -> None:
    """As ``GUARD_HOME=$(cat /tmp/v)`` alone: a guard started later in the shell reads another workspace."""
    assert decide(home_guard, command, fake_home / "proj") == (REQUEST_CONFIRM, {"G444"}), command


@pytest.mark.parametrize(
    ("command", "answer"),
    [
        ('read -r line < notes.txt; echo "$line"', AUTO_ALLOW),
        ("mapfile -t lines < notes.txt", AUTO_ALLOW),  # (was an unknown command: it asked)
        ("while getopts ab opt; do echo $opt; done", AUTO_ALLOW),
        ("mapfile -t x < ~/.ssh/id_rsa", REQUEST_CONFIRM),  # what it reads is still judged
    ],
)
def test_reading_lines_into_variables_is_ordinary(
    home_guard: Guard, fake_home: Path, command: str, answer: str
) -> None:
    assert decide(home_guard, command, fake_home / "proj")[0] == answer, command


def test_a_mapfile_callback_runs(home_guard: Guard, fake_home: Path) -> None:
    """``mapfile -C CALLBACK``: the callback is shell code the shell runs as it reads."""
    decision, rules = decide(home_guard, "mapfile -C 'rm -rf ~' -c 1 x < notes.txt", fake_home / "proj")
    assert (decision, "G101" in rules) == (BLOCK, True), rules


def test_a_variable_read_at_runtime_no_longer_holds_its_old_value(home_guard: Guard, fake_home: Path) -> None:
    """``x=/; read x < f; rm -rf $x``: ``x`` holds what is read (or nothing), not ``/``: a runtime path."""
    decision, rules = decide(home_guard, "x=/; read x < f; rm -rf $x", fake_home / "proj")
    assert decision == REQUEST_CONFIRM and "G101" not in rules, rules


LOOP_VARIABLES = [  # a ``for``/``select`` variable is set as any assignment; a nameref's names its target
    ("for GUARD_HOME in /tmp/x; do :; done; claude -p hi", BLOCK),
    ("declare -n r; for r in GUARD_HOME; do r=/tmp/x; done; claude -p hi", BLOCK),
    ("declare -n r; for r in OTHER GUARD_HOME; do r=/tmp/x; done; claude -p hi", BLOCK),
    ("declare -n r=GUARD_HOME; for r in /tmp/x; do :; done; claude -p hi", REQUEST_CONFIRM),  # r re-pointed
    ("declare -n r; for r in A B; do r=/tmp/x; done; claude -p hi", REQUEST_CONFIRM),
    ("for x in /tmp/x; do :; done; claude -p hi", REQUEST_CONFIRM),
]


@pytest.mark.parametrize(("command", "answer"), LOOP_VARIABLES)
def test_a_loop_variable_is_an_assignment(home_guard: Guard, fake_home: Path, command: str, answer: str) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert (decision, "G443" in rules) == (answer, answer == BLOCK), (command, rules)


def test_a_loop_over_guards_workspace_alone_asks(home_guard: Guard, fake_home: Path) -> None:
    """``for GUARD_HOME in /tmp/x; do :; done`` with nothing after it asks, as ``GUARD_HOME=/tmp/x`` (it passed)."""
    for command in ("for GUARD_HOME in /tmp/x; do :; done", "select GUARD_HOME in a b; do break; done"):
        assert decide(home_guard, command, fake_home / "proj") == (REQUEST_CONFIRM, {"G444"}), command


UNCALLED_HITS = [  # a body never called, judged from where the script ended and after the bodies before it
    'D=~/.claude; f() { D=/tmp/safe; }; g() { rm -rf "$D"; }',  # g alone deletes ~/.claude (was allowed)
    "D=~/.claude; f() { D=/tmp/safe; }; alias c='rm -rf $D'",
    "cd ~/.claude; f() { cd /tmp; }; g() { rm settings.json; }",
    "f() { cd ~/.claude; }; g() { rm settings.json; }",  # g after f: kept (the stricter reading)
]
UNCALLED_NEAR = [  # the same bodies where nothing of the host's is reached
    'D=build; f() { D=/tmp/safe; }; g() { rm -rf "$D"; }',
    "f() { cd /tmp; }; g() { rm settings.json; }",
    "g() { rm settings.json; }; f() { cd ~/.claude; }",  # f changes nothing g could see first
]


@pytest.mark.parametrize("command", UNCALLED_HITS)
def test_a_body_never_called_is_judged_alone_too(home_guard: Guard, fake_home: Path, command: str) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert (decision, "G156" in rules or "G101" in rules) == (BLOCK, True), (command, rules)


@pytest.mark.parametrize("command", UNCALLED_NEAR)
def test_a_body_never_called_that_reaches_nothing_passes(home_guard: Guard, fake_home: Path, command: str) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert decision == AUTO_ALLOW, (command, rules)


def test_a_body_alone_leaves_nothing_for_the_next(home_guard: Guard, fake_home: Path) -> None:
    """What a body changes when walked alone ends with it: ``h`` is judged after ``f`` and ``g`` in turn
    (``/tmp``) or alone (the project), never from the home where ``g`` alone went (``cd ..``)."""
    command = "f() { cd /tmp/a; }; g() { cd ..; }; h() { rm -rf .ssh; }"
    _, rules = decide(home_guard, command, fake_home / "proj")
    assert "G103" not in rules, rules  # (``cd ..; rm -rf .ssh`` from the project: G103, the home's keys)
    assert decide(home_guard, "cd ..; rm -rf .ssh", fake_home / "proj") == (BLOCK, {"G103"})


@pytest.mark.parametrize(
    ("command", "answer"),
    [
        ("declare -n r=GUARD_HOME; r=/tmp/x; claude -p hi", "deny"),
        ("declare -n r=GUARD_HOME; unset -n r; claude -p hi", "ask"),
        ("read GUARD_HOME < /tmp/v; export GUARD_HOME; claude -p hi", "deny"),
        ("mapfile -t GUARD_HOME < /tmp/v; claude -p hi", "deny"),
        ("read x < /tmp/v; claude -p hi", "ask"),
        ('D=~/.claude; f() { D=/tmp/safe; }; g() { rm -rf "$D"; }', "deny"),
        ('D=build; f() { D=/tmp/safe; }; g() { rm -rf "$D"; }', "allow"),
    ],
)
def test_the_hook_answers_the_same(fake_home: Path, command: str, answer: str) -> None:
    decision, reason = hook_answer(fake_home, command)
    assert decision == answer, (command, reason)
