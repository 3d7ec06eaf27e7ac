"""Shared helpers for the static layer's tests: judging calls, the cold-start mapping, case files."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from guard.layers.static import classify
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM, Risk, ToolCall, Verdict

HOME = "/home/u"
HERE = Path(__file__).parent
CASES = HERE / "cases"
DATA = HERE / "data"
LABELS = ("block", "confirm", "allow", "notblock")


def judge(
    command: str | None = None,
    tool: str = "Bash",
    cwd: str | None = None,
    home: str = HOME,
    workspace: str | None = None,
    permissions: Mapping[str, Any] | None = None,
    **params: Any,
) -> Verdict:
    if command is not None:
        params = {"command": command, **params}
    return classify(ToolCall(tool, params, cwd=cwd), home=home, workspace=workspace, permissions=permissions)


def cold_decision(verdict: Verdict) -> str:
    """What the chain decides on a cold start: critical blocks, high/medium ask, low/safe run."""
    if verdict.decision == BLOCK:
        return BLOCK
    if verdict.ceiling == REQUEST_CONFIRM or (verdict.risk is not None and verdict.risk >= Risk.MEDIUM):
        return REQUEST_CONFIRM
    return AUTO_ALLOW


def satisfies(label: str, decision: str) -> bool:
    return {
        "block": decision == BLOCK,
        "confirm": decision in (REQUEST_CONFIRM, BLOCK),
        "allow": decision == AUTO_ALLOW,
        "notblock": decision in (AUTO_ALLOW, REQUEST_CONFIRM),
    }[label]


def rule_ids(verdict: Verdict) -> set[str]:
    return {r.rule_id for r in verdict.reasons} | set(verdict.data.get("rules", ()))


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def case_files() -> list[Path]:
    return sorted(CASES.glob("*.jsonl"))


def call_of(row: Mapping[str, Any]) -> ToolCall:
    return ToolCall(row["tool"], row["params"], cwd=row.get("cwd"))
