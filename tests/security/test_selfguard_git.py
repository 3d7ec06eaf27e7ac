"""Switching the work tree to a commit that holds other hook settings asks (G445).

``git checkout BRANCH``, ``git switch``, ``git merge X``, ``git reset --hard X`` and ``git stash pop``
rewrite ``.claude/settings.json`` when that revision holds another version of it: a branch whose
settings say ``{"disableAllHooks": true}`` switches guard off for the project. They were allowed
(G189) whatever the revision held. Whether it does is read from the repository's objects when the
call is decided (``guard.static.facts.gitobjects``: loose objects and packs, deltas included; git is
never run by guard). Near-misses keep their answers: a branch with the same settings, a new branch
at HEAD, paths checked out (the pathspec rules' own), a revision expression guard does not read.

The repositories are built by the tests with git (a fake HOME, no system config); git's own
``rev-parse REV:PATH`` is the oracle for the reader. Every command judged is data, never run.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from guard.core import Guard
from guard.model import AUTO_ALLOW, REQUEST_CONFIRM
from guard.static.facts import gitobjects
from tests.conftest import claude_bash_hook
from tests.security.conftest import decide

SETTINGS = ".claude/settings.json"


def _git(repo: Path, *args: str) -> str:
    env = {
        "HOME": str(repo.parent / "git-home"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "PATH": os.environ["PATH"],
    }
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def make_repo(repo: Path) -> Path:
    """main: settings A; ``evil``: settings B; ``same``: settings A, other changes; ``local``: adds
    settings.local.json; a stash holding settings C; tag ``v1`` at main."""
    repo.mkdir(parents=True)
    (repo.parent / "git-home").mkdir(exist_ok=True)
    _git(repo, "init", "-q", "-b", "main")
    (repo / ".claude").mkdir()
    (repo / "src").mkdir()
    (repo / SETTINGS).write_text('{"hooks": {}}\n')
    (repo / "src" / "app.py").write_text("".join(f"line {i} of the program\n" for i in range(40)))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one")
    _git(repo, "tag", "v1")
    _git(repo, "checkout", "-qb", "evil")
    (repo / SETTINGS).write_text('{"disableAllHooks": true}\n')
    _git(repo, "commit", "-qam", "evil")
    _git(repo, "checkout", "-q", "main")
    _git(repo, "checkout", "-qb", "same")
    with (repo / "src" / "app.py").open("a") as f:
        f.write("one more line\n")
    _git(repo, "commit", "-qam", "same")
    _git(repo, "checkout", "-q", "main")
    _git(repo, "checkout", "-qb", "local")
    (repo / ".claude" / "settings.local.json").write_text("{}\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "local")
    _git(repo, "checkout", "-q", "main")
    (repo / SETTINGS).write_text('{"stashed": true}\n')
    _git(repo, "stash", "-q")
    return repo


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("git") / "repo")


ASKED = [
    "git checkout evil",
    "git switch evil",
    "git checkout -b new evil",  # (the start point)
    "git merge evil",
    "git reset --hard evil",
    "git stash pop",  # (the stash holds other settings)
    "git stash apply",
    "git checkout local",  # (settings.local.json added)
    "git checkout refs/heads/evil",
]
KEPT = {
    "git checkout same": AUTO_ALLOW,  # (the same settings)
    "git merge same": AUTO_ALLOW,
    "git checkout v1": AUTO_ALLOW,
    "git checkout -b new": AUTO_ALLOW,  # (a new branch at HEAD)
    "git checkout HEAD~1": AUTO_ALLOW,  # (an expression: not read)
    "git checkout nope": AUTO_ALLOW,  # (no such revision: git fails)
}


@pytest.mark.parametrize("command", ASKED)
def test_switching_to_other_hook_settings_asks(home_guard: Guard, repo: Path, command: str) -> None:
    decision, rules = decide(home_guard, command, repo)
    assert (decision, "G445" in rules) == (REQUEST_CONFIRM, True), (command, rules)


@pytest.mark.parametrize(("command", "answer"), KEPT.items())
def test_switching_to_the_same_settings_keeps_its_answer(
    home_guard: Guard, repo: Path, command: str, answer: str
) -> None:
    decision, rules = decide(home_guard, command, repo)
    assert decision == answer and "G445" not in rules, (command, rules)


def test_the_claude_code_hook_asks_before_a_branch_with_other_settings(tmp_path: Path) -> None:
    project = make_repo(tmp_path / "proj")
    out = claude_bash_hook(tmp_path, "git checkout evil", project)
    assert out["permissionDecision"] == "ask" and "G445" in out["permissionDecisionReason"], out
    assert claude_bash_hook(tmp_path, "git checkout same", project)["permissionDecision"] == "allow"


def _oracle(repo: Path, rev: str, path: str) -> str:
    """git's own answer: the blob id at REV:PATH, or "" when there is none."""
    try:
        return _git(repo, "rev-parse", "--verify", "-q", f"{rev}:{path}").strip()
    except subprocess.CalledProcessError:
        return ""


@pytest.mark.parametrize("packed", [False, True])
def test_the_reader_agrees_with_git_loose_and_packed(tmp_path: Path, packed: bool) -> None:
    repo = make_repo(tmp_path / "repo")
    for i in range(25):  # a history long enough for git to store trees and commits as deltas
        (repo / "src" / f"m{i}.py").write_text(f"x = {i}\n" * 50)
        if i % 5 == 0:
            (repo / SETTINGS).write_text(f'{{"round": {i}}}\n')
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", f"c{i}")
    _git(repo, "branch", "late")
    if packed:
        _git(repo, "gc", "-q", "--aggressive")
        assert not any(len(p.name) == 2 for p in (repo / ".git" / "objects").iterdir())  # (all in a pack)
    store = gitobjects._Store(str(repo / ".git"))
    try:
        for rev in ("main", "evil", "same", "local", "v1", "late"):
            commit = store.resolve(rev)
            assert commit == _git(repo, "rev-parse", rev).strip()
            for path in (SETTINGS, ".claude/settings.local.json", "src/app.py", "src/m3.py"):
                blob = store.blob_at(commit, path)
                assert blob.split(":")[-1] == _oracle(repo, rev, path), (rev, path)
    finally:
        store.close()


def test_a_worktree_reads_the_shared_objects(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    _git(repo, "worktree", "add", "-q", str(tmp_path / "wt"), "same")
    found = gitobjects.gitdir(str(tmp_path / "wt" / "src"))
    assert found is not None and gitobjects.changes(found, "evil", SETTINGS) is True
    assert gitobjects.changes(found, "main", SETTINGS) is False


def test_what_is_not_a_repository_or_not_read_is_none(tmp_path: Path) -> None:
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / ".git").write_text("not a gitdir line\n")
    assert gitobjects.gitdir(str(tmp_path / "odd")) is None
    repo = make_repo(tmp_path / "repo")
    (repo / ".git" / "refs" / "heads" / "broken").write_text("0" * 40 + "\n")
    assert gitobjects.changes(str(repo / ".git"), "broken", SETTINGS) is None  # (no such object)
    assert gitobjects.changes(str(repo / ".git"), "main@{1}", SETTINGS) is None
