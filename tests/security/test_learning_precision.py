"""Precise learning (issue 15): the person's settings win; every record carries real components.

Everything goes through the public API (``Guard.decide``, the seed's engine) or the CLI in a
subprocess with a fake HOME. Dangerous commands are data handed to guard, never run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from guard.engine import MultiSourceFusionEngine
from guard.model import AUTO_ALLOW, BLOCK, COMPONENT_KEYS, REQUEST_CONFIRM

READ = {"command": "cat README.md"}


def _toml(workspace: Path, text: str) -> Path:
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "guard.toml").write_text(text)
    return workspace


# -- deliverable 5: the person's settings win ---------------------------------------------------


def test_default_floor_still_lets_a_fresh_read_run(make_guard: Any) -> None:
    rec = make_guard().decide("bash", READ)
    assert rec.decision == AUTO_ALLOW


@pytest.mark.parametrize("threshold", [95, 99, 101])
def test_auto_allow_threshold_in_the_file_is_honoured_for_safe_reads(
    make_guard: Any, workspace: Path, threshold: int
) -> None:
    _toml(workspace, f"[thresholds]\nauto_allow = {threshold}\n")
    rec = make_guard().decide("bash", READ)
    assert rec.final_score < threshold
    assert rec.decision == REQUEST_CONFIRM
    assert any("G305" in n and "not applied" in n for n in rec.notes)


def test_threshold_from_the_environment_is_honoured(make_guard: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GUARD_THRESHOLDS_AUTO_ALLOW", "99")
    rec = make_guard().decide("bash", READ)
    assert rec.decision == REQUEST_CONFIRM and rec.final_score < 99


def test_a_low_threshold_the_person_set_still_allows_on_score(make_guard: Any, workspace: Path) -> None:
    _toml(workspace, "[thresholds]\nauto_allow = 60\n")
    assert make_guard().decide("bash", READ).decision == AUTO_ALLOW  # 90 >= 60: the score itself allows


def test_seed_engine_thresholds_are_honoured(workspace: Path) -> None:
    engine = MultiSourceFusionEngine(workspace, {"fusion.mode": "seed", "system.health": 90})
    try:
        before = engine.fuse_decision_context("bash", READ)
        assert before.decision == AUTO_ALLOW  # the seed scores a fresh read ~60; the floor lifts it
        assert any("G305 static floor (fusion.static_floor)" in n for n in before.record.notes)
        engine.thresholds = {"auto_allow": 95, "request_confirm": 50, "block": 0}
        after = engine.fuse_decision_context("bash", READ)
        assert after.final_score < 95 and after.decision == REQUEST_CONFIRM
    finally:
        engine.close()


def test_static_floor_is_a_named_setting(make_guard: Any) -> None:
    g = make_guard(config={"fusion.mode": "seed"})
    lifted = g.decide("bash", READ)
    assert lifted.decision == AUTO_ALLOW and lifted.final_score < 75
    assert any(n.startswith("G305 static floor (fusion.static_floor)") for n in lifted.notes)
    off = make_guard(config={"fusion.mode": "seed", "fusion.static_floor": False}).decide("bash", READ)
    assert off.decision == REQUEST_CONFIRM and not any("G305" in n for n in off.notes)


def test_weights_not_summing_to_one_are_rejected_naming_the_key(make_guard: Any, workspace: Path) -> None:
    _toml(workspace, "[weights]\nmemory = 0.40\n")  # the README's own example: sums to 1.10
    g = make_guard()
    assert g.config.weights == {"memory": 0.30, "cmd_success": 0.30, "user_pref": 0.25, "system": 0.15}
    assert any("weights.memory" in w and "1.100" in w for w in g.config.warnings)


def test_weights_summing_to_one_within_tolerance_are_kept(make_guard: Any, workspace: Path) -> None:
    _toml(workspace, "[weights]\nmemory = 0.40\nsystem = 0.0505\n")  # 1.0005
    assert make_guard().config.get("weights.memory") == 0.40


def test_thresholds_out_of_order_from_code_are_rejected(make_guard: Any) -> None:
    g = make_guard(config={"thresholds.auto_allow": 40, "thresholds.request_confirm": 60})
    assert g.config.thresholds["auto_allow"] == 75.0 and g.config.thresholds["request_confirm"] == 50.0
    assert any("thresholds.request_confirm" in w for w in g.config.warnings)


def test_low_health_weights_are_not_rejected(make_guard: Any) -> None:
    # the seed's dynamic weights do not sum to 1 on purpose
    g = make_guard(config={"fusion.low_health_user_pref": 0.1, "fusion.low_health_memory": 0.2})
    assert not any("weights sum" in w for w in g.config.warnings)


# -- deliverable 7: every record carries real components --------------------------------------


def test_a_static_block_carries_the_fused_components(make_guard: Any, workspace: Path) -> None:
    g = make_guard()
    rec = g.decide("bash", {"command": "rm -rf /"})
    assert rec.decision == BLOCK
    fusion = rec.layer("fusion")
    assert fusion is not None and fusion.data.get("after_block") is True
    assert fusion.decision is None and not fusion.reasons  # scored, not judged
    # critical prior is 0 and nothing is known: every dimension is the prior, except memory's
    # unconfident default and the pinned system health (90, weighed for critical calls)
    assert rec.components["system"] == 90.0
    assert rec.final_score == pytest.approx(sum(rec.weights[k] * rec.components[k] for k in COMPONENT_KEYS), abs=0.01)
    assert rec.final_score > 0
    g.flush()
    line = json.loads((workspace / ".fusion-decisions.jsonl").read_text().splitlines()[-1])
    assert line["decision"] == BLOCK and line["components"]["system"] == 90.0
    assert line["fusion_score"] == round(rec.final_score, 2)


# -- deliverables 1, 2, 4: hierarchical evidence, no transfer to riskier or other targets --------

M = 4.0  # fusion.prior_strength
PRIORS = {"safe": 90.0, "low": 80.0, "medium": 55.0}
W = {"memory": 0.30, "cmd_success": 0.30, "user_pref": 0.25, "system": 0.15}

LEARNED = [
    "pip install requests",
    "npm install lodash",
    "git push origin feature-x",
    "kubectl apply -f k8s/dev.yaml",
    "curl https://api.example.com/v1/items",
]
VARIANTS = [
    "pip install reqeusts",
    "pip install git+https://x.example/p",
    "pip install requests --index-url http://x.example",
    "npm install left-padx",
    "git push origin main",
    "kubectl apply -f k8s/prod.yaml",
    "curl https://other.example.net/v1/items",
]


def _learn(g: Any, command: str, times: int, *, approved: bool = True, ok: bool = True) -> None:
    for _ in range(times):
        g.record_interaction("bash", {"command": command}, session_id="history", approved=approved)
        g.record_result("bash", {"command": command}, session_id="history", success=ok)


def _decide(g: Any, command: str, session: str = "fresh") -> Any:
    return g.decide("bash", {"command": command}, session_id=session, save=False)


@pytest.fixture
def trained(make_guard: Any) -> Any:
    from freezegun import freeze_time

    with freeze_time("2026-03-02 10:00:00"):
        g = make_guard()
        for command in LEARNED:
            _learn(g, command, 10)
        yield g


def test_exact_operations_are_allowed_after_ten_approvals(trained: Any) -> None:
    for i, command in enumerate(LEARNED):
        rec = _decide(trained, command, f"fresh-{i}")
        assert rec.decision == AUTO_ALLOW, (command, rec.final_score, rec.notes)


@pytest.mark.parametrize("variant", VARIANTS)
def test_variants_inherit_no_trust(trained: Any, variant: str) -> None:
    rec = _decide(trained, variant)
    assert rec.decision != AUTO_ALLOW, (variant, rec.final_score)
    prior = PRIORS.get(rec.risk.label, 50.0)
    for key in ("memory", "cmd_success", "user_pref"):
        assert rec.components[key] <= prior + 1e-9, (variant, key, rec.components)


def test_worked_numbers_exact_and_variant(trained: Any) -> None:
    """By hand, from docs/fusion.md: medium prior 55, m = 4, 10 approvals and 10 successes, no decay."""
    op = (10 * 100 + M * 55) / (10 + M)  # 87.142857: operation shrunk toward min(family, prior) = 55
    memory = 10 / 14 * 100 + 4 / 14 * 55  # the exact call's runs, confidence n/(n+m)
    exact = _decide(trained, "pip install requests")
    assert exact.risk.label == "medium"
    assert exact.components["cmd_success"] == pytest.approx(op, abs=0.01)
    assert exact.components["user_pref"] == pytest.approx(op, abs=0.01)
    assert exact.components["memory"] == pytest.approx(memory, abs=0.01)
    expected = W["memory"] * memory + (W["cmd_success"] + W["user_pref"]) * op + W["system"] * 90
    assert exact.final_score == pytest.approx(expected, abs=0.01)  # 87.57
    variant = _decide(trained, "pip install reqeusts")
    assert variant.final_score == pytest.approx(0.85 * 55 + 0.15 * 90, abs=0.01)  # 60.25: the prior, nothing more


def test_neighbours_refusals_do_transfer(make_guard: Any) -> None:
    from freezegun import freeze_time

    with freeze_time("2026-03-02 10:00:00"):
        g = make_guard()
        _learn(g, "pip install leftpad", 6, approved=False, ok=False)
        rec = _decide(g, "pip install leftpad2")
        family = (6 * 0 + M * 55) / (6 + M)  # 22.0: the family shrunk toward the prior
        assert rec.components["user_pref"] == pytest.approx(family, abs=0.01)
        assert rec.components["cmd_success"] == pytest.approx(family, abs=0.01)
        # another family is untouched
        other = _decide(g, "npm install lodash")
        assert other.components["user_pref"] == pytest.approx(55.0, abs=0.01)


def test_failures_of_one_command_do_not_drag_another(make_guard: Any) -> None:
    from freezegun import freeze_time

    with freeze_time("2026-03-02 10:00:00"):
        g = make_guard()
        _learn(g, "make deploy-staging", 15, approved=False, ok=False)
        _learn(g, "make lint", 15)
        diff = _decide(g, "git diff", "s-diff")
        assert diff.final_score == pytest.approx(90.0, abs=0.01)  # safe prior, untouched (main: 71.5)
        assert diff.decision == AUTO_ALLOW
        lint = _decide(g, "make lint", "s-lint")
        op = (15 * 100 + M * 80) / (15 + M)  # 95.79 (low prior 80; the family is the operation itself)
        assert lint.components["user_pref"] == pytest.approx(op, abs=0.01)
        assert lint.final_score == pytest.approx(0.85 * op + 0.15 * 80, abs=0.01)  # 93.42; main: 71.1
        assert lint.decision == AUTO_ALLOW
        staging = _decide(g, "make deploy-staging", "s-staging")
        assert staging.decision != AUTO_ALLOW


def test_the_record_shows_each_level(trained: Any) -> None:
    rec = _decide(trained, "pip install reqeusts")
    fusion = rec.layer("fusion")
    assert fusion is not None
    levels = fusion.data["dimensions"]["user_pref"]["levels"]
    assert levels["family"]["name"] == "pip install" and levels["family"]["of"] == 10
    assert levels["operation"]["n"] == 0 and levels["inherited"] == 55.0


def test_seed_mode_keeps_per_tool_formulas(make_guard: Any) -> None:
    from freezegun import freeze_time

    with freeze_time("2026-03-02 10:00:00"):
        g = make_guard(config={"fusion.mode": "seed"})
        _learn(g, "pip install requests", 10)
        _learn(g, "make deploy-staging", 10, approved=False, ok=False)
        rec = _decide(g, "pip install reqeusts")
        assert rec.components["cmd_success"] == 50.0  # 10/20 runs of the tool succeeded
        assert rec.components["user_pref"] == pytest.approx(0.5 * 100 * 0.6 + 0.5 * 100 * 0.4)


def test_a_new_process_uses_the_history_from_its_first_call(tmp_path: Path) -> None:
    """``guard feed`` writes the history; each ``guard check`` is a new process without LanceDB."""
    import subprocess

    from tests.conftest import GUARD_CMD, guard_cli_env

    ws = tmp_path / "ws"
    env = guard_cli_env() | {"HOME": str(tmp_path / "home"), "GUARD_HOME": str(tmp_path / "gh")}
    env["GUARD_MEMORY_BACKEND"] = "history"
    lines = []
    for command, ok in (("make lint", True), ("make deploy-staging", False)):
        params = {"command": command}
        for _ in range(15):
            lines.append({"event": "tool_dispatch", "tool": "bash", "params": params, "session_id": "h"})
            lines.append(
                {
                    "event": "user_confirmation",
                    "tool": "bash",
                    "params": params,
                    "action": "approved" if ok else "denied",
                }
            )
            lines.append(
                {"event": "tool_result", "tool": "bash", "params": params, "status": "success" if ok else "failure"}
            )
    (tmp_path / "feed.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    subprocess.run(
        [*GUARD_CMD, "feed", "--workspace", str(ws), str(tmp_path / "feed.jsonl")],
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )

    def check(command: str) -> dict[str, Any]:
        session = ["--session-id", f"new-{command}"]
        out = subprocess.run(
            [*GUARD_CMD, "check", "bash", json.dumps({"command": command}), "--json", "--workspace", str(ws), *session],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return dict(json.loads(out.stdout))

    approved, refused = check("make lint"), check("make deploy-staging")
    assert approved["decision"] == AUTO_ALLOW
    assert refused["decision"] != AUTO_ALLOW
    # main: both 66.3; the refusals alone part them (its failures are floored at its prior, issue 14)
    assert approved["fusion_score"] - refused["fusion_score"] > 25
    assert check("make lint --jobs=64")["decision"] != BLOCK  # a variant: the prior, not the refusals


# -- the property: no transfer, for generated operations and variants ---------------------------

_NAME = "abcdefghijklmnopqrstuvwxyz0123456789-"


def _targets() -> Any:
    from hypothesis import strategies as st

    return st.text(alphabet=_NAME, min_size=1, max_size=10).filter(lambda t: t[0].isalpha())


FAMILIES = (
    "pip install {}",
    "npm install {}",
    "git push origin {}",
    "kubectl apply -f k8s/{}.yaml",
    "curl https://{}.example.com/api",
    "cargo add {}",
)


def test_property_no_transfer_to_another_target() -> None:
    import tempfile

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from guard import Guard

    @settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        family=st.sampled_from(FAMILIES),
        learned=_targets(),
        variant=_targets(),
        times=st.integers(min_value=1, max_value=25),
        flag=st.sampled_from(["", " --index-url http://x.example", " -f prod.yaml", " --force"]),
    )
    def prop(family: str, learned: str, variant: str, times: int, flag: str) -> None:
        if learned == variant and not flag:
            return
        command, other = family.format(learned), family.format(variant) + flag
        cfg = {"system.health": 90, "memory.backend": "history"}
        with tempfile.TemporaryDirectory() as tmp:
            with Guard(Path(tmp) / "trained", cfg) as g:
                _learn(g, command, times)
                after = _decide(g, other)
            with Guard(Path(tmp) / "fresh", cfg) as fresh:
                before = _decide(fresh, other)
        # the neighbours' approvals lift nothing: every learned dimension, the score and the decision
        for key in ("memory", "cmd_success", "user_pref"):
            assert after.components[key] <= before.components[key] + 1e-6, (command, other, key)
        assert after.final_score <= before.final_score + 1e-6
        assert not (after.decision == AUTO_ALLOW and before.decision != AUTO_ALLOW)

    prop()


# -- deliverable 6: the seed's subclass API -----------------------------------------------------


class _Same(MultiSourceFusionEngine):
    def _evaluate_memory_relevance(self, tool_name: str, params: Any, session_id: Any) -> float:
        return super()._evaluate_memory_relevance(tool_name, params, session_id)

    def _evaluate_command_success(self, tool_name: str, params: Any, session_id: Any) -> float:
        return super()._evaluate_command_success(tool_name, params, session_id)


class _Finance(MultiSourceFusionEngine):
    """The spec's own example: raise memory relevance for finance operations."""

    def _evaluate_memory_relevance(self, tool_name: str, params: Any, session_id: Any) -> float:
        score = super()._evaluate_memory_relevance(tool_name, params, session_id)
        if "finance" in tool_name or "money" in str(params):
            score *= 1.2
        return min(100, score)


@pytest.fixture
def frozen() -> Any:
    from freezegun import freeze_time

    with freeze_time("2026-03-02 10:00:00"):
        yield


def _engine(cls: type, ws: Path, mode: str) -> MultiSourceFusionEngine:
    engine = cls(ws, {"fusion.mode": mode, "system.health": 90, "memory.backend": "history"})
    for _ in range(3):
        engine.guard.record_result("bash", {"command": "make build"}, session_id="h", success=True)
        engine.guard.record_result("bash", {"command": "make money"}, session_id="h", success=True)
    return engine


@pytest.mark.parametrize("mode", ["guard", "seed"])
def test_an_override_returning_super_changes_nothing(tmp_path: Path, mode: str, frozen: Any) -> None:
    base, same = _engine(MultiSourceFusionEngine, tmp_path / "a", mode), _engine(_Same, tmp_path / "b", mode)
    try:
        for command in ("make build", "pip install requests", "cat README.md"):
            a = base.fuse_decision_context("bash", {"command": command}, "s")
            b = same.fuse_decision_context("bash", {"command": command}, "s")
            assert b.final_score == pytest.approx(a.final_score, abs=1e-9), (mode, command)
            assert dict(b.components) == pytest.approx(dict(a.components))
            assert b.decision == a.decision
    finally:
        base.close()
        same.close()


@pytest.mark.parametrize("mode", ["guard", "seed"])
def test_the_spec_finance_example_raises_memory(tmp_path: Path, mode: str, frozen: Any) -> None:
    base, fin = _engine(MultiSourceFusionEngine, tmp_path / "a", mode), _engine(_Finance, tmp_path / "b", mode)
    try:
        params = {"command": "make money"}
        a = base.fuse_decision_context("bash", params, "s")
        b = fin.fuse_decision_context("bash", params, "s")
        assert b.components["memory"] == pytest.approx(min(100.0, a.components["memory"] * 1.2), abs=0.01)
        assert b.components["memory"] > a.components["memory"]
        other = {"command": "make build"}  # not finance: unchanged
        assert fin.fuse_decision_context("bash", other, "s").final_score == pytest.approx(
            base.fuse_decision_context("bash", other, "s").final_score
        )
    finally:
        base.close()
        fin.close()
