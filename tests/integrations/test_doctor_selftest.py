"""``guard doctor``'s self-test through each installed hook, and its Codex feature and trust checks.

The real CLI in a subprocess with a fake HOME and workspace; hosts are installed by ``guard
install`` in that HOME. The self-test runs each installed hook command as its host does, on a
sample ``ls -la`` (must come back allow) and a sample ``rm -rf /`` (must come back deny; data for
guard, never run), and must leave the person's workspace as it was.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.security.test_doctor import about, doctor, guard, write

HOSTS = ("claude-code", "codex", "gemini", "cursor")
SETTINGS = {
    "claude-code": ".claude/settings.json",
    "codex": ".codex/hooks.json",
    "gemini": ".gemini/settings.json",
    "cursor": ".cursor/hooks.json",
}
FEATURES = "[features]\nhooks = true\n"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir(mode=0o700)
    return ws


def self_tests(checks: list[dict[str, Any]], host: str) -> list[dict[str, Any]]:
    return [c for c in about(checks, host) if "self-test" in c["message"]]


def tree(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*")} if root.exists() else {}


def trust_all(home: Path, *, only: tuple[str, ...] | None = None, features: str = FEATURES) -> None:
    """What Codex 0.171 saves after "Trust all and continue" (format captured live), for guard's handlers."""
    hooks_path = home / SETTINGS["codex"]
    doc = json.loads(hooks_path.read_text())
    snake = {
        "PreToolUse": "pre_tool_use",
        "PermissionRequest": "permission_request",
        "PostToolUse": "post_tool_use",
        "UserPromptSubmit": "user_prompt_submit",
    }
    lines = [features, "[hooks.state]\n"]
    for event in doc["hooks"]:
        if only is None or event in only:
            lines.append(f'[hooks.state."{hooks_path}:{snake[event]}:0:0"]\ntrusted_hash = "sha256:{"ab" * 32}"\n')
    (home / ".codex/config.toml").write_text("\n".join(lines), encoding="utf-8")


# -- the self-test ----------------------------------------------------------------------------------
def test_every_installed_host_allows_the_read_and_denies_rm_rf(home: Path, ws: Path) -> None:
    for host in HOSTS:
        assert guard("install", host, home=home, ws=ws).returncode == 0
    trust_all(home)
    before = tree(ws)
    code, checks = doctor(home, ws)
    assert code == 0, [c for c in checks if c["status"] == "problem"]
    for host in HOSTS:
        [test] = self_tests(checks, host)
        assert test["status"] == "ok" and "ls -la -> allow, rm -rf / -> deny" in test["message"], test
    assert tree(ws) == before  # nothing recorded in the person's workspace: no decision, no session
    assert not (home / ".guard").exists()


def test_a_hook_with_its_own_workspace_records_nothing_there(home: Path, ws: Path, tmp_path: Path) -> None:
    own = tmp_path / "own-ws"
    own.mkdir(mode=0o700)
    assert guard("install", "claude-code", "--workspace", str(own), home=home, ws=ws).returncode == 0
    assert str(own) in (home / SETTINGS["claude-code"]).read_text()
    code, checks = doctor(home, ws)
    assert code == 0 and self_tests(checks, "claude-code")[0]["status"] == "ok"
    assert tree(own) == {} and tree(ws) == {}


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("echo 'not json at all' # guard hook claude-code", "not JSON"),
        ("exit 1 # guard hook claude-code", "not a claude-code hook answer"),
        (
            'echo \'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}\''
            " # guard hook claude-code",
            "rm -rf / -> allow, expected deny",
        ),
        ("GUARD_SAID='guard hook claude-code ' {python} -I -m guard hook gemini", "not a claude-code hook answer"),
    ],
    ids=["garbage", "crash", "allows-everything", "another-hosts-format"],
)
def test_a_hook_that_answers_wrong_is_a_problem_whose_fix_works(command: str, why: str, home: Path, ws: Path) -> None:
    command = command.replace("{python}", shlex.quote(sys.executable))
    write(
        home / SETTINGS["claude-code"],
        {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": command}]}]}},
    )
    code, checks = doctor(home, ws)
    problems = [c for c in self_tests(checks, "claude-code") if c["status"] == "problem"]
    assert code == 1 and any(why in c["message"] for c in problems), problems
    assert {c["fix"] for c in problems} == {"guard install claude-code"}
    assert guard(*shlex.split(problems[0]["fix"])[1:], home=home, ws=ws).returncode == 0
    code, checks = doctor(home, ws)
    assert code == 0 and {c["status"] for c in about(checks, "claude-code")} == {"ok"}


def test_a_hook_that_cannot_start_is_a_problem(home: Path, ws: Path) -> None:
    command = "/nonexistent/python -I -m guard hook gemini"
    write(home / SETTINGS["gemini"], {"hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": command}]}]}})
    code, checks = doctor(home, ws)
    [read, destructive] = [c for c in self_tests(checks, "gemini")]
    assert code == 1 and read["status"] == destructive["status"] == "problem"
    assert "ls -la -> no answer, expected allow" in read["message"] and "exit 127" in read["message"]


def test_the_self_test_can_be_skipped(home: Path, ws: Path) -> None:
    assert guard("install", "cursor", home=home, ws=ws).returncode == 0
    done = guard("doctor", "--json", "--no-self-test", home=home, ws=ws)
    checks = json.loads(done.stdout)["checks"]
    assert done.returncode == 0 and self_tests(checks, "cursor") == [] and about(checks, "cursor")[0]["status"] == "ok"


def test_the_person_sees_the_self_test_in_the_text_report(home: Path, ws: Path) -> None:
    assert guard("install", "gemini", home=home, ws=ws).returncode == 0
    done = guard("doctor", home=home, ws=ws)
    line = next(x for x in done.stdout.splitlines() if "self-test" in x)
    assert line.startswith("ok") and "BeforeTool" in line and "rm -rf / -> deny" in line


# -- Codex: the hooks feature and the person's trust ----------------------------------------------
def test_codex_installed_but_untrusted_is_a_problem_naming_the_fix(home: Path, ws: Path) -> None:
    assert guard("install", "codex", home=home, ws=ws).returncode == 0
    code, checks = doctor(home, ws)
    problems = {c["message"].split(":")[0]: c for c in about(checks, "codex") if c["status"] == "problem"}
    assert code == 1 and len(problems) == 1, problems  # the installer turned the feature on (issue 13)
    (home / ".codex" / "config.toml").write_text("[features]\nhooks = false\n", encoding="utf-8")  # the person's
    code, checks = doctor(home, ws)
    problems = {c["message"].split(":")[0]: c for c in about(checks, "codex") if c["status"] == "problem"}
    assert code == 1 and len(problems) == 2, problems
    feature = next(c for m, c in problems.items() if "hooks feature is off" in m)
    assert feature["fix"] == f"add `hooks = true` under `[features]` in {home / '.codex/config.toml'}"
    trust = next(c for c in problems.values() if "not trusted" in c["message"])
    assert "PreToolUse, PermissionRequest, PostToolUse, UserPromptSubmit" in trust["message"]
    assert "Trust all and continue" in trust["fix"] and "Hooks need review" in trust["fix"]


def test_codex_trusted_with_the_feature_on_is_ok(home: Path, ws: Path) -> None:
    assert guard("install", "codex", home=home, ws=ws).returncode == 0
    trust_all(home)
    code, checks = doctor(home, ws)
    assert code == 0 and {c["status"] for c in about(checks, "codex")} == {"ok"}
    assert any("trusted" in c["message"] for c in about(checks, "codex"))


def test_codex_with_some_hooks_untrusted_names_them(home: Path, ws: Path) -> None:
    assert guard("install", "codex", home=home, ws=ws).returncode == 0
    trust_all(home, only=("PreToolUse", "PostToolUse"))
    code, checks = doctor(home, ws)
    [trust] = [c for c in about(checks, "codex") if c["status"] == "problem"]
    assert code == 1 and "PermissionRequest, UserPromptSubmit hook(s)" in trust["message"], trust


@pytest.mark.parametrize(
    ("features", "ok"),
    [
        ("[features]\ncodex_hooks = true\n", True),  # the deprecated spelling still switches hooks on
        ("[features]\nhooks = false\n", False),
        ("", False),
    ],
)
def test_codex_hooks_feature(features: str, ok: bool, home: Path, ws: Path) -> None:
    assert guard("install", "codex", home=home, ws=ws).returncode == 0
    trust_all(home, features=features)
    code, checks = doctor(home, ws)
    problems = [c for c in about(checks, "codex") if c["status"] == "problem"]
    assert (code == 0) is ok and (problems == []) is ok, problems
    if not ok:
        assert "hooks feature is off" in problems[0]["message"]


def test_codex_not_installed_needs_no_trust(home: Path, ws: Path) -> None:
    """Near miss: a Codex config without guard's hooks is none of guard's business."""
    (home / ".codex").mkdir()
    (home / ".codex/config.toml").write_text('model = "gpt-5"\n', encoding="utf-8")
    code, checks = doctor(home, ws)
    assert code == 0 and [c["status"] for c in about(checks, "codex")] == ["info"]


def test_the_doctor_runs_no_hook_against_the_real_home(home: Path) -> None:
    """The fixtures' HOME is a temporary folder (a guard for the tests themselves)."""
    assert str(home) != os.path.expanduser("~") and "tmp" in str(home)
