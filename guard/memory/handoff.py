"""What ``guard tidy`` does for a workspace's readers when no daemon runs: store the queued
outcomes in LanceDB and publish the snapshot they read (see :mod:`guard.memory.reader`)."""

from __future__ import annotations

from pathlib import Path

import attrs

from guard.config import Config
from guard.memory.embed import HashingEmbedder
from guard.memory.published import publish, snapshot_path
from guard.memory.queue import drain, queue_path


@attrs.define
class Handoff:
    ingested: int = 0
    published: int | None = None  # rows in the published snapshot; None: nothing published
    error: str | None = None

    def line(self) -> str:
        if self.error:
            return f"  snapshot: error: {self.error}"
        published = "not published" if self.published is None else f"published ({self.published} signatures)"
        return f"  queue: {self.ingested} outcome(s) stored; snapshot {published}"


def ingest_and_publish(uri: str, config: Config, workspace: Path) -> Handoff:
    """Drain ``<workspace>/memory-queue.jsonl`` into the table at ``uri`` and publish the snapshot."""
    from guard.memory.table import (
        connect,
        events_to_arrow,
        is_remote,
        local_table_dir,
        open_table,
        privatise,
        read_snapshot,
    )

    out = Handoff()
    if is_remote(uri):
        return out
    embedder = HashingEmbedder(dim=config.get("memory.dim"))
    queue = queue_path(workspace)
    directory = local_table_dir(uri)
    if not queue.exists() and (directory is None or not directory.exists()):
        return out  # nothing stored, nothing queued: create nothing
    try:
        table = open_table(connect(uri, config, create=queue.exists()), embedder.dim, create=queue.exists())
        if table is None:
            return out

        def store(events: list) -> bool:  # type: ignore[type-arg]
            table.add(events_to_arrow(events, embedder))
            return True

        out.ingested = drain(queue, store)
        privatise(uri)
        snapshot = read_snapshot(table, embedder, config.get("memory.snapshot_max_rows"))
        if snapshot is None:
            snapshot_path(workspace).unlink(missing_ok=True)
        else:
            publish(snapshot, snapshot_path(workspace), embedder.name)
            out.published = len(snapshot)
    except Exception as exc:  # reported, never raised from maintenance
        out.error = f"{type(exc).__name__}: {exc}"
    return out
