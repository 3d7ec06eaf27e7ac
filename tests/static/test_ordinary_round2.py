"""Ordinary work is not nagged, round 2 (session 26): a quoted ``~`` is a folder named ``~``, a copy
into a folder that holds guard's workspace lands beside it, and a few everyday commands guard
asked about (``ssh -V``, ``bundle install``, ``docker cp`` out of a container, ``tool --version``),
each beside the near misses that must still ask or block.

Calls go through ``Guard.decide`` on a Guard whose workspace is in a scratch HOME, and a sample
through ``guard hook claude-code`` in a subprocess with that HOME and GUARD_HOME. Commands are
data: nothing here runs them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from guard.core import Guard
from tests.conftest import claude_bash_hook, guard_check, guard_cli_env, home_at


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A scratch HOME with a project in it (``proj``, with a Gemfile and a composer.json)."""
    home = tmp_path_factory.mktemp("home")
    project = home / "proj"
    (project / "src").mkdir(parents=True)
    (project / "Gemfile").write_text('source "https://rubygems.org"\ngem "rails"\n')
    (project / "composer.json").write_text('{"require": {"laravel/framework": "^10"}}')
    with home_at(home):
        yield home


@pytest.fixture(scope="module")
def guard(home: Path) -> Iterator[Guard]:
    """guard's workspace is ``HOME/.guard``, so every folder above HOME holds guard's files."""
    g = Guard(home / ".guard", {"system.health": 90, "memory.backend": "history"})
    yield g
    g.close()


def decide(g: Guard, home: Path, command: str) -> tuple[str, list[str]]:
    record = g.decide("bash", {"command": command}, session_id="t", save=False, cwd=str(home / "proj"))
    return record.decision, [r.rule_id for r in record.reasons]


# -- a quoted tilde ----------------------------------------------------------------------
class TestAQuotedTildeIsAFolderHere:
    @pytest.mark.parametrize(
        "command",
        [
            "mkdir -p '~'",
            'touch "~/x"',
            "echo notes > '~/notes.txt'",
            "mv '~' ./old-tilde",
            "cp -r src '~/backup'",
            "mkdir \\~",
            "mkdir -p ''~/out",
        ],
    )
    def test_a_write_to_a_quoted_tilde_is_a_write_inside_the_project(
        self, guard: Guard, home: Path, command: str
    ) -> None:
        """bash leaves a quoted or escaped ``~`` alone: the command makes ``./~``, in the project."""
        assert decide(guard, home, command) == ("auto_allow", ["G184"])

    @pytest.mark.parametrize("command", ["rm -rf '~'", 'rm -r "~"', "rm -rf \\~", "rm -r './~'", "cd '~' && rm -rf ."])
    def test_deleting_a_quoted_tilde_is_judged_as_a_folder_of_the_project(
        self, guard: Guard, home: Path, command: str
    ) -> None:
        """``rm -rf '~'`` deletes the folder ``./~``: the same answer as any folder of the project."""
        assert decide(guard, home, command) == decide(guard, home, "rm -rf ./mydir") == ("request_confirm", ["G107"])

    @pytest.mark.parametrize(
        "command",
        [
            "rm -rf ~",
            "rm -rf ~/",
            'rm -rf "$HOME"',
            'rm -rf "${HOME}"',
            "rm -rf $HOME",
            'd=~; rm -rf "$d"',
            "rm -rf {~,build}",
            "rm -rf ~'/'",
            "cd ~ && rm -rf .",
            "mkdir -p '~' && pwsh -c 'Remove-Item ~ -Recurse -Force'",
            "time (rm -rf ~)",
            "time { rm -rf ~; }",
        ],
    )
    def test_the_home_itself_still_blocks(self, guard: Guard, home: Path, command: str) -> None:
        """An unquoted ``~``, ``$HOME``, a variable set to ``~``, braces (expanded before the tilde) and
        PowerShell's ``~`` are the home, whatever a quoted ``~`` elsewhere in the command is; a group
        timed with bash's ``time`` keyword is what runs (``time { rm -rf ~; }`` only asked before)."""
        decision, rules = decide(guard, home, command)
        assert decision == "block" and "G101" in rules

    @pytest.mark.parametrize(
        ("command", "rule"),
        [
            ("echo x > ~/.bashrc", "G151"),
            ("ls '~/.bashrc'; dd if=/dev/zero of=~/.bashrc", "G151"),
            ("dd if=/dev/zero of=~/.bashrc", "G151"),
            ("mkdir -p ~/x", "G185"),
            ("touch ~/x", "G185"),
            ('cat "~/.ssh/id_rsa"', "G140"),
        ],
    )
    def test_home_files_and_keys_still_ask(self, guard: Guard, home: Path, command: str, rule: str) -> None:
        """``of=~/x`` is an assignment-shaped word, whose tilde bash expands; a key is a key by its name."""
        decision, rules = decide(guard, home, command)
        assert decision == "request_confirm" and rule in rules


class TestAQuotedTildeLinkIsFollowed:
    @pytest.mark.parametrize("command", ["echo x > '~/notes.txt'", "rm -rf '~/'", 'touch "~/.fusion-decisions.jsonl"'])
    def test_a_folder_named_tilde_that_links_to_guards_workspace_blocks(self, tmp_path: Path, command: str) -> None:
        """``./~`` is a folder of the project, so guard looks at it on disk like any other: a link
        there to guard's workspace is guard's workspace (G415)."""
        home, project = tmp_path / "home", tmp_path / "proj"
        (home / ".guard").mkdir(parents=True)
        project.mkdir()
        (project / "~").symlink_to(home / ".guard")
        env = {**guard_cli_env(), "HOME": str(home), "GUARD_HOME": str(home / ".guard")}
        record = guard_check("bash", {"command": command}, env=env, cwd=project)
        assert record["decision"] == "block" and "G415" in {r["id"] for r in record["reasons"]}


# -- copies into a folder above guard's workspace ---------------------------------------
class TestACopyIntoAFolderThatHoldsGuard:
    @pytest.mark.parametrize(
        "command", ["cp dist/app.tar.gz /tmp/", "cp dist/app.tar.gz /tmp", "mv out.txt /tmp/", "cp a.txt b.txt /tmp/"]
    )
    def test_a_file_copied_into_tmp_lands_beside_guard(self, guard: Guard, home: Path, command: str) -> None:
        """guard's workspace is below /tmp here: ``cp x /tmp/`` writes /tmp/x, temporary space, not guard."""
        assert str(home).startswith("/tmp/"), "the layout this test is about"
        assert decide(guard, home, command) == ("auto_allow", ["G186"])

    @pytest.mark.parametrize(
        "command",
        [
            "cp -rT dist /tmp",
            "cp -r . /tmp/",
            "cp * /tmp/",
            "cp x {home}/.guard/",
            "cp guard.toml {home}/.guard/guard.toml",
        ],
    )
    def test_replacing_or_merging_into_guards_folders_still_blocks(
        self, guard: Guard, home: Path, command: str
    ) -> None:
        """``-T`` replaces the folder, ``.`` and ``*`` merge what they hold into it: guard's files may go."""
        assert decide(guard, home, command.format(home=home)) == ("block", ["G156"])


# -- everyday commands -------------------------------------------------------------------
class TestEverydayCommands:
    @pytest.mark.parametrize(
        ("command", "rule"),
        [
            ("ssh -V", "G180"),
            ("bundle install", "G450"),
            ("bundle", "G450"),
            ("bundle install --jobs 4", "G450"),
            ("composer install", "G450"),
            ("composer install --no-dev --prefer-dist", "G450"),
            ("docker cp web:/app/log.txt .", "G184"),
            ("fzf --version", "G180"),
            ("ansible-lint --help", "G180"),
            ("git push origin HEAD:feature/x", "G452"),
            ("git push -u origin HEAD:refs/heads/feature/login", "G452"),
            ("dos2unix scripts/build.sh", "G184"),
            ("unix2dos -n README.md README.txt", "G184"),
            ("dos2unix -i src/app.py", "G180"),
            ("locate setup.py", "G180"),
            ("ansible-playbook --syntax-check site.yml", "G181"),
            ("ansible-playbook -i inventory --list-hosts site.yml", "G181"),
            ("aws --version", "G180"),
            ("gcloud --version", "G180"),
            ("az --help", "G180"),
            ("time (npm run build)", "G181"),
            ("time { npm test; }", "G181"),
            ("ls && time -p (cd src && make)", "G181"),
            ("git lfs ls-files", "G180"),
            ("git lfs status", "G180"),
            ("git lfs pull", "G401"),
            ("git lfs fetch origin", "G401"),
            ("ssh-keygen -l -f ~/.ssh/id_ed25519.pub", "G180"),
            ("ssh-keygen -F github.com", "G180"),
            ("apt-cache search libssl", "G180"),
            ("mix deps.get", "G450"),
            ("dotnet restore", "G450"),
            ("swift package resolve", "G450"),
            ("fg", "G180"),
            ("bg %1", "G180"),
            ("disown -h %1", "G180"),
            ("brew services list", "G180"),
        ],
    )
    def test_ordinary_commands_run(self, guard: Guard, home: Path, command: str, rule: str) -> None:
        """A version, the project's declared gems or packages, a log copied out of a container, the
        checked-out commit pushed to a named feature branch, line endings of a project file, a file
        name search, a playbook only parsed or listed."""
        assert decide(guard, home, command) == ("auto_allow", [rule])

    @pytest.mark.parametrize(
        ("command", "rule"),
        [
            ("ssh -v build-host", "G149"),
            ("ssh build-host -V", "G149"),
            ("gem install rails", "G183"),
            ("bundle add rails", "G183"),
            ("bundle install --path /opt/gems", "G183"),
            ("composer require laravel/framework", "G183"),
            ("docker cp ./.env web:/app/.env", "G188"),
            ("docker cp web:/app/out -", "G188"),
            ("docker cp web:/app/rc ~/.bashrc", "G151"),
            ("fzf --version --bind x", "G182"),
            ("fzf", "G182"),
            ("git push origin HEAD:main", "G145"),
            ("git push origin HEAD", "G145"),
            ("git push origin HEAD~1:feature/x", "G145"),
            ("git push origin HEAD:refs/tags/v1", "G145"),
            ("git push origin feature:refs/tags/v1", "G145"),
            ("dos2unix ~/.bashrc", "G151"),
            ("dos2unix -n notes.txt ~/.profile", "G151"),
            ("dos2unix /etc/hosts", "G123"),
            ("ansible-playbook site.yml", "G188"),
            ("ansible-playbook --check site.yml", "G188"),
            ("aws --version --profile prod", "G188"),
            ("gcloud auth print-access-token", "G142"),
            ("git lfs pull https://lfs.example.net/repo", "G146"),
            ("git lfs install", "G146"),
            ("git lfs push origin main", "G146"),
            ("ssh-keygen -t ed25519 -f ~/.ssh/id_new", "G182"),
            ("ssh-keygen -R github.com", "G182"),
            ("ssh-keygen -F github.com -H", "G182"),
            ("ssh-keygen -y -f ~/.ssh/id_rsa", "G182"),
            ("mix deps.update --all", "G183"),
            ("mix archive.install hex phx_new", "G183"),
            ("dotnet add package Newtonsoft.Json", "G183"),
            ("dotnet restore --source https://nuget.example.net/v3/index.json", "G183"),
            ("swift package update", "G183"),
            ("brew services start postgresql", "G179"),
            ("kill %1", "G178"),
        ],
    )
    def test_their_risky_neighbours_still_ask(self, guard: Guard, home: Path, command: str, rule: str) -> None:
        """A login, a new package, a file sent into a container, an unknown program doing more than
        naming itself, a push to a shared branch or of a tag, line endings of a file outside the
        project, a playbook that runs (``--check`` runs it against the hosts too): still asked."""
        decision, rules = decide(guard, home, command)
        assert decision == "request_confirm" and rule in rules


# -- through the host hook ---------------------------------------------------------------
class TestThroughTheHook:
    @pytest.mark.parametrize(
        ("command", "expected"),
        [
            ("mkdir -p '~'", "allow"),
            ("rm -rf ~", "deny"),
            ("rm -rf '~'", "ask"),
            ("cp dist/app.tar.gz /tmp/", "allow"),
            ("ssh -V", "allow"),
            ("bundle install", "allow"),
            ("gem install rails", "ask"),
        ],
    )
    def test_the_hook_answers(self, tmp_path: Path, command: str, expected: str) -> None:
        project = tmp_path / "proj"
        project.mkdir()
        (project / "Gemfile").write_text('gem "rails"\n')
        out = claude_bash_hook(tmp_path, command, project)
        assert out["permissionDecision"] == expected, out
