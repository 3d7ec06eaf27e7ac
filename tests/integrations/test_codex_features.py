"""``guard install codex`` turns on Codex's hooks feature in ``config.toml``; ``uninstall`` puts it back.

Codex runs no hook without ``[features] hooks = true``. The person's ``config.toml`` (comments,
other tables, their order) survives byte for byte apart from the one line guard writes, and
``guard uninstall codex`` restores exactly what was there. Run as the CLI in a subprocess with a
fake HOME; nothing here touches the real ``~/.codex``.
"""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest
from hookhelpers import hook_env

from guard.integrations.codex_trust import feature_problem, read_config
from tests.conftest import GUARD_CMD

ORIGINAL = """\
# my Codex settings
model = "o3"  # the default model
approval_policy = "on-request"

[features]
# experimental things I tried
web_search_request = true

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-server"]  # keep this

[profiles.fast]
model = "o4-mini"
"""


def guard(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = hook_env(HOME=str(home))
    env.pop("CODEX_HOME", None)
    extra = ["--command", "guard"] if args[0] == "install" else []  # (no isolation probe of this Python)
    return subprocess.run([*GUARD_CMD, *args, *extra], capture_output=True, text=True, env=env, cwd=home, timeout=60)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / ".codex").mkdir()
    return tmp_path


def config(home: Path) -> Path:
    return home / ".codex" / "config.toml"


def test_install_adds_the_one_line_under_features_and_uninstall_restores_the_file(home: Path) -> None:
    config(home).write_text(ORIGINAL, encoding="utf-8")
    out = guard("install", "codex", home=home)
    assert out.returncode == 0, out.stderr
    assert "turned on Codex's hooks feature" in out.stdout and "Trust all and continue" in out.stdout
    text = config(home).read_text(encoding="utf-8")
    added = [line for line in text.splitlines() if line not in ORIGINAL.splitlines()]
    assert added == ["hooks = true  # guard install codex (was: absent)"]
    assert text.index("[features]") < text.index("hooks = true") < text.index("web_search_request")
    after, before = tomllib.loads(text), tomllib.loads(ORIGINAL)
    assert feature_problem(after) is None
    assert after["features"].pop("hooks") is True and after == before
    assert guard("uninstall", "codex", home=home).returncode == 0
    assert config(home).read_text(encoding="utf-8") == ORIGINAL


def test_a_hooks_feature_turned_off_is_turned_on_and_back_off(home: Path) -> None:
    original = "[features]\nhooks = false # off while I test\n\n[tui]\nnotifications = true\n"
    config(home).write_text(original, encoding="utf-8")
    guard("install", "codex", home=home)
    text = config(home).read_text(encoding="utf-8")
    assert "hooks = true  # guard install codex (was: false # off while I test)" in text
    assert feature_problem(tomllib.loads(text)) is None
    guard("uninstall", "codex", home=home)
    assert config(home).read_text(encoding="utf-8") == original


def test_a_config_without_features_gets_the_table_at_its_end(home: Path) -> None:
    original = 'model = "o3"\n\n[tui]\nnotifications = true\n# a trailing comment\n'
    config(home).write_text(original, encoding="utf-8")
    guard("install", "codex", home=home)
    text = config(home).read_text(encoding="utf-8")
    assert text.startswith(original) and tomllib.loads(text)["tui"] == {"notifications": True}
    assert feature_problem(tomllib.loads(text)) is None
    guard("uninstall", "codex", home=home)
    assert config(home).read_text(encoding="utf-8") == original


def test_no_config_at_all_gets_one_and_doctor_sees_the_feature_on(home: Path) -> None:
    out = guard("install", "codex", home=home)
    assert out.returncode == 0, out.stderr
    parsed = read_config(config(home))
    assert parsed is not None and feature_problem(parsed) is None


def test_a_feature_already_on_is_left_exactly_as_it_is(home: Path) -> None:
    original = "[features]\nhooks = true\n"
    config(home).write_text(original, encoding="utf-8")
    out = guard("install", "codex", home=home)
    assert "turned on" not in out.stdout
    guard("uninstall", "codex", home=home)
    assert config(home).read_text(encoding="utf-8") == original


@pytest.mark.parametrize("original", ["features.hooks = false\n", "features = { hooks = false }\n", "[features\n"])
def test_shapes_guard_does_not_edit_are_left_alone_with_the_fix_printed(home: Path, original: str) -> None:
    config(home).write_text(original, encoding="utf-8")
    out = guard("install", "codex", home=home)
    assert out.returncode == 0, out.stderr
    assert "left as it is" in out.stdout and "hooks = true" in out.stdout
    assert config(home).read_text(encoding="utf-8") == original


def test_a_dry_run_leaves_config_toml_alone(home: Path) -> None:
    config(home).write_text(ORIGINAL, encoding="utf-8")
    out = guard("install", "codex", "--dry-run", home=home)
    assert out.returncode == 0 and "would turn on" in out.stderr
    assert config(home).read_text(encoding="utf-8") == ORIGINAL


def test_other_hosts_never_touch_codex_config(home: Path) -> None:
    config(home).write_text(ORIGINAL, encoding="utf-8")
    guard("install", "claude-code", home=home)
    guard("uninstall", "claude-code", home=home)
    assert config(home).read_text(encoding="utf-8") == ORIGINAL
