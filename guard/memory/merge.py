"""Near-duplicate merging, the third step of memory maintenance.

Rows of the same tool, embedder and outcome whose vectors are at least ``similarity``
close become one row: the newest row of the group survives with ``count`` = the group's
total, ``importance`` = the group's maximum and ``ts`` = the newest. Each commit updates
the survivors and deletes the merged rows in one ``merge_insert``, so a crash can neither
lose nor double-count a group.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from guard.memory.table import read_rows, sql_str

_COMMIT_ROWS = 500  # merged rows per commit (and per SQL ``IN (...)``)


@attrs.frozen
class Group:
    keep: int  # row index of the survivor
    merge: tuple[int, ...]  # row indexes merged into it


def plan_merges(
    signatures: list[str], ts: np.ndarray, vectors: np.ndarray, similarity: float, scan_limit: int
) -> tuple[list[Group], int]:
    """Group the rows of one (tool, embedder, outcome) partition; returns groups and the
    number of distinct signatures left uncompared.

    The newest row of each signature represents it; identical signatures always join.
    Representatives are compared newest first (greedy leader clustering): a row joins the
    first, newest leader it is at least ``similarity`` close to.
    """
    order = np.argsort(-ts, kind="stable")
    first: dict[str, int] = {}
    same: dict[int, list[int]] = {}
    for i in order.tolist():
        lead = first.setdefault(signatures[i], i)
        if lead != i:
            same.setdefault(lead, []).append(i)
    reps = list(first.values())
    scanned, rest = reps[:scan_limit], reps[scan_limit:]
    members: dict[int, list[int]] = {}
    if len(scanned) > 1 and similarity <= 1.0:
        matrix = vectors[scanned]
        taken = np.zeros(len(scanned), bool)
        for a in range(len(scanned)):
            if taken[a]:
                continue
            sims = matrix[a + 1 :] @ matrix[a]
            join = np.flatnonzero((sims >= similarity - 1e-6) & ~taken[a + 1 :]) + a + 1
            taken[join] = True
            if len(join):
                members[scanned[a]] = [scanned[j] for j in join.tolist()]
    absorbed = {m for joined in members.values() for m in joined}
    groups = []
    for lead in reps:
        if lead in absorbed:
            continue
        merged = list(same.get(lead, []))
        for m in members.get(lead, []):
            merged += [m, *same.get(m, [])]
        if merged:
            groups.append(Group(lead, tuple(merged)))
    return groups, len(rest)


@attrs.define
class MergeOutcome:
    duplicate_groups: int = 0
    duplicates: int = 0  # rows that could merge into another
    merged: int = 0
    merge_left: int = 0  # left by the cap
    scan_left: int = 0  # signatures not compared pairwise


def merge_duplicates(
    table: Any, similarity: float, scan_limit: int, max_merge: int, *, dry_run: bool, lock: Any
) -> MergeOutcome:
    """Plan (and unless ``dry_run``, commit) the merges of every (tool, embedder, outcome)."""
    report = MergeOutcome()
    meta = read_rows(table, ["tool", "embedder", "success"])
    budget = max_merge
    partitions = sorted({(str(t), str(e)) for t, e in zip(meta["tool"], meta["embedder"], strict=True)})
    for tool, embedder in partitions:
        where = f"tool = {sql_str(tool)} AND embedder = {sql_str(embedder)}"
        rows = read_rows(table, None, where)
        for outcome in (True, False):
            part = np.flatnonzero(rows["success"] == outcome)
            if len(part) < 2:
                continue
            groups, not_scanned = plan_merges(
                [str(s) for s in rows["signature"][part]],
                rows["ts"][part],
                rows["vector"][part],
                similarity,
                scan_limit,
            )
            report.scan_left += not_scanned
            groups = sorted(groups, key=lambda g: -len(g.merge))
            report.duplicate_groups += len(groups)
            report.duplicates += sum(len(g.merge) for g in groups)
            todo: list[Group] = []
            for g in groups:
                take = g.merge[: max(0, budget)]
                budget -= len(take)
                report.merge_left += len(g.merge) - len(take)
                if take:
                    todo.append(Group(int(part[g.keep]), tuple(int(part[m]) for m in take)))
            report.merged += sum(len(g.merge) for g in todo)
            if not dry_run and todo:
                _apply_merges(table, rows, todo, lock)
    return report


def _apply_merges(table: Any, rows: dict[str, Any], groups: list[Group], lock: Any) -> None:
    batch: list[Group] = []
    size = 0
    for g in groups:
        batch.append(g)
        size += len(g.merge)
        if size >= _COMMIT_ROWS:
            _commit_merges(table, rows, batch, lock)
            batch, size = [], 0
    if batch:
        _commit_merges(table, rows, batch, lock)


def _commit_merges(table: Any, rows: dict[str, Any], batch: list[Group], lock: Any) -> None:
    """One commit: update each survivor and delete the rows merged into it."""
    import pyarrow as pa

    arrow = rows["_arrow"]
    survivors = arrow.take([g.keep for g in batch]).to_pylist()
    for row, g in zip(survivors, batch, strict=True):
        idx = [g.keep, *g.merge]
        row["count"] = int(rows["count"][idx].sum())
        row["importance"] = float(rows["importance"][idx].max())
        row["ts"] = float(rows["ts"][idx].max())
    gone = ", ".join(sql_str(str(rows["id"][m])) for g in batch for m in g.merge)
    update = pa.Table.from_pylist(survivors, schema=arrow.schema)
    with lock:
        (
            table.merge_insert("id")
            .when_matched_update_all()
            .when_not_matched_by_source_delete(f"id IN ({gone})")
            .execute(update)
        )
