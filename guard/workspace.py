"""Where guard keeps its data, and who may read it.

``--workspace DIR``, else ``$GUARD_HOME``, else ``~/.guard``. The directory is created
0700 and every file guard writes is 0600: decisions and history say what the user works on.
"""

from __future__ import annotations

import os
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
        logger.warning(f"workspace {path} is not usable ({exc}); decisions go on without recording")
        return False
    return os.access(path, os.W_OK)
