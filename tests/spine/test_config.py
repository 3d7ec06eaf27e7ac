"""Layered configuration: file > env > default per key; bad values warn and fall back; 0 is a value."""

from __future__ import annotations

import subprocess

from guard.config import Config
from tests.conftest import GUARD_CMD, guard_cli_env


def _ws(tmp_path, text: str):  # type: ignore[no-untyped-def]
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "guard.toml").write_text(text)
    return tmp_path


def test_defaults_without_file_or_env() -> None:
    c = Config.load(None, env={})
    assert c.weights == {"memory": 0.30, "cmd_success": 0.30, "user_pref": 0.25, "system": 0.15}
    assert c.thresholds == {"auto_allow": 75.0, "request_confirm": 50.0, "block": 0.0}
    assert c.source("weights.memory") == "default"


def test_file_beats_env_per_key(tmp_path) -> None:  # type: ignore[no-untyped-def]
    ws = _ws(tmp_path, "[weights]\nmemory = 0.35\n[thresholds]\nauto_allow = 80\n")
    c = Config.load(ws, env={"GUARD_WEIGHTS_MEMORY": "0.1", "GUARD_WEIGHTS_SYSTEM": "0.10"})
    assert c.get("weights.memory") == 0.35 and c.source("weights.memory") == "file"
    assert c.get("weights.system") == 0.10 and c.source("weights.system") == "env"
    assert c.get("thresholds.auto_allow") == 80.0


def test_explicit_zero_is_a_value(tmp_path) -> None:  # type: ignore[no-untyped-def]
    c = Config.load(_ws(tmp_path, "[weights]\nsystem = 0\nmemory = 0.45\n"), env={})
    assert c.get("weights.system") == 0.0 and c.source("weights.system") == "file"
    assert Config.load(None, env={"GUARD_SYSTEM_HEALTH": "0"}).get("system.health") == 0.0


def test_bad_file_value_warns_naming_the_key_and_falls_back_to_env(tmp_path) -> None:  # type: ignore[no-untyped-def]
    c = Config.load(_ws(tmp_path, '[weights]\nmemory = "lots"\nsystem = 0.10\n'), env={"GUARD_WEIGHTS_MEMORY": "0.35"})
    assert c.get("weights.memory") == 0.35 and c.source("weights.memory") == "env"
    assert any("weights.memory" in w for w in c.warnings)


def test_bad_env_value_and_out_of_range_values_are_ignored() -> None:
    c = Config.load(None, env={"GUARD_WEIGHTS_MEMORY": "1.5", "GUARD_FUSION_MODE": "magic"})
    assert c.get("weights.memory") == 0.30 and c.get("fusion.mode") == "guard"
    assert len(c.warnings) == 2


def test_unreadable_file_is_a_warning_not_a_crash(tmp_path) -> None:  # type: ignore[no-untyped-def]
    c = Config.load(_ws(tmp_path, "[weights\nmemory = "), env={})
    assert c.get("weights.memory") == 0.30 and c.warnings


def test_unknown_key_in_known_section_warns(tmp_path) -> None:  # type: ignore[no-untyped-def]
    c = Config.load(_ws(tmp_path, "[weights]\nmemroy = 0.2\n"), env={})
    assert any("memroy" in w for w in c.warnings)


def test_inverted_thresholds_reset_to_defaults(tmp_path) -> None:  # type: ignore[no-untyped-def]
    c = Config.load(_ws(tmp_path, "[thresholds]\nauto_allow = 40\nrequest_confirm = 60\n"), env={})
    assert c.thresholds["auto_allow"] == 75.0 and any("thresholds" in w for w in c.warnings)


def test_code_overrides_win(tmp_path) -> None:  # type: ignore[no-untyped-def]
    c = Config.load(_ws(tmp_path, "[weights]\nmemory = 0.4\n"), env={}, overrides={"weights": {"memory": 0.5}})
    assert c.get("weights.memory") == 0.5 and c.source("weights.memory") == "code"


def test_config_changes_decisions(make_guard, workspace) -> None:  # type: ignore[no-untyped-def]
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "guard.toml").write_text("[thresholds]\nauto_allow = 95\n")
    g = make_guard()
    assert g.config.get("thresholds.auto_allow") == 95.0


def test_guard_config_prints_values_and_sources(tmp_path) -> None:  # type: ignore[no-untyped-def]
    ws = _ws(tmp_path, "[weights]\nmemory = 0.4\n")
    env = guard_cli_env() | {"GUARD_THRESHOLDS_AUTO_ALLOW": "nope"}
    out = subprocess.run([*GUARD_CMD, "config", "--workspace", str(ws)], capture_output=True, text=True, env=env)
    assert out.returncode == 0
    assert "weights.memory" in out.stdout and "0.4" in out.stdout and "file" in out.stdout
    assert "system.health" in out.stdout and "env" in out.stdout
    assert "thresholds.auto_allow" in out.stderr + out.stdout
