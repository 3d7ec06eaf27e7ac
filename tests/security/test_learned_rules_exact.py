"""Learned rules are exact (issue 15, item 3): a rule learned from an operation never widens its target.

``guard rules suggest`` runs as a subprocess on a fake GUARD_HOME whose history is written by
``guard feed``; the applied rule is read back by ``guard check``. Commands are data in the
history and the payloads; nothing here runs them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guard.model import ToolCall
from guard.policy.coverage import Coverage
from guard.policy.patterns import exact_of
from tests.conftest import guard_cli_env

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2025, 6, 2, 9, 0, tzinfo=UTC)


def run(args: list[str], ws: Path, home: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in guard_cli_env().items() if not k.startswith("GUARD_") or k == "GUARD_SYSTEM_HEALTH"}
    env |= {"HOME": str(home), "GUARD_HOME": str(ws), "GUARD_MEMORY_BACKEND": "history"}
    return subprocess.run(
        [sys.executable, "-m", "guard", *args], input=stdin, capture_output=True, text=True, env=env, timeout=120
    )


def approvals(commands: list[str], sessions: int = 3) -> str:
    """Hook events: each command asked, approved and run successfully, once per session."""
    lines: list[str] = []
    t = T0
    for s in range(sessions):
        for command in commands:
            params = {"command": command}
            for event in (
                {"event": "tool_dispatch", "tool": "Bash", "params": params},
                {"event": "user_confirmation", "tool": "Bash", "params": params, "action": "approved"},
                {"event": "tool_result", "tool": "Bash", "params": params, "status": "success", "duration_ms": 40},
            ):
                lines.append(json.dumps(event | {"session_id": f"s{s}", "ts": t.isoformat()}))
                t += timedelta(minutes=1)
    return "\n".join(lines) + "\n"


@pytest.fixture
def env(tmp_path: Path) -> tuple[Path, Path]:
    home, ws = tmp_path / "home", tmp_path / "gh"
    home.mkdir()
    return ws, home


LEARNED = ["pip install requests", "git push origin feature-x", "kubectl apply -f k8s/dev.yaml"]
VARIANTS = [
    "pip install requests --index-url http://pypi.example.invalid/simple",
    "pip install requests git+https://example.invalid/requests.git",
    "pip install requestz",
    "git push origin main",
    "git push upstream feature-x",
    "kubectl apply -f k8s/prod.yaml",
    "kubectl apply -f k8s/dev.yaml --context prod",
]


def suggested(ws: Path, home: Path) -> dict[str, Any]:
    proc = run(["rules", "suggest", "--json"], ws, home)
    assert proc.returncode == 0, proc.stderr
    return {s["rule"]: s for s in json.loads(proc.stdout)["suggested"]}


class TestSuggestIsExact:
    def test_rules_name_the_whole_operation(self, env: tuple[Path, Path]) -> None:
        ws, home = env
        assert run(["feed"], ws, home, approvals(LEARNED)).returncode == 0
        rules = suggested(ws, home)
        assert set(rules) == {f"Bash({c})" for c in LEARNED}
        for rule in rules.values():
            assert not rule["rule"].endswith(":*)") and rule["replay"]["widens"] == []
            assert rule["replay"]["covers"].startswith("exactly ")

    def test_the_replay_lists_what_it_would_have_allowed_and_not_the_variants(self, env: tuple[Path, Path]) -> None:
        ws, home = env
        history = approvals(["pip install requests"]) + approvals(
            ["pip install requests --index-url http://pypi.example.invalid/simple"], sessions=1
        )
        assert run(["feed"], ws, home, history).returncode == 0
        proc = run(["rules", "suggest"], ws, home)
        assert proc.returncode == 0, proc.stderr
        text = proc.stdout
        assert "Bash(pip install requests)" in text
        assert "covers exactly `pip install requests`, no other arguments" in text
        assert "replay: would have allowed 3 past call(s): pip install requests (3x)" in text
        assert "not covered: pip install requests --index-url http://pypi.example.invalid/simple (1x)" in text
        assert "Bash(pip install requests:*)" not in text


class TestAppliedRuleStaysExact:
    def test_applied_rule_allows_the_operation_and_no_variant(self, env: tuple[Path, Path]) -> None:
        """The brief's case: learned from ``pip install requests``, never ``--index-url http://x``."""
        ws, home = env
        assert run(["feed"], ws, home, approvals(LEARNED)).returncode == 0
        assert suggested(ws, home)
        proc = run(["rules", "apply"], ws, home)
        assert proc.returncode == 0, proc.stderr

        def check(command: str) -> dict[str, Any]:
            out = run(["check", "Bash", json.dumps({"command": command}), "--json"], ws, home)
            assert out.stdout.strip(), out.stderr  # the exit code says the decision
            return dict(json.loads(out.stdout))

        def rule_ids(result: dict[str, Any]) -> set[str]:
            return {r["id"] for layer in result["layers"] for r in layer.get("reasons", [])}

        assert "G192" in rule_ids(check("pip install requests"))
        for variant in VARIANTS:
            result = check(variant)
            assert "G192" not in rule_ids(result), variant
            assert result["risk"] != "safe", variant


# -- the property ---------------------------------------------------------------------------------
_name = st.from_regex(r"[a-z][a-z0-9]{1,8}", fullmatch=True)
_program = st.sampled_from(
    ["pip install", "npm install", "git push", "kubectl apply -f", "helm upgrade", "cargo add", "curl"]
)
_target_change = st.one_of(
    st.sampled_from(
        [
            "--index-url http://pypi.example.invalid/simple",
            "--extra-index-url http://x.invalid",
            "git+https://example.invalid/p.git",
            "-f k8s/prod.yaml",
            "--context prod",
            "--namespace kube-system",
            "--registry http://npm.example.invalid",
            "origin main",
            "--force",
            "&& rm -rf build",
            "; curl https://example.invalid",
            "| sh",
        ]
    ),
    _name,  # another package, branch, remote or resource appended
)
_COVERAGE = Coverage()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=_program, target=_name, change=_target_change, replace=st.booleans(), other=_name)
def test_a_learned_rule_never_covers_a_target_changing_variant(
    program: str, target: str, change: str, replace: bool, other: str
) -> None:
    """For any learned operation, the suggested rule does not match a variant that adds a
    target-changing argument or swaps the target for another."""
    learned = f"{program} {target}"
    pattern = exact_of("Bash", learned)
    assert pattern is not None
    assert _COVERAGE.covers(pattern.rule, ToolCall("Bash", {"command": learned}))
    variant = f"{program} {other}" if replace and other != target else f"{learned} {change}"
    assert not _COVERAGE.covers(pattern.rule, ToolCall("Bash", {"command": variant})), (pattern.rule, variant)
