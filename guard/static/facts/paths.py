"""Paths, not strings: where a word points once the shell is done with it, and how much that matters.

A target is resolved against the tracked working directory and sorted into a *tier*: the root,
a home directory, the system, a disk device, a credential store, a persistence point (files
that run code later), guard's own files, the project, temporary space, or elsewhere. Rules
judge tiers, so ``rm -rf ~``, ``rm -rf "$HOME"/``, ``cd / && rm -rf .`` and ``find ~ -delete``
land on the same decision.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Iterable

from guard import lazyre
from guard.namedtuple import NamedTuple
from guard.static.facts.places import (
    CRITICAL_FILES,
    DATA_STORES,
    HOME_CACHES,
    HOME_CREDENTIALS,
    HOME_PERSIST,
    SPECIAL_DEV_DIRS,
    SPECIAL_DEVICES,
    SYSTEM_PERSIST,
    SYSTEM_ROOTS,
    TEMP_ROOTS,
)
from guard.static.reading.text import _MARKER_RE, DYN_OPEN

ROOT, HOME, SYSTEM, DEVICE, SPECIAL, NETDEV = "root", "home", "system", "device", "special", "netdev"
CREDENTIAL, PROTECTED, PERSIST = "credential", "protected", "persist"
PROJECT_ROOT, GITDIR, PROJECT, TEMP = "project_root", "gitdir", "project", "temp"
HOME_OTHER, OTHER, OUTSIDE, DYNAMIC = "home_other", "other", "outside", "dynamic"
# A home's own top-level folders of user data and settings: deleting one of them whole is never tidying.
USER_DATA_DIRS = frozenset(
    {
        "Desktop",
        "Documents",
        "Downloads",
        "Pictures",
        "Photos",
        "Music",
        "Videos",
        "Movies",
        "Public",
        "Library",
        "Dropbox",
        "OneDrive",
        "iCloudDrive",
        ".config",
        ".local",
        ".var",
        "snap",
    }
)

UNKNOWN_CWD = "\ue007"  # the working directory after ``cd "$X"``: relative paths go nowhere known
_DYNSEG = "\ue006"  # a path component only known at runtime


class Place(NamedTuple):  # (a named tuple: one or more per word a call names)
    """A resolved target. ``contents`` means a broad glob (``dir/*``): everything inside ``path``."""

    path: str
    tier: str
    kind: str = ""
    secret: int = 0  # 1: project secrets (.env ...), 2: credentials (keys, cloud, tokens)
    critical: bool = False  # a recursive delete here is catastrophic
    contents: bool = False
    dynamic: bool = False  # part of the path is a runtime value that may be empty
    holds_credentials: bool = False  # a folder of a home with a credential store below it (``~/.config``)

    @property
    def search_reads_keys(self) -> bool:
        """A search through it reads a credential store: the root, a whole home, or a folder of a
        home with a store below it (``grep -r x ~/.config``, the Grep tool over ``~``)."""
        return self.tier in (ROOT, HOME) or self.holds_credentials


_SECRET_SYSTEM = (
    lazyre.compile(
        r"^/etc/(g?shadow|master\.passwd)(-|$)|^/etc/ssh/ssh_host_[^/]*_key$|^/etc/ssl/private(/|$)"
        r"|^/(var/)?run/secrets(/|$)|^/proc/[^/]+/environ$"
    ),
)

_PUBLIC_IN_SSH = lazyre.compile(r"^\.ssh/(known_hosts2?|[^/]*\.pub)$")

# Guard's own settings and the hook settings of agent hosts: changing them switches guard off.
_PROTECTED_NAMES = frozenset({"guard.toml", ".guard.toml"})
_PROTECTED_SUFFIXES = (
    (".claude", "settings.json"),
    (".claude", "settings.local.json"),
    (".codex", "hooks.json"),
    (".codex", "config.toml"),
    (".gemini", "settings.json"),
    (".cursor", "hooks.json"),
    (".openclaw", "openclaw.json"),
)
_HOST_DIRS = frozenset({".claude", ".codex", ".gemini", ".cursor", ".openclaw"})
# Where guard's files and the hosts' hook settings sit below a folder (a home or a project), as paths
# relative to it: what a search from that folder would find (``find ~ -name guard.toml -delete``).
PROTECTED_BELOW = (
    *sorted(_PROTECTED_NAMES),
    *(f"{d}/{n}" for d, n in _PROTECTED_SUFFIXES),
    *sorted(_HOST_DIRS),
    ".guard",
    ".guard/guard.toml",
)
OPENCLAW_PLUGIN = ".openclaw/extensions/guard"  # where ``openclaw plugins install`` puts guard's plugin


def settings_entry(folder: str) -> str | None:
    """What a file of any name put straight into ``folder`` (an archive's member) can replace there:
    ``~/.claude`` -> ``~/.claude/settings.json``, a project's ``.codex`` -> ``.codex/hooks.json``,
    ``~/.openclaw/extensions`` -> guard's plugin; None for a folder that holds none (``~/.claude/skills``)."""
    folder = folder.rstrip("/") or "/"
    name = folder.rsplit("/", 1)[-1]
    entry = next((n for d, n in _PROTECTED_SUFFIXES if d == name), None)
    if entry is None and ("/" + folder).endswith("/" + OPENCLAW_PLUGIN.rsplit("/", 1)[0]):
        entry = OPENCLAW_PLUGIN.rsplit("/", 1)[1]
    return f"{folder}/{entry}" if entry else None


_KEY_NAMES = lazyre.compile(
    r"^(id_(rsa|dsa|ecdsa|ed25519)(_sk)?|.*\.(key|p12|pfx|jks|keystore|ppk|kdbx)|.*(priv|secret).*\.pem"
    r"|kubeconfig|\.vault-token)$",
    re.I,
)
_SECRET_NAMES = lazyre.compile(
    r"^(\.env(\.(?!(example|sample|template|dist|defaults|schema|tpl)$)[\w.-]+)?|[\w.-]+\.env|\.envrc|\.netrc|\.pgpass"
    r"|\.my\.cnf|\.git-credentials|\.npmrc|\.pypirc|\.htpasswd|secrets?\.(json|ya?ml|toml|ini)|credentials(\.json)?"
    r"|[\w.-]*service[-_]account[\w.-]*\.json|[\w.-]+\.tfstate(\.backup)?|[\w.-]+\.tfvars|(?![\w.-]*(cert|chain|bundle|[-_.]ca[-_.]|^ca[-_.]|pub))[\w.-]+\.pem"
    r"|\.(bash|zsh|sh|python|psql|mysql|node_repl|sqlite|rediscli|irb|pry)_?history|\.histfile)$",
    re.I,
)
# Necessary for a match of the patterns above (each alternative starts with ``id_`` or ``.``, ends with
# one of these, or is one of these names): the cheap test in front of them in ``secret_level``.
_KEY_ENDINGS = (".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk", ".kdbx", ".pem")
_KEY_EXACT = frozenset({"kubeconfig", ".vault-token"})
_SECRET_ENDINGS = (".env", ".tfstate", ".tfstate.backup", ".tfvars", ".pem")
_SECRET_DATA = (
    ".json",
    ".yaml",
    ".yml",
    ".toml",
    ".ini",
)  # only ``secrets.*``, ``credentials.json``, ``*service_account*``
_BROAD_GLOB = lazyre.compile(r"^[*?.\[\]!^]*\*[*?.\[\]!^]*$")
# ``/proc/self/root``, ``/proc/1/cwd``: a process's links to its root and working directories
_PROC_LINK = lazyre.compile(r"^/proc/(?:self|thread-self|\d+)(?:/task/\d+)?/(root|cwd)(?=/|$)")


_DOT_PART = lazyre.compile(r"(?:^|/)\.\.?(?:/|$)")


def normpath(path: str) -> str:
    """``posixpath.normpath``, with no work for a path that is already normal (most words are)."""
    if path and "//" not in path and path[-1] != "/":
        if ("/." not in path and path[0] != ".") or not _DOT_PART.search(path):  # (a ``.`` or ``..`` part
            return path  # starts the path or follows a slash)
    return posixpath.normpath(path)


def proc_link(path: str) -> re.Match[str] | None:
    """``/proc/self/root…``, ``/proc/1/cwd…``: group 1 says which link the path starts with."""
    return _PROC_LINK.match(path)


def is_broad_glob(name: str) -> bool:
    """``*``, ``.*``, ``*.*``: a last component that means everything in its folder."""
    return bool(_BROAD_GLOB.match(name))


def has_dynamic(path: str) -> bool:
    """A resolved path with a component only known at run time."""
    return _DYNSEG in path


def secret_level(name: str) -> int:
    """How secret a file name looks: ``secret_level("id_ed25519") == 2``, ``secret_level(".env*") == 1``."""
    candidates = (
        [name]
        if "*" not in name and "?" not in name
        else [name.replace("*", fill).replace("?", "x") for fill in ("", "x", ".local", "rsa")]
    )  # a glob that could match one
    if len(candidates) == 1:  # (no generator for the common case: it cost more than the match)
        if name.isascii():  # what each pattern's matches start or end with, before the patterns
            low = name.lower()
            low = low[:-1] if low.endswith("\n") else low  # (``$`` matches before a last newline)
            if not (low.startswith("id_") or low.endswith(_KEY_ENDINGS) or low in _KEY_EXACT):
                maybe = (
                    low[:1] == "."
                    or low == "credentials"
                    or low.endswith(_SECRET_ENDINGS)
                    or (low.endswith(_SECRET_DATA) and (low.startswith(("secret", "credentials")) or "service" in low))
                )
                return 1 if maybe and _SECRET_NAMES.match(name) else 0
        return 2 if _KEY_NAMES.match(name) else 1 if _SECRET_NAMES.match(name) else 0
    if any(_KEY_NAMES.match(c) for c in candidates):
        return 2
    return 1 if any(_SECRET_NAMES.match(c) for c in candidates) else 0


class Resolver:
    """Resolves words to :class:`Place` for one home, project and guard workspace."""

    def __init__(self, home: str, project: str | None = None, workspace: str | None = None) -> None:
        self.home = posixpath.normpath(home) if home else "/nonexistent-home"
        self.project = posixpath.normpath(project) if project else None
        if self.project in ("/", self.home) or (self.project and self._too_broad_for_project(self.project)):
            self.project = None  # a shell in / or ~ has no project to be lenient about
        self.guard_dirs = tuple(
            d for d in (posixpath.normpath(workspace) if workspace else None, posixpath.join(self.home, ".guard")) if d
        )

    def absolute(self, word: str, cwd: str | None) -> str | None:
        """``word`` made absolute against ``cwd`` (``None``: the project root, may stay relative)."""
        path = word
        if DYN_OPEN in path:
            path = _MARKER_RE.sub(_DYNSEG, path)
        if path.startswith("/"):
            path = normpath(path) if path != "//" else "/"
            return self._proc_link(path, cwd) if path.startswith("/proc/") else path
        if cwd == UNKNOWN_CWD or (cwd and _DYNSEG in cwd):
            return None
        base = cwd if cwd is not None else self.project
        if base is None:
            return normpath(path or ".")
        return normpath(posixpath.join(base, path or "."))

    def _proc_link(self, path: str, cwd: str | None) -> str | None:
        """``/proc/self/root/home/u/.ssh`` is ``/home/u/.ssh``, ``/proc/self/cwd/.env`` is ``./.env``:
        the links a process's ``/proc`` entry holds, followed to what they name."""
        m = _PROC_LINK.match(path)
        if not m:
            return path
        rest = path[m.end() :]
        if m[1] == "root":
            return rest or "/"
        if cwd == UNKNOWN_CWD or (cwd and _DYNSEG in cwd):
            return None
        base = cwd if cwd is not None else self.project
        if base is None:
            return posixpath.normpath("." + rest)
        return posixpath.normpath(base + rest)

    def place(self, word: str, cwd: str | None = None) -> Place:
        if word[1:2] == ":" or word[:1] in _WIN_LEADS:  # ``C:\``, ``%USERPROFILE%``, ``$env:APPDATA``
            comps = windows_parts(word)
            if comps is not None:
                return self._windows(word, comps)
        if word.startswith(DYN_OPEN):
            return Place(_display(word), DYNAMIC, kind="lead", dynamic=True)
        path = self.absolute(word, cwd)
        if path is None:
            return Place(_display(word), DYNAMIC, kind="cwd", dynamic=True)
        dynamic = False
        head, _, last = path.rpartition("/")
        contents = "*" in last and bool(_BROAD_GLOB.match(last))  # (a broad glob has a ``*``)
        if last == _DYNSEG:
            contents, dynamic = True, True
        if contents:
            path = head or ("/" if path.startswith("/") else ".")
        place = self._classify(path)
        if contents or dynamic:
            place = place._replace(contents=contents, dynamic=dynamic or place.dynamic)
        return place

    def _classify(self, path: str) -> Place:
        shown = path.replace(_DYNSEG, "*")
        if not path.startswith("/"):
            return self._relative(path, shown)
        if path == "/":
            return Place("/", ROOT, critical=True)
        if "?" in path or "[" in path or "*" in path:
            path = self._deglob(path)
            shown = path.replace(_DYNSEG, "*")
        comps = path[1:].split("/")
        if comps[0] == "dev":
            return _device(shown, comps)
        for d in self.guard_dirs:
            if path == d or path.startswith(d + "/"):
                return Place(shown, PROTECTED, kind="guard")
        if "/guard-" in path and _DAEMON_RUNTIME.search(path):  # the daemon's socket when the workspace's is too long
            return Place(shown, PROTECTED, kind="guard")
        if "-packages/" in path and _PYTHON_STARTUP.search(path):  # runs in every Python there, guard's hook too
            return Place(shown, PERSIST, kind="python_startup")
        place = self._unprotected(path, shown, comps)
        if place.tier in _LENIENT and any(d.startswith(path + "/") for d in self.guard_dirs):
            return Place(shown, PROTECTED, kind="holds_guard")  # deleting or moving an ancestor of guard's files
        return place

    def _unprotected(self, path: str, shown: str, comps: list[str]) -> Place:
        if self.project and (path == self.project or path.startswith(self.project + "/")):
            return self._relative(path[len(self.project) + 1 :] if path != self.project else ".", shown)
        protected = self._protected_names("/".join(comps))
        if protected is not None:
            return protected._replace(path=shown)
        home_root, rest = self._home_split(path, comps)
        if home_root is not None:
            return self._in_home(shown, rest)
        if len(comps[0]) == 1 or (comps[0] == "mnt" and len(comps) > 1 and len(comps[1]) == 1):
            drive = comps if len(comps[0]) == 1 else comps[1:]  # Git Bash ``/c/Users``, WSL ``/mnt/c/Users``
            if drive[0].isalpha():
                return self._windows(shown, [c.lower() for c in drive if c])
        if path in ("/home", "/Users"):
            return Place(shown, HOME, kind="all_homes", critical=True)
        found = _first_under(_SYSTEM_PERSIST_IX, comps[0], path)
        if found is not None:
            return Place(shown, PERSIST, kind=found[1])
        if any(r.search(path) for r in _SECRET_SYSTEM):
            return Place(shown, SYSTEM, kind="critical" if path in CRITICAL_FILES else "secret", secret=2)
        for temp in TEMP_ROOTS:
            if path == temp:
                return Place(shown, TEMP, kind="temp_root")
            if path.startswith(temp + "/"):
                return self._project_like(shown, path[len(temp) + 1 :], TEMP)
        depth = SYSTEM_ROOTS.get(comps[0], 0)
        if depth:
            kind = "critical" if path in CRITICAL_FILES or comps[0] == "boot" else ""
            store = len(comps) == 3 and comps[0] == "var" and comps[1] == "lib" and comps[2] in DATA_STORES
            return Place(shown, SYSTEM, kind=kind, critical=len(comps) <= depth or store)
        return self._project_like(shown, comps[-1], OTHER)

    def _deglob(self, path: str) -> str:
        """``/e?c/passwd`` -> ``/etc/passwd``, ``~/.s[s]h`` -> ``~/.ssh``: a glob in a leading component
        read as the system or home place it would match (the last component's broad ``*`` is kept)."""
        comps = path[1:].split("/")
        if len(comps) > 1 or not _BROAD_GLOB.match(comps[0]):
            comps[0] = _match_one(comps[0], _TOP_NAMES)
        home_root, rest = self._home_split("/" + "/".join(comps), comps)
        if home_root is not None and rest:
            inner = rest.split("/")
            if _GLOBBY.search(inner[0]) and (len(inner) > 1 or not _BROAD_GLOB.match(inner[0])):
                inner[0] = _match_one(inner[0], _HOME_NAMES)
            return home_root + "/" + "/".join(_match_known(inner, _HOME_KNOWN))
        return "/" + "/".join(_match_known(comps, _SYSTEM_KNOWN))

    @staticmethod
    def _too_broad_for_project(path: str) -> bool:
        comps = path[1:].split("/")
        return len(comps) <= SYSTEM_ROOTS.get(comps[0], 0)

    def _home_split(self, path: str, comps: list[str]) -> tuple[str | None, str]:
        home = self.home
        if path == home:
            return home, ""
        if path.startswith(home + "/"):
            return home, path[len(home) + 1 :]
        if comps[0] in ("home", "Users") and len(comps) >= 2:
            return "/" + "/".join(comps[:2]), "/".join(comps[2:])
        if comps[0] == "root":
            return "/root", "/".join(comps[1:])
        return None, ""

    def _in_home(self, shown: str, rest: str) -> Place:
        if not rest:
            return Place(shown, HOME, critical=True)
        if _PUBLIC_IN_SSH.match(rest):
            return Place(shown, HOME_OTHER)
        first = rest.split("/", 1)[0]
        if _first_under(_HOME_CACHE_IX, first, rest) is not None:
            return Place(shown, HOME_OTHER, kind="cache")
        found = _first_under(_HOME_PERSIST_IX, first, rest)
        if found is not None:
            return Place(shown, PERSIST, kind=found[1])
        found = _first_under(_HOME_CRED_IX, first, rest)
        if found is not None:
            store = rest == found[0].rstrip("/")
            return Place(shown, CREDENTIAL, kind="store" if store else "file", secret=2, critical=store)
        folder = rest.rstrip("/")
        holds = folder in _CREDENTIAL_PARENTS
        if folder in USER_DATA_DIRS:
            return Place(shown, HOME_OTHER, kind="user_data", critical=True, holds_credentials=holds)
        place = self._project_like(shown, rest, HOME_OTHER)
        return place._replace(holds_credentials=True) if holds else place

    def _windows(self, shown: str, comps: list[str]) -> Place:
        """A Windows path as lower-cased components after the drive: the same tiers as their POSIX peers."""
        shown = shown.replace(_DYNSEG, "*")
        if comps[0] == "\\\\":
            return Place(shown, OTHER, kind="share")
        if comps[0] == _WIN_TEMP:
            return self._project_like(shown, "/".join(comps[1:]), TEMP) if comps[1:] else Place(shown, TEMP)
        rest = comps[1:]
        if rest and _BROAD_GLOB.match(rest[-1]):
            return self._windows(shown, comps[:-1])._replace(contents=True)
        if not rest:
            return Place(shown, ROOT, kind="drive", critical=True)
        top = rest[0]
        if top in ("users", "documents and settings"):
            if len(rest) == 1:
                return Place(shown, HOME, kind="all_homes", critical=True)
            inner = "/".join(rest[2:])
            for prefix, kind in WIN_HOME_PLACES:
                if _under(inner, prefix):
                    if kind == CREDENTIAL:
                        store = inner == prefix.rstrip("/")
                        return Place(shown, CREDENTIAL, kind="store" if store else "file", secret=2, critical=store)
                    return Place(shown, PERSIST, kind=kind)
            return self._in_home(shown, inner)
        depth = WIN_SYSTEM_ROOTS.get(top, 0)
        if top == "windows" and len(rest) > 1 and rest[1] == "temp":
            return self._project_like(shown, "/".join(rest[2:]), TEMP) if rest[2:] else Place(shown, TEMP)
        if depth:
            secret = "/".join(rest) in WIN_SECRET_FILES
            kind = "secret" if secret else "critical" if "/".join(rest[:3]) == "windows/system32/config" else ""
            return Place(shown, SYSTEM, kind=kind, secret=2 if secret else 0, critical=len(rest) <= depth)
        if top in ("temp", "tmp"):
            return self._project_like(shown, "/".join(rest[1:]), TEMP) if rest[1:] else Place(shown, TEMP)
        return self._project_like(shown, rest[-1], OTHER)

    def _relative(self, rel: str, shown: str) -> Place:
        if rel == ".":
            return Place(shown, PROJECT_ROOT)
        if rel == ".." or rel.startswith("../"):
            tail = "/" + rel.lstrip("./").lstrip("/") if rel.count("../") >= 2 else ""
            if tail and (tail in CRITICAL_FILES or any(r.search(tail) for r in _SECRET_SYSTEM)):
                return Place(shown, SYSTEM, kind="critical" if tail in CRITICAL_FILES else "secret", secret=2)
            return self._project_like(shown, rel, OUTSIDE)
        first = rel.split("/", 1)[0]
        if first == ".git":
            if rel.startswith(".git/hooks/") or rel == ".git/hooks":
                return Place(shown, PERSIST, kind="git_hook")
            if rel == ".git/config":
                return Place(shown, PERSIST, kind="git_config")
            return Place(shown, GITDIR)
        protected = self._protected_names(rel)
        if protected is not None:
            return protected._replace(path=shown)
        if "-packages/" in rel and _PYTHON_STARTUP.search("/" + rel):  # ``.venv/lib/…/site-packages/x.pth``
            return Place(shown, PERSIST, kind="python_startup")
        return self._project_like(shown, rel, PROJECT)

    def _project_like(self, shown: str, rel: str, tier: str) -> Place:
        name = rel.rsplit("/", 1)[-1]
        level = secret_level(name) if name else 0
        return Place(shown, tier, secret=level) if level else Place(shown, tier)

    def _protected_names(self, rel: str) -> Place | None:
        comps = rel.split("/")
        name = comps[-1]
        if ("*" in name or "?" in name or "[" in name) and not _BROAD_GLOB.match(name):
            name = _protected_match(comps[-2] if len(comps) >= 2 else "", name)  # ``.claude/settings*.json``
        if name in _PROTECTED_NAMES:
            return Place(rel, PROTECTED, kind="config")
        if len(comps) >= 2 and (comps[-2], name) in _PROTECTED_SUFFIXES:
            return Place(rel, PROTECTED, kind="host_hooks")
        if len(comps) >= 2 and _GLOBBY.search(comps[-2]) and _protected_pair(comps[-2], name):
            return Place(rel, PROTECTED, kind="host_hooks")  # ``.*/settings.json``, ``.c?aude/settings.json``
        if name in _HOST_DIRS:
            return Place(rel, PROTECTED, kind="holds_guard")
        if "extensions" in comps and _OPENCLAW_PLUGIN_RE.search(rel):
            return Place(rel, PROTECTED, kind="plugin")
        return None


def _protected_match(folder: str, pattern: str) -> str:
    """The protected name a glob in ``folder`` matches (``settings*.json`` in ``.claude``), or the glob."""
    names = [n for d, n in _PROTECTED_SUFFIXES if d == folder] + sorted(_PROTECTED_NAMES)
    return next((n for n in names if fnmatch.fnmatchcase(n, pattern)), pattern)


def _protected_pair(folder: str, name: str) -> bool:
    """A globbed folder and name that match one of the hosts' settings files (``.c*/settings.json``;
    as in the shell, a glob that does not start with ``.`` matches no dot-folder: ``*/settings.json``)."""
    return folder.startswith(".") and any(
        fnmatch.fnmatchcase(d, folder) and fnmatch.fnmatchcase(n, name) for d, n in _PROTECTED_SUFFIXES
    )


_GLOBBY = lazyre.compile(r"[?*\[]")
# ``$TMPDIR/guard-1000/<16 hex>.sock`` (or under ``$XDG_RUNTIME_DIR``): integrations.daemon.socket_path
# What ``site`` runs when any Python of that environment starts, ``-I`` (the hooks' isolated mode) or not.
_PYTHON_STARTUP = lazyre.compile(r"/(?:site|dist)-packages/(?:[^/]+\.pth|sitecustomize\.py|usercustomize\.py)$")
_DAEMON_RUNTIME = lazyre.compile(r"/guard-\d+(?:/[0-9a-f]{16}\.sock)?$")
_OPENCLAW_PLUGIN_RE = lazyre.compile(r"(?:^|/)\.openclaw/extensions/guard(?:/|$)")


def _match_known(comps: list[str], known: tuple[tuple[str, ...], ...]) -> list[str]:
    """Deeper globbed components read as the sensitive place they match: ``etc/shado?`` -> ``etc/shadow``,
    ``.aws/cred*`` -> ``.aws/credentials`` (a final broad ``*`` stays: it means everything inside)."""
    if not any(_GLOBBY.search(c) for c in comps[1:]):
        return comps
    for names in known:
        n = len(names)
        if n > len(comps) or (n == len(comps) and _BROAD_GLOB.match(comps[-1])):
            continue
        if all(
            c == k or (_GLOBBY.search(c) and fnmatch.fnmatchcase(k, c)) for c, k in zip(comps[:n], names, strict=True)
        ):
            return [*names, *comps[n:]]
    return comps


def _match_one(pattern: str, names: Iterable[str]) -> str:
    """The first of ``names`` the glob ``pattern`` matches (``pattern`` itself when none does)."""
    if not _GLOBBY.search(pattern):
        return pattern
    return next((n for n in names if fnmatch.fnmatchcase(n, pattern)), pattern)


_LENIENT = frozenset({PROJECT_ROOT, PROJECT, GITDIR, TEMP, HOME_OTHER, OTHER, OUTSIDE})


_Index = dict[str, tuple[re.Pattern[str], tuple[tuple[str, str], ...]]]


def _index(pairs: Iterable[tuple[str, str]]) -> _Index:
    """Tables indexed by their first path component, each index one pattern: the prefixes under that
    component as alternatives in table order (``_under`` for each, tried in one match, not a loop)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for prefix, value in pairs:
        out.setdefault(prefix.strip("/").split("/", 1)[0], []).append((prefix, value))
    return {k: (lazyre.compile("|".join(_alternative(p) for p, _ in v)), tuple(v)) for k, v in out.items()}


def _alternative(prefix: str) -> str:
    """``_under(path, prefix)`` as a pattern matched at the start, one group per alternative."""
    if prefix.endswith("/"):
        return "(" + re.escape(prefix[:-1]) + r")(?:/|\Z)"
    if prefix.endswith("."):
        return "(" + re.escape(prefix) + ")"
    return "(" + re.escape(prefix) + r")\Z"


def _first_under(index: _Index, first: str, path: str) -> tuple[str, str] | None:
    """The first ``(prefix, value)`` under component ``first`` that covers ``path`` (see ``_under``)."""
    entry = index.get(first)
    if entry is None:
        return None
    m = entry[0].match(path)
    return None if m is None or m.lastindex is None else entry[1][m.lastindex - 1]


_TOP_NAMES = ("root", *SYSTEM_ROOTS)
_HOME_NAMES = tuple(
    dict.fromkeys(p.strip("/").split("/", 1)[0] for p in (*(k for k, _ in HOME_PERSIST), *HOME_CREDENTIALS))
)


def _known(paths: Iterable[str]) -> tuple[tuple[str, ...], ...]:
    """Sensitive places as component tuples, longest first (``/etc/cron.`` names the family ``cron.*``)."""
    comps = {tuple(p.strip("/").rstrip(".").split("/")) for p in paths if p.strip("/")}
    return tuple(sorted(comps, key=lambda c: (-len(c), c)))


_SYSTEM_KNOWN = _known(
    (*CRITICAL_FILES, *(k for k, _ in SYSTEM_PERSIST), "/etc/ssl/private", "/run/secrets", "/var/run/secrets")
)
_HOME_KNOWN = _known((*(k for k, _ in HOME_PERSIST), *HOME_CREDENTIALS))
_SYSTEM_PERSIST_IX = _index(SYSTEM_PERSIST)
_HOME_PERSIST_IX = _index(HOME_PERSIST)
_HOME_CRED_IX = _index((p, p) for p in HOME_CREDENTIALS)
_HOME_CACHE_IX = _index((p, p) for p in HOME_CACHES)
# The folders of a home that hold a credential store below them (``.config`` holds ``.config/gh/``,
# ``Library`` holds ``Library/Keychains/``): a search through one of them reads the store too
# (``Place.holds_credentials``).
_CREDENTIAL_PARENTS = frozenset(
    "/".join(parts[:n]) for parts in (p.strip("/").split("/") for p in HOME_CREDENTIALS) for n in range(1, len(parts))
)


def _under(path: str, prefix: str) -> bool:
    """``prefix`` ending in "/" covers a directory and its files; ending in "." a family of names."""
    if prefix.endswith("/"):
        return path == prefix[:-1] or path.startswith(prefix)
    if prefix.endswith("."):
        return path.startswith(prefix)
    return path == prefix


def _device(shown: str, comps: list[str]) -> Place:
    if len(comps) == 1:
        return Place(shown, SYSTEM, critical=True)
    second = comps[1]
    if second in ("tcp", "udp"):
        return Place(shown, NETDEV)
    if second in SPECIAL_DEVICES or second in SPECIAL_DEV_DIRS or second.startswith("tty"):
        return Place(shown, TEMP if second == "shm" else SPECIAL)
    return Place(shown, DEVICE, critical=True)


# Windows system directories (lower case, under a drive) and the depth up to which a recursive delete
# is catastrophic; places inside a Windows profile that hold credentials or run code at logon.
WIN_SYSTEM_ROOTS = {
    "windows": 2,
    "program files": 1,
    "program files (x86)": 1,
    "programdata": 1,
    "system volume information": 1,
    "recovery": 1,
    "boot": 1,
    "efi": 1,
    "$recycle.bin": 1,
    "pagefile.sys": 1,
    "hiberfil.sys": 1,
    "bootmgr": 1,
}
WIN_SECRET_FILES = frozenset(f"windows/system32/config/{n}" for n in ("sam", "system", "security"))
WIN_HOME_PLACES = tuple(
    (prefix, kind)
    for kind, prefixes in (
        (
            CREDENTIAL,
            "appdata/roaming/microsoft/credentials/ appdata/local/microsoft/credentials/ "
            "appdata/roaming/microsoft/protect/ appdata/roaming/microsoft/crypto/ appdata/local/microsoft/vault/ "
            "appdata/roaming/microsoft/vault/ appdata/roaming/microsoft/systemcertificates/my/ "
            "appdata/local/google/chrome/user\x00data/ appdata/local/microsoft/edge/user\x00data/ "
            "appdata/roaming/mozilla/firefox/profiles/ appdata/roaming/gnupg/ appdata/roaming/gcloud/ "
            "appdata/roaming/github\x00cli/ appdata/roaming/npm-cache/_cacache/index-v5/ appdata/local/1password/ "
            "appdata/roaming/bitwarden/ appdata/roaming/keepass/ appdata/roaming/filezilla/ appdata/roaming/winscp.ini",
        ),
        (
            "service",
            "appdata/roaming/microsoft/windows/start\x00menu/programs/startup/",
        ),
        (
            "rc",
            "documents/windowspowershell/ documents/powershell/",
        ),
    )
    for prefix in (p.replace("\x00", " ") for p in prefixes.split())
)

_WIN_LEADS = frozenset("%$~\\")
_WIN_TEMP = "\ue008"  # the first component of %TEMP%: temporary space wherever it is
_WIN_HOME = ["c", "users", "\ue009"]  # the user's own profile, name unknown
WIN_ENV = {
    "userprofile": _WIN_HOME,
    "home": _WIN_HOME,
    "homepath": _WIN_HOME,
    "onedrive": [*_WIN_HOME, "onedrive"],
    "appdata": [*_WIN_HOME, "appdata", "roaming"],
    "localappdata": [*_WIN_HOME, "appdata", "local"],
    "systemroot": ["c", "windows"],
    "windir": ["c", "windows"],
    "programfiles": ["c", "program files"],
    "programfiles(x86)": ["c", "program files (x86)"],
    "programw6432": ["c", "program files"],
    "commonprogramfiles": ["c", "program files", "common files"],
    "programdata": ["c", "programdata"],
    "allusersprofile": ["c", "programdata"],
    "public": ["c", "users", "public"],
    "systemdrive": ["c"],
    "homedrive": ["c"],
    "temp": [_WIN_TEMP],
    "tmp": [_WIN_TEMP],
}
_WIN_PATH = lazyre.compile(
    r"^(?:(?P<drive>[a-z]):|%(?P<pct>[\w()]+)%|\$(?:\{env:(?P<brace>[\w()]+)\}|env:(?P<env>\w+))|(?P<tilde>~)(?=[\\/]|$)"
    r"|(?P<unc>\\\\))",
    re.I,
)


def windows_parts(word: str) -> list[str] | None:
    """``C:\\Users\\bob`` -> ``["c", "users", "bob"]``; ``None`` when ``word`` is not a Windows path.

    Drive letters, ``%VAR%``, ``$env:VAR`` and ``~\\`` lead; both slash styles; case-insensitive.
    ``C:Users`` (bash removed the backslash) is read as ``C:\\Users``, the cautious reading.
    """
    m = _WIN_PATH.match(word)
    if m is None:
        return None
    if m["unc"]:
        return ["\\\\"]  # a network share: somewhere else
    var = m["pct"] or m["brace"] or m["env"]
    if var:
        base = WIN_ENV.get(var.lower())
        if base is None:
            return None
        comps = list(base)
    else:
        comps = ["c" if m["tilde"] else m["drive"].lower()] if not m["tilde"] else list(_WIN_HOME)
    for part in re.split(r"[\\/]+", word[m.end() :].lower()):
        if part == "..":
            if len(comps) > 1:
                comps.pop()
        elif part and part != ".":
            comps.append(part)
    return comps


def _display(word: str) -> str:
    return _MARKER_RE.sub("$…", word) if DYN_OPEN in word else word
