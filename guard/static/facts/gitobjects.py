"""Which version of a file a commit holds, read from the repository's objects without running git.

``git checkout BRANCH``, ``git switch``, ``git merge`` and ``git stash pop`` say nothing of the files
they rewrite; the commits do. :func:`changes` tells whether a path (a host's hook settings) differs
between ``HEAD`` and another revision: it resolves the revision (a branch, a remote branch, a tag,
``stash``, a full object id), then walks each commit's tree to the path, reading loose objects and
packs (deltas included) directly. git itself is never run: a repository's config can make git run
programs (``core.fsmonitor``), and a hook must not start them.

Anything it cannot read (a revision expression such as ``HEAD~2``, a SHA-256 repository, a broken
object, more work than the caps allow) is None: the caller keeps its answer without the objects.
"""

from __future__ import annotations

import mmap
import os
import re
import struct
import zlib
from typing import BinaryIO

MAX_DELTA_DEPTH = 64
_BLOBS: dict[tuple[str, str, str], str] = {}  # (objects folder, commit, path) -> blob: a commit never changes
_BLOBS_SIZE = 512
MAX_OBJECT = 16 << 20  # bytes of one commit or tree object, inflated
_HEX = re.compile(r"[0-9a-f]{40}")
_NAME = re.compile(r"[A-Za-z0-9._/@+-]{1,200}")


class Unread(Exception):
    """An object or reference guard does not read."""


def gitdir(start: str) -> str | None:
    """The git directory of the repository holding the folder ``start`` (``.git``, or what a ``.git``
    file of a worktree names), or None."""
    folder = os.path.abspath(start)
    for _ in range(64):
        dot = os.path.join(folder, ".git")
        if os.path.isdir(dot):
            return dot
        if os.path.isfile(dot):
            try:
                with open(dot, encoding="utf-8") as f:
                    line = f.read(4096).strip()
            except OSError:
                return None
            if line.startswith("gitdir:"):
                target = line[len("gitdir:") :].strip()
                return os.path.normpath(os.path.join(folder, target))
            return None
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None


def changes(repo: str, rev: str, path: str) -> bool | None:
    """Does ``rev`` hold another version of ``path`` than ``HEAD`` (or hold it where ``HEAD`` does not,
    or the other way round)? None when it cannot be told."""
    store = _Store(repo)
    try:
        theirs = store.resolve(rev)
        ours = store.resolve("HEAD")
        if theirs is None or ours is None:
            return None
        return store.blob_at(theirs, path) != store.blob_at(ours, path)
    except (Unread, OSError, ValueError, zlib.error, struct.error, IndexError, KeyError):
        return None
    finally:
        store.close()


class _Store:
    def __init__(self, repo: str) -> None:
        self.repo = repo
        common = repo
        try:
            with open(os.path.join(repo, "commondir"), encoding="utf-8") as f:  # a worktree's shared refs and objects
                common = os.path.normpath(os.path.join(repo, f.read().strip()))
        except OSError:
            pass
        self.common = common
        self.objects = os.path.join(common, "objects")
        self._packs: list[tuple[str, mmap.mmap]] | None = None
        self._bases = (repo,) if common == repo else (repo, common)
        self._packed_refs: dict[str, str] | None = None

    # -- references
    def resolve(self, rev: str) -> str | None:
        if _HEX.fullmatch(rev):
            return rev
        if not _NAME.fullmatch(rev) or ".." in rev:
            return None  # (``HEAD~2``, ``@{u}``, ``A...B``: expressions not read here)
        candidates = (
            [rev]
            if rev == "HEAD"
            else [f"refs/heads/{rev}", f"refs/remotes/{rev}", f"refs/tags/{rev}", f"refs/{rev}", rev]
        )
        for name in candidates:
            sha = self._ref(name, 0)
            if sha is not None:
                return self._peeled(sha)
        return None

    def _ref(self, name: str, depth: int) -> str | None:
        if depth > 8:
            raise Unread(name)
        for base in self._bases:
            try:
                with open(os.path.join(base, name), encoding="utf-8") as f:
                    text = f.read(512).strip()
            except (OSError, ValueError):
                continue
            if text.startswith("ref:"):
                return self._ref(text[4:].strip(), depth + 1)
            return text if _HEX.fullmatch(text) else None
        return self._refs_packed().get(name)

    def _refs_packed(self) -> dict[str, str]:
        """``packed-refs``, read once for the call: ref -> id."""
        if self._packed_refs is None:
            self._packed_refs = {}
            try:
                with open(os.path.join(self.common, "packed-refs"), encoding="utf-8") as f:
                    for line in f:
                        sha, _, ref = line.strip().partition(" ")
                        if ref and _HEX.fullmatch(sha):
                            self._packed_refs[ref] = sha
            except OSError:
                pass
        return self._packed_refs

    def _peeled(self, sha: str) -> str:
        """A commit's id, through an annotated tag (remembered, as objects never change)."""
        key = (self.objects, sha, "")
        found = _BLOBS.get(key)
        if found is None:
            found = _BLOBS[key] = self._peel(sha)
        return found

    def _peel(self, sha: str) -> str:
        for _ in range(8):
            kind, data = self.read(sha)
            if kind != b"tag":
                return sha
            sha = data.split(b"\n", 1)[0].split(b" ", 1)[1].decode()
        raise Unread(sha)

    # -- trees
    def blob_at(self, commit: str, path: str) -> str:
        """The blob id at ``path`` in ``commit``'s tree; "" when there is none (remembered: a commit's
        tree never changes, and a decision on ``git checkout X`` otherwise reads it every time)."""
        key = (self.objects, commit, path)
        found = _BLOBS.get(key)
        if found is None:
            found = self._blob_at(commit, path)
            if len(_BLOBS) >= _BLOBS_SIZE:
                _BLOBS.pop(next(iter(_BLOBS)))
            _BLOBS[key] = found
        return found

    def _blob_at(self, commit: str, path: str) -> str:
        kind, data = self.read(commit)
        if kind != b"commit" or not data.startswith(b"tree "):
            raise Unread(commit)
        tree = data[5:45].decode()
        parts = [p for p in path.split("/") if p]
        for i, part in enumerate(parts):
            kind, data = self.read(tree)
            if kind != b"tree":
                return ""
            entry = _entry(data, part.encode())
            if entry is None:
                return ""
            mode, sha = entry
            if i == len(parts) - 1:
                return "" if mode.startswith(b"4") else f"{mode.decode()}:{sha}"
            tree = sha
        return ""

    # -- objects
    def read(self, sha: str) -> tuple[bytes, bytes]:
        loose = os.path.join(self.objects, sha[:2], sha[2:])
        try:
            with open(loose, "rb") as f:
                raw = _inflate(f.read(MAX_OBJECT))
        except FileNotFoundError:
            return self._packed(bytes.fromhex(sha))
        head, _, body = raw.partition(b"\0")
        return head.split(b" ", 1)[0], body

    def _packed(self, binary: bytes) -> tuple[bytes, bytes]:
        for pack, index in self._indexes():
            offset = _find(index, binary)
            if offset is not None:
                with open(pack, "rb") as f:
                    return self._at(f, offset, 0)
        raise Unread(binary.hex())

    def _indexes(self) -> list[tuple[str, mmap.mmap]]:
        """The packs' indexes, mapped (a large repository's are tens of MB; a lookup reads a few pages)."""
        if self._packs is None:
            self._packs = []
            folder = os.path.join(self.objects, "pack")
            try:
                names = sorted(n for n in os.listdir(folder) if n.endswith(".idx"))
            except OSError:
                names = []
            for name in names[:64]:
                with open(os.path.join(folder, name), "rb") as f:
                    index = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                if index[:8] != b"\377tOc\0\0\0\2":
                    raise Unread(name)  # (version 1 indexes: not read)
                self._packs.append((os.path.join(folder, name[:-4] + ".pack"), index))
        return self._packs

    def close(self) -> None:
        for _, index in self._packs or ():
            index.close()

    def _at(self, f: BinaryIO, offset: int, depth: int) -> tuple[bytes, bytes]:
        if depth > MAX_DELTA_DEPTH:
            raise Unread("delta chain")
        f.seek(offset)
        byte = f.read(1)[0]
        kind, size, shift = (byte >> 4) & 7, byte & 15, 4
        while byte & 0x80:
            byte = f.read(1)[0]
            size |= (byte & 0x7F) << shift
            shift += 7
        if size > MAX_OBJECT:
            raise Unread("object too large")
        if kind in (1, 2, 3, 4):
            return (b"", b"commit", b"tree", b"blob", b"tag")[kind], _inflate_stream(f, size)
        if kind == 6:  # OFS_DELTA: the base is this far back in the same pack
            byte = f.read(1)[0]
            back = byte & 0x7F
            while byte & 0x80:
                byte = f.read(1)[0]
                back = ((back + 1) << 7) | (byte & 0x7F)
            delta = _inflate_stream(f, size)
            base_kind, base = self._at(f, offset - back, depth + 1)
            return base_kind, _apply(base, delta)
        if kind == 7:  # REF_DELTA: the base is named
            base_id = f.read(20)
            delta = _inflate_stream(f, size)
            base_kind, base = self._packed(base_id) if depth < MAX_DELTA_DEPTH else (b"", b"")
            return base_kind, _apply(base, delta)
        raise Unread(f"pack entry type {kind}")


def _find(index: mmap.mmap, binary: bytes) -> int | None:
    """The pack offset of the object ``binary`` in a version 2 ``.idx``, or None."""
    fanout = struct.unpack_from(">256I", index, 8)
    lo = fanout[binary[0] - 1] if binary[0] else 0
    hi = fanout[binary[0]]
    total = fanout[255]
    names = 8 + 1024
    while lo < hi:
        mid = (lo + hi) // 2
        here = index[names + 20 * mid : names + 20 * mid + 20]
        if here == binary:
            offsets = names + 20 * total + 4 * total
            value = struct.unpack_from(">I", index, offsets + 4 * mid)[0]
            if value & 0x80000000:
                large = offsets + 4 * total
                value = struct.unpack_from(">Q", index, large + 8 * (value & 0x7FFFFFFF))[0]
            return int(value)
        if here < binary:
            lo = mid + 1
        else:
            hi = mid
    return None


def _entry(tree: bytes, name: bytes) -> tuple[bytes, str] | None:
    """``(mode, id)`` of ``name`` in a tree object (entries ``MODE NAME\\0`` and 20 bytes of id)."""
    i = 0
    while i < len(tree):
        space = tree.index(b" ", i)
        nul = tree.index(b"\0", space)
        if tree[space + 1 : nul] == name:
            return tree[i:space], tree[nul + 1 : nul + 21].hex()
        i = nul + 21
    return None


def _inflate(data: bytes) -> bytes:
    return zlib.decompressobj().decompress(data, MAX_OBJECT + 64)


def _inflate_stream(f: BinaryIO, size: int) -> bytes:
    d = zlib.decompressobj()
    out = b""
    while len(out) < size and not d.eof:
        chunk = f.read(65536)
        if not chunk:
            break
        out += d.decompress(chunk, size - len(out))
    if len(out) != size:
        raise Unread("short object")
    return out


def _apply(base: bytes, delta: bytes) -> bytes:
    """git's delta: the base and result sizes, then copy (from the base) and insert instructions."""
    i = 0

    def varint() -> int:
        nonlocal i
        value, shift = 0, 0
        while True:
            byte = delta[i]
            i += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value

    if varint() != len(base):
        raise Unread("delta base size")
    size = varint()
    out = bytearray()
    while i < len(delta):
        op = delta[i]
        i += 1
        if op & 0x80:
            offset = length = 0
            for bit in range(4):
                if op & (1 << bit):
                    offset |= delta[i] << (8 * bit)
                    i += 1
            for bit in range(3):
                if op & (1 << (4 + bit)):
                    length |= delta[i] << (8 * bit)
                    i += 1
            length = length or 0x10000
            out += base[offset : offset + length]
        elif op:
            out += delta[i : i + op]
            i += op
        else:
            raise Unread("delta opcode 0")
        if len(out) > size:
            raise Unread("delta too long")
    if len(out) != size:
        raise Unread("delta size")
    return bytes(out)
