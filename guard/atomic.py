"""Writing a file whole or not at all: a temporary file beside it, then a rename.

Every file guard replaces goes through :func:`replacing` (or :func:`write_atomic`, its one-shot
form), so a reader sees the old file or the new one, never a mix, and a failed write leaves no
temporary file behind. Each caller states its policy, none is defaulted:

- ``mode``: the permission bits of a new file, set exactly (the umask does not apply).
- ``keep_mode``: an existing file keeps its own bits (a person's or a host's file) instead of
  ``mode`` (guard's private state, always ``mode``).
- ``fsync``: the data and the folder entry reach the disk before the call returns. For the files
  a person or a host would miss after a power cut (``guard.toml``, a host's settings); guard's
  caches and state skip it: a crash can lose their last update, never the whole file.

The temporary file is ``.NAME.PID.THREAD.tmp`` in the same folder (a rename does not cross file
systems), so two threads or processes writing the same file never share one.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from guard import workspace as ws
from guard.log import logger

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


@contextlib.contextmanager
def replacing(path: Path, *, mode: int, keep_mode: bool, fsync: bool) -> Iterator[BinaryIO]:
    """A binary file whose content replaces ``path`` when the block ends without an error.

    >>> with replacing(path, mode=0o600, keep_mode=False, fsync=False) as f:  # doctest: +SKIP
    ...     f.write(b"{}")

    On any error (in the block, or writing, or renaming) the temporary file is removed and the
    error propagates; ``path`` is untouched.
    """
    tmp, final = _temp_for(path, mode, keep_mode)
    try:
        with os.fdopen(os.open(tmp, _FLAGS, 0o600), "wb") as f:
            yield f
            f.flush()
            _settle(f.fileno(), final, fsync)
        os.replace(tmp, path)
    except BaseException:
        _discard(tmp)
        raise
    if fsync:
        _fsync_folder(path.parent)


def write_atomic(path: Path, data: bytes | str, *, mode: int, keep_mode: bool, fsync: bool) -> None:
    """Replace ``path`` with ``data`` (a ``str`` is written as UTF-8) under :func:`replacing`'s policy.

    Written on the bare descriptor (no file object): guard's behaviour state goes through here
    on every decision.
    """
    view = memoryview(data.encode("utf-8") if isinstance(data, str) else data)
    tmp, final = _temp_for(path, mode, keep_mode)
    try:
        fd = os.open(tmp, _FLAGS, 0o600)
        try:
            while view:
                view = view[os.write(fd, view) :]
            _settle(fd, final, fsync)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        _discard(tmp)
        raise
    if fsync:
        _fsync_folder(path.parent)


def write_private_atomic(path: Path, text: str) -> None:
    """guard's own state (0600, no fsync); errors are logged, not raised: the state is rebuilt."""
    try:
        write_atomic(path, text, mode=0o600, keep_mode=False, fsync=False)
    except OSError as exc:
        if not ws.note_write_failure(exc, path.parent):
            logger.warning(f"{path}: cannot save ({exc})")


def _temp_for(path: Path, mode: int, keep_mode: bool) -> tuple[Path, int]:
    """The temporary file beside ``path`` and the mode the result gets."""
    final = mode
    if keep_mode:
        with contextlib.suppress(FileNotFoundError):
            final = path.stat().st_mode & 0o777
    return path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp"), final


def _settle(fd: int, mode: int, fsync: bool) -> None:
    """The mode set exactly (created 0600 whatever the umask, then widened or kept), then the data synced."""
    os.fchmod(fd, mode)
    if fsync:
        os.fsync(fd)


def _discard(tmp: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def _fsync_folder(folder: Path) -> None:
    """The rename itself made durable; a file system that cannot sync a folder is left as it is."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
