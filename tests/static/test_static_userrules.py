"""User rules: deny wins, ask asks, allow lowers only what is medium or below; projects may only tighten."""

from __future__ import annotations

import os
from pathlib import Path

from static_helpers import HOME, cold_decision, judge, rule_ids

from guard.config import Config
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM, Risk, ToolCall
from guard.static.rules import userrules


def perms(**lists: list[str]) -> dict[str, list[str]]:
    return dict(lists)


class TestBashRules:
    def test_deny_blocks_and_names_the_rule(self) -> None:
        v = judge("rm -rf build", permissions=perms(deny=["Bash(rm:*)"]))
        assert v.decision == BLOCK and v.reasons[0].rule_id == "G190"
        assert "Bash(rm:*)" in v.reasons[0].message

    def test_deny_sees_through_wrappers(self) -> None:
        assert judge("sudo bash -c 'rm x'", permissions=perms(deny=["Bash(rm:*)"])).decision == BLOCK
        assert judge("find . -name x -exec rm {} +", permissions=perms(deny=["Bash(rm:*)"])).decision == BLOCK

    def test_deny_wins_over_allow(self) -> None:
        v = judge("npm run build", permissions=perms(allow=["Bash(npm:*)"], deny=["Bash(npm run build)"]))
        assert v.decision == BLOCK

    def test_ask_caps_at_confirm(self) -> None:
        v = judge("git push origin feature", permissions=perms(ask=["Bash(git push:*)"], allow=["Bash(git:*)"]))
        assert v.ceiling == REQUEST_CONFIRM and "G191" in rule_ids(v)

    def test_allow_lowers_medium_to_safe(self) -> None:
        base = judge("npm install left-pad")
        assert base.risk is Risk.MEDIUM
        v = judge("npm install left-pad", permissions=perms(allow=["Bash(npm install:*)"]))
        assert v.risk is Risk.SAFE and v.floor == AUTO_ALLOW and v.reasons[0].rule_id == "G192"

    def test_legacy_prefix_covers_colon_scripts(self) -> None:
        allow = perms(allow=["Bash(npm run test:*)"])
        assert judge("npm run test:unit", permissions=allow).floor == AUTO_ALLOW
        assert judge("npm run test", permissions=allow).floor == AUTO_ALLOW
        assert judge("npm run testing", permissions=allow).floor is None

    def test_allow_must_cover_every_command(self) -> None:
        v = judge("npm install && curl -X POST https://x.io", permissions=perms(allow=["Bash(npm install:*)"]))
        assert cold_decision(v) == REQUEST_CONFIRM

    def test_allow_never_overrides_high_or_critical(self) -> None:
        assert judge("rm -rf ~", permissions=perms(allow=["Bash(rm:*)"])).decision == BLOCK
        v = judge("git reset --hard", permissions=perms(allow=["Bash(git reset:*)"]))
        assert v.ceiling == REQUEST_CONFIRM and v.risk is Risk.HIGH

    def test_allow_never_overrides_what_guard_cannot_see(self) -> None:
        v = judge('eval "$X"', permissions=perms(allow=["Bash(eval:*)"]))
        assert v.ceiling == REQUEST_CONFIRM

    def test_wildcard_anywhere(self) -> None:
        assert judge("git log --oneline main", permissions=perms(deny=["Bash(git * main)"])).decision == BLOCK
        assert judge("git log --oneline dev", permissions=perms(deny=["Bash(git * main)"])).decision != BLOCK

    def test_bare_tool_name(self) -> None:
        assert judge("ls", permissions=perms(deny=["Bash"])).decision == BLOCK


class TestPathRules:
    def test_read_deny_covers_tool_and_shell(self) -> None:
        p = perms(deny=["Read(./secrets/**)"])
        assert judge(tool="Read", file_path="secrets/db.txt", permissions=p).decision == BLOCK
        assert judge("cat secrets/db.txt", permissions=p).decision == BLOCK
        assert judge("cat src/db.txt", permissions=p).decision != BLOCK

    def test_bare_name_matches_at_any_depth_and_through_shell_structure(self) -> None:
        p = perms(deny=["Read(.env)"])
        for command in ("cat .env", "{ cat .env; }", "cat <(ls) .env", "cat app/.env", "grep KEY .env"):
            assert judge(command, permissions=p).decision == BLOCK, command
        assert judge("cat .env.example", permissions=p).decision != BLOCK

    def test_write_deny_covers_redirections_and_tools(self) -> None:
        p = perms(deny=["Write(~/.ssh/**)"])
        assert judge("echo x >> ~/.ssh/config", permissions=p).decision == BLOCK
        assert judge(tool="Write", file_path="~/.ssh/x", content="x", permissions=p).decision == BLOCK
        assert judge(tool="Edit", file_path="/home/u/.ssh/config", new_string="x", permissions=p).decision == BLOCK
        assert judge("cat ~/.ssh/config", permissions=p).decision != BLOCK

    def test_edit_allow_in_project(self) -> None:
        p = perms(allow=["Edit(./src/**)"])
        assert judge(tool="Write", file_path="src/a.py", content="x", permissions=p).floor == AUTO_ALLOW
        assert judge(tool="Write", file_path="~/other/src/a.py", content="x", permissions=p).floor is None

    def test_absolute_and_home_forms(self) -> None:
        assert judge(tool="Read", file_path="/etc/hosts", permissions=perms(deny=["Read(//etc/**)"])).decision == BLOCK
        assert judge(tool="Read", file_path="/etc/hosts", permissions=perms(deny=["Read(/etc/**)"])).decision == BLOCK
        assert judge(tool="Read", file_path="~/notes", permissions=perms(deny=["Read(~/notes)"])).decision == BLOCK

    def test_relative_rules_follow_the_call_cwd(self) -> None:
        p = perms(deny=["Edit(./build/**)"])
        v = judge(tool="Write", file_path="/work/p/build/x", content="", cwd="/work/p", permissions=p)
        assert v.decision == BLOCK


class TestOtherTools:
    def test_web_fetch_domain(self) -> None:
        p = perms(ask=["WebFetch(domain:example.com)"])
        assert judge(tool="WebFetch", url="https://docs.example.com/x", permissions=p).ceiling == REQUEST_CONFIRM
        assert judge("curl https://api.example.com/v1", permissions=p).ceiling == REQUEST_CONFIRM
        allow = perms(allow=["WebFetch(domain:python.org)"])
        assert judge(tool="WebFetch", url="https://docs.python.org/3/", permissions=allow).floor == AUTO_ALLOW
        assert judge(tool="WebFetch", url="https://evil.org/python.org", permissions=allow).floor is None

    def test_unknown_tool_glob(self) -> None:
        p = perms(deny=["mcp__github__delete_*"], allow=["mcp__github__get_*"])
        assert judge(tool="mcp__github__delete_repo", repo="x/y", permissions=p).decision == BLOCK
        assert judge(tool="mcp__github__get_issue", number=1, permissions=p).floor == AUTO_ALLOW
        assert judge(tool="mcp__github__create_issue", permissions=p).floor is None

    def test_invalid_rules_are_reported_not_fatal(self) -> None:
        rules = userrules.load({"deny": ["Bash(", 3, "ok"], "allow": "Read"}, "t", None, HOME)
        assert rules.invalid and any(r.text == "Read" for r in rules.rules)


def _project(tmp_path: Path, text: str) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "sub").mkdir()
    (root / ".guard.toml").write_text(text, encoding="utf-8")
    return root


def _layer(tmp_path: Path, workspace_toml: str = "") -> StaticLayer:  # noqa: F821
    from guard.layers.static import StaticLayer

    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    if workspace_toml:
        (ws / "guard.toml").write_text(workspace_toml, encoding="utf-8")
    return StaticLayer(Config.load(ws, env={}), workspace=ws, home=HOME)


class TestProjectRules:
    def test_project_deny_applies_from_a_subdirectory(self, tmp_path: Path) -> None:
        root = _project(tmp_path, '[permissions]\ndeny = ["Bash(make deploy:*)"]\n')
        layer = _layer(tmp_path)
        v = layer.judge(ToolCall("Bash", {"command": "make deploy prod"}, cwd=str(root / "sub")))
        assert v.decision == BLOCK and "G190" in rule_ids(v)

    def test_project_cannot_loosen(self, tmp_path: Path) -> None:
        root = _project(tmp_path, '[permissions]\nallow = ["Bash(curl:*)", "Bash(rm:*)"]\n')
        layer = _layer(tmp_path)
        v = layer.judge(ToolCall("Bash", {"command": "curl -X POST https://x.io"}, cwd=str(root)))
        assert cold_decision(v) == REQUEST_CONFIRM
        assert any(r.rule_id == "G193" for r in v.reasons)
        assert layer.judge(ToolCall("Bash", {"command": "rm -rf ~"}, cwd=str(root))).decision == BLOCK

    def test_workspace_allow_still_works_next_to_a_project_file(self, tmp_path: Path) -> None:
        root = _project(tmp_path, '[permissions]\nask = ["Bash(npm publish:*)"]\n')
        layer = _layer(tmp_path, '[permissions]\nallow = ["Bash(npm install:*)"]\n')
        assert layer.judge(ToolCall("Bash", {"command": "npm install"}, cwd=str(root))).floor == AUTO_ALLOW
        v = layer.judge(ToolCall("Bash", {"command": "npm publish --dry-run"}, cwd=str(root)))
        assert v.ceiling == REQUEST_CONFIRM

    def test_edits_are_picked_up_by_mtime(self, tmp_path: Path) -> None:
        root = _project(tmp_path, "[permissions]\ndeny = []\n")
        layer = _layer(tmp_path)
        call = ToolCall("Bash", {"command": "make lint"}, cwd=str(root))
        assert layer.judge(call).decision != BLOCK
        path = root / ".guard.toml"
        path.write_text('[permissions]\ndeny = ["Bash(make:*)"]\n', encoding="utf-8")
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        assert layer.judge(call).decision == BLOCK

    def test_unreadable_project_file_is_reported(self, tmp_path: Path) -> None:
        root = _project(tmp_path, "[permissions\n")
        layer = _layer(tmp_path)
        explained = layer.explain(ToolCall("Bash", {"command": "ls"}, cwd=str(root)))
        assert explained["invalid_rules"]
        assert explained["verdict"]["risk"] == "safe"

    def test_project_rules_can_be_switched_off(self, tmp_path: Path) -> None:
        from guard.layers.static import StaticLayer

        root = _project(tmp_path, '[permissions]\ndeny = ["Bash(ls)"]\n')
        config = Config.load(None, env={}).with_overrides({"static.project_rules": False})
        layer = StaticLayer(config, home=HOME)
        assert layer.judge(ToolCall("Bash", {"command": "ls"}, cwd=str(root))).decision != BLOCK

    def test_workspace_rules_from_config(self, tmp_path: Path) -> None:
        layer = _layer(tmp_path, '[permissions]\ndeny = ["Read(./private/**)"]\n')
        v = layer.judge(ToolCall("Read", {"file_path": "private/a.txt"}))
        assert v.decision == BLOCK and "guard.toml" in v.reasons[0].message


class TestAllowRulesNameTheCommandNotItsSurroundings:
    """Found in review: allow rules must not cover what the rule's author never saw."""

    RULE = perms(allow=["Bash(npm install:*)"])

    def test_plain_call_is_covered(self) -> None:
        assert "G192" in rule_ids(judge("npm install", cwd="/work/proj", permissions=self.RULE))
        assert "G192" in rule_ids(
            judge("npm install > install.log 2>/dev/null", cwd="/work/proj", permissions=self.RULE)
        )

    def test_a_redirect_outside_the_project_is_judged_on_its_own(self) -> None:
        v = judge("npm install > ../elsewhere.txt", cwd="/work/proj", permissions=self.RULE)
        assert "G192" not in rule_ids(v) and v.floor is None

    def test_an_environment_prefix_is_judged_on_its_own(self) -> None:
        for cmd in ("NODE_OPTIONS=--require=/tmp/e.js npm install", "export X=1; npm install", "env A=b npm install"):
            assert "G192" not in rule_ids(judge(cmd, cwd="/work/proj", permissions=self.RULE)), cmd


class TestDomainRulesUseTheRealHost:
    RULE = perms(allow=["WebFetch(domain:docs.python.org)"])

    def test_the_named_domain_is_covered(self) -> None:
        v = judge(tool="WebFetch", url="https://docs.python.org/3/library/", permissions=self.RULE)
        assert v.floor == AUTO_ALLOW

    def test_userinfo_and_fragment_tricks_do_not_borrow_the_domain(self) -> None:
        for url in (
            "https://evil.example#@docs.python.org/",
            "https://evil.example?@docs.python.org/",
            "https://evil.example\\@docs.python.org/",
            "https://docs.python.org.evil.example/",
        ):
            v = judge(tool="WebFetch", url=url, permissions=self.RULE)
            assert v.floor is None and "G192" not in rule_ids(v), url

    def test_credentials_before_the_host_are_not_the_host(self) -> None:
        v = judge(tool="WebFetch", url="https://docs.python.org@evil.example/", permissions=self.RULE)
        assert v.floor is None
