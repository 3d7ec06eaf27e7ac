"""The test process runs with a fake HOME, and the real one is watched (tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from homewatch import WATCHED, changes, listing

from tests.conftest import REAL_HOME


def test_home_is_a_temporary_folder_not_the_real_one() -> None:
    """``Path.home()``, ``~`` and the XDG folders all point into the session's fake HOME."""
    home = Path.home()
    assert home != REAL_HOME and home.name.startswith("guard-tests-home-")
    assert Path(os.path.expanduser("~")) == home
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        assert Path(os.environ[var]).is_relative_to(home), var


def test_a_subprocess_inherits_the_fake_home() -> None:
    """A CLI run in a subprocess (``guard``'s default workspace included) sees the fake HOME."""
    code = "import pathlib; from guard.workspace import resolve; print(pathlib.Path.home()); print(resolve(None))"
    env = {k: v for k, v in os.environ.items() if k != "GUARD_HOME"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    home, workspace = out.split()
    assert home == str(Path.home()) and workspace == str(Path.home() / ".guard")


def test_the_real_home_is_saved_for_the_tests_that_need_it() -> None:
    assert REAL_HOME.is_absolute() and os.environ["REAL_HOME"] == str(REAL_HOME)


class TestWatch:
    """The session-end check: what the listings of a (stand-in) real HOME say changed."""

    def test_nothing_changed(self, tmp_path: Path) -> None:
        (tmp_path / ".claude").mkdir()
        (tmp_path / ".claude" / "settings.json").write_text("{}")
        assert changes(listing(tmp_path), listing(tmp_path)) == []

    def test_a_new_guard_folder_is_reported(self, tmp_path: Path) -> None:
        before = listing(tmp_path)
        (tmp_path / ".guard").mkdir()
        (tmp_path / ".guard" / "config.toml").write_text("")
        assert changes(before, listing(tmp_path)) == ["created .guard", "created .guard/config.toml"]

    def test_a_rewritten_host_setting_is_reported(self, tmp_path: Path) -> None:
        settings = tmp_path / ".gemini" / "settings.json"
        settings.parent.mkdir()
        settings.write_text("{}")
        before = listing(tmp_path)
        settings.write_text('{"hooks": {}}')
        os.utime(settings, ns=(1, 1))
        assert changes(before, listing(tmp_path)) == ["changed .gemini/settings.json"]

    def test_a_removed_entry_is_reported(self, tmp_path: Path) -> None:
        (tmp_path / ".codex").mkdir()
        (tmp_path / ".codex" / "config.toml").write_text("")
        before = listing(tmp_path)
        (tmp_path / ".codex" / "config.toml").unlink()
        os.utime(tmp_path / ".codex", ns=(1, 1))
        assert changes(before, listing(tmp_path)) == ["changed .codex", "removed .codex/config.toml"]

    def test_other_folders_are_not_watched(self, tmp_path: Path) -> None:
        """Near-miss: caches and unrelated dotfiles may change (npm's cache does)."""
        before = listing(tmp_path)
        (tmp_path / ".npm").mkdir()
        (tmp_path / ".claude-backup").mkdir()
        assert changes(before, listing(tmp_path)) == []
        assert set(WATCHED) == {".guard", ".claude", ".codex", ".gemini", ".cursor", ".openclaw"}


LEAKY = """
import os
from pathlib import Path

def test_writes_a_guard_folder():
    (Path(os.environ[{var!r}]) / ".guard").mkdir()
"""


def _nested_run(tmp_path: Path, var: str) -> subprocess.CompletedProcess[str]:
    """A pytest run with this conftest as its plugin, whose "real HOME" is a stand-in folder."""
    stand_in = tmp_path / "real-home"
    stand_in.mkdir()
    (tmp_path / "test_leaky.py").write_text(LEAKY.format(var=var))
    env = {k: v for k, v in os.environ.items() if k not in ("REAL_HOME", "TESTS_FAKE_HOME")}
    env["REAL_HOME"] = str(stand_in)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[2]), str(Path(__file__).parents[1])])
    argv = [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-c", os.devnull, "--rootdir", str(tmp_path)]
    return subprocess.run(
        [*argv, "-q", "-p", "no:randomly", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )


def test_a_run_that_writes_to_the_real_home_fails(tmp_path: Path) -> None:
    """The session-end check turns a passing run into a failed one and says what changed."""
    run = _nested_run(tmp_path, "REAL_HOME")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "the tests changed the real HOME" in run.stdout and "created .guard" in run.stdout
    assert (tmp_path / "real-home" / ".guard").is_dir()  # only looked: nothing removed


def test_a_run_that_writes_to_the_fake_home_passes(tmp_path: Path) -> None:
    """Near-miss: ``~/.guard`` in the session's fake HOME is what tests are meant to use."""
    run = _nested_run(tmp_path, "HOME")
    assert run.returncode == 0, run.stdout + run.stderr
    assert not (tmp_path / "real-home" / ".guard").exists()
