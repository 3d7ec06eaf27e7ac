"""``guard install`` / ``guard uninstall``: only guard's entries change, everything else survives."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hookhelpers import PROTOCOLS, hook_env

from guard.integrations.install import is_ours
from tests.conftest import GUARD_CMD

UNRELATED = {
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"], "deny": ["Read(./.env)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "npx cc-safety-net hook --claude-code"}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
    "env": {"DEBUG": "1"},
    "zeta": [1, 2, {"ü": "keeps unicode"}],
}


def guard(*args: str, home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = hook_env(HOME=str(home))
    return subprocess.run([*GUARD_CMD, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=60)


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return home, project


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def ours(doc: dict[str, Any], host: str) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for event, entries in doc.get("hooks", {}).items():
        for entry in entries:
            for handler in entry.get("hooks", [entry]):
                if is_ours(handler, host):
                    found.append((event, handler))
    return found


def test_claude_code_round_trip_keeps_unrelated_content_in_order(places: tuple[Path, Path]) -> None:
    home, project = places
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = json.dumps(UNRELATED, indent=2, ensure_ascii=False) + "\n"
    settings.write_text(original, encoding="utf-8")
    os.chmod(settings, 0o640)

    out = guard("install", "claude-code", "--project", home=home, cwd=project)
    assert out.returncode == 0, out.stderr
    doc = load(settings)
    assert list(doc) == list(UNRELATED)  # key order kept
    assert {k: v for k, v in doc.items() if k != "hooks"} == {k: v for k, v in UNRELATED.items() if k != "hooks"}
    assert doc["hooks"]["PreToolUse"][0] == UNRELATED["hooks"]["PreToolUse"][0]  # theirs first, untouched
    assert doc["hooks"]["Stop"] == UNRELATED["hooks"]["Stop"]
    events = [e for e, _ in ours(doc, "claude-code")]
    assert events == ["PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit"]
    matcher = {
        e: g.get("matcher")
        for e, groups in doc["hooks"].items()
        for g in groups
        if ours({"hooks": {e: [g]}}, "claude-code")
    }
    assert matcher["PreToolUse"] == "*" and matcher["UserPromptSubmit"] is None
    assert os.stat(settings).st_mode & 0o777 == 0o640  # the file's mode is kept

    first = settings.read_bytes()
    again = guard("install", "claude-code", "--project", home=home, cwd=project)
    assert "already installed" in again.stdout
    assert settings.read_bytes() == first  # idempotent, to the byte

    out = guard("uninstall", "claude-code", "--project", home=home, cwd=project)
    assert out.returncode == 0 and "removed 5" in out.stdout
    assert settings.read_text(encoding="utf-8") == original


def test_user_scope_is_the_default_and_leaves_the_project_alone(places: tuple[Path, Path]) -> None:
    home, project = places
    out = guard("install", "claude-code", home=home, cwd=project)
    assert out.returncode == 0, out.stderr
    assert (home / ".claude" / "settings.json").exists()
    assert not (project / ".claude").exists()
    command = ours(load(home / ".claude" / "settings.json"), "claude-code")[0][1]["command"]
    assert "guard hook claude-code || {" in command


def test_install_flags_reach_the_command_and_reinstall_updates_in_place(places: tuple[Path, Path]) -> None:
    home, project = places
    settings = home / ".claude" / "settings.json"
    guard("install", "claude-code", home=home, cwd=project)
    guard("install", "claude-code", "--headless", "--workspace", str(project / "ws"), home=home, cwd=project)
    found = ours(load(settings), "claude-code")
    assert len(found) == 5  # updated, not duplicated
    assert all("--headless" in h["command"] and str(project / "ws") in h["command"] for _, h in found)


def test_the_documented_exec_form_entries_are_recognised_as_guards(places: tuple[Path, Path]) -> None:
    home, project = places
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text((PROTOCOLS / "claude_code" / "settings.json").read_text())
    guard("install", "claude-code", home=home, cwd=project)
    assert len(ours(load(settings), "claude-code")) == 5  # replaced in place, no duplicates
    guard("uninstall", "claude-code", home=home, cwd=project)
    assert load(settings) == {}


@pytest.mark.parametrize(
    ("host", "where", "events"),
    [
        ("codex", ".codex/hooks.json", ["PreToolUse", "PermissionRequest", "PostToolUse", "UserPromptSubmit"]),
        ("gemini", ".gemini/settings.json", ["BeforeTool", "AfterTool", "BeforeAgent"]),
        (
            "cursor",
            ".cursor/hooks.json",
            [
                "beforeShellExecution",
                "beforeMCPExecution",
                "afterShellExecution",
                "afterMCPExecution",
                "beforeSubmitPrompt",
            ],
        ),
    ],
)
def test_other_hosts_round_trip(host: str, where: str, events: list[str], places: tuple[Path, Path]) -> None:
    home, project = places
    path = project / where
    path.parent.mkdir()
    theirs = (
        {"version": 1, "hooks": {events[0]: [{"command": "./audit.sh"}]}}
        if host == "cursor"
        else {
            "theme": "dark",
            "hooks": {events[0]: [{"matcher": ".*", "hooks": [{"type": "command", "command": "./audit.sh"}]}]},
        }
    )
    path.write_text(json.dumps(theirs, indent=2) + "\n")
    assert guard("install", host, "--project", home=home, cwd=project).returncode == 0
    doc = load(path)
    assert [e for e, _ in ours(doc, host)] == events
    assert doc["hooks"][events[0]][0] == theirs["hooks"][events[0]][0]
    before = path.read_bytes()
    guard("install", host, "--project", home=home, cwd=project)
    assert path.read_bytes() == before
    guard("uninstall", host, "--project", home=home, cwd=project)
    assert load(path) == theirs


def test_shapes_match_the_hosts_documented_registrations(places: tuple[Path, Path]) -> None:
    home, project = places
    for host, where, sample_dir in (
        ("gemini", ".gemini/settings.json", "gemini_cli"),
        ("cursor", ".cursor/hooks.json", "cursor"),
        ("codex", ".codex/hooks.json", "codex"),
    ):
        guard("install", host, "--command", "guard", home=home, cwd=project)
        doc = load(home / where)
        documented = load(PROTOCOLS / sample_dir / ("settings.json" if host == "gemini" else "hooks.json"))
        assert list(doc["hooks"]) == list(documented["hooks"])
        for event, entries in documented["hooks"].items():
            mine = doc["hooks"][event][0]
            assert set(mine) == set(entries[0]), (host, event)
            if "matcher" in entries[0] and host != "gemini":
                assert mine["matcher"] == entries[0]["matcher"]
            if host != "cursor":
                assert set(entries[0]["hooks"][0]) <= set(mine["hooks"][0]) | {"timeout"}
        if host == "cursor":
            assert doc["version"] == 1


def test_a_corrupt_settings_file_is_an_error_and_stays_untouched(places: tuple[Path, Path]) -> None:
    home, project = places
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    broken = b'{\n  "model": "opus",\n  "hooks": {,}\n}\n'
    settings.write_bytes(broken)
    for command in ("install", "uninstall"):
        out = guard(command, "claude-code", home=home, cwd=project)
        assert out.returncode == 2
        assert "not valid JSON" in out.stderr and "line 3" in out.stderr and "untouched" in out.stderr
        assert settings.read_bytes() == broken
    assert [p.name for p in settings.parent.iterdir()] == ["settings.json"]  # no temporary left behind


@pytest.mark.parametrize("content", ['["a list"]', '{"hooks": []}', '{"hooks": {"PreToolUse": {"not": "a list"}}}'])
def test_settings_guard_cannot_edit_safely_are_refused(content: str, places: tuple[Path, Path]) -> None:
    home, project = places
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(content)
    out = guard("install", "claude-code", home=home, cwd=project)
    assert out.returncode == 2 and "left untouched" in out.stderr
    assert settings.read_text() == content


def test_dry_run_prints_and_writes_nothing(places: tuple[Path, Path]) -> None:
    home, project = places
    out = guard("install", "gemini", "--dry-run", home=home, cwd=project)
    assert out.returncode == 0 and "guard-before" in out.stdout
    assert not (home / ".gemini").exists()


def test_uninstall_without_a_file_changes_nothing(places: tuple[Path, Path]) -> None:
    home, project = places
    out = guard("uninstall", "cursor", home=home, cwd=project)
    assert out.returncode == 0 and "no cursor hooks" in out.stdout
    assert not (home / ".cursor").exists()


def test_openclaw_install_explains_the_plugin(places: tuple[Path, Path]) -> None:
    home, project = places
    out = guard("install", "openclaw", home=home, cwd=project)
    assert out.returncode == 0 and "openclaw plugins install" in out.stdout
    # A local folder installs only with both flags (OpenClaw 2026.9.6, tests/live).
    assert "--force --accept-capabilities" in out.stdout


def test_codex_install_says_the_hooks_need_the_persons_trust(places: tuple[Path, Path]) -> None:
    home, project = places
    out = guard("install", "codex", home=home, cwd=project)
    assert out.returncode == 0 and "Hooks need review" in out.stdout and "Trust all" in out.stdout
    again = guard("install", "codex", home=home, cwd=project)
    assert "already installed" in again.stdout and "Hooks need review" not in again.stdout
    claude = guard("install", "claude-code", home=home, cwd=project)
    assert "Hooks need review" not in claude.stdout


def test_only_guards_own_hook_commands_count_as_guards() -> None:
    assert is_ours({"command": "guard hook claude-code"}, "claude-code")
    assert is_ours({"command": "/venv/bin/python -m guard hook claude-code --headless"}, "claude-code")
    assert is_ours({"command": "guard", "args": ["hook", "claude-code"]}, "claude-code")
    assert is_ours({"command": "guard hook gemini-cli"}, "gemini")
    assert not is_ours({"command": "guard hook codex"}, "claude-code")
    assert not is_ours({"command": "safeguard hook claude-code"}, "claude-code")
    assert not is_ours({"command": "guard hook claude-code-extra"}, "claude-code")
    assert not is_ours({"command": "echo guard"}, "claude-code")
    assert not is_ours("guard hook claude-code", "claude-code")


def _installed(host: str, where: str, places: tuple[Path, Path], base: str) -> str:
    home, project = places
    out = guard("install", host, "--command", base, "--workspace", str(project / "ws"), home=home, cwd=project)
    assert out.returncode == 0, out.stderr
    return str(ours(load(home / where), host)[0][1]["command"])


@pytest.mark.skipif(os.name != "posix", reason="the fallback is POSIX shell")
@pytest.mark.parametrize(
    ("host", "where", "sample"),
    [
        ("claude-code", ".claude/settings.json", "claude_code/pretooluse_bash.in.json"),
        ("gemini", ".gemini/settings.json", "gemini_cli/beforetool.in.json"),
    ],
)
def test_a_hook_that_dies_is_a_refusal_not_a_pass(
    host: str, where: str, sample: str, places: tuple[Path, Path]
) -> None:
    """Claude Code and Gemini CLI run the call when a hook dies by a signal; the installed command
    turns that into exit 2, their refusal. Run through ``sh -c`` as the hosts run it."""
    home = places[0]
    dying = home / "bin" / "guard"
    dying.parent.mkdir()
    dying.write_text("#!/bin/sh\ncat >/dev/null\nkill -SEGV $$\n")
    dying.chmod(0o755)
    command = _installed(host, where, places, str(dying))
    payload = (PROTOCOLS / sample).read_bytes()
    died = subprocess.run(["sh", "-c", command], input=payload, capture_output=True, timeout=60)
    assert died.returncode == 2 and b"guard hook died (status 139)" in died.stderr

    real = _installed(host, where, places, " ".join(GUARD_CMD))  # the same command with a working guard
    answered = subprocess.run(["sh", "-c", real], input=payload, capture_output=True, env=hook_env(), timeout=120)
    assert answered.returncode == 0 and answered.stdout.startswith(b"{"), answered.stderr


def test_hosts_that_ignore_exit_codes_get_the_plain_command(places: tuple[Path, Path]) -> None:
    command = _installed("codex", ".codex/hooks.json", places, "guard")
    assert command.startswith("guard hook codex") and "||" not in command
