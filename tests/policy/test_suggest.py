"""guard rules suggest: rules only where answers agree, are verified, and the static layer does not object."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs

from guard import Guard
from guard.policy import rules
from guard.policy.suggest import Policy, SuggestResult, rule_id, suggest

from .helpers import Stream, cli, play


def run_suggest(workspace: Path, **policy: Any) -> SuggestResult:
    with Guard(workspace, {"memory.backend": "history"}) as g:
        return suggest(
            workspace,
            g.chain.layers[0],
            g.config,
            policy=attrs.evolve(Policy.from_config(g.config), **policy),
            configured=rules.configured_rules(workspace),
            skip=rules.skip_states(workspace),
        )


def by_rule(result: SuggestResult) -> dict[str, str]:
    return {s.rule: s.status for s in (*result.suggested, *result.held, *result.rejected)}


class TestAllowRules:
    def test_an_operation_approved_and_run_in_several_sessions_is_suggested(
        self, workspace: Path, stream: Stream
    ) -> None:
        stream.approved("npm run test", "s1").approved("npm run test", "s2").approved("npm  run test", "s3")
        stream.approved("npm run test -- --watch", "s1")  # another operation: its own evidence
        play(workspace, stream)
        result = run_suggest(workspace)
        [s] = result.suggested
        assert (s.kind, s.rule, s.status) == ("allow", "Bash(npm run test)", "candidate")
        assert (s.evidence.verified, s.evidence.sessions, s.evidence.contradictions) == (3, 3, 0)
        assert s.evidence.examples == ("npm run test",)
        # Low (an ordinary dev command, allowed at a cold start), yet asked about and approved each
        # time: a rule still saves those prompts, whatever made guard ask.
        assert s.evidence.static_risk == "low"
        assert s.id == rule_id("allow", "Bash(npm run test)")
        assert s.replay is not None and s.replay["covers"] == "exactly `npm run test`, no other arguments"
        assert s.replay["past_calls"] == 3 and s.replay["not_covered"] == [
            {"call": "npm run test -- --watch", "count": 1}
        ]
        assert s.replay["widens"] == [] and s.replay["variants_checked"] >= 8

    def test_enough_approvals_in_one_session_are_not_enough(self, workspace: Path, stream: Stream) -> None:
        for _ in range(5):
            stream.approved("npm run test", "s1")
        play(workspace, stream)
        result = run_suggest(workspace)
        assert not result.suggested and result.counts["insufficient"] == 1

    def test_two_approvals_are_below_the_minimum(self, workspace: Path, stream: Stream) -> None:
        stream.approved("npm run test", "s1").approved("npm run test", "s2")
        play(workspace, stream)
        assert not run_suggest(workspace).suggested
        assert run_suggest(workspace, min_observations=2).suggested

    def test_only_approvals_followed_by_a_successful_run_count(self, workspace: Path, stream: Stream) -> None:
        stream.approved("make build", "s1").approved("make build", "s2", ok=False).approved("make build", "s3", ok=None)
        stream.approved("make build", "s4")
        play(workspace, stream)
        assert not run_suggest(workspace).suggested  # 2 verified of 4 approvals
        [s] = run_suggest(workspace, min_observations=2).suggested
        assert (s.evidence.observations, s.evidence.verified, s.evidence.failures) == (4, 2, 1)

    def test_a_run_in_another_session_does_not_verify_an_approval(self, workspace: Path, stream: Stream) -> None:
        for s in ("s1", "s2", "s3"):
            stream.approved("make build", s, ok=None)
            stream.result({"command": "make build"}, "other")
        play(workspace, stream)
        assert not run_suggest(workspace).suggested

    def test_one_denial_holds_the_operation_for_a_person(self, workspace: Path, stream: Stream) -> None:
        for s in ("s1", "s2", "s3"):
            stream.approved("kubectl apply -f k8s/", s)
        stream.denied("kubectl apply -f k8s/", "s4")
        play(workspace, stream)
        result = run_suggest(workspace)
        assert not result.suggested and not result.rejected
        [h] = result.held
        assert (h.kind, h.rule, h.status) == ("allow", "Bash(kubectl apply -f k8s/)", "held")
        assert "contradicted" in h.reason and h.evidence.contradictions == 1
        assert h.evidence.static_risk == "medium"

    def test_a_refused_variant_does_not_hold_the_operation_and_stays_uncovered(
        self, workspace: Path, stream: Stream
    ) -> None:
        """The learned rule covers the approved operation only: the refused prod variant is not under it."""
        for s in ("s1", "s2", "s3"):
            stream.approved("kubectl apply -f k8s/dev.yaml", s)
        stream.denied("kubectl apply -f k8s/prod.yaml", "s4")
        play(workspace, stream)
        [s] = run_suggest(workspace).suggested
        assert s.rule == "Bash(kubectl apply -f k8s/dev.yaml)"
        assert s.replay is not None
        assert {"call": "kubectl apply -f k8s/prod.yaml", "count": 1} in s.replay["not_covered"]

    def test_the_static_gate_rejects_an_observed_high_risk_operation(self, workspace: Path, stream: Stream) -> None:
        for s in ("s1", "s2", "s3"):
            stream.approved("git push --force origin feature", s)
        play(workspace, stream)
        result = run_suggest(workspace)
        assert not result.suggested and not result.held
        [r] = result.rejected
        assert r.rule == "Bash(git push --force origin feature)" and "never an allow rule" in r.reason

    def test_an_exact_rule_never_covers_a_critical_extension(self, workspace: Path, stream: Stream) -> None:
        """Learned from ``rm -rf build``: the rule is that command, not ``rm -rf ~`` (the old prefix rule)."""
        for s in ("s1", "s2", "s3"):
            stream.approved("rm -rf build", s)
        play(workspace, stream)
        result = run_suggest(workspace)
        assert [s.rule for s in result.suggested] == ["Bash(rm -rf build)"]
        from guard.policy.patterns import parse_rule

        pattern = parse_rule("Bash(rm -rf build)")
        assert pattern is not None and not pattern.covers("Bash", "rm -rf build ~")

    def test_an_observed_critical_command_is_rejected_even_when_contradicted(
        self, workspace: Path, stream: Stream
    ) -> None:
        # Approved by hand elsewhere (another program wrote the history): the static layer rates it
        # critical, and a denial does not make it a question for a person.
        for s in ("s1", "s2", "s3"):
            stream.approved("rm -rf /usr/lib", s)
        stream.denied("rm -rf /usr/lib", "s4")
        play(workspace, stream)
        result = run_suggest(workspace)
        assert not result.held
        [r] = [r for r in result.rejected if r.kind == "allow"]
        assert "'rm -rf /usr/lib' (an observed call)" in r.reason and "critical" in r.reason

    def test_file_writes_generalise_to_their_directory(self, workspace: Path, stream: Stream) -> None:
        for i, s in enumerate(("s1", "s2", "s1")):
            stream.approved(f"src/mod{i}.py", s, tool="Write")
        play(workspace, stream)
        [s] = run_suggest(workspace).suggested
        assert s.rule == "Write(src/**)"

    def test_a_directory_rule_covering_guards_workspace_is_rejected(self, workspace: Path, stream: Stream) -> None:
        for i, s in enumerate(("s1", "s2", "s3")):
            stream.approved(str(workspace / "notes" / f"n{i}.md"), s, tool="Write")
        play(workspace, stream)
        [r] = run_suggest(workspace).rejected
        assert "guard's own workspace" in r.reason

    def test_a_rule_the_static_layer_would_not_read_as_covering_its_calls_is_rejected(
        self, workspace: Path, stream: Stream
    ) -> None:
        # The history's signatures fold blanks: "my  docs/n0.md" is "my docs/n0.md" there. A rule
        # learned from that text would not cover the real path, which is all the static layer sees.
        for i, s in enumerate(("s1", "s2", "s3")):
            stream.approved(f"my  docs/n{i}.md", s, tool="Write").approved(f"our docs/n{i}.md", s, tool="Write")
        play(workspace, stream)
        result = run_suggest(workspace)
        assert [s.rule for s in result.suggested] == ["Write(our docs/**)"]
        [r] = result.rejected
        assert r.rule == "Write(my docs/**)" and "would not read" in r.reason and "'my  docs/n0.md'" in r.reason


class TestDenyRules:
    def test_a_pattern_refused_in_several_sessions_becomes_a_deny_candidate(
        self, workspace: Path, stream: Stream
    ) -> None:
        stream.denied("docker system prune -a", "s1").denied("docker system prune", "s2").denied(
            "docker system prune", "s2"
        )
        play(workspace, stream)
        [s] = run_suggest(workspace).suggested
        assert (s.kind, s.rule) == ("deny", "Bash(docker system prune:*)")
        assert (s.evidence.verified, s.evidence.sessions) == (3, 2)

    def test_a_denied_call_run_successfully_anyway_contradicts_the_denial(
        self, workspace: Path, stream: Stream
    ) -> None:
        stream.denied("docker system prune", "s1").denied("docker system prune", "s2").denied(
            "docker system prune", "s3"
        )
        stream.result({"command": "docker system prune"}, "s3")
        play(workspace, stream)
        result = run_suggest(workspace, min_observations=2)
        assert not result.suggested
        [h] = result.held
        assert h.kind == "deny" and "run anyway" in h.reason


class TestRunLimits:
    def test_the_cap_keeps_the_strongest_and_reports_what_it_left_off(self, workspace: Path, stream: Stream) -> None:
        programs = ["alpha", "bravo", "charlie", "delta", "echo"]
        for n, prog in enumerate(programs):
            for i in range(3 + n):
                stream.approved(f"{prog} run", f"s{i % 2}")
        play(workspace, stream)
        result = run_suggest(workspace, max_suggestions=2)
        assert [s.rule for s in result.suggested] == ["Bash(echo run)", "Bash(delta run)"]
        assert result.cap_hit and result.counts["left_off"] == 3
        assert result.to_dict()["cap"] == {"limit": 2, "hit": True, "left_off": 3}

    def test_rules_already_in_guard_toml_are_not_suggested_again(self, workspace: Path, stream: Stream) -> None:
        for s in ("s1", "s2", "s3"):
            stream.approved("npm run test", s)
        play(workspace, stream)
        (workspace / "guard.toml").write_text('[permissions]\nallow = ["Bash(npm run test)"]\n')
        result = run_suggest(workspace)
        assert not result.suggested and result.counts["already_configured"] == 1

    def test_ids_are_stable_and_depend_on_kind_and_rule(self) -> None:
        assert rule_id("allow", "Bash(git status:*)") == rule_id("allow", "Bash(git status:*)")
        assert rule_id("allow", "Bash(git status:*)") != rule_id("deny", "Bash(git status:*)")
        assert rule_id("allow", "Bash(git status:*)").startswith("allow-")


def test_cli_suggest_prints_evidence_and_records_candidates(workspace: Path, stream: Stream) -> None:
    for s in ("s1", "s2", "s3"):
        stream.approved("npm run test", s).approved("rm -rf build", s)
        stream.approved("kubectl apply -f k8s/", s)
    stream.denied("kubectl apply -f k8s/", "s3")
    play(workspace, stream)
    out = json.loads(cli("rules", "suggest", "--json", workspace=workspace).stdout)
    assert [s["rule"] for s in out["suggested"]] == ["Bash(npm run test)", "Bash(rm -rf build)"]
    assert [s["rule"] for s in out["held"]] == ["Bash(kubectl apply -f k8s/)"]
    assert out["suggested"][0]["evidence"]["verified"] == 3
    book = rules.load(workspace)
    assert {r.rule: r.status for r in book.values()} == {
        "Bash(npm run test)": "candidate",
        "Bash(rm -rf build)": "candidate",
        "Bash(kubectl apply -f k8s/)": "held",
    }
    assert (workspace / "rules.json").stat().st_mode & 0o777 == 0o600
    text = cli("rules", "suggest", workspace=workspace).stdout
    assert "held for you" in text and "covers exactly `npm run test`, no other arguments" in text
    assert "replay: would have allowed 3 past call(s): npm run test (3x)" in text
    assert "target-changing variants is covered" in text
