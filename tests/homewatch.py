"""The real HOME, watched while the tests run (a uniquely named module, not ``conftest``).

The test process runs with a fake ``HOME`` (``tests/conftest.py``); this module lists what
matters in the real one at the start of the session and says what changed at the end: a
``.guard`` folder, or anything in an agent host's configuration folder. It only looks; it never
creates or deletes anything in the real HOME.
"""

from __future__ import annotations

import os
from pathlib import Path

# guard's own folder and the hosts' configuration folders that ``guard install`` writes to.
WATCHED = (".guard", ".claude", ".codex", ".gemini", ".cursor", ".openclaw")

Listing = dict[str, tuple[int, int] | None]


def listing(home: Path, names: tuple[str, ...] = WATCHED) -> Listing:
    """Every watched folder's entries (relative path → (mtime in ns, size)); a missing folder is ``None``.

    Folders are listed too, so an entry created and removed again still moves its folder's mtime.
    Symbolic links are listed, never followed.
    """
    found: Listing = {}
    for name in names:
        top = home / name
        try:
            st = top.lstat()
        except FileNotFoundError:
            found[name] = None
            continue
        found[name] = (st.st_mtime_ns, st.st_size)
        if not top.is_dir() or top.is_symlink():
            continue
        for dirpath, dirnames, filenames in os.walk(top, onerror=lambda _e: None):
            for entry in (*dirnames, *filenames):
                path = Path(dirpath) / entry
                try:
                    st = path.lstat()
                except OSError:
                    continue
                found[str(path.relative_to(home))] = (st.st_mtime_ns, st.st_size)
    return found


def changes(before: Listing, after: Listing) -> list[str]:
    """What differs between two listings, one line each ("created", "removed", "changed")."""
    lines = []
    for path in sorted(before.keys() | after.keys()):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        if old is None:
            lines.append(f"created {path}")
        elif new is None:
            lines.append(f"removed {path}")
        else:
            lines.append(f"changed {path}")
    return lines
