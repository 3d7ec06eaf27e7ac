"""``~-`` is bash's ``$OLDPWD``, the folder before the last ``cd``: not a project folder named ``~-``.

``cd /etc && cd /proj && rm -rf ~-`` deletes ``/etc``. Before, guard read ``~-`` as ``./~-`` and
asked as a delete inside the project (G107, a medium rule the person's approvals could teach to run).
Now a ``cd`` in the call sets it, and without one it is a runtime value. All commands are data."""

from __future__ import annotations

from pathlib import Path

import pytest

from guard.core import Guard
from tests.conftest import claude_bash_hook
from tests.security.conftest import decide

ASK, ALLOW, BLOCK = "request_confirm", "auto_allow", "block"


@pytest.mark.parametrize(
    ("command", "decision", "rule"),
    [
        ("cd /etc && cd /home/u/proj && rm -rf ~-", BLOCK, "G102"),  # the folder the first cd left
        ("cd /etc && cd /home/u/proj && rm -rf ~-/ssh", BLOCK, "G102"),
        ("rm -rf ~-", ASK, "G106"),  # no cd in the call: whatever the shell's last folder was
        ("rm -rf ~-/build", ASK, "G106"),
        ("OLDPWD=/ rm -rf ~-", ASK, "G106"),  # a prefix assignment is rm's environment, not the shell's
        ("cd /etc && cd /home/u/proj && cd - && rm -rf ./*", BLOCK, "G102"),  # cd - goes back to /etc
    ],
)
def test_the_previous_folder_is_judged_as_itself(module_guard: Guard, command: str, decision: str, rule: str) -> None:
    got, rules = decide(module_guard, command)
    assert got == decision and rule in rules and "G107" not in rules


@pytest.mark.parametrize(
    ("command", "decision"),
    [
        ("cd /tmp/x && cd .. && rm -rf ~-", ALLOW),  # the folder left was scratch
        ("cd src && ls ~-", ALLOW),
        ("cd build && cd - && rm -rf build/out", ALLOW),  # back in the project
        ("cd /etc && cd - && rm -rf build/out", ALLOW),  # cd - from /etc: the project again
        ("rm -rf '~-'", ASK),  # quoted: a folder named ~- here (G107)
    ],
)
def test_near_misses(module_guard: Guard, command: str, decision: str) -> None:
    assert decide(module_guard, command)[0] == decision


def test_the_claude_code_hook_blocks_deleting_the_previous_system_folder(fake_home: Path) -> None:
    out = claude_bash_hook(fake_home, f"cd /etc && cd {fake_home / 'proj'} && rm -rf ~-", cwd=fake_home / "proj")
    assert out["permissionDecision"] == "deny"
