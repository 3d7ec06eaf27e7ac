"""Issue 16 (static round 3) through the real CLI: ``guard check bash`` in a fake HOME and project.

Hits and near-misses for each mechanism: administrator rights never auto-allow (G430), interpreter
one-liners judged on folded values (G431 when unfoldable), mass in-project deletions (G432), the
``/dev/nul`` typo, data tools and production markers (G433, G434). Every command is data for guard;
nothing here runs it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import guard_check, guard_cli_env

CASES = [
    ("sudo ls", "request_confirm", "G430"),
    ("sudo cat /etc/hosts", "request_confirm", "G430"),
    ("sudo rm -rf /", "block", "G101"),
    ("sudo -k", "auto_allow", None),
    ("python3 -c \"x='rm -rf '; import os; os.system(x+'~')\"", "block", "G101"),
    ("perl -e 'use File::Path qw(remove_tree); remove_tree($ENV{HOME})'", "block", "G101"),
    ("node -e \"require('fs').rmSync(require('os').homedir(), {recursive: true})\"", "block", "G101"),
    ('python3 -c "import os, sys; os.system(sys.argv[1])" "$CMD"', "request_confirm", "G431"),
    # the words after the code are judged as what it runs (session 21): this one is ``rm -rf ~``
    ("python3 -c \"import os, sys; os.system(sys.argv[1])\" 'rm -rf ~'", "block", "G101"),
    ("node -e \"require('fs').rmSync('dist', {recursive: true, force: true})\"", "auto_allow", None),
    ("find . -name '*.py' -delete", "request_confirm", "G432"),
    ("rm src/*.py", "request_confirm", "G432"),
    ("find . -name '*.pyc' -delete", "auto_allow", None),
    ("rm src/app.py", "auto_allow", None),
    ("echo hi > /dev/nul", "request_confirm", "G123"),
    ("echo hi > /dev/sda", "block", "G120"),
    ("RAILS_ENV=production rails db:drop", "block", "G434"),
    ("rails db:drop RAILS_ENV=test", "request_confirm", "G163"),
    ("kubectl --context prod-eu delete pod web", "block", "G434"),
    ("kubectl --context dev delete pod web", "request_confirm", "G164"),
    ("rabbitmqctl purge_queue jobs", "request_confirm", "G433"),
]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("round3")
    home, proj = root / "home", root / "proj"
    (home / ".guard").mkdir(parents=True)
    (proj / "src").mkdir(parents=True)
    (proj / "src" / "app.py").write_text("print('hi')\n")
    return home, proj


@pytest.mark.parametrize(("command", "decision", "rule"), CASES, ids=[c[0][:40] for c in CASES])
def test_round3_cold_decision(world: tuple[Path, Path], command: str, decision: str, rule: str | None) -> None:
    home, proj = world
    env = guard_cli_env() | {"HOME": str(home), "GUARD_HOME": str(home / ".guard"), "GUARD_HOOKS_DAEMON": "off"}
    record = guard_check("bash", {"command": command}, env=env, cwd=proj)
    assert record["decision"] == decision, record
    if rule:
        assert rule in {r["id"] for r in record["reasons"]}, record["reasons"]
