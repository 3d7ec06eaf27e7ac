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

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from guard.core import Guard
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM
from tests.conftest import GUARD_CMD, guard_cli_env

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


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("home")
    (home / "proj").mkdir()
    old = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    yield home
    if old is None:
        del os.environ["HOME"]
    else:
        os.environ["HOME"] = old


@pytest.fixture(scope="module")
def guard_(home: Path) -> Iterator[Guard]:
    g = Guard(home / ".guard", {"system.health": 90, "memory.backend": "history"})
    yield g
    g.close()


def decide(g: Guard, home: Path, command: str) -> tuple[str, set[str]]:
    record = g.decide("bash", {"command": command}, session_id="t", save=False, cwd=str(home / "proj"))
    return record.decision, {r.rule_id for r in record.reasons}


@pytest.mark.parametrize(("command", "rule"), RUN.items())
def test_pieces_in_the_project_or_a_temp_folder_run(guard_: Guard, home: Path, command: str, rule: str) -> None:
    decision, rules = decide(guard_, home, command)
    assert decision == AUTO_ALLOW and rule in rules and "G182" not in rules, (command, rules)


@pytest.mark.parametrize(("command", "rule"), ASKED.items())
def test_what_the_pieces_read_or_make_is_judged(guard_: Guard, home: Path, command: str, rule: str) -> None:
    decision, rules = decide(guard_, home, command)
    assert decision == REQUEST_CONFIRM and rule in rules, (command, rules)


def test_a_filter_command_is_judged_as_itself(guard_: Guard, home: Path) -> None:
    assert decide(guard_, home, "split --filter='rm -rf ~' big.csv") == (BLOCK, {"G101"})
    decision, rules = decide(guard_, home, "split --filter='wc -l' -l 100 big.csv")
    assert decision == AUTO_ALLOW, rules


def test_the_claude_code_hook_lets_split_run(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    payload = {
        "session_id": "s1",
        "cwd": str(tmp_path / "proj"),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "split -l 1000 big.csv part_"},
        "tool_use_id": "toolu_1",
    }
    env = {**guard_cli_env(), "HOME": str(tmp_path), "GUARD_HOME": str(tmp_path / ".guard")}
    proc = subprocess.run(
        [*GUARD_CMD, "hook", "claude-code", "--workspace", str(tmp_path / ".guard"), "--no-daemon"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
    )
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow", proc.stdout
