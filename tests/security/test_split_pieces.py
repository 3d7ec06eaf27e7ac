"""``split`` and ``csplit``: ordinary work that asked as an unknown command (G182).

They read a file and write its pieces as PREFIX + a suffix (``part_aa`` …). Now the read is the
read it is (a credential store: G140) and the pieces are a write to ``PREFIX*SUFFIX`` judged by
where it lands: in the project or a temp folder it runs; a prefix and suffix that can make a
startup file (``~/.bas`` + ``h`` + ``rc``) are a startup file; ``--filter`` runs its command,
judged as itself.

Driven through ``Guard.decide`` and ``guard hook claude-code`` in a subprocess with a fake HOME
(the commands are data, never run).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from guard.core import Guard
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM
from tests.conftest import claude_bash_hook
from tests.security.conftest import decide

RUN = {
    "split -l 1000 big.csv part_": "G184",
    "split -d -l 10 big.csv part_": "G184",  # (-d takes no value: big.csv is the file)
    "split big.csv": "G184",
    "cat big.csv | split -l 5 - out/p_": "G184",
    "split -b 1M backup.tar /tmp/chunk_": "G186",
    "csplit -f sec_ doc.txt '/^#/' '{*}'": "G184",
    "csplit doc.txt 10": "G184",
    "split -1000 big.csv": "G184",  # the old spelling of -l 1000
}
ASKED = {
    "split -l 1 ~/.ssh/id_rsa /tmp/k_": "G140",  # a key read, and copied out in pieces
    "split -n 8 --additional-suffix=rc notes.txt ~/.bas": "G151",  # the 8th piece is ~/.bashrc
    "split -l 10 data.txt ~/other/part_": "G185",
    "split --evil big.csv part_": "G182",  # an option guard does not know may write or run anything
    "csplit --evil file 100": "G182",
    "csplit": "G182",  # no file and no pattern: not a form guard knows
}


@pytest.mark.parametrize(("command", "rule"), RUN.items())
def test_pieces_in_the_project_or_a_temp_folder_run(
    home_guard: Guard, fake_home: Path, command: str, rule: str
) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert decision == AUTO_ALLOW and rule in rules and "G182" not in rules, (command, rules)


@pytest.mark.parametrize(("command", "rule"), ASKED.items())
def test_what_the_pieces_read_or_make_is_judged(home_guard: Guard, fake_home: Path, command: str, rule: str) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert decision == REQUEST_CONFIRM and rule in rules, (command, rules)


def test_a_filter_command_is_judged_as_itself(home_guard: Guard, fake_home: Path) -> None:
    assert decide(home_guard, "split --filter='rm -rf ~' big.csv", fake_home / "proj") == (BLOCK, {"G101"})
    decision, rules = decide(home_guard, "split --filter='wc -l' -l 100 big.csv", fake_home / "proj")
    assert decision == AUTO_ALLOW, rules


def test_the_claude_code_hook_lets_split_run(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    out = claude_bash_hook(tmp_path, "split -l 1000 big.csv part_", tmp_path / "proj")
    assert out["permissionDecision"] == "allow", out
