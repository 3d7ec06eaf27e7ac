"""guard rules apply / revert / list: candidate → active → reverted, and guard.toml edited with care."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from guard import Guard
from guard.config import Config
from guard.errors import InputError
from guard.model import DecisionRecord, Risk, ToolCall
from guard.policy import rules

from .helpers import Stream, cli, play
from .test_suggest import run_suggest

HAND_WRITTEN = """\
# my settings
[thresholds]
auto_allow = 80  # stricter

[permissions]
allow = ["Bash(ls:*)"]  # mine
"""


@pytest.fixture
def suggested(workspace: Path, stream: Stream) -> dict[str, str]:
    """Rule text → id for one allow candidate, one deny candidate and one held rule."""
    for s in ("s1", "s2", "s3"):
        stream.approved("npm run test", s).denied("docker system prune", s)
        stream.approved("kubectl apply -f k8s/", s)
    stream.denied("kubectl apply -f k8s/", "s4")
    play(workspace, stream)
    rules.record(workspace, run_suggest(workspace))
    (workspace / "guard.toml").write_text(HAND_WRITTEN)
    return {r.rule: r.id for r in rules.load(workspace).values()}


def permissions(workspace: Path) -> dict[str, list[str]]:
    return tomllib.loads((workspace / "guard.toml").read_text())["permissions"]  # type: ignore[no-any-return]


def test_dry_run_shows_the_change_and_writes_nothing(workspace: Path, suggested: dict[str, str]) -> None:
    result = rules.apply(workspace, dry_run=True)
    assert {(c.rule, c.action) for c in result.changes} == {
        ("Bash(npm run test)", "add"),
        ("Bash(docker system prune:*)", "add"),
    }
    assert '+    "Bash(docker system prune:*)",  # guard rules: deny-' in result.diff
    assert (workspace / "guard.toml").read_text() == HAND_WRITTEN
    assert {r.status for r in rules.load(workspace).values()} == {"candidate", "held"}


def test_apply_writes_candidates_and_keeps_everything_else(workspace: Path, suggested: dict[str, str]) -> None:
    rules.apply(workspace)
    text = (workspace / "guard.toml").read_text()
    for line in ("# my settings", "auto_allow = 80  # stricter", "[thresholds]"):
        assert line in text
    assert permissions(workspace) == {
        "allow": ["Bash(ls:*)", "Bash(npm run test)"],
        "deny": ["Bash(docker system prune:*)"],
    }
    book = rules.load(workspace)
    assert book[suggested["Bash(npm run test)"]].status == "active"
    assert book[suggested["Bash(npm run test)"]].applied_at
    assert book[suggested["Bash(kubectl apply -f k8s/)"]].status == "held"  # held: only by id
    assert Config.load(workspace).section("permissions")["allow"][-1] == "Bash(npm run test)"


def test_apply_is_idempotent(workspace: Path, suggested: dict[str, str]) -> None:
    rules.apply(workspace)
    once = (workspace / "guard.toml").read_text()
    result = rules.apply(workspace, list(suggested.values()))
    assert (workspace / "guard.toml").read_text().count("Bash(npm run test)") == 1
    assert {c.action for c in result.changes if c.rule != "Bash(kubectl apply -f k8s/)"} == {"already active"}
    assert once != (workspace / "guard.toml").read_text()  # the held one was added by id


def test_a_held_rule_is_applied_only_when_named(workspace: Path, suggested: dict[str, str]) -> None:
    rid = suggested["Bash(kubectl apply -f k8s/)"]
    rules.apply(workspace, [rid])
    assert permissions(workspace)["allow"] == ["Bash(ls:*)", "Bash(kubectl apply -f k8s/)"]
    assert "deny" not in permissions(workspace)  # the candidates were not named
    assert rules.load(workspace)[rid].status == "active"


def test_an_applied_rule_turns_a_prompt_into_an_allow_through_the_shipped_chain(
    workspace: Path, stream: Stream
) -> None:
    """npm run test is low, yet asked about after the person refused other calls of its family
    (npm run); once applied, the static layer reads the rule from guard.toml (G192) and lets it
    run; reverted, the prompt is back. (A low-risk call's own failures no longer make guard ask,
    issue 14; refusals of other programs, ``make``, no longer drag it, issue 15.)"""
    for s in ("s1", "s2", "s3"):
        stream.approved("npm run test", s)
    for s in ("s1", "s2"):
        for target in ("build", "lint", "check"):
            stream.denied(f"npm run {target}", s)
    play(workspace, stream)

    def decide(command: str) -> DecisionRecord:
        with Guard(workspace, {"memory.backend": "history"}) as g:
            return g.decide_call(ToolCall("Bash", {"command": command}, "s3", timestamp=stream.now), save=False)

    before = decide("npm run test")
    assert before.risk == Risk.LOW and all(r.rule_id != "G192" for r in before.reasons)
    assert decide("npm run test -- --watch").decision == "request_confirm"
    rules.record(workspace, run_suggest(workspace))
    [rid] = [r.id for r in rules.load(workspace).values() if r.rule == "Bash(npm run test)"]
    rules.apply(workspace, [rid])
    allowed = decide("npm run test")
    assert allowed.decision == "auto_allow" and allowed.reasons[0].rule_id == "G192"
    assert decide("npm run testing").decision == "request_confirm"  # not covered
    assert decide("npm run test -- --watch").decision == "request_confirm"  # exact: other arguments are not
    rules.revert(workspace, rid)
    assert all(r.rule_id != "G192" for r in decide("npm run test").reasons)


def test_revert_removes_exactly_that_rule_and_it_is_not_suggested_again(
    workspace: Path, suggested: dict[str, str]
) -> None:
    rules.apply(workspace)
    rid = suggested["Bash(npm run test)"]
    rules.revert(workspace, rid)
    assert permissions(workspace) == {"allow": ["Bash(ls:*)"], "deny": ["Bash(docker system prune:*)"]}
    assert "allow = [" in (workspace / "guard.toml").read_text()
    assert "# mine" in (workspace / "guard.toml").read_text()
    assert rules.load(workspace)[rid].status == "reverted"
    again = run_suggest(workspace)
    assert "Bash(npm run test)" not in {s.rule for s in again.suggested}
    assert again.counts["reverted"] == 1
    rules.apply(workspace, [rid])  # a person may bring it back by id
    assert "Bash(npm run test)" in permissions(workspace)["allow"]


def test_revert_of_a_rule_removed_by_hand_only_records_it(workspace: Path, suggested: dict[str, str]) -> None:
    rules.apply(workspace)
    (workspace / "guard.toml").write_text(HAND_WRITTEN)
    rid = suggested["Bash(npm run test)"]
    result = rules.revert(workspace, rid)
    assert [c.action for c in result.changes] == ["not in guard.toml"]
    assert (workspace / "guard.toml").read_text() == HAND_WRITTEN


def test_unknown_ids_are_an_error_and_change_nothing(workspace: Path, suggested: dict[str, str]) -> None:
    with pytest.raises(InputError, match="unknown rule id"):
        rules.apply(workspace, ["allow-0000000"])
    with pytest.raises(InputError, match="unknown rule id"):
        rules.revert(workspace, "allow-0000000")
    assert (workspace / "guard.toml").read_text() == HAND_WRITTEN


def test_a_new_suggest_run_keeps_active_rules_and_replaces_stale_candidates(
    workspace: Path, suggested: dict[str, str], stream: Stream
) -> None:
    rules.apply(workspace, [suggested["Bash(npm run test)"]])
    stream.denied("docker system prune", "s9")
    stream.approved("docker system prune", "s9")  # now contradicted
    play(workspace, stream)
    rules.record(workspace, run_suggest(workspace))
    statuses = {r.rule: r.status for r in rules.load(workspace).values()}
    assert statuses["Bash(npm run test)"] == "active"
    assert statuses["Bash(docker system prune:*)"] == "held"


def test_listing_shows_learned_and_hand_written_rules(workspace: Path, suggested: dict[str, str]) -> None:
    rules.apply(workspace)
    rows = {(r["rule"], r["status"], r["in_config"]) for r in rules.listing(workspace)}
    assert ("Bash(ls:*)", "manual", True) in rows
    assert ("Bash(npm run test)", "active", True) in rows
    assert ("Bash(kubectl apply -f k8s/)", "held", False) in rows


def test_cli_apply_revert_list(workspace: Path, suggested: dict[str, str]) -> None:
    dry = cli("rules", "apply", "--dry-run", workspace=workspace)
    assert "would add" in dry.stdout and (workspace / "guard.toml").read_text() == HAND_WRITTEN
    out = json.loads(cli("rules", "apply", "--json", workspace=workspace).stdout)
    assert {c["action"] for c in out["changes"]} == {"add"} and not out["dry_run"]
    rid = suggested["Bash(npm run test)"]
    reverted = cli("rules", "revert", rid, workspace=workspace)
    assert ": remove" in reverted.stdout and '+allow = ["Bash(ls:*)"]  # mine' in reverted.stdout
    listed = cli("rules", "list", workspace=workspace).stdout
    assert rid in listed and "reverted" in listed and "manual" in listed
    bad = cli("rules", "revert", "allow-0000000", workspace=workspace, check=False)
    assert bad.returncode == 2 and "unknown rule id" in bad.stderr


def test_cli_refuses_to_edit_a_guard_toml_it_cannot_edit_safely(workspace: Path, suggested: dict[str, str]) -> None:
    (workspace / "guard.toml").write_text('permissions.allow = ["Bash(ls:*)"]\n')
    bad = cli("rules", "apply", workspace=workspace, check=False)
    assert bad.returncode == 2 and "[permissions] table" in bad.stderr
    assert (workspace / "guard.toml").read_text() == 'permissions.allow = ["Bash(ls:*)"]\n'
