"""What an archive on disk holds: its members' names, read cheaply and boundedly at decision time.

``tar -xf x.tar`` and ``unzip x.zip -d ~`` only say where members land; whether one is
``.claude/settings.json`` (a host's hook settings) is in the archive. :func:`members` reads the names
from a zip's central directory (:mod:`zipfile`) or a tar's headers, plain or gzip/bzip2/xz
compressed (:mod:`tarfile`, streamed), with caps on the members listed and on the bytes read. Every
failure (missing, unreadable, too large, a format it does not know) is None: the caller keeps the
answer it gives without the names, so reading the archive can only refuse more, never allow more.

Names are cached by ``(path, size, mtime_ns)``: the same archive decided again is free, a changed one
is read again.
"""

from __future__ import annotations

import os
import tarfile
import threading
import zipfile
from collections import OrderedDict
from typing import BinaryIO

MAX_MEMBERS = 5000
MAX_BYTES = 64 << 20  # of the archive file read through (a tar is read to its end to list it)
_CACHE_SIZE = 128
_cache: OrderedDict[tuple[str, int, int], tuple[str, ...] | None] = OrderedDict()
_lock = threading.Lock()


class _TooMuch(Exception):
    """More members or bytes than the caps allow."""


class _Capped:
    """A file read through no further than ``MAX_BYTES`` (all :mod:`tarfile`'s stream mode calls)."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw, self.left = raw, MAX_BYTES

    def read(self, size: int = -1) -> bytes:
        if self.left <= 0:
            raise _TooMuch
        data = self.raw.read(self.left if size < 0 else min(size, self.left))
        self.left -= len(data)
        return data


def members(path: str) -> tuple[str, ...] | None:
    """The names of the files (not folders) ``path`` holds, as stored; None when not read.

    >>> members("/nonexistent.tar") is None
    True
    """
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    key = (path, st.st_size, st.st_mtime_ns)
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    names = _read(path)
    with _lock:
        _cache[key] = names
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return names


def _read(path: str) -> tuple[str, ...] | None:
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                infos = archive.infolist()
                if len(infos) > MAX_MEMBERS:
                    return None
                return tuple(i.filename for i in infos if not i.is_dir())
        with open(path, "rb") as raw, tarfile.open(fileobj=_Capped(raw), mode="r|*") as archive:  # type: ignore[call-overload]
            names: list[str] = []
            for member in archive:
                if len(names) >= MAX_MEMBERS:
                    return None
                if not member.isdir():
                    names.append(member.name)
            return tuple(names)
    except Exception:  # (too much, unreadable, malformed, a format not known: not read, never a crash)
        return None
