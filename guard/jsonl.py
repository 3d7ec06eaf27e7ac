"""Append-only JSON-lines files: the workspace's history and logs.

``JsonlLog`` appends one JSON line per record, safely across threads (a lock) and
processes (``flock`` around one ``write`` on an ``O_APPEND`` descriptor), so lines never
interleave or get lost. A writer that died mid-line leaves a torn fragment; the next
append starts on a fresh line, and readers skip the fragment with a warning.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from guard.log import logger


class JsonlLog:
    """An append-only JSON-lines file, 0600."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._where = os.fspath(path)  # (a Path's ``__fspath__`` is Python: once, not per append)
        self._lock = threading.Lock()
        self._fd: int | None = None
        # (size, mtime_ns) right after our own last write: while the file still looks like
        # that, its last byte is our newline and need not be read back.
        self._after_ours: tuple[int, int] | None = None
        self._file: tuple[int, int] | None = None  # (st_dev, st_ino) of the open descriptor

    def _locked(self) -> tuple[int, os.stat_result]:
        """The descriptor, locked, and its file's stat, taken under the lock.

        One ``stat`` of the path answers both questions: is the path still the file the
        descriptor was opened on (after the log was moved away or replaced, appends must still
        land in the workspace: reopen), and how long is it (the same inode, so the same answer
        ``fstat`` would give).
        """
        while True:
            if self._fd is None:
                fd = os.open(self._where, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                st = os.fstat(fd)
                self._fd, self._file = fd, (st.st_dev, st.st_ino)
            fd = self._fd
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                st = os.stat(self._where)
                if (st.st_dev, st.st_ino) == self._file:
                    return fd, st
            except FileNotFoundError:
                pass
            except BaseException:
                fcntl.flock(fd, fcntl.LOCK_UN)
                raise
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            self._fd = self._file = self._after_ours = None

    def append(self, record: Mapping[str, Any]) -> tuple[int, int, int] | None:
        """Write one record as one line; raises OSError (disk full, read-only) to the caller.

        Returns ``(inode, start, end)``, the bytes the line took, when nothing else was written
        in between (else None): a reader that had read up to ``start`` can count the record
        without reading it back.
        """
        return self.append_text(json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str))

    def append_text(self, text: str) -> tuple[int, int, int] | None:
        """:meth:`append` for a record already encoded as one JSON line (without its newline)."""
        # A lone surrogate (a "\ud800" escape, a file name decoded with surrogateescape) cannot
        # be UTF-8; written as its JSON escape it reads back as the same string.
        data = (text + "\n").encode("utf-8", "backslashreplace")
        with self._lock:
            fd, st = self._locked()
            try:
                size = start = st.st_size
                if size and (size, st.st_mtime_ns) != self._after_ours:
                    if _last_byte(self._where, size) != b"\n":
                        data = b"\n" + data  # a torn line before us: start clean
                        start += 1
                self._after_ours = None
                want = len(data)
                written = 0
                try:
                    written = os.write(fd, data)  # one write takes the whole line, but for a full disk
                    if written != want:
                        view = memoryview(data)[written:]
                        while view:
                            n = os.write(fd, view)
                            written += n
                            view = view[n:]
                except OSError:
                    _take_back(fd, size, written)
                    raise
                end = os.fstat(fd)
                after = end.st_size
                self._after_ours = (after, end.st_mtime_ns)
                if after != size + want:  # a writer without the lock came between
                    return None
                return end.st_ino, start, after
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = self._file = self._after_ours = None

    def read_from(self, offset: int) -> tuple[list[dict[str, Any]], int]:
        """Complete records after ``offset`` and the offset after the last complete line.

        A trailing fragment without its newline is left for the next call (it may still be
        being written); malformed complete lines are skipped with a warning.
        """
        try:
            with open(self.path, "rb") as f:
                f.seek(offset)
                chunk = f.read()
        except FileNotFoundError:
            return [], offset
        end = chunk.rfind(b"\n")
        if end < 0:
            return [], offset
        records = list(_parse_lines(chunk[: end + 1], self.path, offset))
        return records, offset + end + 1

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Every readable record, torn last line included in the warning count."""
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return
        if data and not data.endswith(b"\n"):
            logger.warning(f"{self.path}: torn last line skipped")
            data = data[: data.rfind(b"\n") + 1]
        yield from _parse_lines(data, self.path, 0)


def _take_back(fd: int, size_before: int, written: int) -> None:
    """Undo a partial line (disk full, file-size limit) so the file still ends on a whole line.

    Only when the file is exactly what we left: a writer that does not take the lock may
    have appended since, and its line must not be cut.
    """
    if written <= 0:
        return
    try:
        if os.fstat(fd).st_size == size_before + written:
            os.ftruncate(fd, size_before)
    except OSError:
        pass  # the torn fragment stays; readers skip it and the next append starts a new line


def _last_byte(path: str, size: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(size - 1)
        return f.read(1)


def _parse_lines(data: bytes, path: Path, base: int) -> Iterator[dict[str, Any]]:
    pos = base
    for raw in data.split(b"\n"):
        line_at = pos
        pos += len(raw) + 1
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            logger.warning(f"{path}: unreadable line at byte {line_at} skipped")
            continue
        if isinstance(rec, dict):
            yield rec
        else:
            logger.warning(f"{path}: line at byte {line_at} is not a JSON object; skipped")
