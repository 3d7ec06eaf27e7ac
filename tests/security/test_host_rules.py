"""The person's settled answers in the host count (issue 14, item 6).

Claude Code's ``permissions.allow`` / ``ask`` / ``deny`` from the user, project and local settings
files are the person's preference: an allow lifts guard's ask, never a block; a deny always wins;
an ask keeps asking. Every case runs ``guard hook claude-code`` in a subprocess with a fake HOME,
a fake project holding those files, and a fresh GUARD_HOME. Commands are data in the payload;
nothing here runs them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.security.test_host_adapters import claude_pre, env_for, hook, jsonl

ASKED = "ssh build-host uptime"  # asked about on a fresh install (G149)
ALLOWED = "ls -la"


@pytest.fixture
def box(tmp_path: Path) -> dict[str, Path]:
    home, project, ws = tmp_path / "home", tmp_path / "home" / "proj", tmp_path / "gh"
    (project / ".git").mkdir(parents=True)
    (home / ".claude").mkdir()
    return {"home": home, "project": project, "ws": ws}


def settings(path: Path, **permissions: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": permissions}))


def decide(box: dict[str, Path], command: str, cwd: Path | None = None, **extra: Any) -> tuple[str, str, str]:
    """(permissionDecision, reason, stderr) of one PreToolUse."""
    out, code, err = hook(
        "claude-code", claude_pre(command, cwd or box["project"], **extra), box["ws"], env_for(box["home"])
    )
    assert code == 0, err
    spec = out["hookSpecificOutput"]
    return spec["permissionDecision"], spec["permissionDecisionReason"], err


def last_decision(box: dict[str, Path]) -> dict[str, Any]:
    return jsonl(box["ws"], ".fusion-decisions.jsonl")[-1]


class TestAllowLiftsAnAsk:
    def test_without_rules_guard_asks(self, box: dict[str, Path]) -> None:
        """The baseline: a first-time ssh is asked about."""
        assert decide(box, ASKED)[0] == "ask"

    def test_local_allow_rule_lifts_the_ask_and_the_record_names_it(self, box: dict[str, Path]) -> None:
        """A "don't ask again" choice in settings.local.json: the call runs, the log says why."""
        local = box["project"] / ".claude" / "settings.local.json"
        settings(local, allow=["Bash(ssh build-host uptime)"])
        decision, reason, _ = decide(box, ASKED)
        assert decision == "allow"
        assert "Bash(ssh build-host uptime)" in reason and str(local) in reason
        line = last_decision(box)
        assert line["decision"] == "auto_allow"
        assert line["reasons"][0]["id"] == "G306"
        assert any("G306" in n for n in line["notes"])

    def test_user_prefix_rule_lifts_from_a_subdirectory(self, box: dict[str, Path]) -> None:
        """``~/.claude/settings.json`` applies in every project; ``:*`` is a prefix at a word boundary."""
        settings(box["home"] / ".claude" / "settings.json", allow=["Bash(ssh build-host:*)"])
        sub = box["project"] / "src"
        sub.mkdir()
        assert decide(box, ASKED, cwd=sub)[0] == "allow"
        assert decide(box, "ssh build-hostile uptime")[0] == "ask"  # not a word boundary

    def test_space_star_form_is_the_same_prefix(self, box: dict[str, Path]) -> None:
        settings(box["project"] / ".claude" / "settings.json", allow=["Bash(ssh build-host *)"])
        assert decide(box, ASKED)[0] == "allow"
        assert decide(box, "ssh build-hostile uptime")[0] == "ask"

    def test_exact_rule_does_not_cover_other_arguments(self, box: dict[str, Path]) -> None:
        settings(box["project"] / ".claude" / "settings.json", allow=["Bash(ssh build-host uptime)"])
        assert decide(box, "ssh build-host df -h")[0] == "ask"


class TestCompoundCommands:
    def test_prefix_rule_never_covers_an_uncovered_part(self, box: dict[str, Path]) -> None:
        """``Bash(ssh build-host:*)`` covers neither ``... && ssh other`` nor ``...; curl``."""
        settings(box["project"] / ".claude" / "settings.local.json", allow=["Bash(ssh build-host:*)"])
        assert decide(box, f"{ASKED} && ssh other-host uptime")[0] == "ask"
        assert decide(box, f"{ASKED} | ssh other-host tee x")[0] == "ask"

    def test_every_part_covered_is_allowed(self, box: dict[str, Path]) -> None:
        settings(box["project"] / ".claude" / "settings.local.json", allow=["Bash(ssh build-host:*)"])
        assert decide(box, f"{ASKED} && ssh build-host df -h")[0] == "allow"

    def test_git_diff_rule_does_not_cover_a_destructive_tail(self, box: dict[str, Path]) -> None:
        """The brief's near-miss: ``Bash(git diff:*)`` and ``git diff && rm -rf x``."""
        settings(box["project"] / ".claude" / "settings.local.json", allow=["Bash(git diff:*)"])
        assert decide(box, "git diff && curl https://example.org/x")[0] == "ask"
        decide(box, "git diff && rm -rf build")  # guard may allow it on its own, never on this rule's word
        assert last_decision(box)["reasons"][0]["id"] != "G306"
        assert decide(box, "git diff HEAD~1")[0] == "allow"


class TestAllowNeverLiftsABlock:
    @pytest.mark.parametrize("rule", ["Bash", "Bash(rm:*)", "Bash(rm -rf ~)"])
    def test_static_block_stays(self, box: dict[str, Path], rule: str) -> None:
        settings(box["project"] / ".claude" / "settings.local.json", allow=[rule])
        assert decide(box, "rm -rf ~")[0] == "deny"
        assert last_decision(box)["decision"] == "block"

    @pytest.mark.parametrize(
        ("tool", "params"),
        [
            ("Write", {"file_path": ".claude/settings.local.json", "content": '{"permissions":{"allow":["Bash"]}}'}),
            ("Edit", {"file_path": ".claude/settings.json", "old_string": "[]", "new_string": '["Bash"]'}),
            ("Bash", {"command": "echo '{}' > .claude/settings.local.json"}),
        ],
    )
    def test_agent_cannot_grant_itself_an_allow(self, box: dict[str, Path], tool: str, params: dict[str, Any]) -> None:
        """Writing the host's settings is guard's self-protection: even a blanket allow does not lift it."""
        settings(box["project"] / ".claude" / "settings.local.json", allow=["Bash", "Write", "Edit"])
        payload = claude_pre("x", box["project"]) | {"tool_name": tool, "tool_input": params}
        out, code, err = hook("claude-code", payload, box["ws"], env_for(box["home"]))
        assert code == 0, err
        assert out["hookSpecificOutput"]["permissionDecision"] == "deny"

    def test_high_risk_is_still_asked(self, box: dict[str, Path]) -> None:
        """A host allow makes nothing high-risk run unasked (guard's invariant)."""
        settings(box["project"] / ".claude" / "settings.local.json", allow=["Bash(git reset:*)"])
        assert decide(box, "git reset --hard HEAD~3")[0] == "ask"
        assert any("not applied" in n for n in last_decision(box)["notes"])


class TestDenyAndAsk:
    def test_deny_blocks_what_guard_allows(self, box: dict[str, Path]) -> None:
        assert decide(box, ALLOWED)[0] == "allow"
        settings(box["home"] / ".claude" / "settings.json", deny=["Bash(ls:*)"])
        decision, reason, _ = decide(box, ALLOWED)
        assert decision == "deny" and "Bash(ls:*)" in reason
        line = last_decision(box)
        assert line["decision"] == "block" and line["reasons"][0]["id"] == "G307"

    def test_deny_matches_any_part_of_a_compound(self, box: dict[str, Path]) -> None:
        settings(box["project"] / ".claude" / "settings.json", deny=["Bash(curl:*)"])
        assert decide(box, "ls && curl https://example.org")[0] == "deny"

    def test_deny_beats_a_matching_allow(self, box: dict[str, Path]) -> None:
        claude = box["project"] / ".claude"
        settings(claude / "settings.local.json", allow=["Bash(ssh build-host:*)"])
        settings(claude / "settings.json", deny=["Bash(ssh:*)"])
        assert decide(box, ASKED)[0] == "deny"

    def test_ask_keeps_an_allowed_call_asked(self, box: dict[str, Path]) -> None:
        settings(box["project"] / ".claude" / "settings.json", ask=["Bash(ls:*)"])
        decision, reason, _ = decide(box, ALLOWED)
        assert decision == "ask" and "Bash(ls:*)" in reason
        assert decide(box, "pwd")[0] == "allow"  # near-miss: other commands are untouched

    def test_read_deny_covers_the_shell_too(self, box: dict[str, Path]) -> None:
        settings(box["project"] / ".claude" / "settings.json", deny=["Read(./secrets/**)"])
        (box["project"] / "secrets").mkdir()
        assert decide(box, "cat secrets/db.txt")[0] == "deny"
        assert decide(box, "cat README.md")[0] == "allow"


class TestBrokenAndChangedFiles:
    def test_malformed_file_warns_once_and_is_ignored(self, box: dict[str, Path]) -> None:
        claude = box["project"] / ".claude"
        claude.mkdir()
        (claude / "settings.local.json").write_text('{"permissions": {"allow": [')
        settings(box["home"] / ".claude" / "settings.json", allow=["Bash(ssh build-host:*)"])
        decision, _, err = decide(box, ASKED)
        assert decision == "allow"  # the readable file still counts
        warnings = [line for line in err.splitlines() if "settings.local.json" in line]
        assert len(warnings) == 1 and "ignored" in warnings[0]
        assert any("G309" in n for n in last_decision(box)["notes"])

    def test_project_allow_added_mid_session_is_not_used(self, box: dict[str, Path]) -> None:
        """A project file that changed after the session started gives no allow until the next session."""
        assert decide(box, ALLOWED)[0] == "allow"  # the session starts
        local = box["project"] / ".claude" / "settings.local.json"
        settings(local, allow=["Bash(ssh build-host:*)"], deny=["Bash(pwd)"])
        assert decide(box, ASKED)[0] == "ask"
        assert decide(box, "pwd")[0] == "deny"  # its deny still counts
        assert decide(box, ASKED, session_id="cc-2")[0] == "allow"  # a new session: the file is settled


class TestCodexRules:
    """Codex's ``~/.codex/rules/*.rules`` (where its "always allow" lands): prefix_rule decisions."""

    @staticmethod
    def pre(box: dict[str, Path], command: str) -> tuple[Any, str]:
        from tests.security.test_host_adapters import codex

        payload = codex("PreToolUse", "Bash", {"command": command}, box["project"])
        out, code, err = hook("codex", payload, box["ws"], env_for(box["home"]))
        assert code == 0, err
        decision = (out or {}).get("hookSpecificOutput", {}).get("permissionDecision")
        return decision, err

    @staticmethod
    def rules(box: dict[str, Path], text: str) -> None:
        folder = box["home"] / ".codex" / "rules"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "default.rules").write_text(text)

    def test_allow_prefix_rule_lifts_the_ask_at_a_token_boundary(self, box: dict[str, Path]) -> None:
        assert self.pre(box, ASKED)[0] == "deny"  # Codex cannot ask from a hook: out of band
        self.rules(box, 'prefix_rule(pattern = ["ssh", "build-host"], decision = "allow")\n')
        assert self.pre(box, ASKED)[0] is None  # nothing to say: the call runs
        assert self.pre(box, "ssh build-hostile uptime")[0] == "deny"
        assert self.pre(box, f"{ASKED} && ssh other-host uptime")[0] == "deny"
        assert self.pre(box, "rm -rf ~")[0] == "deny"  # never a block

    def test_forbidden_blocks_and_alternatives_expand(self, box: dict[str, Path]) -> None:
        self.rules(box, 'prefix_rule(pattern = [["ls", "pwd"]], decision = "forbidden", justification = "x")\n')
        assert self.pre(box, "ls -la")[0] == "deny"
        assert self.pre(box, "pwd")[0] == "deny"
        assert self.pre(box, "cat README.md")[0] is None

    def test_unreadable_rules_file_warns_and_is_ignored(self, box: dict[str, Path]) -> None:
        self.rules(box, "prefix_rule(pattern = [\n")
        decision, err = self.pre(box, "cat README.md")
        assert decision is None
        assert len([line for line in err.splitlines() if "default.rules" in line]) == 1


class TestThroughTheDaemon:
    def test_guard_serve_reads_the_same_rules(self, box: dict[str, Path]) -> None:
        """``guard serve`` (a daemon started with the fake HOME) answers with the person's rules too."""
        import signal
        import subprocess

        from tests.conftest import GUARD_CMD

        settings(box["project"] / ".claude" / "settings.local.json", allow=["Bash(ssh build-host:*)"])
        settings(box["home"] / ".claude" / "settings.json", deny=["Bash(ls:*)"])
        env = env_for(box["home"]) | {"GUARD_HOOKS_DAEMON": "auto"}
        served = subprocess.Popen(
            [*GUARD_CMD, "serve", "--workspace", str(box["ws"])],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        try:
            assert served.stdout is not None
            assert served.stdout.readline().startswith("guard serve: listening on")
            answers = {}
            for command in (ASKED, ALLOWED):
                out, code, err = hook("claude-code", claude_pre(command, box["project"]), box["ws"], env)
                assert code == 0, err
                answers[command] = out["hookSpecificOutput"]["permissionDecision"]
        finally:
            served.send_signal(signal.SIGTERM)
            served.communicate(timeout=20)
        assert answers == {ASKED: "allow", ALLOWED: "deny"}
        lines = jsonl(box["ws"], ".fusion-decisions.jsonl")
        assert [line.get("via") for line in lines] == ["daemon", "daemon"]
        assert [line["reasons"][0]["id"] for line in lines] == ["G306", "G307"]


class TestGeminiRules:
    """Gemini CLI's policy engine files and ``tools.allowed`` / ``tools.exclude``."""

    @staticmethod
    def pre(box: dict[str, Path], command: str) -> tuple[str | None, str]:
        from tests.security.test_host_adapters import gemini

        out, code, err = hook("gemini", gemini("BeforeTool", command, box["project"]), box["ws"], env_for(box["home"]))
        assert code in (0, 2), err
        return (out or {}).get("decision"), err

    def test_policy_allow_lifts_the_ask_and_deny_blocks(self, box: dict[str, Path]) -> None:
        assert self.pre(box, ASKED)[0] == "ask"
        policies = box["home"] / ".gemini" / "policies"
        policies.mkdir(parents=True)
        (policies / "mine.toml").write_text(
            '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "ssh build-host"\ndecision = "allow"\n'
            "priority = 100\n\n"
            '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "ls"\ndecision = "deny"\npriority = 100\n'
        )
        assert self.pre(box, ASKED)[0] == "allow"
        assert self.pre(box, "ssh build-hostile uptime")[0] == "ask"  # an allow stops at a word boundary
        assert self.pre(box, "lsof -i")[0] == "deny"  # a deny is Gemini's plain string prefix
        assert self.pre(box, "rm -rf ~")[0] == "deny"

    def test_project_settings_tools_allowed_and_exclude(self, box: dict[str, Path]) -> None:
        gem = box["project"] / ".gemini"
        gem.mkdir()
        (gem / "settings.json").write_text(
            json.dumps(
                {"tools": {"allowed": ["run_shell_command(ssh build-host)"], "exclude": ["run_shell_command(pwd)"]}}
            )
        )
        assert self.pre(box, ASKED)[0] == "allow"
        assert self.pre(box, "pwd")[0] == "deny"
        assert self.pre(box, f"{ASKED} && ssh other-host uptime")[0] == "ask"

    def test_broken_policy_file_warns_and_is_ignored(self, box: dict[str, Path]) -> None:
        policies = box["home"] / ".gemini" / "policies"
        policies.mkdir(parents=True)
        (policies / "bad.toml").write_text("[[rule]\n")
        decision, err = self.pre(box, ALLOWED)
        assert decision == "allow"
        assert len([line for line in err.splitlines() if "bad.toml" in line]) == 1
