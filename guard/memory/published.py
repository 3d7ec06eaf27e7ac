"""The published snapshot: the memory a writer holds, in one file readers search without LanceDB
and without numpy.

LanceDB (with pyarrow, ≈125 MB and 1-2 s to import) is needed only where memory is written,
compacted or shared, and numpy (≈12 MB resident) only where the snapshot is held in memory. A
writer (``guard serve``, ``guard tidy``, a process with ``memory.write_in_process``) publishes
the vectors and the four per-signature sums scoring needs after each change; a reader opens the
file read-only and searches it in plain Python with the writer's own arithmetic
(:func:`guard.memory.neighbours.fold`, :func:`~guard.memory.neighbours.top`,
:func:`~guard.memory.neighbours.aggregate`), so both give identical scores.

A query reads only what it needs (``os.pread``, nothing kept resident but the posting starts):
the postings of its rarer features give the candidate columns (a column sharing none of them
cannot reach the threshold on the others alone: their part of the query has a norm below it,
and a column's norm is at most 1), the dense feature rows of its common features give their
values, and the sums of at most ``top_k`` chosen columns are read last.

File layout (native byte order; the header says which, a reader on another order ignores it)::

    b"GUARDSN2" | u32 header length | JSON header | zero padding to 64 bytes
    per tool, each array 64-byte aligned:
      vectors_t  float32 (dim, n)   one column per distinct signature
      starts     uint64 (dim + 1)   feature k's postings are entries starts[k] .. starts[k+1]
      columns    uint32 (nnz)       the columns where feature k is nonzero, ascending
      values     float32 (nnz)      and their values
      sums       float64 (n, 4)     count, successes, importance_sum, importance_success

Header: ``{"embedder", "dim", "version" (the table version), "byteorder", "tools": {tool:
{"n", "nnz", "offset"}}}``. Publication writes a private temporary file (0600) next to the
target and ``os.replace``-s it in, so a reader sees the old file or the new one, never a mix; a
reader notices a new file by its inode, size and mtime.
"""

from __future__ import annotations

import json
import math
import os
import struct
import sys
from array import array
from pathlib import Path
from typing import TYPE_CHECKING, Any

from guard.atomic import replacing
from guard.memory.neighbours import SLACK, Neighbours, aggregate, top

if TYPE_CHECKING:
    from guard.memory.embed import Sparse
    from guard.memory.index import Snapshot

MAGIC = b"GUARDSN2"
FILE_NAME = "memory-snapshot.bin"
_ALIGN = 64
_SUMS = 4  # count, successes, importance_sum, importance_success
_ROWS_AT_ONCE = 8  # dense rows held together (4 bytes a column each) for the quickest loop
_NORM_SLACK = 1e-4  # a stored column's norm is 1 within float32 rounding (≈1e-7); far more than that


def snapshot_path(workspace: Path) -> Path:
    return workspace / FILE_NAME


def _pad(n: int) -> int:
    return -n % _ALIGN


def _block(size: int) -> int:
    return size + _pad(size)


def _layout(dim: int, n: int, nnz: int) -> tuple[int, int, int, int, int]:
    """Offsets of one tool's arrays from the start of its block, and the block's size."""
    starts = _block(dim * n * 4)
    columns = starts + _block((dim + 1) * 8)
    values = columns + _block(nnz * 4)
    sums = values + _block(nnz * 4)
    return starts, columns, values, sums, sums + _block(n * _SUMS * 8)


def publish(snapshot: Snapshot, path: Path, embedder: str) -> int:
    """Write ``snapshot`` to ``path`` atomically (0600); the bytes written."""
    import numpy as np

    dim = snapshot.dim
    parts: list[tuple[str, list[Any]]] = []  # (tool, arrays in file order)
    tools: dict[str, dict[str, int]] = {}
    offset = 0  # from the start of the data block
    for tool, index in sorted(snapshot.tools.items()):
        a = index._a  # the arrays first, the count second (see guard.memory.index)
        n = min(index.n, a.capacity)
        vectors = np.ascontiguousarray(a.vectors_t[:, :n])
        feature, column = np.nonzero(vectors)  # by feature, then column
        starts = np.zeros(dim + 1, np.uint64)
        np.cumsum(np.bincount(feature, minlength=dim), out=starts[1:])
        sums = np.column_stack([a.count[:n], a.successes[:n], a.importance_sum[:n], a.importance_success[:n]])
        arrays = [vectors, starts, column.astype(np.uint32), vectors[feature, column], sums.astype(np.float64)]
        parts.append((tool, arrays))
        tools[tool] = {"n": n, "nnz": len(column), "offset": offset}
        offset += _layout(dim, n, len(column))[-1]
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
        for _, arrays in parts:
            for arr in arrays:
                data = np.ascontiguousarray(arr).tobytes()
                f.write(data)
                f.write(b"\0" * _pad(len(data)))
        size = f.tell()
    return size


def _read(fd: int, size: int, offset: int) -> bytes:
    data = os.pread(fd, size, offset)
    if len(data) != size:
        raise ValueError("snapshot file is truncated")
    return data


def _array(code: str, data: bytes) -> array[Any]:
    out = array(code)
    out.frombytes(data)
    return out


class _Tool:
    """One tool's block: only its posting starts are held (8 bytes a feature)."""

    __slots__ = ("columns_at", "n", "nnz", "starts", "sums_at", "values_at", "vectors_at")

    def __init__(self, fd: int, base: int, dim: int, n: int, nnz: int) -> None:
        self.n, self.nnz, self.vectors_at = n, nnz, base
        starts, columns, values, sums, _ = _layout(dim, n, nnz)
        self.columns_at, self.values_at, self.sums_at = base + columns, base + values, base + sums
        self.starts = _array("Q", _read(fd, (dim + 1) * 8, base + starts))
        if self.starts[-1] != nnz or any(a > b for a, b in zip(self.starts, self.starts[1:], strict=False)):
            raise ValueError("snapshot postings are inconsistent")

    def row(self, fd: int, k: int) -> array[float]:
        """Feature ``k``'s value in every column."""
        return _array("f", _read(fd, self.n * 4, self.vectors_at + k * self.n * 4))

    def columns(self, fd: int, k: int) -> array[int]:
        """The columns where feature ``k`` is nonzero."""
        lo, hi = self.starts[k], self.starts[k + 1]
        return _array("I", _read(fd, (hi - lo) * 4, self.columns_at + lo * 4))

    def postings(self, fd: int, k: int) -> tuple[array[int], array[float]]:
        """The columns where feature ``k`` is nonzero, and its values there."""
        lo, hi = self.starts[k], self.starts[k + 1]
        return self.columns(fd, k), _array("f", _read(fd, (hi - lo) * 4, self.values_at + lo * 4))

    def sums(self, fd: int, j: int) -> array[float]:
        return _array("d", _read(fd, _SUMS * 8, self.sums_at + j * _SUMS * 8))


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
            old = head.startswith(MAGIC[:-1])
            raise ValueError(
                "a snapshot of an older format (the writer replaces it)" if old else "not a guard memory snapshot"
            )
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
            n, nnz, at = int(where["n"]), int(where["nnz"]), data + int(where["offset"])
            if at + _layout(self.dim, n, nnz)[-1] > st.st_size:
                raise ValueError("snapshot file is truncated")
            self.tools[tool] = _Tool(fd, at, self.dim, n, nnz)

    def __len__(self) -> int:
        return sum(t.n for t in self.tools.values())

    def __del__(self) -> None:  # the last search that held it is done: close quietly
        file = getattr(self, "_file", None)
        if file is not None:
            file.close()

    def search(self, tool: str, query: Sparse, threshold: float, top_k: int) -> Neighbours | None:
        """The neighbours of ``query`` (nonzero pairs, ascending) among ``tool``'s columns, as
        :func:`guard.memory.index.search_columns` finds them in the writer."""
        t = self.tools.get(tool)
        if t is None or t.n == 0:
            return None
        fd, n, floor = self._file.fileno(), t.n, threshold - SLACK
        lengths = [t.starts[k + 1] - t.starts[k] for k, _ in query]
        common = _common(query, lengths, floor)
        candidates: set[int] | range = set() if floor > 0.0 else range(n)  # similarity 0: every column
        if isinstance(candidates, set):
            for i, (k, _) in enumerate(query):
                if i not in common:  # read again below: holding many long postings costs more
                    candidates.update(t.columns(fd, k))
        # The fold of guard.memory.neighbours, feature by feature in ascending order (so each
        # column's sum sees its terms in that order): through a feature's postings where they are
        # clearly fewer than the candidates (testing a posting's column costs more than indexing a
        # row, and reading a row about a nanosecond a column), else through its dense row.
        walk = [lengths[i] * 3 < len(candidates) * 2 + n // 30 for i in range(len(query))]
        hits = []
        if not any(walk) and len(query) <= _ROWS_AT_ONCE:  # one running sum per candidate
            rows = [(q, t.row(fd, k)) for k, q in query]
            for j in candidates:
                s = 0.0
                for q, row in rows:
                    v = row[j]
                    if v:
                        s += q * v
                if s >= floor:
                    hits.append((j, s))
        else:
            sims = dict.fromkeys(candidates, 0.0)
            del candidates
            for i, (k, q) in enumerate(query):
                if walk[i]:
                    cols, vals = t.postings(fd, k)
                    for j, v in zip(cols, vals, strict=True):
                        if j in sims:
                            sims[j] += q * v
                else:
                    row = t.row(fd, k)
                    for j in sims:
                        v = row[j]
                        if v:
                            sims[j] += q * v
            hits = [(j, s) for j, s in sims.items() if s >= floor]
        chosen = top(hits, threshold, top_k)
        if not chosen:
            return None
        sums = [t.sums(fd, j) for j, _ in chosen]
        count, successes, importance_sum, importance_success = ([row[i] for row in sums] for i in range(_SUMS))
        return aggregate([s for _, s in chosen], count, successes, importance_sum, importance_success, threshold)


def _common(query: Sparse, lengths: list[int], floor: float) -> set[int]:
    """Query features that together cannot reach ``floor`` (Cauchy-Schwarz: their part of the
    query has a norm below it), so candidates need not come from their postings. Of two greedy
    choices (longest postings first; most postings per unit of weight first) the one leaving
    fewer postings to read."""
    if floor <= 0.0:
        return set()
    weights = [v * v for _, v in query]
    best: set[int] = set()
    left = sum(lengths)
    for key in (lengths.__getitem__, lambda i: lengths[i] / weights[i]):
        common: set[int] = set()
        weight = 0.0
        for i in sorted(range(len(query)), key=key, reverse=True):
            if math.sqrt(weight + weights[i]) * (1.0 + _NORM_SLACK) < floor:
                weight += weights[i]
                common.add(i)
        rest = sum(length for i, length in enumerate(lengths) if i not in common)
        if rest < left:
            best, left = common, rest
    return best
