"""Blinding guard through spellings round 5 left beside the ones it closed (round 6).

Each spelling asked or was allowed on main while its neighbour blocked; each now meets the neighbour's
mechanism:

- other unpackers into a folder that holds a host's hook settings (``cd ~/.claude && cpio -idm <
  x.cpio``, ``cpio -D ~/.claude``, ``find . | cpio -pdm ~/.claude``, ``pax -r`` there, ``pax -rw src
  ~/.claude``, ``jar xf`` / ``ar x`` there, ``jar --dir``, ``ar --output``) asked as unknown commands
  (cpio, pax) or were allowed as development tools (jar, ar), while ``tar -xf x.tar -C ~/.claude``
  blocked. They go through ``effects.extract`` now: a member can be ``settings.json`` (G156). cpio and
  pax keep a member's absolute name by default, as ``tar -P`` does: ``cpio -idm < x.cpio`` asks
  (G126, it asked as unknown before) unless ``--no-absolute-filenames`` / ``-s`` strips it;
- Node code that changes ``process.env`` before it starts a host (``process.env.GUARD_HOME = …``,
  ``delete process.env.GUARD_HOME``, ``Object.assign(process.env, …)``) or passes an ``env`` without
  guard's workspace (``{env: {PATH: …}}``, ``{...process.env, GUARD_HOME: …}``, a name bound to one)
  asked as an unknown command while the Python forms blocked: G443;
- Python's environment mapping held in a variable (``e = os.environ.copy(); e.pop('GUARD_HOME');
  subprocess.run([...], env=e)``, ``e = dict(os.environ); del e[…]``, ``e = {'PATH': …}``) asked while
  the same mapping written inline in ``env=`` blocked: G443;
- a plain git pathspec with wildcards (``git checkout -- '*.json'``, ``git restore -- '*settings*.json'``,
  ``git stash push -- '*settings*'``): git matches it against the whole path with ``*`` crossing ``/``,
  so it reaches ``.claude/settings.json``. It blocks (G156) when such a file is there, looked at when
  the call is decided; in a project without one it keeps its answer (G137: discards changes), so
  ordinary work is not refused for a file that does not exist.

Near-misses keep their answers: the same unpackers into the project or ``build/``, listings (``cpio -t``,
``pax -f``, ``jar tf``, ``ar t``), reading ``process.env``, a non-host program started with any env, a
host started with guard's settings untouched, pathspecs that cannot reach a settings file (``src/*.py``,
``*``, ``:(literal)*.json``), ``git rm --cached``. Driven through ``Guard.decide`` and ``guard hook
claude-code`` in a subprocess with a fake HOME and GUARD_HOME (every command is data, never run).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from guard.core import Guard
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM
from tests.security.conftest import decide, hook_answer

NODE = 'node -e "{}"'
PY = 'python3 -c "import os, subprocess; {}"'
BLOCKED = {  # command (``~`` is the fake home, run in ``~/proj``) -> the rule that must be among the reasons
    # other unpackers into a folder that holds a host's hook settings
    "cd ~/.claude && cpio -idm < /tmp/x.cpio": "G156",
    "cpio -idm -D ~/.claude < x.cpio": "G156",
    "cpio -i --directory=$HOME/.codex < x.cpio": "G156",
    "cpio -idm --no-absolute-filenames -D .claude < x.cpio": "G156",
    "find . | cpio -pdm ~/.claude": "G156",
    "cd ~/.claude && busybox cpio -idm < /tmp/x.cpio": "G156",
    "cd ~/.claude && pax -r -f /tmp/x.pax": "G156",
    "cd ~/.gemini && pax -rf /tmp/x.pax": "G156",
    "pax -rw src ~/.claude": "G156",
    "cd ~/.claude && jar xf /tmp/x.jar": "G156",
    "cd .claude && jar xf ../x.jar": "G156",
    "jar --extract --file x.jar --dir ~/.claude": "G156",
    "cd ~/.codex && ar x /tmp/x.a": "G156",
    "ar x --output ~/.claude lib.a": "G156",
    "busybox unzip -o x.zip -d ~/.claude": "G156",
    "busybox tar -xf x.tar -C ~/.claude": "G156",
    "gunzip -c x.tar.gz | tar -x -C ~/.claude": "G156",
    "zcat x.tar.gz | tar -xf - -C ~/.claude": "G156",
    # Node: process.env changed, or an env without guard's workspace, before a host starts
    NODE.format("process.env.GUARD_HOME='/tmp/x'; require('child_process').execSync('claude -p hi')"): "G443",
    NODE.format(
        "process.env.GUARD_HOME = '/tmp/x'; const cp = require('child_process'); cp.execSync('claude -p hi')"
    ): ("G443"),
    NODE.format("process.env['GUARD_HOME']='/tmp/x'; require('child_process').execSync('claude -p hi')"): "G443",
    NODE.format("process.env.GUARD_THRESHOLDS_AUTO_ALLOW='0'; require('child_process').execSync('claude -p hi')"): (
        "G443"
    ),
    NODE.format("delete process.env.GUARD_HOME; require('child_process').spawnSync('codex', ['exec', 'x'])"): "G443",
    NODE.format("delete process.env['GUARD_HOME']; require('child_process').spawnSync('codex', ['exec', 'x'])"): "G443",
    NODE.format("Object.assign(process.env, {GUARD_HOME: '/x'}); require('child_process').execSync('claude -p hi')"): (
        "G443"
    ),
    NODE.format("require('child_process').execSync('claude -p hi', {env: {PATH: process.env.PATH}})"): "G443",
    NODE.format("require('child_process').spawnSync('claude', ['-p', 'hi'], {env: {PATH: '/usr/bin'}})"): "G443",
    NODE.format("require('child_process').execSync('claude -p hi', {env: {...process.env, GUARD_HOME: '/x'}})"): "G443",
    NODE.format(
        "require('child_process').execSync('claude -p hi', {env: Object.assign({}, process.env, {GUARD_HOME: '/x'})})"
    ): "G443",
    NODE.format(
        "const {execSync} = require('child_process'); execSync('claude -p hi', {stdio: 'inherit', env: {HOME: '/h'}})"
    ): "G443",
    NODE.format(
        "const e = {...process.env}; delete e.GUARD_HOME; require('child_process').spawnSync('claude', ['-p'], {env: e})"
    ): "G443",
    NODE.format(
        "const e = {...process.env}; e.GUARD_HOME = '/x'; require('child_process').spawnSync('claude', ['-p'], {env: e})"
    ): "G443",
    # Python: the environment mapping held in a variable
    PY.format("e = os.environ.copy(); e.pop('GUARD_HOME'); subprocess.run(['claude', '-p', 'hi'], env=e)"): "G443",
    PY.format("e = dict(os.environ); del e['GUARD_HOME']; subprocess.Popen(['codex','exec','x'], env=e)"): "G443",
    PY.format("e = {'PATH': '/usr/bin'}; subprocess.run(['claude'], env=e)"): "G443",
    PY.format("e = os.environ.copy(); e['GUARD_HOME']='/tmp/x'; subprocess.run(['claude','-p','x'], env=e)"): "G443",
    PY.format("e = {**os.environ}; e.update(GUARD_HOME='/x'); subprocess.run(['claude','-p','x'], env=e)"): "G443",
    PY.format("e = dict(PATH='/usr/bin'); f = e.copy(); subprocess.run(['gemini', '-p', 'x'], env=f)"): "G443",
    PY.format("e = os.environ.copy(); e.clear(); subprocess.run(['claude', '-p', 'x'], env=e)"): "G443",
}
ALLOWED = [  # ordinary unpacking and listing, reading the environment, non-host programs
    "cpio -t < x.cpio",
    "cpio -it < x.cpio",
    "cpio -idm --no-absolute-filenames < x.cpio",
    "find . | cpio -pdm build",
    "find . | cpio -o > x.cpio",
    "cpio -oO ./archive.cpio",
    "pax -f x.pax",
    "pax -w -f out.pax src",
    "jar tf x.jar",
    "jar xf x.jar",
    "cd build && jar xf ../x.jar",
    "jar cf x.jar -C build .",
    "ar t x.a",
    "ar x x.a",
    "ar rcs ./lib.a a.o b.o",
    "busybox unzip x.zip -d build",
    "busybox tar -tf x.tar",
    "gunzip -c x.tar.gz | tar -x -C build",
    NODE.format("console.log(process.env.GUARD_HOME)"),
    NODE.format("process.env.GUARD_HOME='/tmp/x'; console.log(1)"),
    NODE.format("require('child_process').execSync('ls', {env: {PATH: '/usr/bin'}})"),
    NODE.format("require('child_process').execSync('npm test', {cwd: 'x', env: {...process.env, CI: '1'}})"),
    PY.format("e = os.environ.copy(); e.pop('GUARD_HOME'); subprocess.run(['ls'], env=e)"),
    PY.format("e = {'PATH': '/usr/bin'}; subprocess.run(['ls'], env=e)"),
    "git rm -r --cached '*.toml'",  # the index only: the file stays where the host reads it
    "git add '*settings*.json'",
    "git diff -- '*settings*.json'",
]
KEEP_THEIR_RULE = {  # near-misses that asked before ask as before, for their own reason
    "cpio -idm < x.cpio": "G126",  # (asked as unknown before) a member's absolute name is kept
    "cd build && cpio -idm < ../x.cpio": "G126",
    "pax -r -f x.pax": "G126",
    "cpio -O../../../../etc/cron.d/x": "G182",  # no mode: not read
    NODE.format("process.env.FOO='1'; require('child_process').execSync('claude -p hi')"): "G182",
    NODE.format("require('child_process').execSync('claude -p hi', {env: {...process.env, FOO: '1'}})"): "G182",
    NODE.format("require('child_process').execSync('claude -p hi', {env: Object.assign({}, process.env)})"): "G182",
    NODE.format(
        "const e = {...process.env}; e.FOO = '1'; require('child_process').spawnSync('claude', [], {env: e})"
    ): ("G182"),
    NODE.format("require('child_process').execSync('claude -p hi')"): "G182",
    PY.format("e = os.environ.copy(); e['FOO']='1'; subprocess.run(['claude','-p','x'], env=e)"): "G182",
    PY.format("subprocess.run(['claude','-p','x'], env=os.environ)"): "G182",
    PY.format("subprocess.run(['claude','-p','x'], env=os.environ.copy())"): "G182",
    PY.format("subprocess.run(['claude','-p','x'], env=dict(**os.environ))"): "G182",
}
NEW_RULES = {"G156", "G443"}

# git pathspecs with wildcards, in a project that holds a host's settings file and in one that does not
GIT_BLOCKED_THERE = [
    "git checkout -- '*.json'",
    "git checkout -- *.json",
    "git restore -- '*settings*.json'",
    "git restore '*settings*.json'",
    "git checkout -- '*/settings.json'",
    "git checkout -- '*settings.json'",
    "git checkout -- '**/*.json'",
    "git checkout HEAD -- '*.local.json'",
    "git stash push -- '*settings*'",
    "git clean -f -- '*.json'",
    "git rm -r '*.json'",
    "cd src && git checkout -- ':/*.json'",
]
GIT_KEPT_THERE = {  # cannot reach a host's settings by git's rules: as today
    "git checkout -- 'src/*.py'": "G137",
    "git checkout -- '*.py'": "G137",
    "git restore -- 'src/**/*.json'": "G137",
    "git checkout -- '*'": "G137",  # the whole tree, as ``git checkout -- .``
    "git checkout -- ':(literal)*.json'": "G137",
    "git checkout HEAD -- '*hooks.json'": "G137",  # no .codex/hooks.json there
}
GIT_KEPT_ELSEWHERE = {  # the same patterns where no host's settings file is: they only discard changes
    "git checkout -- '*.json'": "G137",
    "git restore -- '*settings*.json'": "G137",
    "git checkout -- '**/*.json'": "G137",
    "git clean -f -- '*.json'": "G137",
}


@pytest.fixture(scope="module")
def hooked_project(fake_home: Path) -> Path:
    """A project that tracks a host's settings (``.claude/settings.json`` is there)."""
    project = fake_home / "hooked"
    (project / ".claude").mkdir(parents=True, exist_ok=True)
    (project / "src").mkdir(exist_ok=True)
    (project / ".claude" / "settings.json").write_text("{}\n")
    (project / ".claude" / "settings.local.json").write_text("{}\n")
    return project


@pytest.mark.parametrize(("command", "rule"), BLOCKED.items())
def test_each_spelling_meets_its_neighbours_rule(home_guard: Guard, fake_home: Path, command: str, rule: str) -> None:
    (fake_home / "proj" / "src").mkdir(exist_ok=True)
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert (decision, rule in rules) == (BLOCK, True), (command, rules)


@pytest.mark.parametrize("command", ALLOWED)
def test_ordinary_unpacking_and_environments_stay_allowed(home_guard: Guard, fake_home: Path, command: str) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert decision == AUTO_ALLOW and not rules & NEW_RULES, (command, rules)


@pytest.mark.parametrize(("command", "rule"), KEEP_THEIR_RULE.items())
def test_near_misses_keep_their_rule(home_guard: Guard, fake_home: Path, command: str, rule: str) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert decision == REQUEST_CONFIRM and rule in rules and not rules & NEW_RULES, (command, rules)


@pytest.mark.parametrize("command", GIT_BLOCKED_THERE)
def test_a_git_wildcard_that_reaches_a_hosts_settings_file_blocks(
    home_guard: Guard, hooked_project: Path, command: str
) -> None:
    decision, rules = decide(home_guard, command, hooked_project)
    assert (decision, "G156" in rules) == (BLOCK, True), (command, rules)


@pytest.mark.parametrize(("command", "rule"), GIT_KEPT_THERE.items())
def test_a_git_wildcard_that_cannot_reach_one_keeps_its_rule(
    home_guard: Guard, hooked_project: Path, command: str, rule: str
) -> None:
    decision, rules = decide(home_guard, command, hooked_project)
    assert decision == REQUEST_CONFIRM and rule in rules and "G156" not in rules, (command, rules)


@pytest.mark.parametrize(("command", "rule"), GIT_KEPT_ELSEWHERE.items())
def test_a_git_wildcard_in_a_project_without_one_keeps_its_rule(
    home_guard: Guard, fake_home: Path, command: str, rule: str
) -> None:
    decision, rules = decide(home_guard, command, fake_home / "proj")
    assert decision == REQUEST_CONFIRM and rule in rules and "G156" not in rules, (command, rules)


def test_the_settings_file_is_looked_at_when_the_call_is_decided(home_guard: Guard, fake_home: Path) -> None:
    """The same call asks, then blocks once the file is there, then asks again: the disk is never cached."""
    project = fake_home / "later"
    (project / ".gemini").mkdir(parents=True, exist_ok=True)
    command = "git checkout -- '*.json'"
    assert decide(home_guard, command, project)[0] == REQUEST_CONFIRM
    (project / ".gemini" / "settings.json").write_text("{}\n")
    decision, rules = decide(home_guard, command, project)
    assert (decision, "G156" in rules) == (BLOCK, True), rules
    (project / ".gemini" / "settings.json").unlink()
    assert decide(home_guard, command, project)[0] == REQUEST_CONFIRM


HOOK_DENIED = {
    "cd ~/.claude && cpio -idm < /tmp/x.cpio": "G156",
    "cd ~/.claude && jar xf /tmp/x.jar": "G156",
    "cd ~/.claude && pax -r -f /tmp/x.pax": "G156",
    NODE.format("process.env.GUARD_HOME='/tmp/x'; require('child_process').execSync('claude -p hi')"): "G443",
    NODE.format("require('child_process').execSync('claude -p hi', {env: {PATH: process.env.PATH}})"): "G443",
    PY.format("e = os.environ.copy(); e.pop('GUARD_HOME'); subprocess.run(['claude', '-p', 'hi'], env=e)"): "G443",
    "git checkout -- '*.json'": "G156",  # (the project holds .claude/settings.json)
}
HOOK_ANSWERS = {
    "cpio -t < x.cpio": "allow",
    "jar xf x.jar": "allow",
    "cpio -idm < x.cpio": "ask",
    NODE.format("console.log(process.env.GUARD_HOME)"): "allow",
    PY.format("e = os.environ.copy(); e['FOO']='1'; subprocess.run(['claude','-p','x'], env=e)"): "ask",
    "git checkout -- 'src/*.py'": "ask",
}


@pytest.mark.parametrize(("command", "rule"), HOOK_DENIED.items())
def test_the_claude_code_hook_denies_each_spelling(tmp_path: Path, command: str, rule: str) -> None:
    (tmp_path / "proj" / ".claude").mkdir(parents=True)
    (tmp_path / "proj" / ".claude" / "settings.json").write_text("{}\n")
    decision, reason = hook_answer(tmp_path, command)
    assert decision == "deny" and rule in reason, (command, reason)


@pytest.mark.parametrize(("command", "answer"), HOOK_ANSWERS.items())
def test_the_claude_code_hook_keeps_the_near_misses(tmp_path: Path, command: str, answer: str) -> None:
    assert hook_answer(tmp_path, command)[0] == answer, command


def test_a_git_wildcard_in_the_hook_without_a_settings_file_asks(tmp_path: Path) -> None:
    assert hook_answer(tmp_path, "git checkout -- '*.json'")[0] == "ask"
