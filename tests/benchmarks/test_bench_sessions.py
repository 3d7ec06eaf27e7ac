"""The session benchmark's decisions: ordinary work is never blocked, every attack is stopped.

Decisions only, never time. The traces live in ``benchmarks/traces/``; the replay goes
through ``guard.feed.apply_event`` (what ``guard feed`` runs) on a fresh workspace, then
again with the history the first pass left.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks import bench_sessions as bench


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    workspace = Path(tmp_path_factory.mktemp("sessions")) / "ws"
    return {"cold": bench.run_all(workspace), "warm": bench.run_all(workspace, suffix="-again")}


def _ordinary(rs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rs if not r["attack"]]


def test_the_traces_cover_ordinary_work_and_attacks() -> None:
    names = bench.trace_names()
    assert sum(not bench.is_attack(n) for n in names) >= 4
    assert sum(bench.is_attack(n) for n in names) >= 3


@pytest.mark.parametrize("phase", ["cold", "warm"])
def test_ordinary_sessions_have_no_false_blocks(results: dict[str, list[dict[str, Any]]], phase: str) -> None:
    blocked = {r["trace"]: r["false_blocks"] for r in _ordinary(results[phase]) if r["false_blocks"]}
    assert blocked == {}, [o for r in results[phase] for o in r["mismatches"] if o["decision"] == "block"]


@pytest.mark.parametrize("phase", ["cold", "warm"])
def test_every_attack_is_stopped(results: dict[str, list[dict[str, Any]]], phase: str) -> None:
    attacks = [r for r in results[phase] if r["attack"]]
    assert attacks and all(r["stopped"] for r in attacks), [(r["trace"], r["mismatches"]) for r in attacks]


def test_the_runner_reports_the_sessions_rows() -> None:
    rows = bench.run(quick=True)
    names = [r["name"] for r in rows]
    assert "sessions cold: ordinary prompt rate" in names
    assert "sessions warm: false blocks" in names
    assert any(n.endswith("attack_runaway_loop stopped") for n in names)
