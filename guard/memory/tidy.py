"""Memory maintenance: compaction, retention, near-duplicate merges and version cleanup.

One run, in order (each step is capped, and every cap reports what it left undone):

1. **Compaction first** when the table has several fragments or old versions, so the reads
   of the next steps are fast (after 1,000 single-row adds a read is 20x slower).
2. **Retention by age**: rows older than ``memory.retention_days`` are deleted, oldest first.
3. **Retention by size**: above ``memory.max_rows`` rows (or ``memory.max_mb`` of data), the
   least important rows go first, the oldest among equals. Failures and risky operations
   carry more importance, so they are kept longest. Steps 2 and 3 share the cap
   ``memory.tidy_max_delete`` per run.
4. **Near-duplicate merge** (:mod:`guard.memory.merge`): same tool, embedder and outcome,
   cosine ≥ ``memory.merge_similarity``; at most ``memory.tidy_max_merge`` rows merged away
   and ``memory.tidy_scan_limit`` signatures compared per partition and run.
5. **Compaction and cleanup** again if rows changed: ``optimize()`` folds fragments into one
   and removes versions older than ``memory.version_retention_minutes``.

Runs are idempotent per :data:`RULE_VERSION`: a small JSON marker in the workspace
records, per rule version, the last run, the table version it left and what it left
undone; a run on an unchanged table with nothing left and nothing expired does nothing.
Bump :data:`RULE_VERSION` whenever a rule's outcome changes, so every table is reconsidered.
A dry run computes the same plan and changes nothing, not even the marker.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from guard.atomic import write_atomic
from guard.config import Config
from guard.memory.merge import merge_duplicates
from guard.memory.table import read_rows, sql_str, table_stats

RULE_VERSION = "tidy-1"
MARKER_NAME = "memory-tidy.json"
_ID_CHUNK = 500  # ids per SQL ``IN (...)`` of a retention delete


@attrs.frozen
class TidyLimits:
    retention: timedelta = timedelta(days=365)
    max_rows: int = 200_000
    max_bytes: int | None = None
    merge_similarity: float = 0.95
    max_merge: int = 1000
    max_delete: int = 10_000
    scan_limit: int = 5000
    version_retention: timedelta = timedelta(minutes=60)

    @classmethod
    def from_config(cls, config: Config) -> TidyLimits:
        max_mb = config.get("memory.max_mb")
        return cls(
            retention=timedelta(days=config.get("memory.retention_days")),
            max_rows=config.get("memory.max_rows"),
            max_bytes=None if max_mb is None else int(max_mb * 1_000_000),
            merge_similarity=config.get("memory.merge_similarity"),
            max_merge=config.get("memory.tidy_max_merge"),
            max_delete=config.get("memory.tidy_max_delete"),
            scan_limit=config.get("memory.tidy_scan_limit"),
            version_retention=timedelta(minutes=config.get("memory.version_retention_minutes")),
        )


@attrs.define
class TidyReport:
    uri: str
    dry_run: bool
    started: str
    rule_version: str = RULE_VERSION
    before: dict[str, Any] = attrs.Factory(dict)
    after: dict[str, Any] = attrs.Factory(dict)
    expired: int = 0  # rows past the age limit
    over_limit: int = 0  # rows above the row/size limit
    deleted: int = 0
    delete_left: int = 0
    duplicate_groups: int = 0
    duplicates: int = 0  # rows that would merge into another
    merged: int = 0
    merge_left: int = 0
    scan_left: int = 0  # signatures not compared for near-duplicates this run
    old_versions: int = 0
    compact: bool = False
    skipped: str | None = None
    errors: list[str] = attrs.Factory(list)

    @property
    def left(self) -> int:
        return self.delete_left + self.merge_left + self.scan_left

    def to_dict(self) -> dict[str, Any]:
        return {**attrs.asdict(self), "left": self.left}

    def lines(self) -> list[str]:
        """The report for a person; "would" in a dry run."""
        do = "would " if self.dry_run else ""
        out = [f"memory tidy ({self.rule_version}{', dry run' if self.dry_run else ''}): {self.uri}"]
        if self.skipped or not self.before:
            return [*out, *([f"  {self.skipped}"] if self.skipped else []), *(f"  error: {e}" for e in self.errors)]
        b, a = self.before, self.after or self.before
        out.append(
            "  rows {rows} → {0}, versions {versions} → {1}, fragments {fragments} → {2}".format(
                a.get("rows"), a.get("versions"), a.get("fragments"), **b
            )
            + (f", files {b['files']} → {a.get('files')}" if b.get("files") is not None else "")
        )
        out.append(f"  retention: {self.expired} expired, {self.over_limit} over the limit; {do}delete {self.deleted}")
        out.append(
            f"  near-duplicates: {self.duplicates} row(s) in {self.duplicate_groups} group(s); {do}merge {self.merged}"
        )
        out.append(
            f"  compaction: {do}compact and remove {self.old_versions} old version(s)"
            if self.compact
            else "  compaction: nothing to do"
        )
        if self.delete_left:
            out.append(f"  cap reached: {self.delete_left} row(s) left to delete (memory.tidy_max_delete)")
        if self.merge_left:
            out.append(f"  cap reached: {self.merge_left} row(s) left to merge (memory.tidy_max_merge)")
        if self.scan_left:
            out.append(f"  cap reached: {self.scan_left} signature(s) not compared (memory.tidy_scan_limit)")
        out.extend(f"  error: {e}" for e in self.errors)
        return out


def run(
    table: Any,
    uri: str,
    limits: TidyLimits,
    *,
    now: datetime | None = None,
    dry_run: bool = False,
    force: bool = False,
    marker: Path | None = None,
    lock: contextlib.AbstractContextManager[Any] | None = None,
) -> TidyReport:
    """One maintenance run over ``table``; never raises for a table error (see ``errors``)."""
    now = now or datetime.now().astimezone()
    report = TidyReport(uri=uri, dry_run=dry_run, started=now.isoformat(timespec="seconds"))
    guard_lock = lock if lock is not None else contextlib.nullcontext()
    with _exclusive(marker) as got:
        if not got:
            report.skipped = "another maintenance run holds the lock; skipped"
            return report
        try:
            with guard_lock:
                table.checkout_latest()
                versions = table.list_versions()
                report.before = table_stats(table, uri, versions=len(versions))
            cutoff = (now - limits.retention).timestamp()
            expired = table.count_rows(f"ts < {cutoff!r}")
            last = read_marker(marker).get(RULE_VERSION, {})
            unchanged = last.get("table_version") == table.version and not last.get("left")
            if unchanged and not expired and not force:
                report.skipped = f"up to date: nothing changed since the last run at {last.get('last_run')}"
                return report
            horizon = datetime.now() - limits.version_retention  # lance stamps versions in local time
            report.old_versions = sum(1 for v in versions[:-1] if v["timestamp"] < horizon)
            report.compact = (report.before["fragments"] or 0) > 1 or report.old_versions > 0
            if report.compact and not dry_run:
                _optimize(table, limits, guard_lock)  # first, so the reads below are fast
            _retention(table, limits, report, cutoff, guard_lock)
            merged = merge_duplicates(
                table, limits.merge_similarity, limits.scan_limit, limits.max_merge, dry_run=dry_run, lock=guard_lock
            )
            for name, value in attrs.asdict(merged).items():
                setattr(report, name, value)
            if report.deleted or report.merged:
                report.compact = True
                if not dry_run:
                    _optimize(table, limits, guard_lock)
            with guard_lock:
                table.checkout_latest()
                report.after = table_stats(table, uri)
            if not dry_run and marker is not None:
                write_marker(marker, now, table.version, report)
        except Exception as exc:  # a broken table is reported, never raised from maintenance
            report.errors.append(f"{type(exc).__name__}: {exc}")
    return report


def tidy_uri(
    uri: str,
    config: Config,
    *,
    marker: Path | None,
    now: datetime | None = None,
    dry_run: bool = False,
    force: bool = False,
) -> TidyReport:
    """Open the memory at ``uri`` (never creating it) and run maintenance on it."""
    from guard.memory.table import connect, local_table_dir, open_table, privatise

    report = TidyReport(uri=uri, dry_run=dry_run, started=(now or datetime.now().astimezone()).isoformat())
    directory = local_table_dir(uri)
    if directory is not None and not directory.exists():
        report.skipped = "no memory stored yet; nothing to do"
        return report
    try:
        table = open_table(connect(uri, config, create=False), None, create=False)
    except Exception as exc:  # unreadable store: report, never raise
        report.errors.append(f"cannot open {uri}: {type(exc).__name__}: {exc}")
        return report
    if table is None:
        report.skipped = "no memory stored yet; nothing to do"
        return report
    report = run(table, uri, TidyLimits.from_config(config), now=now, dry_run=dry_run, force=force, marker=marker)
    if not dry_run:
        privatise(uri)
    return report


def _retention(table: Any, limits: TidyLimits, report: TidyReport, cutoff: float, lock: Any) -> None:
    rows = read_rows(table, ["id", "ts", "importance"])
    ts, importance, ids = rows["ts"], rows["importance"], rows["id"]
    expired = np.flatnonzero(ts < cutoff)
    expired = expired[np.argsort(ts[expired], kind="stable")]
    keep = np.setdiff1d(np.arange(len(ids)), expired, assume_unique=True)
    limit = limits.max_rows
    if limits.max_bytes is not None and report.before.get("rows"):
        per_row = max(1.0, report.before["bytes"] / report.before["rows"])
        limit = min(limit, int(limits.max_bytes // per_row))
    excess = max(0, len(keep) - limit)
    over = keep[np.lexsort((ts[keep], importance[keep]))][:excess]
    report.expired, report.over_limit = len(expired), len(over)
    victims = np.concatenate([expired, over])
    report.deleted = min(len(victims), limits.max_delete)
    report.delete_left = len(victims) - report.deleted
    if report.dry_run:
        return
    for chunk in _chunks([str(ids[i]) for i in victims[: report.deleted]]):
        with lock:
            table.delete(f"id IN ({', '.join(map(sql_str, chunk))})")


def _optimize(table: Any, limits: TidyLimits, lock: Any) -> None:
    """Compact fragments and remove versions older than the retention.

    1 ms rather than 0: lancedb warns on 0, and "older than 1 ms" keeps only the latest.
    """
    with lock:
        table.optimize(cleanup_older_than=max(limits.version_retention, timedelta(milliseconds=1)))


def _chunks(items: list[str]) -> Iterator[list[str]]:
    for i in range(0, len(items), _ID_CHUNK):
        yield items[i : i + _ID_CHUNK]


def read_marker(marker: Path | None) -> dict[str, Any]:
    """The last run per rule version (``{}`` when there is none or it cannot be read)."""
    if marker is None:
        return {}
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    rules = data.get("rules") if isinstance(data, dict) else None
    return rules if isinstance(rules, dict) else {}


def last_run(marker: Path | None) -> datetime | None:
    entry = read_marker(marker).get(RULE_VERSION, {})
    try:
        return datetime.fromisoformat(entry["last_run"]).astimezone().replace(tzinfo=None)
    except (KeyError, TypeError, ValueError):
        return None


def write_marker(marker: Path, now: datetime, table_version: int, report: TidyReport) -> None:
    rules = read_marker(marker)
    rules[RULE_VERSION] = {
        "last_run": now.isoformat(timespec="seconds"),
        "table_version": table_version,
        "left": report.left,
        "deleted": report.deleted,
        "merged": report.merged,
    }
    text = json.dumps({"rules": rules}, indent=2, sort_keys=True)
    write_atomic(marker, text, mode=0o600, keep_mode=False, fsync=False)


@contextlib.contextmanager
def _exclusive(marker: Path | None) -> Iterator[bool]:
    """A per-workspace lock so two processes never tidy the same table at once."""
    if marker is None:
        yield True
        return
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no cross-process lock
        yield True
        return
    marker.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(marker.with_name(marker.name + ".lock"), os.O_CREAT | os.O_RDWR, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(fd)
