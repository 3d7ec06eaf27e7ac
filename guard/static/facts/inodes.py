"""guard's protected files and folders by inode: ``(st_dev, st_ino)`` -> the name the text rules know.

:mod:`guard.static.facts.ondisk` compares every component it walks with this table, which is what finds
a hard link to guard's history or ``~/.guard`` mounted a second time under another name.

Building it takes a few dozen ``stat`` calls and one listing per workspace, so it is kept between
decisions while the folders that hold those files are unchanged (same inode, mtime and ctime): a
file replaced, renamed, created or removed changes its folder's times. A folder whose times are
within :data:`RACY_NS` of the build is not trusted (file times are coarser than the clock, like git's
"racy" index entries), so a change made right after a build is never missed. A missing folder is
not looked at again while its parent is unchanged: creating it would change the parent.
"""

from __future__ import annotations

import os
import posixpath
import time

from guard.static.facts import paths as P
from guard.static.facts.paths import Resolver

RACY_NS = 100_000_000  # 0.1 s: more than a kernel tick, the granularity of file times
_MAX_CACHED = 32

# guard's own settings and the hook settings of agent hosts, inside a home or a project (the same
# places :mod:`guard.static.facts.paths` protects by name)
HOST_FILES = (
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".codex/hooks.json",
    ".codex/config.toml",
    ".gemini/settings.json",
    ".cursor/hooks.json",
    ".openclaw/openclaw.json",
    "guard.toml",
    ".guard.toml",
)
HOST_DIRS = (".claude", ".codex", ".gemini", ".cursor", ".openclaw", P.OPENCLAW_PLUGIN)

Table = dict[tuple[int, int], str]
_Sig = tuple[int, int, int, int] | None


class _Built:
    __slots__ = ("checks", "table", "trusted")

    def __init__(self, table: Table, checks: list[tuple[str, _Sig]], trusted: bool) -> None:
        self.table, self.trusted = table, trusted
        # each folder with its parent, worked out once (a dirname per folder per decision cost
        # more than the two stat calls)
        self.checks = [(path, posixpath.dirname(path), sig) for path, sig in checks]

    def still_valid(self) -> bool:
        if not self.trusted:
            return False
        unchanged: set[str] = set()
        for path, parent, sig in self.checks:
            if sig is None and parent in unchanged:
                unchanged.add(path)  # still missing (making it would have changed its parent), so
                continue  # its own folders are still missing too
            if _sig(path) != sig:
                return False
            unchanged.add(path)
        return True


_CACHE: dict[tuple[str, str | None, tuple[str, ...]], _Built] = {}


def table(resolver: Resolver) -> Table:
    """The protected files and folders for ``resolver``'s home, project and workspace."""
    key = (resolver.home, resolver.project, resolver.guard_dirs)
    built = _CACHE.get(key)
    if built is None or not built.still_valid():
        built = _build(resolver)
        if len(_CACHE) >= _MAX_CACHED:
            _CACHE.clear()
        _CACHE[key] = built
    return built.table


def _build(resolver: Resolver) -> _Built:
    start = time.time_ns()
    bases = [resolver.home] + ([resolver.project] if resolver.project else [])
    files = [posixpath.join(b, f) for b in bases for f in HOST_FILES]
    dirs = [posixpath.join(b, d) for b in bases for d in HOST_DIRS] + list(resolver.guard_dirs)
    out: Table = {}
    for path in (*files, *dirs):
        _add(out, path)
    for ws in resolver.guard_dirs:
        try:
            with os.scandir(ws) as entries:
                for entry in entries:  # a link kept there does not make its target guard's
                    _add(out, posixpath.join(ws, entry.name), follow=False)
        except OSError:
            pass
    folders = {posixpath.dirname(p) for p in (*files, *dirs)} | set(resolver.guard_dirs)
    checks = [(f, _sig(f)) for f in sorted(folders, key=lambda f: (f.count("/"), f))]  # parents first
    trusted = all(s is None or max(s[2], s[3]) < start - RACY_NS for _, s in checks)
    return _Built(out, checks, trusted)


def _sig(path: str) -> _Sig:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


def _add(out: Table, path: str, follow: bool = True) -> None:
    try:
        st = os.stat(path, follow_symlinks=follow)
    except (OSError, ValueError):
        return
    out.setdefault((st.st_dev, st.st_ino), path)
