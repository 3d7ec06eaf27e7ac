"""Blinding guard through spellings that reached its protected places but only asked (round 5).

Each spelling asked on main while its plain twin blocked; each now meets the same mechanism:

- an archive unpacked into a folder that holds a host's hook settings (``unzip -o x.zip -d
  ~/.claude``, ``tar -xf x.tar -C ~/.claude``, ``bsdtar -C``, ``7z x x.7z -o$HOME/.claude``, the
  same for ``~/.codex``, ``~/.gemini``, ``~/.cursor``, a project's ``.claude/``; ``python3 -m zipfile
  -e``, ``python3 -m tarfile -e``, ``shutil.unpack_archive``/``extractall``) was a folder created
  (G185, asked: the members' names are only known on disk) while the same into guard's workspace
  blocked. A member can be ``settings.json``: that file is written, as ``cp -r /tmp/x/.claude ~/``
  writes it: G156. A folder that holds no settings (``~/.claude/skills``, ``build/``) is created as before;
- an agent host started with guard's settings taken away (``env -u GUARD_HOME claude -p hi``,
  ``unset GUARD_HOME; claude -p hi``, ``unset GUARD_HOME && codex exec x``) or changed by interpreter
  code before it starts the host (``os.environ['GUARD_HOME'] = …``, ``del os.environ[…]``,
  ``os.environ.pop(…)``, ``subprocess.run([...], env={…})`` without guard's workspace) asked as an
  unknown command, while ``GUARD_HOME=/tmp/x claude -p hi`` blocked: G443. Unsetting one for what
  follows (``unset GUARD_HOME``, ``env -u GUARD_HOME pytest``) asks as setting one does: G444;
- git's pathspec magic hid the path it names: ``git checkout -- ':(top).claude/settings.json'``
  asked (G137) and ``git rm ':(top)…'`` was allowed, while ``git checkout -- .claude/settings.json``
  blocked. ``:(top)``, ``:/``, ``:(glob)``, ``:(literal)``, ``:(icase)`` and ``:(top,glob)`` are
  stripped to the path they name (from the working directory and from the project's top), a glob
  that can match a protected file names it: G156. An exclude (``:(exclude)x``, ``:!x``, ``:^x``)
  names nothing to write.

Near-misses keep their answers: unpacking into the project or a folder without settings, listing
an archive, ``env -u HOME ls``, ``env -i PATH=/usr/bin ls``, ``unset FOO; claude -p hi``, reading
``os.environ``, a stricter ``GUARD_HEADLESS=1``, excludes and pathspecs on other files. Driven through
``Guard.decide`` and ``guard hook claude-code`` in a subprocess with a fake HOME and GUARD_HOME
(every command is data, never run).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from guard.core import Guard
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM
from tests.security.conftest import decide, hook_answer

BLOCKED = {  # command (``~`` is the fake home, run in ``~/proj``) -> the rule that must be among the reasons
    # archives unpacked into a folder that holds a host's hook settings
    "unzip -o x.zip -d ~/.claude": "G156",
    "unzip x.zip -d ~/.claude/": "G156",
    "unzip -q -o x.zip -d $HOME/.codex": "G156",
    "unzip -o x.zip -d ~/.gemini": "G156",
    "unzip -o x.zip -d ~/.cursor": "G156",
    "unzip -o x.zip -d .claude": "G156",
    "unzip x.zip -d ~/.openclaw/extensions": "G156",
    "tar -xf x.tar -C ~/.claude": "G156",
    "tar xzf x.tgz -C ~/.codex": "G156",
    "tar -xf x.tar --directory=$HOME/.claude": "G156",
    "tar -x -f x.tar -C .claude/": "G156",
    "bsdtar -xf x.tar -C ~/.claude": "G156",
    "7z x x.7z -o$HOME/.claude": "G156",
    "7z x -y x.7z -o.gemini": "G156",
    "unrar x x.rar ~/.claude/": "G156",
    "cd ~/.claude && unzip -o /tmp/x.zip": "G156",
    "python3 -m zipfile -e x.zip ~/.claude": "G156",
    "python3 -m tarfile -e x.tar ~/.claude": "G156",
    "python3 -m tarfile -v -e x.tar .codex": "G156",
    "python3 -c \"import shutil, os; shutil.unpack_archive('x.zip', os.path.expanduser('~/.claude'))\"": "G156",
    "python3 -c \"import zipfile, os; zipfile.ZipFile('x.zip').extractall(os.path.expanduser('~/.claude'))\"": "G156",
    "python3 -c \"import tarfile; tarfile.open('x.tar').extractall(path='.claude')\"": "G156",
    # guard's settings taken away, or changed by interpreter code, for a nested agent
    "env -u GUARD_HOME claude -p hi": "G443",
    "env --unset=GUARD_HOME claude -p hi": "G443",
    "env -u GUARD_HEADLESS gemini -p hi": "G443",
    "env -i claude -p hi": "G443",
    "unset GUARD_HOME; claude -p hi": "G443",
    "unset GUARD_HOME && codex exec x": "G443",
    "unset -v GUARD_THRESHOLDS_AUTO_ALLOW; claude -p hi": "G443",
    "export GUARD_HOME=/tmp/x; unset GUARD_HOME; claude -p hi": "G443",
    "python3 -c \"import os; os.environ['GUARD_HOME']='/tmp/x'; os.system('claude -p hi')\"": "G443",
    "python3 -c \"import os; del os.environ['GUARD_HOME']; os.system('claude -p hi')\"": "G443",
    "python3 -c \"import os; os.environ.pop('GUARD_HOME'); os.system('claude -p hi')\"": "G443",
    "python3 -c \"import os; os.environ.pop('GUARD_HOME', None); os.system('claude -p hi')\"": "G443",
    "python3 -c \"import os; os.unsetenv('GUARD_HOME'); os.system('codex exec x')\"": "G443",
    "python3 -c \"import os; os.environ.update(GUARD_THRESHOLDS_AUTO_ALLOW='0'); os.system('claude -p hi')\"": "G443",
    "python3 -c \"import os; os.environ['GUARD_HOME']=os.getcwd()+'/g'; os.system('claude -p hi')\"": "G443",
    "python3 -c \"import os; os.environ['HOME']='/tmp/x'; os.system('claude -p hi')\"": "G443",
    "python3 -c \"import subprocess; subprocess.run(['claude','-p','hi'], env={'PATH': '/usr/bin'})\"": "G443",
    "python3 -c \"import subprocess, os; subprocess.run(['claude','-p','hi'], env={**os.environ, 'GUARD_HOME': '/x'})\"": (
        "G443"
    ),
    "python3 -c \"import subprocess, os; subprocess.run(['claude','-p','hi'], env=dict(os.environ, GUARD_HOME='/x'))\"": (
        "G443"
    ),
    # git's pathspec magic stripped to the path it names
    "git checkout -- ':(top).claude/settings.json'": "G156",
    "git checkout -- ':/.claude/settings.json'": "G156",
    "git checkout -- ':(glob).claude/*.json'": "G156",
    "git checkout -- ':(glob)**/settings.json'": "G156",
    "git checkout -- ':(literal).claude/settings.json'": "G156",
    "git checkout -- ':(icase).CLAUDE/Settings.JSON'": "G156",
    "git checkout -- ':(top,glob).claude/**'": "G156",
    "git checkout -- ':(top,icase).Guard.toml'": "G156",
    "git checkout -- '::.claude/settings.json'": "G156",
    "git checkout -- ':(attr:x).claude/settings.json'": "G156",
    "git checkout HEAD -- ':(top).codex/config.toml'": "G156",
    "git rm ':(top).claude/settings.json'": "G156",
    "git restore ':/.claude'": "G156",
    "git stash push -- ':(top).claude'": "G156",
    "cd src && git checkout -- ':(top).claude/settings.json'": "G156",
    "git checkout -- ':!src' ':(top).claude/settings.local.json'": "G156",
    "git checkout -- ':(glob)*/settings.json'": "G156",  # git's ``*`` matches a dot-folder
    "git checkout -- ':(glob)**/*.json'": "G156",
    "rm -f .*/settings.json": "G156",  # a globbed folder matches a host's settings folder, as a globbed name does
}
ASKED = {  # taking guard's settings away for what follows asks as setting them does
    "unset GUARD_HOME": "G444",
    "env -u GUARD_HOME python -m pytest": "G444",
}
ALLOWED = [  # ordinary unpacking, listing, reading the environment, other pathspecs
    "unzip x.zip",
    "unzip x.zip -d build/",
    "unzip -o x.zip -d vendor",
    "tar -xf x.tar",
    "tar -xzf x.tgz -C build",
    "unzip -l x.zip",
    "unzip -o -l x.zip",
    "tar -tf x.tar",
    "7z a out.7z src",
    "python3 -m zipfile -l x.zip",
    "python3 -m tarfile -e x.tar",
    "python3 -m zipfile -c out.zip src",
    "python3 -c \"import zipfile; zipfile.ZipFile('x.zip').extractall('build')\"",
    "python3 -c \"import tarfile; tarfile.open('x.tar').extractall()\"",
    "env -u HOME ls",
    "env -i PATH=/usr/bin ls",
    "env -u FOO ls",
    "unset FOO",
    "unset -f claude",
    "unset GUARD_LOG_LEVEL",
    "python3 -c \"import os; print(os.environ.get('GUARD_HOME'))\"",
    "python3 -c \"import os; os.environ['GUARD_HOME']='/tmp/x'; print(1)\"",
    "python3 -c \"import subprocess; subprocess.run(['ls'], env={'PATH': '/usr/bin'})\"",
    "git add ':(top).claude/settings.json'",
    "git diff -- ':(top).claude/settings.json'",
    "git log -- ':/.claude'",
    "git rm ':(glob)src/*.py'",
    "git rm --cached ':(top).claude/settings.json'",
    "rm -f */settings.json",  # the shell's ``*`` matches no dot-folder
]
KEEP_THEIR_RULE = {  # near-misses that asked before ask as before, for their own reason
    "tar -xf x.tar -C ~/.claude/skills": "G185",
    "unzip -o x.zip -d ~/.claude/commands": "G185",
    "unzip x.zip -d ~": "G185",
    "unzip x.zip -d ~/notes": "G185",
    "unset FOO; claude -p hi": "G182",
    "unset -f GUARD_HOME; claude -p hi": "G182",
    "unset GUARD_LOG_LEVEL; claude -p hi": "G182",
    "GUARD_HEADLESS=1 claude -p hi": "G182",
    "env -u HOME claude -p hi": "G182",
    "python3 -c \"import os; os.environ['FOO']='1'; os.system('claude -p hi')\"": "G182",
    "python3 -c \"import os; os.environ['GUARD_HEADLESS']='1'; os.system('claude -p hi')\"": "G182",
    "python3 -c \"import subprocess, os; subprocess.run(['claude','-p','hi'], env={**os.environ, 'FOO': '1'})\"": "G182",
    "python3 -c \"import os; os.environ['GUARD_HOME']='/tmp/x'\"; claude -p hi": "G182",  # the child's env is its own
    "git checkout -- ':(glob)src/*.py'": "G137",
    "git checkout -- ':(exclude).claude'": "G137",
    "git checkout -- ':!.claude' .": "G137",
    "git checkout -- ':^.claude/settings.json'": "G137",
    "git checkout -- ':/'": "G137",
    "git checkout -- ':(glob)**'": "G137",  # the whole tree, as ``git checkout -- .``
    "git checkout -- ':(glob)*.json'": "G137",  # json files at the top only: none of guard's
    "git restore ':(top)src'": "G137",
}
NEW_RULES = {"G156", "G443", "G444"}


@pytest.mark.parametrize(("command", "rule"), BLOCKED.items())
def test_each_spelling_meets_the_plain_spellings_rule(
    home_guard: Guard, fake_home: Path, command: str, rule: str
) -> None:
    (fake_home / "proj" / "src").mkdir(exist_ok=True)
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert (decision, rule in rules) == (BLOCK, True), (command, rules)


@pytest.mark.parametrize(("command", "rule"), ASKED.items())
def test_unsetting_guards_settings_for_what_follows_asks(
    home_guard: Guard, fake_home: Path, command: str, rule: str
) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert (decision, rule in rules) == (REQUEST_CONFIRM, True), (command, rules)


@pytest.mark.parametrize("command", ALLOWED)
def test_ordinary_unpacking_environment_and_pathspecs_stay_allowed(
    home_guard: Guard, fake_home: Path, command: str
) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert decision == AUTO_ALLOW and not rules & NEW_RULES, (command, rules)


@pytest.mark.parametrize(("command", "rule"), KEEP_THEIR_RULE.items())
def test_near_misses_keep_their_rule(home_guard: Guard, fake_home: Path, command: str, rule: str) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert decision == REQUEST_CONFIRM and rule in rules and not rules & NEW_RULES, (command, rules)


def test_an_archive_into_a_hosts_folder_names_the_settings_file(home_guard: Guard, fake_home: Path) -> None:
    """The reason says which file a member can replace, as a copy onto it would."""
    record = home_guard.decide(
        "bash", {"command": "tar -xf x.tar -C ~/.claude"}, session_id="t", save=False, cwd=str(fake_home / "proj")
    )
    assert any(r.rule_id == "G156" and "settings.json" in r.message for r in record.reasons), record.reasons


HOOK_DENIED = {
    "unzip -o x.zip -d ~/.claude": "G156",
    "tar -xf x.tar -C ~/.claude": "G156",
    "7z x x.7z -o$HOME/.claude": "G156",
    "python3 -m zipfile -e x.zip ~/.claude": "G156",
    "env -u GUARD_HOME claude -p hi": "G443",
    "unset GUARD_HOME; claude -p hi": "G443",
    "python3 -c \"import os; os.environ['GUARD_HOME']='/tmp/x'; os.system('claude -p hi')\"": "G443",
    "git checkout -- ':(top).claude/settings.json'": "G156",
    "git rm ':(top).claude/settings.json'": "G156",
}
HOOK_ANSWERS = {
    "unzip x.zip -d build/": "allow",
    "tar -tf x.tar": "allow",
    "tar -xf x.tar -C ~/.claude/skills": "ask",
    "env -u HOME ls": "allow",
    "unset GUARD_HOME": "ask",
    "unset FOO; claude -p hi": "ask",
    "git checkout -- ':(exclude).claude'": "ask",
}


@pytest.mark.parametrize(("command", "rule"), HOOK_DENIED.items())
def test_the_claude_code_hook_denies_each_spelling(tmp_path: Path, command: str, rule: str) -> None:
    decision, reason = hook_answer(tmp_path, command)
    assert decision == "deny" and rule in reason, (command, reason)


@pytest.mark.parametrize(("command", "answer"), HOOK_ANSWERS.items())
def test_the_claude_code_hook_keeps_the_near_misses(tmp_path: Path, command: str, answer: str) -> None:
    assert hook_answer(tmp_path, command)[0] == answer, command
