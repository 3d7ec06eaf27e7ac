"""The memory table in LanceDB: its schema, where it lives and how to open it.

Nothing here imports ``lancedb`` or ``pyarrow`` at module import time; each function that
needs them imports them when called (≈0.8 s and +125 MB the first time), so only the
background thread of a long-lived process and ``guard tidy`` ever pay for it.

One row per completed operation (or per group of near-duplicates after maintenance):

=============  =========================  ==================================================
column         type                       meaning
=============  =========================  ==================================================
id             string                     random hex id
ts             float64                    when it ran, seconds since the epoch (UTC)
tool           string                     canonical tool kind (``bash``, ``write``, ...)
signature      string                     normalised call text (``bash:rm -rf build``)
vector         fixed_size_list<f32>[dim]  the embedder's unit vector of ``signature``
embedder       string                     embedder name and version (``hashing-v1``)
success        bool                       whether the operation succeeded
importance     float32                    0-1, ``MemoryEvent.effective_importance``
risk           string                     static risk label at the time (``medium``)
count          int32                      operations this row stands for (1; more after a merge)
session_id     string, nullable
agent_id       string, nullable
=============  =========================  ==================================================
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from guard.config import Config
from guard.memory.base import MemoryEvent
from guard.redact import redact_text
from guard.toolnames import canonical_tool

if TYPE_CHECKING:
    from datetime import timedelta

    import pyarrow as pa

    from guard.memory.embed import Embedder, Vector
    from guard.memory.index import Neighbours, Snapshot

TABLE_NAME = "memories"
DEFAULT_DIRNAME = "memory.lance"

COLUMNS = (
    "id",
    "ts",
    "tool",
    "signature",
    "vector",
    "embedder",
    "success",
    "importance",
    "risk",
    "count",
    "session_id",
    "agent_id",
)

# Environment variables an s3:// URI picks up, as LanceDB storage-option keys.
_S3_ENV = {
    "AWS_ENDPOINT_URL": "aws_endpoint",
    "AWS_ENDPOINT_URL_S3": "aws_endpoint",
    "AWS_REGION": "aws_region",
    "AWS_DEFAULT_REGION": "aws_region",
    "AWS_ACCESS_KEY_ID": "aws_access_key_id",
    "AWS_SECRET_ACCESS_KEY": "aws_secret_access_key",
    "AWS_SESSION_TOKEN": "aws_session_token",
    "AWS_ALLOW_HTTP": "allow_http",
}


def default_uri(workspace: Path) -> str:
    return str(workspace / DEFAULT_DIRNAME)


def resolve_uri(config: Config, workspace: Path) -> str:
    """``memory.uri`` if set, else ``<workspace>/memory.lance``."""
    uri = config.get("memory.uri")
    return str(uri) if uri else default_uri(workspace)


def is_remote(uri: str) -> bool:
    scheme, sep, _ = uri.partition("://")
    return bool(sep) and scheme != "file"


def local_table_dir(uri: str) -> Path | None:
    """The table's directory on local disk, or ``None`` for an object store."""
    if is_remote(uri):
        return None
    path = uri.removeprefix("file://")
    return Path(path) / f"{TABLE_NAME}.lance"


def storage_options(uri: str, config: Config, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """LanceDB ``storage_options`` for ``uri``: ``AWS_*`` variables, then ``memory.s3_*``, then
    ``memory.storage_options`` items (``key=value``), later ones winning."""
    env = os.environ if env is None else env
    options: dict[str, str] = {}
    if uri.startswith(("s3://", "s3a://", "s3+ddb://")):
        for var, key in _S3_ENV.items():
            if env.get(var):
                options.setdefault(key, env[var])
        if config.get("memory.s3_endpoint"):
            options["aws_endpoint"] = config.get("memory.s3_endpoint")
        if config.get("memory.s3_region"):
            options["aws_region"] = config.get("memory.s3_region")
        if config.get("memory.s3_allow_http"):
            options["allow_http"] = "true"
    for item in config.get("memory.storage_options"):
        key, sep, value = item.partition("=")
        if sep and key.strip():
            options[key.strip()] = value.strip()
    return options


def schema(dim: int) -> pa.Schema:
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("ts", pa.float64(), nullable=False),
            pa.field("tool", pa.string(), nullable=False),
            pa.field("signature", pa.string(), nullable=False),
            pa.field("vector", pa.list_(pa.float32(), dim), nullable=False),
            pa.field("embedder", pa.string(), nullable=False),
            pa.field("success", pa.bool_(), nullable=False),
            pa.field("importance", pa.float32(), nullable=False),
            pa.field("risk", pa.string(), nullable=False),
            pa.field("count", pa.int32(), nullable=False),
            pa.field("session_id", pa.string()),
            pa.field("agent_id", pa.string()),
        ]
    )


def connect(uri: str, config: Config, *, create: bool = True) -> Any:
    """A LanceDB connection; a local directory is created (mode 0700) only when ``create``."""
    import lancedb

    if create and not is_remote(uri):
        Path(uri.removeprefix("file://")).mkdir(parents=True, exist_ok=True, mode=0o700)
    return lancedb.connect(uri, storage_options=storage_options(uri, config) or None)


def open_table(db: Any, dim: int | None, *, create: bool = True) -> Any | None:
    """Open the memory table, creating it when ``create``; check its vector dimension.

    Returns ``None`` when the table does not exist and ``create`` is false. Raises
    ``ValueError`` when the table's vectors have another dimension than ``dim`` (``None``:
    any dimension).
    """
    if TABLE_NAME in list_tables(db):
        table = db.open_table(TABLE_NAME)
    elif create and dim is not None:
        table = db.create_table(TABLE_NAME, schema=schema(dim), exist_ok=True)
    else:
        return None
    found = vector_dim(table)
    if dim is not None and found != dim:
        raise ValueError(f"the table holds {found}-d vectors but the embedder makes {dim}-d ones")
    return table


def list_tables(db: Any) -> list[str]:
    return list(db.list_tables().tables)


def vector_dim(table: Any) -> int:
    return int(table.schema.field("vector").type.list_size)


def events_to_arrow(events: Sequence[MemoryEvent], embedder: Embedder) -> pa.Table:
    import uuid

    import numpy as np
    import pyarrow as pa

    vectors = np.stack([embedder.embed(e.signature) for e in events]).astype(np.float32, copy=False)
    return pa.table(
        {
            "id": [uuid.uuid4().hex for _ in events],
            "ts": [e.timestamp.timestamp() for e in events],
            "tool": [canonical_tool(e.tool) for e in events],
            "signature": [redact_text(e.signature) for e in events],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), embedder.dim),
            "embedder": [embedder.name] * len(events),
            "success": [e.success for e in events],
            "importance": pa.array([e.effective_importance for e in events], pa.float32()),
            "risk": [e.risk.label for e in events],
            "count": pa.array([1] * len(events), pa.int32()),
            "session_id": pa.array([_redacted(e.session_id) for e in events], pa.string()),
            "agent_id": pa.array([_redacted(e.agent_id) for e in events], pa.string()),
        },
        schema=schema(embedder.dim),
    )


def _redacted(text: str | None) -> str | None:
    return None if text is None else redact_text(text)


# Files already made private, per table (path -> inode: a file replaced under the same name,
# like LanceDB's version hint, is new): a walk then only lists folders, no stat per file.
_PRIVATE: dict[str, dict[str, int]] = {}


def privatise(uri: str) -> int:
    """Make a local table's tree private (files 0600, folders 0700); how many paths it changed.

    LanceDB creates its files with the process umask (0644/0755 as a rule), and the umask is
    process-wide: changing it around a write from the background thread would change the
    modes of files the application's own threads create meanwhile. So each write is followed
    by this walk instead; paths it has already tightened are only listed, not touched again.
    """
    if is_remote(uri):
        return 0
    root = uri.removeprefix("file://")
    seen = _PRIVATE.setdefault(root, {})
    if len(seen) > 100_000:  # maintenance removed most of them long ago
        seen.clear()
    changed = 0
    stack = [root]
    if root not in seen:
        changed += _tighten(root, 0o700, seen, 0)
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:  # a folder maintenance removed meanwhile
            continue
        for entry in entries:
            if entry.is_symlink():
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            if is_dir:
                stack.append(entry.path)
            inode = entry.inode()
            if seen.get(entry.path) != inode:
                changed += _tighten(entry.path, 0o700 if is_dir else 0o600, seen, inode)
    return changed


def _tighten(path: str, mode: int, seen: dict[str, int], inode: int) -> int:
    try:
        os.chmod(path, mode)  # (symlinks were skipped by the caller)
    except OSError:  # removed meanwhile
        return 0
    seen[path] = inode
    return 1


def read_snapshot(table: Any, embedder: Embedder, max_rows: int) -> Snapshot | None:
    """The in-process snapshot of the rows ``embedder`` made (``None`` above ``max_rows``)."""
    import numpy as np

    from guard.memory.index import Snapshot

    version = table.version
    where = f"embedder = {sql_str(embedder.name)}"
    if table.count_rows(where) > max_rows:
        return None
    columns = ["tool", "signature", "vector", "count", "success", "importance"]
    arrow = table.search().where(where).select(columns).limit(None).to_arrow()

    def numbers(name: str) -> Any:
        return np.asarray(arrow.column(name).to_numpy(zero_copy_only=False), dtype=np.float64)

    return Snapshot.build(
        embedder.dim,
        version,
        arrow.column("tool").to_pylist(),
        arrow.column("signature").to_pylist(),
        arrow.column("vector").combine_chunks().values.to_numpy(zero_copy_only=False).reshape(-1, embedder.dim),
        numbers("count"),
        numbers("success").astype(bool),
        numbers("importance"),
    )


def search_table(
    table: Any,
    embedder_name: str,
    tool: str,
    query: Vector,
    similarity: float,
    top_k: int,
    timeout: timedelta,
) -> Neighbours | None:
    """Neighbours straight from LanceDB (flat cosine search, bounded by ``timeout``)."""
    import numpy as np

    from guard.memory.index import neighbours

    arrow = (
        table.search(query)
        .distance_type("cosine")
        .where(f"tool = {sql_str(tool)} AND embedder = {sql_str(embedder_name)}")
        .distance_range(upper_bound=1.0 - similarity + 1e-6)
        .limit(top_k)
        .select(["count", "success", "importance", "_distance"])
        .to_arrow(timeout=timeout)
    )
    if arrow.num_rows == 0:
        return None

    def numbers(name: str) -> Any:
        return np.asarray(arrow.column(name).to_numpy(zero_copy_only=False), dtype=np.float64)

    count, success = numbers("count"), numbers("success")
    weighted = numbers("importance") * count
    sims = 1.0 - numbers("_distance")
    return neighbours(sims, count, count * success, weighted, weighted * success, similarity, top_k)


def read_rows(table: Any, columns: list[str] | None, where: str | None = None) -> dict[str, Any]:
    """Columns as numpy arrays (``vector`` as an (n, dim) matrix) plus the Arrow table as ``_arrow``."""
    import numpy as np

    query = table.search()
    if where:
        query = query.where(where)
    if columns:
        query = query.select(columns)
    arrow = query.limit(None).to_arrow()
    out: dict[str, Any] = {"_arrow": arrow}
    for name in arrow.column_names:
        col = arrow.column(name)
        if name == "vector":
            dim = col.type.list_size
            out[name] = col.combine_chunks().values.to_numpy(zero_copy_only=False).reshape(-1, dim)
        else:
            out[name] = np.asarray(col.to_numpy(zero_copy_only=False))
    return out


def sql_str(value: str) -> str:
    """A SQL string literal."""
    return "'" + value.replace("'", "''") + "'"


def table_stats(table: Any, uri: str, *, versions: int | None = None) -> dict[str, int | None]:
    """Rows, versions, fragments and (local tables) data files: what maintenance reduces."""
    stats = table.stats()
    directory = local_table_dir(uri)
    files = sum(len(f) for _, _, f in os.walk(directory)) if directory is not None and directory.is_dir() else None
    return {
        "rows": int(stats["num_rows"]),
        "versions": len(table.list_versions()) if versions is None else versions,
        "fragments": int(stats["fragment_stats"]["num_fragments"]),
        "files": files,
        "bytes": int(stats["total_bytes"]),
    }
