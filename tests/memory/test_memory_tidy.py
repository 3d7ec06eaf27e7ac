"""Maintenance: compaction, version cleanup, near-duplicate merges, retention, caps, dry runs."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from memhelpers import add_one_by_one, ask, event, make_config, open_memory

from guard.memory import merge, tidy
from guard.memory.table import table_stats
from guard.model import Risk

pytestmark = pytest.mark.lancedb

T0 = datetime(2026, 1, 1, 12, tzinfo=UTC)
LATER = T0 + timedelta(days=1)


def run(m: Any, **kw: Any) -> tidy.TidyReport:
    kw.setdefault("now", LATER)
    return m.tidy(**kw)


def stats(m: Any) -> dict[str, Any]:
    m._table.checkout_latest()
    return table_stats(m._table, m.uri)


class TestCompaction:
    def test_restores_a_table_of_1000_single_row_adds(self, lancedb: Any, tmp_path: Path) -> None:
        m = open_memory(tmp_path, memory__version_retention_minutes=0)
        add_one_by_one(m, [event(f"tool{i} --arg {i * 7919}") for i in range(1000)])
        before = stats(m)
        assert before["versions"] > 1000 and before["fragments"] == 1000 and before["files"] > 2000
        report = run(m)
        after = stats(m)
        assert not report.errors and report.compact
        assert after["rows"] == before["rows"] == 1000
        assert after["versions"] <= 2 and after["fragments"] == 1 and after["files"] < 20
        assert report.after["fragments"] == 1 and report.old_versions >= 1000

    def test_keeps_versions_younger_than_the_retention(self, lancedb: Any, tmp_path: Path) -> None:
        m = open_memory(tmp_path)  # default: keep versions of the last hour
        add_one_by_one(m, [event(f"tool{i}") for i in range(5)])
        run(m)
        after = stats(m)
        assert after["fragments"] == 1 and after["versions"] > 5


class TestDryRun:
    def test_reports_and_changes_nothing(self, lancedb: Any, tmp_path: Path) -> None:
        m = open_memory(tmp_path, memory__retention_days=30)
        old = T0 - timedelta(days=60)
        add_one_by_one(m, [event("npm test") for _ in range(4)] + [event("ls", timestamp=old) for _ in range(3)])
        before, version = stats(m), m._table.version
        report = run(m, dry_run=True)
        assert (report.expired, report.deleted, report.merged, report.compact) == (3, 3, 5, True)
        assert "would merge 5" in "\n".join(report.lines())
        assert stats(m) == before and m._table.version == version
        assert not m.marker.exists()


class TestMerge:
    def test_exact_duplicates_merge_by_tool_and_outcome(self, lancedb: Any, tmp_path: Path) -> None:
        m = open_memory(tmp_path)
        ok = [event("npm test") for _ in range(5)] + [event("npm test", importance=0.9, timestamp=LATER)]
        bad = [event("npm test", success=False) for _ in range(3)]
        other_tool = [event("src/npm test", tool="Write")]
        add_one_by_one(m, ok + bad + other_tool)
        m.refresh()
        before = ask(m, "npm test")
        report = run(m)
        assert (report.duplicate_groups, report.merged, report.merge_left) == (2, 7, 0)
        rows = sorted(m._table.to_arrow().to_pylist(), key=lambda r: (r["tool"], r["success"]))
        summary = [(r["tool"], r["success"], r["count"], round(r["importance"], 2)) for r in rows]
        assert summary == [("bash", False, 3, 0.6), ("bash", True, 6, 0.9), ("write", True, 1, 0.35)]
        assert next(r for r in rows if r["success"])["ts"] == LATER.timestamp()
        m.refresh()
        after = ask(m, "npm test")
        assert (after.matched, after.success_rate) == (before.matched, before.success_rate)

    def test_plan_merges_groups_near_duplicates_newest_first(self) -> None:
        rng = np.random.default_rng(7)
        base = rng.normal(size=16)
        near = base + rng.normal(scale=0.05, size=16)
        far = rng.normal(size=16)
        vectors = np.array([base, near, far, base]) / np.linalg.norm([base, near, far, base], axis=1)[:, None]
        groups, left = merge.plan_merges(["a", "b", "c", "a"], np.array([1.0, 3.0, 2.0, 0.5]), vectors, 0.95, 100)
        assert left == 0
        assert groups == [merge.Group(keep=1, merge=(0, 3))]  # "b" is newest; "a" joins with its duplicate

    def test_scan_limit_is_reported(self) -> None:
        vectors = np.eye(4)
        _, left = merge.plan_merges(["a", "b", "c", "d"], np.arange(4.0), vectors, 0.95, 2)
        assert left == 2


class TestRetention:
    def test_deletes_rows_older_than_the_retention(self, lancedb: Any, tmp_path: Path) -> None:
        m = open_memory(tmp_path, memory__retention_days=30)
        add_one_by_one(m, [event("old", timestamp=T0 - timedelta(days=31)), event("new")])
        report = run(m)
        assert (report.expired, report.deleted) == (1, 1)
        assert [r["signature"] for r in m._table.to_arrow().to_pylist()] == ["bash:new"]

    def test_over_the_row_limit_the_least_important_go_first(self, lancedb: Any, tmp_path: Path) -> None:
        m = open_memory(tmp_path, memory__max_rows=3)
        risks = [Risk.SAFE, Risk.HIGH, Risk.LOW, Risk.CRITICAL, Risk.MEDIUM]
        add_one_by_one(m, [event(f"cmd{i}", risk=r) for i, r in enumerate(risks)])
        report = run(m)
        assert (report.over_limit, report.deleted) == (2, 2)
        kept = sorted(r["risk"] for r in m._table.to_arrow().to_pylist())
        assert kept == ["critical", "high", "medium"]


class TestCaps:
    def test_merge_cap_reports_what_is_left(self, lancedb: Any, tmp_path: Path) -> None:
        m = open_memory(tmp_path, memory__tidy_max_merge=2)
        add_one_by_one(m, [event("make") for _ in range(5)])
        first = run(m)
        assert (first.merged, first.merge_left, first.left) == (2, 2, 2)
        assert "2 row(s) left to merge" in "\n".join(first.lines())
        second = run(m)
        assert (second.merged, second.merge_left) == (2, 0)
        assert m._table.count_rows() == 1

    def test_delete_cap_reports_what_is_left(self, lancedb: Any, tmp_path: Path) -> None:
        m = open_memory(tmp_path, memory__retention_days=1, memory__tidy_max_delete=3)
        add_one_by_one(m, [event(f"cmd{i}", timestamp=T0 - timedelta(days=10, minutes=i)) for i in range(5)])
        report = run(m)
        assert (report.expired, report.deleted, report.delete_left) == (5, 3, 2)
        assert "2 row(s) left to delete" in "\n".join(report.lines())
        remaining = {r["signature"] for r in m._table.to_arrow().to_pylist()}
        assert remaining == {"bash:cmd0", "bash:cmd1"}  # the oldest went first


class TestIdempotence:
    def test_second_run_on_an_unchanged_table_does_nothing(self, lancedb: Any, tmp_path: Path) -> None:
        m = open_memory(tmp_path)
        add_one_by_one(m, [event("make") for _ in range(3)])
        run(m)
        version = m._table.version
        again = run(m)
        assert again.skipped and again.skipped.startswith("up to date")
        assert m._table.version == version
        assert json.loads(m.marker.read_text())["rules"][tidy.RULE_VERSION]["table_version"] == version

    def test_a_new_rule_version_runs_again(self, lancedb: Any, tmp_path: Path, monkeypatch: Any) -> None:
        m = open_memory(tmp_path)
        add_one_by_one(m, [event("make") for _ in range(3)])
        run(m)
        monkeypatch.setattr(tidy, "RULE_VERSION", "tidy-test")
        assert run(m).skipped is None
        assert set(json.loads(m.marker.read_text())["rules"]) == {"tidy-1", "tidy-test"}

    def test_force_runs_anyway(self, lancedb: Any, tmp_path: Path) -> None:
        m = open_memory(tmp_path)
        add_one_by_one(m, [event("make")])
        run(m)
        assert run(m, force=True).skipped is None


class TestBackground:
    def test_memory_starts_and_stops_the_scheduler(self, lancedb: Any, tmp_path: Path) -> None:
        from guard.memory.lance import LanceMemory

        m = LanceMemory(str(tmp_path / "memory.lance"), make_config(memory__tidy=True))
        try:
            assert m.wait_ready(60)
            m.remember(event("make"))
            m.remember(event("make"))
            assert m.flush()
            assert m.scheduler is not None and m.scheduler.last_run is not None
            m.scheduler.last_run = None  # due now; run this tick here rather than wait
            assert m.scheduler.tick()
            assert m.marker.exists() and m.refresh()
            assert m._table.count_rows() == 1 and ask(m, "make").matched == 2
        finally:
            m.close()
        assert m.scheduler is not None and not m.scheduler._thread.is_alive()  # type: ignore[union-attr]

    def test_disabled_by_configuration(self, memory: Any) -> None:
        assert memory.scheduler is None


class TestCommand:
    def run_cli(self, *argv: str) -> int:
        from guard.cli import tidy as cmd

        parser = argparse.ArgumentParser()
        cmd.register(parser.add_subparsers())
        args = parser.parse_args(["tidy", *argv])
        return int(args.func(args))

    def test_dry_run_json(self, lancedb: Any, tmp_path: Path, capsys: Any) -> None:
        m = open_memory(tmp_path)
        add_one_by_one(m, [event("make") for _ in range(3)])
        assert self.run_cli("--workspace", str(tmp_path), "--dry-run", "--json") == 0
        out = json.loads(capsys.readouterr().out)
        assert out["dry_run"] is True and out["merged"] == 2 and out["left"] == 0
        assert m._table.count_rows() == 3

    def test_text_report(self, lancedb: Any, tmp_path: Path, capsys: Any) -> None:
        m = open_memory(tmp_path)
        add_one_by_one(m, [event("make") for _ in range(3)])
        assert self.run_cli("--workspace", str(tmp_path)) == 0
        out = capsys.readouterr().out
        assert "near-duplicates: 2 row(s) in 1 group(s); merge 2" in out
        m._table.checkout_latest()
        assert m._table.count_rows() == 1

    def test_no_memory_yet(self, tmp_path: Path, capsys: Any, monkeypatch: Any) -> None:
        home = tmp_path / "home"
        monkeypatch.setenv("GUARD_HOME", str(home))
        assert self.run_cli() == 0
        assert "no memory stored yet" in capsys.readouterr().out
        assert home.stat().st_mode & 0o777 == 0o700
        assert not (home / "memory.lance").exists()

    def test_unreadable_store_exits_1(self, lancedb: Any, tmp_path: Path, capsys: Any) -> None:
        corrupt = tmp_path / "memory.lance" / "memories.lance" / "_versions"
        corrupt.mkdir(parents=True)
        (corrupt / "1.manifest").write_bytes(b"garbage\n")
        assert self.run_cli("--workspace", str(tmp_path)) == 1
        assert "error: cannot open" in capsys.readouterr().out
