"""Blinding guard through spellings round 6 left beside the ones it closed (round 7).

Each spelling asked or was allowed on main while its neighbour blocked; each now meets the neighbour's
mechanism:

- Node code that holds ``process.env`` under another name before it starts a host (``const e =
  process.env; delete e.GUARD_HOME``, ``const {env} = process; env.GUARD_HOME = …``, ``const {env: x}
  = process; Object.assign(x, …)``, ``e['GUARD_HOME'] = …``) asked (G182) while ``delete
  process.env.GUARD_HOME`` blocked: the alias is the code's own environment, read as ``process.env``
  (G443);
- an archive unpacked in the project (``tar -xf x.tar``, allowed: G184) or into the home (``tar -xf x.tar
  -C ~``, ``unzip x.zip -d ~``, asked: G185) whatever it held. When the archive is on disk its members'
  names are read when the call is decided (zip's central directory, a tar's headers, plain or
  compressed, bounded): one that lands on a protected file (``.claude/settings.json``,
  ``.claude/settings.local.json``, ``~/.claude/settings.json``, guard's workspace) blocks (G156), with
  ``-C``/``-d``, ``--strip-components`` and ``-P`` followed.

Near-misses keep their answers: reading an alias, an alias changed before a non-host program starts, a
host started with guard's variables untouched, an alias assigned something else before it is changed;
archives of ordinary members (``src/app.py``, ``claude/settings.json`` without the dot,
``.claude/other.json``), a member the strip cuts away, ``unzip -j``, an archive that is not there or
not an archive.
Driven through ``Guard.decide`` and ``guard hook claude-code`` in a subprocess with a fake HOME and
GUARD_HOME (every command is data, never run).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from guard.core import Guard
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM
from tests.security.archive_files import tar, zip_of
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


# archives made by the tests (tarfile/zipfile, never tar or unzip run) in the project ``~/proj``


def make_archives(proj: Path, home: Path) -> None:
    """The archives the cases below unpack, in ``proj``."""
    (proj / "src").mkdir(exist_ok=True)
    tar(proj / "hooks.tar", ["src/app.py", ".claude/settings.json"])
    tar(proj / "local.tgz", ["pkg/.claude/settings.local.json"], "w:gz")
    tar(proj / "nested.tar.bz2", ["a/b/.claude/settings.json"], "w:bz2")
    tar(proj / "home.tar.xz", [".claude/settings.json"], "w:xz")
    tar(proj / "abs.tar", [str(home / ".claude" / "settings.json")])
    tar(proj / "guard.tar", [".guard/config.toml"])
    tar(proj / "plain.tar", ["src/app.py", "claude/settings.json", ".claude/other.json", "README.md"])
    zip_of(proj / "hooks.zip", ["src/app.py", ".claude/settings.json"])
    zip_of(proj / "plain.zip", ["src/app.py", "claude/settings.json"])
    (proj / "fake.tar").write_text("not an archive\n")


@pytest.fixture(scope="module")
def archives(fake_home: Path) -> Path:
    make_archives(fake_home / "proj", fake_home)
    return fake_home / "proj"


ARCHIVE_BLOCKED = [
    "tar -xf hooks.tar",
    "tar xf hooks.tar",
    "tar -xzf local.tgz",
    "tar -xzf local.tgz --strip-components=1",  # (still .claude/settings.local.json, in the project)
    "tar -xjf nested.tar.bz2 --strip-components 2",
    "tar -xf home.tar.xz -C ~",
    "tar -xf hooks.tar -C $HOME",
    "tar -xPf abs.tar",
    "tar -xf guard.tar -C ~",
    "unzip hooks.zip",
    "unzip -o hooks.zip -d ~",
    "cd src && tar -xf ../hooks.tar -C ..",
    "tar -xf abs.tar -C build",  # (no -P: build/home/…/.claude/settings.json, a project's settings by name)
]
ARCHIVE_KEPT = {  # ordinary members, or names that land elsewhere: today's answer
    "tar -xf plain.tar": AUTO_ALLOW,
    "tar -xzf local.tgz --strip-components=3": AUTO_ALLOW,  # (``settings.local.json`` alone, in the project)
    "unzip plain.zip": AUTO_ALLOW,
    "unzip -j hooks.zip": AUTO_ALLOW,  # (folders junked: a bare settings.json in the project)
    "tar -xf missing.tar": AUTO_ALLOW,
    "tar -xf fake.tar": AUTO_ALLOW,
    "tar -xf plain.tar -C ~": REQUEST_CONFIRM,
    "unzip plain.zip -d ~": REQUEST_CONFIRM,
}


@pytest.mark.parametrize("command", ARCHIVE_BLOCKED)
def test_an_archive_whose_member_lands_on_a_protected_file_blocks(
    home_guard: Guard, archives: Path, command: str
) -> None:
    decision, rules = decide(home_guard, command, archives)
    assert (decision, "G156" in rules) == (BLOCK, True), (command, rules)


@pytest.mark.parametrize(("command", "answer"), ARCHIVE_KEPT.items())
def test_an_archive_of_ordinary_members_keeps_its_answer(
    home_guard: Guard, archives: Path, command: str, answer: str
) -> None:
    decision, rules = decide(home_guard, command, archives)
    assert decision == answer and "G156" not in rules, (command, rules)


def test_the_archive_is_read_again_when_it_changes(home_guard: Guard, fake_home: Path) -> None:
    """Names are cached by size and mtime: the same call allows, blocks once the archive holds a
    settings file, then allows again."""
    proj = fake_home / "changing"
    proj.mkdir(exist_ok=True)
    tar(proj / "x.tar", ["src/app.py"])
    assert decide(home_guard, "tar -xf x.tar", proj)[0] == AUTO_ALLOW
    tar(proj / "x.tar", ["src/app.py", ".claude/settings.json"])
    os.utime(proj / "x.tar", ns=(1, 1))
    assert decide(home_guard, "tar -xf x.tar", proj)[0] == BLOCK
    tar(proj / "x.tar", ["src/app.py"])
    assert decide(home_guard, "tar -xf x.tar", proj)[0] == AUTO_ALLOW


@pytest.mark.parametrize(("command", "answer"), [("tar -xf hooks.tar", "deny"), ("unzip hooks.zip -d ~", "deny")])
def test_the_claude_code_hook_denies_an_archive_holding_a_settings_file(
    tmp_path: Path, command: str, answer: str
) -> None:
    (tmp_path / "proj").mkdir()
    make_archives(tmp_path / "proj", tmp_path)
    decision, reason = hook_answer(tmp_path, command)
    assert decision == answer and "G156" in reason, (command, reason)


@pytest.mark.parametrize(("command", "answer"), [("tar -xf plain.tar", "allow"), ("unzip plain.zip -d ~", "ask")])
def test_the_claude_code_hook_keeps_ordinary_archives(tmp_path: Path, command: str, answer: str) -> None:
    (tmp_path / "proj").mkdir()
    make_archives(tmp_path / "proj", tmp_path)
    assert hook_answer(tmp_path, command)[0] == answer, command
