"""What an archive on disk holds: its members' names, read cheaply and boundedly at decision time.

``tar -xf x.tar`` and ``unzip x.zip -d ~`` only say where members land; whether one is
``.claude/settings.json`` (a host's hook settings) is in the archive. :func:`members` reads the names
from a zip's central directory (:mod:`zipfile`), a tar's headers, plain or gzip/bzip2/xz
compressed (:mod:`tarfile`, streamed), or a cpio archive's (the portable ASCII formats, ``newc``
and ``odc``, that ``cpio -H newc``/``-H odc`` and ``bsdcpio`` write), with caps on the members listed and on the bytes read. Every
failure (missing, unreadable, too large, a format it does not know) is None: the caller keeps the
answer it gives without the names, so reading the archive can only refuse more, never allow more.

Names are cached by ``(path, size, mtime_ns)``: the same archive decided again is free, a changed one
is read again.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import lzma
import os
import tarfile
import time
import zipfile
from collections.abc import Callable
from typing import Any, BinaryIO

from guard.static.facts.filecache import FileCache, Unremembered

MAX_MEMBERS = 5000
# of an archive's bytes read through, once decompressed (a tar is read to its end to list it): a
# small .tar.xz can hold gigabytes, and tarfile's own decompression of one took 15 s for 60 MiB
MAX_BYTES = 64 << 20
_SECONDS = 0.5  # (as ``ondisk.ARCHIVE_SECONDS``: this module is imported only when an archive is read)
_cache: FileCache[tuple[str, ...]] = FileCache(128)


class _TooMuch(Exception):
    """More members or bytes than the caps allow."""


class _TooLate(Unremembered):
    """The time for reading archives is up (not the archive's doing: read again next time)."""


class _Capped:
    """A file read through no further than ``MAX_BYTES`` and not past ``until`` (``time.monotonic()``;
    all :mod:`tarfile`'s stream mode calls)."""

    def __init__(self, raw: BinaryIO | gzip.GzipFile | bz2.BZ2File | lzma.LZMAFile, until: float) -> None:
        self.raw, self.left, self.until = raw, MAX_BYTES, until

    def read(self, size: int = -1) -> bytes:
        if self.left <= 0:
            raise _TooMuch
        if time.monotonic() > self.until:
            raise _TooLate
        data = self.raw.read(self.left if size < 0 else min(size, self.left))
        self.left -= len(data)
        return data


def members(path: str, until: float | None = None) -> tuple[str, ...] | None:
    """The names of the files (not folders) ``path`` holds, as stored; None when not read by
    ``until`` (``time.monotonic()``; default :data:`guard.static.facts.ondisk.ARCHIVE_SECONDS` from
    now: the archives of one decision share one).

    >>> members("/nonexistent.tar") is None
    True
    """
    deadline = time.monotonic() + _SECONDS if until is None else until
    return _cache.get(path, lambda _: _read(path, deadline))


def _read(path: str, until: float) -> tuple[str, ...] | None:
    try:
        with open(path, "rb") as raw:
            head = raw.read(6)
            raw.seek(0)
            if head in _CPIO_MAGIC:
                return _cpio(_Capped(raw, until))
            entries = _zip_entries(raw)
            if entries is not None:
                if entries > MAX_MEMBERS:  # (before zipfile reads a directory of a million entries)
                    return None
                with zipfile.ZipFile(raw) as zipped:
                    infos = zipped.infolist()
                    if len(infos) > MAX_MEMBERS:
                        return None
                    return tuple(i.filename for i in infos if not i.is_dir())
            raw.seek(0)
            opener = next((o for magic, o in _COMPRESSED if head.startswith(magic)), None)
            with opener(raw) if opener else contextlib.nullcontext(raw) as stream:
                return _tar(_Capped(stream, until))
    except _TooLate:
        raise
    except Exception:  # (too much, unreadable, malformed, a format not known: not read, never a crash)
        return None


# a tar compressed by one of these is decompressed here, into the caps (tarfile's own stream
# decompression joins its buffer again at every block: quadratic on what compresses well); each is
# opened as a context manager by ``_read``
_COMPRESSED: tuple[tuple[bytes, Callable[[BinaryIO], Any]], ...] = (
    (b"\x1f\x8b", lambda raw: gzip.GzipFile(fileobj=raw, mode="rb")),
    (b"BZh", lambda raw: bz2.BZ2File(raw)),
    (b"\xfd7zXZ\x00", lambda raw: lzma.LZMAFile(raw)),  # noqa: SIM115
)


def _tar(stream: _Capped) -> tuple[str, ...] | None:
    names: list[str] = []
    with tarfile.open(fileobj=stream, mode="r|") as archive:  # type: ignore[call-overload]
        for member in archive:
            if len(names) >= MAX_MEMBERS:
                return None
            if not member.isdir():
                names.append(member.name)
    return tuple(names)


def _zip_entries(raw: BinaryIO) -> int | None:
    """How many entries a zip's end record says it holds (0xFFFF: a zip64 that may hold more), or
    None when the file has no end record (not a zip)."""
    size = raw.seek(0, os.SEEK_END)
    tail = min(size, 22 + 0xFFFF)  # (the record, and a comment of at most 64 KiB after it)
    raw.seek(size - tail)
    data = raw.read(tail)
    at = data.rfind(b"PK\x05\x06")
    if at < 0 or at + 22 > len(data):
        return None
    count = int.from_bytes(data[at + 10 : at + 12], "little")
    return MAX_MEMBERS + 1 if count == 0xFFFF else count


_CPIO_MAGIC = (b"070701", b"070702", b"070707")  # newc, newc with checksums, odc
_TRAILER = "TRAILER!!!"
_S_IFMT, _S_IFDIR = 0o170000, 0o040000


def _cpio(raw: _Capped) -> tuple[str, ...] | None:
    """The file members of a cpio archive in the ``newc`` or ``odc`` format (the header's fields
    are ASCII hexadecimal or octal numbers; the name follows, then the data)."""
    names: list[str] = []
    while True:
        magic = raw.read(6)
        if magic in (b"070701", b"070702"):
            head = raw.read(104)
            field = [int(head[i : i + 8], 16) for i in range(0, 104, 8)]
            mode, size, namesize = field[1], field[6], field[11]
            name = raw.read(namesize)
            _skip(raw, -(110 + namesize) % 4)
            padded = size + -size % 4
        elif magic == b"070707":
            head = raw.read(70)
            mode, namesize, size = int(head[12:18], 8), int(head[53:59], 8), int(head[59:70], 8)
            name = raw.read(namesize)
            padded = size
        else:
            return None  # (truncated, or not cpio after all)
        text = name.rstrip(b"\0").decode("utf-8", "surrogateescape")
        if text == _TRAILER:
            return tuple(names)
        if mode & _S_IFMT != _S_IFDIR:
            if len(names) >= MAX_MEMBERS:
                return None
            names.append(text)
        _skip(raw, padded)


def _skip(raw: _Capped, size: int) -> None:
    while size > 0:
        chunk = raw.read(min(size, 1 << 16))
        if not chunk:
            raise _TooMuch  # (the archive ends inside a member)
        size -= len(chunk)
