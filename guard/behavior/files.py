"""Small JSON documents and journals shared between processes.

Writers take an exclusive ``flock`` on one lock file for their read-modify-write, then
replace the document atomically (tmp + rename, 0600), so a reader never sees half a file
and two writers never lose each other's events. Readers compare ``stamp(path)`` (inode,
size, mtime) with the stamp they last read to decide whether to read again. Journals are
JSON lines appended in one ``write``, trimmed by an atomic rewrite.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from guard.atomic import write_atomic
from guard.log import logger

Stamp = tuple[int, int, int] | None


def stamp(path: str | bytes | Path) -> Stamp:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def unchanged(path: str | bytes | Path, seen: Stamp) -> bool:
    """``stamp(path) == seen``; a file that was absent is asked after without raising (most
    sessions have no file yet: an ``os.stat`` that fails costs its exception on every call)."""
    if seen is None:
        return not os.access(path, os.F_OK)
    return stamp(path) == seen


def read_json(path: Path) -> tuple[dict[str, Any] | None, Stamp]:
    """The document and the stamp it was read at; ``None`` when absent or unreadable."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            data = f.read()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        from guard.workspace import note_write_failure

        if not note_write_failure(exc, path.parent):
            logger.warning(f"{path}: unreadable ({exc}); starting afresh")
        return None, None
    got: Stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        logger.warning(f"{path}: not valid JSON ({exc}); starting afresh")
        return None, got
    return (doc if isinstance(doc, dict) else None), got


def write_json(path: Path, doc: dict[str, Any]) -> Stamp:
    """Replace ``path`` atomically with ``doc`` (0600); the new stamp."""
    data = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()  # dumps: the C encoder
    write_atomic(path, data, mode=0o600, keep_mode=False, fsync=False)
    return stamp(path)


def remove(path: Path) -> bool:
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


@contextlib.contextmanager
def locked(lock_path: Path) -> Iterator[None]:
    """An exclusive lock between processes (and, with the caller's own lock, threads)."""
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    except FileNotFoundError:
        lock_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


def append_lines(path: Path, records: list[dict[str, Any]]) -> None:
    """Append records as JSON lines in one write (O_APPEND, 0600)."""
    if not records:
        return
    data = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records).encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def tail_lines(path: Path, n: int) -> list[dict[str, Any]]:
    """The last ``n`` readable JSON-object lines of ``path`` (torn or bad lines skipped)."""
    out: list[dict[str, Any]] = []
    for line in reversed(_raw_lines(path)):
        if len(out) >= n:
            break
        try:
            rec = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(rec, dict):
            out.append(rec)
    out.reverse()
    return out


def trim_lines(path: Path, n: int) -> int:
    """Keep only the last ``n`` complete lines of ``path`` (atomic rewrite); how many are left."""
    lines = _raw_lines(path)[-n:]
    write_atomic(path, b"".join(line + b"\n" for line in lines), mode=0o600, keep_mode=False, fsync=False)
    return len(lines)


def _raw_lines(path: Path) -> list[bytes]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    if raw and not raw.endswith(b"\n"):  # a torn last line
        raw = raw[: raw.rfind(b"\n") + 1]
    return [line for line in raw.split(b"\n") if line.strip()]
