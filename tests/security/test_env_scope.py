"""Environment changes end with the child process that made them, as the shell's own state does.

Before: the variables and the working directory a subshell changed were put back when it ended, but
what it took out of the environment was not, so an agent host started after it was judged as if it
ran with guard's settings gone: ``(unset GUARD_HOME); claude``, ``bash -c 'unset GUARD_HOME'; claude``,
``unset GUARD_HOME & claude``, ``unset GUARD_HOME | claude``, ``echo $(unset GUARD_HOME); claude``,
``cat <(unset GUARD_HOME); claude``, ``echo 'unset GUARD_HOME' | bash; claude`` all blocked (G443).

After: one mechanism (``Scan.child``) saves the working directory, the variables and the unset
names together where a child process starts (a subshell, every pipeline stage but the last, a
background job, a command or process substitution, a nested ``bash -c``/script), and puts all
three back when it ends. Each of those now asks what its parts ask: ``unset GUARD_HOME`` for what
follows (G444) and ``claude`` (G182). The same holds for the folder: ``cd ~/.claude | rm
settings.json`` and ``cd ~/.claude & rm settings.json`` delete ``./settings.json`` (allowed).

Hits side by side: the host started inside the same scope (``(unset GUARD_HOME; claude)``,
``bash -c 'unset GUARD_HOME; claude'``), a brace group, ``&&``/``||``/``;``, ``if``/``while``,
a function, ``eval``, ``source``, an alias (the same shell), the last pipeline stage (zsh and
bash's lastpipe run it in the shell itself) and a tree guard could not read whole still block.
Driven through ``Guard.decide`` and ``guard hook claude-code`` in a subprocess with a fake HOME and
GUARD_HOME (every command is data, never run).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from guard.core import Guard
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM
from tests.security.conftest import decide, hook_answer

STILL_BLOCKED = {  # the host starts where the change is still in force -> the rule among the reasons
    "(unset GUARD_HOME; claude -p hi)": "G443",
    "bash -c 'unset GUARD_HOME; claude -p hi'": "G443",
    "{ unset GUARD_HOME; }; claude -p hi": "G443",
    "unset GUARD_HOME && claude -p hi": "G443",
    "unset GUARD_HOME || claude -p hi": "G443",
    "unset GUARD_HOME; claude -p hi": "G443",
    "unset GUARD_HOME; (claude -p hi)": "G443",
    "(unset GUARD_HOME; (claude -p hi))": "G443",
    "unset GUARD_HOME; bash -c 'claude -p hi'": "G443",
    "export GUARD_HOME=/tmp/x; claude -p hi": "G443",
    "env -u GUARD_HOME claude -p hi": "G443",
    "if true; then unset GUARD_HOME; fi; claude -p hi": "G443",
    "while true; do unset GUARD_HOME; break; done; claude -p hi": "G443",
    "f() { unset GUARD_HOME; }; f; claude -p hi": "G443",
    "eval 'unset GUARD_HOME'; claude -p hi": "G443",
    "source /dev/stdin <<< 'unset GUARD_HOME'; claude -p hi": "G443",
    "echo 'unset GUARD_HOME' > x.sh; source x.sh; claude -p hi": "G443",
    "alias u='unset GUARD_HOME'; u; claude -p hi": "G443",
    "true | unset GUARD_HOME; claude -p hi": "G443",  # the last stage: the shell itself in zsh
    "export HOME=/tmp/x; claude -p hi": "G443",
    "export CLAUDE_CONFIG_DIR=/tmp/c; claude -p hi": "G443",
    "export CODEX_HOME=/tmp/c; codex exec x": "G443",
    "cd ~/.claude; rm settings.json": "G156",
    "(cd ~/.claude; rm settings.json)": "G156",
    "{ cd ~/.claude; }; rm settings.json": "G156",
    "true | cd ~/.claude; rm settings.json": "G156",
}
SCOPED = [  # the change ends with its child process: what ``unset GUARD_HOME`` and ``claude`` ask apart
    "(unset GUARD_HOME); claude -p hi",
    "(unset GUARD_HOME) && claude -p hi",
    "( (unset GUARD_HOME); claude -p hi )",
    "bash -c 'unset GUARD_HOME'; claude -p hi",
    "sh -c 'unset GUARD_HOME'; claude -p hi",
    "unset GUARD_HOME & claude -p hi",
    "unset GUARD_HOME & wait; claude -p hi",
    "unset GUARD_HOME | claude -p hi",
    "unset GUARD_HOME | cat; claude -p hi",
    "echo $(unset GUARD_HOME); claude -p hi",
    "echo `unset GUARD_HOME`; claude -p hi",
    "x=$(unset GUARD_HOME); claude -p hi",
    "cat <(unset GUARD_HOME); claude -p hi",
    "f() ( unset GUARD_HOME ); f; claude -p hi",
    "echo 'unset GUARD_HOME' | bash; claude -p hi",
    "echo 'unset GUARD_HOME' > x.sh; bash x.sh; claude -p hi",
    "nohup bash -c 'unset GUARD_HOME' & claude -p hi",
]
OTHER_HOMES = [  # the hosts' own homes moved in a child process: ``claude`` alone (G182)
    "(export HOME=/tmp/x); claude -p hi",
    "(export CLAUDE_CONFIG_DIR=/tmp/c); claude -p hi",
    "(unset HOME); claude -p hi",
    "bash -c 'export CODEX_HOME=/tmp/c'; codex exec x",
    "(export GUARD_HOME=/tmp/x); claude -p hi",
]
FOLDER_SCOPED = [  # ``cd`` in a child process: ``rm`` runs in the project, on ``./settings.json``
    "(cd ~/.claude); rm settings.json",
    "bash -c 'cd ~/.claude'; rm settings.json",
    "cd ~/.claude & rm settings.json",
    "cd ~/.claude | rm settings.json",
    "echo $(cd ~/.claude); rm settings.json",
]


@pytest.mark.parametrize(("command", "rule"), STILL_BLOCKED.items())
def test_a_change_in_force_where_the_host_starts_still_blocks(
    home_guard: Guard, fake_home: Path, command: str, rule: str
) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert (decision, rule in rules) == (BLOCK, True), (command, rules)


@pytest.mark.parametrize("command", SCOPED)
def test_unsetting_in_a_child_process_asks_what_its_parts_ask(home_guard: Guard, fake_home: Path, command: str) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert decision == REQUEST_CONFIRM and "G444" in rules and "G443" not in rules, (command, rules)


@pytest.mark.parametrize("command", OTHER_HOMES)
def test_a_home_moved_in_a_child_process_does_not_move_the_hosts(
    home_guard: Guard, fake_home: Path, command: str
) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert decision == REQUEST_CONFIRM and "G443" not in rules, (command, rules)


@pytest.mark.parametrize("command", FOLDER_SCOPED)
def test_a_folder_changed_in_a_child_process_ends_with_it(home_guard: Guard, fake_home: Path, command: str) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert decision == AUTO_ALLOW and "G156" not in rules, (command, rules)


def test_an_unreadable_tree_keeps_the_change(home_guard: Guard, fake_home: Path) -> None:
    """Where the grammar failed, what looks like a subshell may be none: the stricter reading."""
    decision, rules = decide(home_guard, "(unset GUARD_HOME); claude -p hi; echo 'unterminated", fake_home / "proj")
    assert (decision, "G443" in rules) == (BLOCK, True), rules


@pytest.mark.parametrize(
    ("command", "answer"),
    [
        ("(unset GUARD_HOME); claude -p hi", "ask"),
        ("unset GUARD_HOME | claude -p hi", "ask"),
        ("(unset GUARD_HOME; claude -p hi)", "deny"),
        ("bash -c 'unset GUARD_HOME; claude -p hi'", "deny"),
        ("{ unset GUARD_HOME; }; claude -p hi", "deny"),
    ],
)
def test_the_hook_answers_the_same(fake_home: Path, command: str, answer: str) -> None:
    decision, reason = hook_answer(fake_home, command)
    assert decision == answer, (command, reason)
