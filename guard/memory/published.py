"""The published snapshot: the memory a writer holds, in one file readers search without LanceDB.

LanceDB (with pyarrow, ≈125 MB and 1-2 s to import) is needed only where memory is written,
compacted or shared. A writer (``guard serve``, ``guard tidy``, a process with
``memory.write_in_process``) publishes the vectors and the four per-signature sums scoring
needs after each change; a reader opens the file read-only and runs the writer's search
(:func:`~guard.memory.index.search_columns`) step for step on the same numbers (the same
feature rows, the same product, :func:`~guard.memory.index.neighbours`), so both give identical
scores. A query reads only the rows of the features it has (``os.pread``): at 10k memories
about 40 KB per feature, nothing of it kept resident.

File layout (native byte order; the header says which, a reader on another order ignores it)::

    b"GUARDSN1" | u32 header length | JSON header | zero padding to 64 bytes
    per tool, each array 64-byte aligned:
      vectors_t  float32 (dim, n)    one column per distinct signature
      count, successes, importance_sum, importance_success   float64 (n,)

Header: ``{"embedder", "dim", "version" (the table version), "byteorder", "tools": {tool:
{"n", "offset"}}}``. Publication writes a private temporary file (0600) next to the target
and ``os.replace``-s it in, so a reader sees the old file or the new one, never a mix; a
reader notices a new file by its inode, size and mtime.
"""

from __future__ import annotations

import json
import os
import struct
import sys
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from guard.atomic import replacing
from guard.memory.embed import Vector
from guard.memory.index import _AGGREGATES, F64, Neighbours, Snapshot, neighbours

MAGIC = b"GUARDSN1"
FILE_NAME = "memory-snapshot.bin"
_ALIGN = 64


def snapshot_path(workspace: Path) -> Path:
    return workspace / FILE_NAME


def _pad(n: int) -> int:
    return -n % _ALIGN


def _tool_bytes(dim: int, n: int) -> int:
    """One tool's block: its vectors and four sums, each padded to the alignment."""
    return dim * n * 4 + _pad(dim * n * 4) + len(_AGGREGATES) * (n * 8 + _pad(n * 8))


def publish(snapshot: Snapshot, path: Path, embedder: str) -> int:
    """Write ``snapshot`` to ``path`` atomically (0600); the bytes written."""
    tools: dict[str, dict[str, int]] = {}
    parts: list[tuple[str, int]] = []  # (tool, n) in file order
    for tool, index in sorted(snapshot.tools.items()):
        parts.append((tool, index.n))
    # Offsets are relative to the start of the data block; fixed up after the header size is known.
    offset = 0
    dim = snapshot.dim
    for tool, n in parts:
        tools[tool] = {"n": n, "offset": offset}
        offset += _tool_bytes(dim, n)
    header: dict[str, Any] = {
        "embedder": embedder,
        "dim": dim,
        "version": snapshot.version,
        "byteorder": sys.byteorder,
        "tools": tools,
    }
    raw = json.dumps(header, sort_keys=True).encode()
    head = MAGIC + struct.pack("<I", len(raw)) + raw
    head += b"\0" * _pad(len(head))
    with replacing(path, mode=0o600, keep_mode=False, fsync=False) as f:
        f.write(head)
        for tool, n in parts:
            a = snapshot.tools[tool]._a
            vec = np.ascontiguousarray(a.vectors_t[:, :n])
            f.write(vec.tobytes())
            f.write(b"\0" * _pad(vec.nbytes))
            for name in _AGGREGATES:
                col = np.ascontiguousarray(getattr(a, name)[:n], dtype=np.float64)
                f.write(col.tobytes())
                f.write(b"\0" * _pad(col.nbytes))
        size = f.tell()
    return size


class _Tool:
    """One tool's block: the sums are read once (8 bytes per signature and sum); the vectors stay
    on disk and a query reads only the feature rows it uses (``os.pread``, no mapping: a mapped
    file's pages stay resident once touched, and the kernel maps them in large runs)."""

    __slots__ = ("count", "importance_success", "importance_sum", "n", "successes", "vectors_at")

    def __init__(self, fd: int, base: int, dim: int, n: int) -> None:
        self.n = n
        self.vectors_at = base
        at = base + dim * n * 4 + _pad(dim * n * 4)
        cols: list[F64] = []
        for _ in _AGGREGATES:
            cols.append(np.frombuffer(_read(fd, n * 8, at), np.float64))
            at += n * 8 + _pad(n * 8)
        self.count, self.successes, self.importance_sum, self.importance_success = cols


def _read(fd: int, size: int, offset: int) -> bytes:
    data = os.pread(fd, size, offset)
    if len(data) != size:
        raise ValueError("snapshot file is truncated")
    return data


class PublishedSnapshot:
    """A published snapshot, opened read-only; holds its file open (a newer one replaces the name,
    not this file), so a search in flight during a reload still reads consistent rows."""

    def __init__(self, path: Path) -> None:
        self._file = open(path, "rb")  # noqa: SIM115 (held open for the object's life, closed with it)
        try:
            self._open()
        except BaseException:
            self._file.close()
            raise

    def _open(self) -> None:
        fd = self._file.fileno()
        st = os.fstat(fd)
        self.stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        start = len(MAGIC) + 4
        head = os.pread(fd, start, 0)
        if len(head) < start or head[: len(MAGIC)] != MAGIC:
            raise ValueError("not a guard memory snapshot")
        (length,) = struct.unpack_from("<I", head, len(MAGIC))
        header = json.loads(_read(fd, length, start))
        if header.get("byteorder") != sys.byteorder:
            raise ValueError("snapshot written on a machine of the other byte order")
        data = start + length
        data += _pad(data)
        self.embedder: str = header["embedder"]
        self.dim: int = int(header["dim"])
        self.version: int | None = header.get("version")
        self.tools: dict[str, _Tool] = {}
        for tool, where in header["tools"].items():
            n = int(where["n"])
            if data + int(where["offset"]) + _tool_bytes(self.dim, n) > st.st_size:
                raise ValueError("snapshot file is truncated")
            self.tools[tool] = _Tool(fd, data + int(where["offset"]), self.dim, n)

    def __len__(self) -> int:
        return sum(t.n for t in self.tools.values())

    def __del__(self) -> None:  # the last search that held it is done: close quietly
        file = getattr(self, "_file", None)
        if file is not None:
            file.close()

    def search(self, tool: str, query: Vector, threshold: float, top_k: int) -> Neighbours | None:
        t = self.tools.get(tool)
        if t is None or t.n == 0:
            return None
        n, fd, row = t.n, self._file.fileno(), t.n * 4
        nonzero = np.flatnonzero(query)
        if len(nonzero) * 4 <= self.dim:  # the rows the query uses, as the in-process search picks them
            rows = np.empty((len(nonzero), n), np.float32)
            for k, i in enumerate(nonzero):
                rows[k] = np.frombuffer(_read(fd, row, t.vectors_at + int(i) * row), np.float32)
            sparse: tuple[npt.NDArray[np.float32], Vector] = (rows, query[nonzero])
            sims = sparse[1] @ sparse[0]
        else:
            matrix = np.frombuffer(_read(fd, self.dim * row, t.vectors_at), np.float32).reshape(self.dim, n)
            sims = query @ matrix
        return neighbours(sims, t.count, t.successes, t.importance_sum, t.importance_success, threshold, top_k)
