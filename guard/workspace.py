"""Where guard keeps its data, and who may read it.

``--workspace DIR``, else ``$GUARD_HOME``, else ``~/.guard``. The directory is created
0700 and every file guard writes is 0600: decisions and history say what the user works on.
"""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

from guard.log import logger

EXECUTIONS = ".command-execution.jsonl"
INTERACTIONS = ".user-interactions.jsonl"
DECISIONS = ".fusion-decisions.jsonl"
STATE = ".guard-state.json"
SESSIONS_DIR = "sessions"


def resolve(workspace: str | os.PathLike[str] | None = None) -> Path:
    """The workspace path (not created): explicit, else $GUARD_HOME, else ~/.guard."""
    if workspace:
        return Path(workspace).expanduser().absolute()
    env = os.environ.get("GUARD_HOME")
    if env:
        return Path(env).expanduser().absolute()
    return Path("~/.guard").expanduser().absolute()


def ensure(path: Path) -> bool:
    """Create the workspace 0700; True when it is writable, False (with a warning) when not."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        if path.stat().st_mode & 0o077:
            os.chmod(path, 0o700)
    except OSError as exc:
        note_write_failure(exc, path, force=True)
        return False
    if os.access(path, os.W_OK):
        return True
    note_write_failure(OSError(errno.EACCES, "not writable"), path)
    return False


REDACT_KEY = ".guard-redact-key"


def redaction_key(path: Path) -> bytes | None:
    """The workspace's key for redaction placeholders (16 random bytes, 0600), made on first use.

    None when it can neither be read nor made: placeholders then use the built-in key. Made
    with a link so that two processes starting at once agree on one key.
    """
    key_path = path / REDACT_KEY
    for _ in range(3):
        try:
            key = key_path.read_bytes()
        except FileNotFoundError:
            pass
        except OSError:
            return None
        else:
            if len(key) >= 16:
                return key
        tmp = path / f".{REDACT_KEY}.{os.getpid()}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(os.urandom(16))
            try:
                os.link(tmp, key_path)
            except FileExistsError:
                pass
        except OSError:
            return None
        finally:
            try:
                tmp.unlink()
            except OSError:
                pass
    return None


# A read-only, full or forbidden workspace fails every write the same way; say so once per
# process, not once per file and per call (a hook's stderr is one line in a host's log).
WRITE_ERRNOS = frozenset(
    {errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EFBIG, errno.ENOTDIR, errno.EEXIST}
)
UNRECORDED_MESSAGE = (
    "guard cannot write its workspace {path} ({why}): calls keep the static verdict and are not recorded"
)
_announced: dict[str, str] = {}  # workspace -> why its first write failed
_announce_lock = threading.Lock()


def note_write_failure(exc: BaseException, where: Path | str, *, force: bool = False) -> bool:
    """True when ``exc`` is the workspace refusing writes (announced once per process and
    workspace); False for any other error, which the caller reports itself."""
    if not force and not (isinstance(exc, OSError) and exc.errno in WRITE_ERRNOS):
        return False
    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    root = Path(where)
    if root.name == SESSIONS_DIR:
        root = root.parent
    with _announce_lock:
        first = str(root) not in _announced
        _announced.setdefault(str(root), why)
    if first:
        logger.warning(UNRECORDED_MESSAGE.format(path=root, why=why))
    return True


def write_problem(workspace: Path) -> str | None:
    """Why the workspace refused a write in this process, if it did."""
    return _announced.get(str(workspace))
