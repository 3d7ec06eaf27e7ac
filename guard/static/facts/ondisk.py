"""Where a write really lands: paths followed on the file system at decision time.

The rest of :mod:`guard.static` reads paths as text, which is pure and cached. Text cannot see
that ``cfg.json`` is a symbolic link to ``~/.claude/settings.json``, that ``w/../x`` leaves a
linked folder through its real parent, that ``x`` is a hard link to guard's history, or that
``/mnt/b`` is ``~/.guard`` mounted a second time. So every write, delete, move and link target
is recorded as spelled (joined to the call's working directory, ``..`` kept), and
:func:`check` walks it component by component on disk when the decision is made (never
cached): symbolic links at any depth are followed as the kernel would, and each existing
component is compared by ``(st_dev, st_ino)`` with guard's protected files and folders. A target
that really lands there is a protected write (G415); a link made onto one is G416; a path that
cannot be followed (a link loop, no permission to look) asks (G417), never allows.

A protected file that only a pattern names (``git checkout -- '*.json'``, where git's ``*`` crosses
``/`` to ``.claude/settings.json``) is recorded as :data:`MATCHED`: written (G156) when it is there.

Reads are not recorded: reading a host's settings through a link is what reading them is.
"""

from __future__ import annotations

import fnmatch
import json
import os
import stat
import time
from collections.abc import Iterable

from guard.static.facts import inodes
from guard.static.facts import paths as P
from guard.static.facts.paths import Resolver
from guard.static.reading.text import DYN_OPEN

MAX_HOPS = 40  # the kernel's own limit on symbolic links in one lookup (ELOOP)

# What an operation does to the last component of its path: a delete or a move of ``x`` takes
# the link ``x`` itself, not what it points at (``delete_in``: ``rm -rf x/`` empties the target).
WRITE, CREATE, DELETE, DELETE_IN, LINK = "write", "create", "delete", "delete_in", "link"
# A protected file or folder a pattern names (a git pathspec ``'*.json'`` reaches ``.claude/settings.json``):
# written when it is there (G156), nothing when it is not (the pattern reaches only what exists).
MATCHED = "matched"
_NO_FOLLOW = frozenset({DELETE})
# An archive unpacked into a folder (``tar -xf x.tar -C ~``): its members' names are read from the
# archive when the call is decided (:mod:`guard.static.facts.archives`), and one that lands on a
# protected file is written (G156). The op carries the folder (as spelled), how names are cut and
# how they are rewritten (``tar --transform``, ``pax -s``: :mod:`guard.static.facts.renames`).
UNPACK = "unpack"
ARCHIVE_SECONDS = 0.5  # reading the archives one call unpacks past this (bzip2 runs at 10-20 MiB/s): not read


def unpack_op(
    folder: str,
    strip: int = 0,
    absolute: bool = False,
    renames: tuple[str, ...] = (),
    first_only: bool = False,
    members: tuple[str, ...] = (),
) -> str:
    """The op of an archive unpacked into ``folder`` (spelled), ``strip`` leading components cut from
    each member's name, ``absolute`` names kept (``tar -P``), the names rewritten by the sed
    expressions ``renames`` (every one in turn, or with ``first_only`` the first that matches: pax),
    and only the ``members`` named unpacked (``tar -xf x.tar src/``; none: all of them)."""
    extra = json.dumps({"renames": renames, "first_only": first_only, "members": members}) if renames or members else ""
    return f"{UNPACK}\t{strip}\t{int(absolute)}\t{extra}\t{folder}"


def _landing(op: str, base: str, archive: str, until: float) -> list[str]:
    """Where each member of ``archive`` lands for an :func:`unpack_op` (empty when it is not read).

    A name rewritten is looked at both ways round with the strip (which of the two a tar applies
    first differs between versions): each can be where the member lands."""
    from guard.static.facts import archives, renames  # (only a call that unpacks reads an archive)

    _, strip, absolute, extra, folder = op.split("\t", 4)
    names = archives.members(archive, until)
    if not names:
        return []
    renamer = None
    if extra:
        how = json.loads(extra)
        if how["renames"]:
            renamer = renames.parse(how["renames"], how["first_only"])
        if how["members"]:
            names = tuple(n for n in names if _selected(n, how["members"]))
    folder = folder if folder.startswith("/") else base.rstrip("/") + "/" + folder
    keep, cut = absolute == "1", int(strip)
    out = []
    for name in names:
        if renamer is None:
            ways = [_cut(name, cut, keep)]
        else:  # renamed then cut, or cut then renamed
            ways = [_cut(renamer.rename(name), cut, keep), _cut(renamer.rename(_cut(name, cut, keep)), 0, keep)]
        for way in ways:
            if way.startswith("/"):
                out.append(P.normpath(way))
            elif way:
                out.append(P.normpath(folder.rstrip("/") + "/" + way))
    return out


# A patch applied in a folder (``git apply x.diff``, ``patch -p1 < x.diff``): the names it changes are
# read from the patch when the call is decided (:mod:`guard.static.facts.patches`), and one that lands
# on a protected file is written (G156). The op carries how many leading components the patch's names
# lose (-1: GNU patch with no ``-p``, which may use the bare name) and the folders they are read from.
PATCH = "patch"


def patch_op(strip: int, folders: tuple[str, ...]) -> str:
    return f"{PATCH}\t{strip}\t{json.dumps(folders)}"


def _patched(op: str, base: str, patch: str) -> list[str]:
    """Where the names ``patch`` changes land for a :func:`patch_op`: each name whole and with its
    ``-p`` components cut (a ``rename to`` name has no ``a/``; cutting it would hide it), or its
    bare name without ``-p`` (empty when the patch is not read)."""
    from guard.static.facts import patches  # (only a call that applies a patch reads one)

    _, strip, folders = op.split("\t", 2)
    names = patches.paths(patch)
    if not names:
        return []
    cut = int(strip)
    out = []
    for folder in json.loads(folders):
        folder = folder if folder.startswith("/") else base.rstrip("/") + "/" + folder
        for name in names:
            ways = {name, _cut(name, cut, True) if cut > 0 else name, name.rsplit("/", 1)[-1] if cut < 0 else name}
            for way in ways:
                if way:
                    out.append(P.normpath(way if way.startswith("/") else folder.rstrip("/") + "/" + way))
    return out


# The work tree switched to another revision (``git checkout BRANCH``, ``git merge X``, ``git stash pop``):
# whether that revision holds another version of the project's hook settings than HEAD is read from
# the repository's objects when the call is decided (:mod:`guard.static.facts.gitobjects`): G445.
GITREV = "gitrev"
_HOOK_SETTINGS = (".claude/settings.json", ".claude/settings.local.json")


def gitrev_op(rev: str) -> str:
    return f"{GITREV}\t{rev}"


def _switched(op: str, folder: str) -> str | None:
    """The hook settings file ``op``'s revision holds in another version than HEAD, in the repository
    holding ``folder``; None when none does or it cannot be told."""
    from guard.static.facts import gitobjects  # (only a call that switches the work tree reads git's objects)

    repo = gitobjects.gitdir(folder)
    if repo is None:
        return None
    rev = op.split("\t", 1)[1]
    return next((p for p in _HOOK_SETTINGS if gitobjects.changes(repo, rev, p)), None)


def _protected_landing(landings: Iterable[str], resolver: Resolver) -> str:
    """The first of ``landings`` on a protected file (shown short), or ""."""
    for landing in landings:
        place = resolver.place(landing)
        if place.tier == P.PROTECTED and place.kind != "holds_guard":
            return landing if len(landing) < 80 else "…" + landing[-79:]
    return ""


def _selected(name: str, members: list[str]) -> bool:
    """Is ``name`` among the ``members`` a call names: one of them, or under one (GNU tar's literal
    names), or matched by one as a shell pattern (bsdtar's): either reading, the stricter one."""
    bare = name.lstrip("/").removeprefix("./")
    for member in members:
        want = member.lstrip("/").removeprefix("./").rstrip("/")
        if bare == want or bare.startswith(want + "/") or fnmatch.fnmatchcase(bare, want):
            return True
        if fnmatch.fnmatchcase(bare, want + "/*"):
            return True
    return False


def _cut(name: str, strip: int, keep: bool) -> str:
    """``name`` with its first ``strip`` components cut, as a relative name; an absolute one is kept
    whole when ``keep`` (``tar -P``)."""
    if keep and name.startswith("/"):
        return name
    return "/".join([p for p in name.split("/") if p not in ("", ".")][strip:])


class Unresolvable(Exception):
    """A path the file system would not let guard follow (loop, permission, name too long)."""


def spelled(resolver: Resolver, word: str, cwd: str | None) -> str | None:
    """``word`` joined to ``cwd`` as the kernel will read it (``..`` and links kept for :func:`resolve`).

    ``/proc/self/root/x`` and ``/proc/self/cwd/x`` name the *shell's* root and working directory,
    so they are rewritten here, as the text resolver does; ``None`` for runtime values, Windows
    paths and an unknown working directory. A trailing broad glob (``w/*``) stands for its folder.
    """
    if not word or DYN_OPEN in word or word[1:2] == ":" or word[:1] in "~%$\\":
        return None
    head, _, last = word.rpartition("/")
    if last and P.is_broad_glob(last):
        word = head or ("/" if word.startswith("/") else ".")
    if any(c in word for c in "*?["):
        return None  # which files a glob names is the shell's business at run time
    unknown = cwd == P.UNKNOWN_CWD or bool(cwd and P.has_dynamic(cwd))
    base = cwd if cwd is not None else resolver.project
    if word.startswith("/"):
        m = P.proc_link(word)
        if m is None:
            return word
        rest = word[m.end() :]
        if m[1] == "root":
            return rest or "/"
        if unknown:
            return None
        return (base.rstrip("/") if base else ".") + rest
    if unknown:
        return None
    return word if base is None else base.rstrip("/") + "/" + word


class Protected:
    """guard's protected files and folders by inode (:mod:`guard.static.facts.inodes`), looked up once per
    decision and only when a walk reaches an existing component."""

    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        self._table: inodes.Table | None = None

    @property
    def table(self) -> inodes.Table:
        if self._table is None:
            self._table = inodes.table(self.resolver)
        return self._table


def resolve(path: str, op: str, protected: Protected, cwd: str = "/") -> str | None:
    """The real path ``path`` reaches, read as the text rules know it (below a component that *is*
    a protected file or folder by inode, the path is renamed to it); ``None`` when it leads into
    guard's own descriptors (``/dev/fd/N``, ``/proc/self/fd/N`` name the shell's, not guard's).
    ``/proc/self/root`` met on the way is the root, ``/proc/self/cwd`` the call's ``cwd``. Raises
    :class:`Unresolvable` when the walk fails for another reason than a missing component.
    """
    parts = path.split("/")[::-1]  # a stack: the next component last
    resolved, missing, hops = "", False, 0
    aliases: list[tuple[str, str]] = []  # (real folder or file, the protected name it is known by)
    follow_last = op not in _NO_FOLLOW
    while parts:
        name = parts.pop()
        if name in ("", "."):
            continue
        if name == "..":
            resolved = resolved.rsplit("/", 1)[0]
            continue
        candidate = resolved + "/" + name
        if missing:
            resolved = candidate
            continue
        if candidate.startswith("/proc/") and _own_process(candidate):
            m = P.proc_link(candidate + "/" + "/".join(parts[::-1]))
            if m is None:
                return None
            rest = m.string[m.end() :].split("/")[::-1]
            parts = rest + (cwd.split("/")[::-1] if m[1] == "cwd" else [])
            resolved = ""
            continue
        try:
            st = os.lstat(candidate)
        except (FileNotFoundError, NotADirectoryError):
            missing, resolved = True, candidate
            continue
        except (OSError, ValueError) as exc:  # ValueError: a NUL byte, which no file name holds
            raise Unresolvable(f"{candidate}: {getattr(exc, 'strerror', None) or type(exc).__name__}") from exc
        last = not parts or (parts[-1] in ("", ".") and not any(p not in ("", ".") for p in parts))
        if stat.S_ISLNK(st.st_mode) and (follow_last or not last):
            hops += 1
            if hops > MAX_HOPS:
                raise Unresolvable(f"{path}: too many levels of symbolic links")
            try:
                target = os.readlink(candidate)
            except OSError as exc:
                raise Unresolvable(f"{candidate}: {exc.strerror or type(exc).__name__}") from exc
            if target.startswith("/"):
                resolved = ""
            parts.extend(target.split("/")[::-1])
            continue
        resolved = candidate
        if stat.S_ISLNK(st.st_mode) or (last and not follow_last and not stat.S_ISDIR(st.st_mode)):
            continue  # removing a link, or one name of a hard-linked file, leaves the file
        known = protected.table.get((st.st_dev, st.st_ino))
        if known is not None and known != candidate:
            aliases.append((candidate, known))
    resolved = resolved or "/"
    for real, known in reversed(aliases):  # the deepest alias the path is still inside (``..`` may leave it)
        if resolved == real or resolved.startswith(real + "/"):
            return known + resolved[len(real) :]
    return resolved


def _own_process(path: str) -> bool:
    comps = path.split("/")
    return len(comps) == 3 and comps[2] in ("self", "thread-self", str(os.getpid()))


def check(targets: Iterable[tuple[str, str]], resolver: Resolver, cwd: str | None) -> list[tuple[str, str]]:
    """``(rule id, detail)`` for every target that really reaches a protected place, or cannot be followed."""
    protected = Protected(resolver)
    base = cwd if cwd and cwd.startswith("/") else os.getcwd()
    found: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    until = 0.0
    for op, raw in targets:
        if (op, raw) in seen:
            continue
        seen.add((op, raw))
        path = raw if raw.startswith("/") else base.rstrip("/") + "/" + raw
        if op.startswith(UNPACK + "\t"):
            until = until or time.monotonic() + ARCHIVE_SECONDS  # (one deadline for all the call's archives)
            hit = _protected_landing(_landing(op, base, path, until), resolver)
            if hit:
                found.append(("G156", f"{hit}: a member of {raw.rsplit('/', 1)[-1]} lands there"))
            continue
        if op.startswith(PATCH + "\t"):
            hit = _protected_landing(_patched(op, base, path), resolver)
            if hit:
                found.append(("G156", f"{hit}: {raw.rsplit('/', 1)[-1]} patches it"))
            continue
        if op.startswith(GITREV + "\t"):
            changed = _switched(op, path)
            if changed is not None:
                found.append(("G445", f"{op.split(chr(9), 1)[1]} holds another {changed}"))
            continue
        if op == MATCHED:
            if os.path.lexists(path):
                shown = raw if len(raw) < 80 else "…" + raw[-79:]
                found.append(("G156", f"{shown}: a wildcard in the call reaches it"))
            continue
        try:
            real = resolve(path, op, protected, base)
        except Unresolvable as exc:
            found.append(("G417", str(exc)))
            continue
        if real is None or real == P.normpath(path):
            continue  # the text rules saw this very path
        place = resolver.place(real)
        if place.tier != P.PROTECTED:
            continue
        if resolver.place(P.normpath(path)).tier == P.PROTECTED:
            continue  # already refused by its name (G156)
        shown = raw if len(raw) < 80 else "…" + raw[-79:]
        if op == LINK:
            found.append(("G416", f"{shown} leads to {real}"))
        elif place.kind != "holds_guard" or op != CREATE:
            found.append(("G415", f"{shown} leads to {real}"))
    return found
