"""git operations that discard work or rewrite history, here or on a remote.

Discarding uncommitted work (``reset --hard``, ``clean -f``, ``checkout -- .``, ``restore``) and
deleting branches or reflogs ask; force-pushing over, or deleting, a shared branch (``main``,
``master``, ``develop``, ``release/*`` …) blocks, as does ``--mirror``; ``--force-with-lease`` to
one's own branch is an ordinary push.
"""

from __future__ import annotations

import posixpath
import re

from guard import lazyre
from guard.static.facts import ondisk
from guard.static.facts import paths as P
from guard.static.families.base import Opts, parse_opts
from guard.static.reading.text import wordset
from guard.static.scan import Scan

_VERSION_TAG = lazyre.compile(r"^v?\d+(?:[.-]\d+)*")  # ``git push origin v1.2``: a release tag
SHARED_BRANCHES = wordset("main master develop development trunk production prod release stable staging live gh-pages")


def _reset(sub: str, rest: tuple[str, ...], scan: Scan) -> None:
    # ``--merge`` resets files whose changes are staged but not in the work tree: staged work is lost
    scan.hit("G137" if "--hard" in rest or "--merge" in rest else "G189", f"git reset {' '.join(rest)}")


def _clean(sub: str, rest: tuple[str, ...], scan: Scan) -> None:
    opts = parse_opts(rest, wordset("-e --exclude"))
    if opts.has("-n", "--dry-run"):
        scan.hit("G180", "git clean -n")
    elif opts.has("-f", "--force", "-i", "--interactive"):
        scan.hit("G137", f"git clean {' '.join(rest)}")
    else:
        scan.hit("G189", "git clean")


_PATHISH = lazyre.compile(r"(^\.{1,2}/?$|^\*|/$|^\./|\.[A-Za-z0-9]{1,5}$)")


def _checkout(sub: str, rest: tuple[str, ...], scan: Scan) -> None:
    opts = parse_opts(rest, wordset("-b -B --orphan --conflict --pathspec-from-file"))
    shown = f"git {sub} {' '.join(rest)}"
    if opts.has("-f", "--force", "--discard-changes"):
        scan.hit("G137", shown)
    elif sub == "switch" or opts.has("-b", "-B", "--orphan", "-c", "-C", "--create", "--force-create"):
        scan.hit("G189", shown)
    elif (
        "--" in rest
        or len(opts.operands) >= 2
        or opts.has("--ours", "--theirs", "-p", "--patch")
        or (opts.operands and _PATHISH.search(opts.operands[0]) and not opts.operands[0].startswith("v"))
    ):
        scan.hit("G137", shown)
    else:
        scan.hit("G189", shown)


def _restore(sub: str, rest: tuple[str, ...], scan: Scan) -> None:
    staged_only = any(a in ("--staged", "-S") for a in rest) and not any(a in ("--worktree", "-W") for a in rest)
    scan.hit("G189" if staged_only else "G137", f"git restore {' '.join(rest)}")


def _rm(sub: str, rest: tuple[str, ...], scan: Scan) -> None:
    opts = parse_opts(rest)
    forced = opts.has("-f", "--force") or any(o in (".", "*") for o in opts.operands)
    scan.hit("G137" if forced and not opts.has("--cached") else "G189", f"git rm {' '.join(rest)}")


# Subcommands that overwrite, delete or set aside the files their pathspecs name (``git rm`` without
# ``--cached``, ``git stash push -- x``, ``git checkout HEAD -- x``, ``git restore x``, ``git clean -f x``, ``git mv``).
_PATH_WRITERS = wordset("checkout restore rm clean stash mv")
_STASH_ACTIONS = wordset("push save")


def over_protected(sub: str, rest: tuple[str, ...], scan: Scan, worktree: str | None) -> bool:
    """``git rm .claude/settings.json``, ``git stash -- .claude``, ``git checkout HEAD -- .guard.toml``,
    ``git --work-tree ~/.guard checkout -- .``: git putting another version of guard's files or a
    host's hook settings in place, or taking them away, switches guard off as ``rm`` or ``cp`` would
    (G156). A pathspec is read against ``--work-tree`` (or ``GIT_WORK_TREE``) when one is given; a plain one
    with wildcards (``'*.json'``) names the protected files git's matching reaches, refused when there."""
    if sub not in _PATH_WRITERS or (sub == "rm" and "--cached" in rest) or _dry_run(sub, rest):
        return False
    words = list(rest[rest.index("--") + 1 :] if "--" in rest else (a for a in rest if not a.startswith("-")))
    if sub == "stash" and "--" not in rest:
        if not words or words[0] not in _STASH_ACTIONS:
            return False  # ``git stash``, ``git stash pop``: the whole tree, or no pathspec at all
        words = words[1:]
    base = worktree or scan.vars.get("GIT_WORK_TREE")
    top = base or scan.resolver.project  # where ``:/x`` and ``:(top)x`` start (the repository's top, if known)
    for word in words or (["."] if sub == "clean" or base else []):
        pattern, magic = pathspec(word)
        if pattern is None:
            continue  # ``:(exclude)x``, ``:!x``: names what is left alone
        starts = [base, top] if "top" in magic and top and top != base else [base]
        for start in starts:
            path = posixpath.join(start, pattern) if start and not pattern.startswith(("/", "~")) else pattern
            place = scan.place(path)
            if place.tier != P.PROTECTED and _says(magic, "glob"):
                named = _glob_names(pattern)  # ``:(glob)**/settings.json``: git's ``*`` matches dot-folders
                place = scan.place(posixpath.join(start, named) if start else named) if named else place
            if place.tier == P.PROTECTED:
                scan.hit("G156", f"git {sub} {place.path}")
                scan.tag("protected_path")
                return True
            if not _says(magic, "glob", "literal"):
                for named in _plain_glob_names(pattern):  # ``'*.json'``: git's ``*`` crosses ``/``
                    scan.target(ondisk.MATCHED, posixpath.join(start, named) if start else named)
    return False


def _plain_glob_names(pattern: str) -> list[str]:
    """The protected files and folders (relative to where the pathspec starts) a plain pathspec with
    wildcards names: git matches it against the whole path with ``*`` and ``?`` crossing ``/``
    (``*.json`` names ``.claude/settings.json``), unlike the shell and ``:(glob)``. Whether one is there
    is looked at when the call is decided (:data:`ondisk.MATCHED`: G156 when it is, as ``git checkout --
    '*.json'`` in a project without a host's settings only discards changes). None for a pattern
    without wildcards or of wildcards only (``*``: the whole tree, as ``.``)."""
    if not _GLOB_CHARS.search(pattern) or not pattern.strip("*?/"):
        return []
    regex = _regex_of(pattern, wildmatch=False)
    return [p for p in P.PROTECTED_BELOW if re.fullmatch(regex, p)]


def _glob_names(pattern: str) -> str | None:
    """The protected file (relative to where the pathspec starts) a ``:(glob)`` pattern matches, by git's
    wildmatch (``*`` within a folder, ``**/`` any folders, dot-names included); None when it names none or
    its last part matches everything (``**``, ``src/*``: the folder decides, as ``.`` does)."""
    last = pattern.rstrip("/").rsplit("/", 1)[-1]
    if not _GLOB_CHARS.search(pattern) or not last.strip("*"):
        return None
    regex = _regex_of(pattern, wildmatch=True)
    return next((p for p in P.PROTECTED_BELOW if re.fullmatch(regex, p)), None)


_GLOB_CHARS = lazyre.compile(r"[*?\[]")
_PART = lazyre.compile(r"\*\*/|/\*\*$|\*|\?|\[[^\]]*\]|[^*?\[]+|\[")


def _regex_of(pattern: str, *, wildmatch: bool) -> str:
    """A pathspec pattern as a regular expression over a relative path: git's plain pathspec, where
    ``*`` and ``?`` cross ``/`` (``**/`` is two ``*`` then), or its ``:(glob)`` wildmatch, where they
    stay within a folder and ``**/`` is any folders."""

    def part(m: re.Match[str]) -> str:
        text = m.group(0)
        if text == "**/":
            return "(?:.*/)?" if wildmatch else ".*/"
        if text == "/**":
            return "/.*"
        if text in ("*", "?"):
            return ("[^/]" if wildmatch else ".") + ("*" if text == "*" else "")
        if text.startswith("[") and len(text) > 2:
            return "[" + ("^" + text[2:-1] if text[1] == "!" else text[1:-1]) + "]"
        return re.escape(text)

    return _PART.sub(part, pattern)


_MAGIC_WORDS = wordset("top literal icase glob exclude")
_SHORT_MAGIC = {"/": "top", "!": "exclude", "^": "exclude"}


def _says(magic: frozenset[str], *words: str) -> bool:
    """Whether an entry of the magic holds one of ``words`` (``:(top,glob)``; an entry read as written,
    ``attr:glob``, counts too: guard reads such a pathspec the cautious way)."""
    return any(w in m for m in magic for w in words)


def pathspec(word: str) -> tuple[str | None, frozenset[str]]:
    """The path a pathspec names once its magic is stripped, and the magic (``top``: it counts from the
    repository's top): ``:(top).claude/settings.json`` and ``:/.claude/settings.json`` are
    ``.claude/settings.json`` from the top, ``:(icase).CLAUDE/x`` is ``.claude/x``, ``:(glob)…`` the
    pattern (read as any glob is, ``**`` for any folders), ``:(top,glob)`` both; an exclude
    (``:(exclude)x``, ``:!x``, ``:^x``) names nothing to write (None). A word without a leading ``:`` is
    itself. The magic holds the words guard knows, and any other entry as written (``attr:…``)."""
    if not word.startswith(":") or len(word) < 2:
        return word, frozenset()
    magic: set[str] = set()
    if word[1] == "(":
        close = word.find(")")
        if close < 0:
            return word, frozenset()  # not magic git would accept: a path of that name
        for entry in word[2:close].split(","):
            name = entry.strip().split(":", 1)[0]  # ``attr:…`` and ``prefix:…`` carry a value
            magic.add(name if name in _MAGIC_WORDS else entry.strip())
        rest = word[close + 1 :]
    else:
        i = 1
        while i < len(word) and word[i] in _SHORT_MAGIC:
            magic.add(_SHORT_MAGIC[word[i]])
            i += 1
        rest = word[i + 1 :] if word[i : i + 1] == ":" else word[i:]
    if "exclude" in magic:
        return None, frozenset(magic)
    if "icase" in magic:
        rest = rest.lower()  # guard's files and the hosts' settings are spelled in lower case
    return rest or ".", frozenset(magic)


def _dry_run(sub: str, rest: tuple[str, ...]) -> bool:
    """``git rm -n``, ``git clean -n`` (or ``git clean`` without ``-f``: git refuses), ``git mv -n``."""
    if sub not in ("rm", "clean", "mv"):
        return False
    flags = [a for a in rest if a.startswith("-") and not a.startswith("--")]
    if "--dry-run" in rest or any("n" in f for f in flags):
        return True
    return sub == "clean" and "--force" not in rest and not any("f" in f for f in flags)


def _push(sub: str, rest: tuple[str, ...], scan: Scan) -> None:
    opts = parse_opts(rest, wordset("-o --push-option --repo --receive-pack --exec"))
    shown = f"git push {' '.join(rest)}"
    if opts.has("-n", "--dry-run"):
        scan.tag("network")
        scan.hit("G180", shown)
        return
    refspecs = list(opts.operands[1:])
    force = opts.has("-f", "--force") or any(r.startswith("+") for r in refspecs)
    lease = any(f.startswith("--force-with-lease") for f in opts.flags) and not opts.has("-f", "--force")
    delete = opts.has("-d", "--delete") or any(r.startswith(":") for r in refspecs)
    targets = [_destination(r) for r in refspecs]
    everything = opts.has("--mirror") or (opts.has("--all", "--branches") and (force or lease))
    shared = everything or any(t in SHARED_BRANCHES or t.startswith(("release/", "release-")) for t in targets)
    if opts.has("--mirror") or (delete and shared):
        scan.hit("G135", shown)
    elif delete:
        scan.hit("G138", shown)
    elif force:
        scan.hit("G135" if shared else "G136", shown)
    elif lease:
        scan.hit("G136" if shared else "G145", shown)
    elif _own_feature_push(opts.operands, targets, opts):
        scan.hit("G452", shown)  # a feature branch to the project's own remote: the daily loop
    else:
        scan.hit("G145", shown)


def _own_feature_push(operands: tuple[str, ...], targets: list[str], opts: Opts) -> bool:
    """``git push [-u] origin feature/x``: a named remote (no URL or path), branches named
    explicitly (``HEAD`` or no refspec push whatever is checked out; ``HEAD:feature/x`` names where
    it goes), none shared (main, master, release…), no tags or everything-at-once options."""
    if not operands or not targets or opts.has("--all", "--branches", "--tags", "--follow-tags", "--repo"):
        return False
    remote = operands[0]
    if any(c in remote for c in ":/@\\.") or remote.startswith("-"):
        return False
    return all(
        t
        and t != "HEAD"
        and ("HEAD" not in r or r.lstrip("+") == "HEAD:" + t or r.lstrip("+") == "HEAD:refs/heads/" + t)
        and not r.startswith("refs/tags/")
        and not t.startswith("refs/")  # ``x:refs/tags/v1``, ``HEAD:refs/notes/…``: not a branch
        and t not in SHARED_BRANCHES
        and not t.startswith(("release/", "release-"))
        and not any(c in r for c in "*~^")
        and not _VERSION_TAG.match(t)
        for r, t in zip(operands[1:], targets, strict=True)
    )


def _destination(refspec: str) -> str:
    ref = refspec.lstrip("+")
    dst = ref.rsplit(":", 1)[-1] if ":" in ref else ref
    for prefix in ("refs/heads/", "heads/", "origin/"):
        if dst.startswith(prefix):
            dst = dst[len(prefix) :]
    return dst or ref


def _history(sub: str, rest: tuple[str, ...], scan: Scan) -> None:
    shown = f"git {sub} {' '.join(rest)}"
    first = next((a for a in rest if not a.startswith("-")), "")
    if sub == "reflog":
        scan.hit("G138" if first in ("expire", "delete", "drop") else "G180", shown)
    elif sub == "gc":
        scan.hit(
            "G138" if any(a.startswith("--prune=") and a.split("=", 1)[1] in ("now", "all") for a in rest) else "G189",
            shown,
        )
    elif sub in ("filter-branch", "filter-repo", "prune"):
        scan.hit("G138", shown)
    elif sub == "update-ref":
        scan.hit("G138" if "-d" in rest else "G189", shown)
    elif sub == "rebase":
        for i, a in enumerate(rest):
            if a in ("-x", "--exec") and i + 1 < len(rest):
                scan.engine.script(rest[i + 1])
            elif a.startswith("--exec="):
                scan.engine.script(a.split("=", 1)[1])
        scan.hit(
            "G134" if any(a in ("-i", "--interactive") or (a.startswith("-i") and "i" in a) for a in rest) else "G189",
            shown,
        )
    elif sub == "commit":
        scan.hit("G189", "git commit")
