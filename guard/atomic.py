"""Writing a file whole or not at all: a temporary file beside it, then a rename."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from guard import workspace as ws
from guard.log import logger


def write_private_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        if not ws.note_write_failure(exc, path.parent):
            logger.warning(f"{path}: cannot save ({exc})")
        try:
            tmp.unlink()
        except OSError:
            pass
