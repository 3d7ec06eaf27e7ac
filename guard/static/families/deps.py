"""Package installs that only fetch what the project already declares (issue 14).

An install downloads and runs package code, so a *new* package name asks (G183): a typo or a
look-alike name is how registry attacks land. Installing what the project's own manifest or
lockfile names is the ordinary start of every session, so it is low:

- G450 (read from the command alone): a lockfile- or manifest-driven install that names no
  package — ``npm ci``, ``npm install``, ``pip install -r requirements.txt``, ``pip install -e
  '.[test]'``, ``uv sync``, ``poetry install``, ``cargo fetch``, ``go mod download``, ``bundle install``,
  ``composer install``, ``mix deps.get``, ``dotnet restore``, ``swift package resolve`` …;
- G451 (checked on disk when the call is decided, never cached): every package named is already
  declared by the project (``package.json``, ``pyproject.toml``, ``requirements*.txt``,
  ``Cargo.toml``, ``go.mod`` in the working folder or the nearest folder above it that has one).

Either needs the project's usual registry: an index, registry or ``--find-links`` option, a URL,
a git source or a path outside the project keeps G183 — as do uninstalls and global installs.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from functools import lru_cache

from guard import lazyre

LOCKED = "locked"  # installs from the manifest or lockfile, names nothing
NPM, PY, CARGO, GO, RUBY, PHP, ELIXIR, DOTNET = "npm", "python", "cargo", "go", "ruby", "php", "elixir", "dotnet"
# pip under every name Python installs it as (``pip3.12`` beside ``python3.12``): one program
PIP_NAMES = ("pip", "pip2", "pip3", "pip2.7", *(f"pip3.{minor}" for minor in range(6, 16)))

_ECOSYSTEM = {
    **dict.fromkeys(("npm", "pnpm", "yarn", "bun"), NPM),
    **dict.fromkeys((*PIP_NAMES, "uv", "poetry", "pipenv", "pdm", "hatch", "rye"), PY),
    "cargo": CARGO,
    "go": GO,
    "bundle": RUBY,  # ``bundle install``: the Gemfile and Gemfile.lock; a named gem is ``gem install`` (G183)
    "composer": PHP,  # ``composer install``: composer.json and composer.lock
    "mix": ELIXIR,  # ``mix deps.get``: mix.exs and mix.lock
    "dotnet": DOTNET,  # ``dotnet restore``: the project file's packages (``dotnet build`` restores them too)
}
# subcommands that, with no package named, install or refresh what the manifest or lockfile says
_FROM_MANIFEST = {
    NPM: frozenset({"install", "i", "ci", "update", "up", "upgrade", "rebuild", "dedupe", "fetch"}),
    PY: frozenset({"install", "sync", "lock", "update"}),
    CARGO: frozenset({"fetch", "update", "generate-lockfile", "build", "vendor"}),
    RUBY: frozenset({"install"}),
    PHP: frozenset({"install"}),
    ELIXIR: frozenset({"deps.get"}),
    DOTNET: frozenset({"restore"}),
}
# subcommands that add named packages
_ADDS = {
    NPM: frozenset({"install", "i", "add", "update", "up", "upgrade"}),
    PY: frozenset({"install", "add", "update"}),
    CARGO: frozenset({"add", "update"}),
    GO: frozenset({"get"}),
}
_GLOBAL = frozenset({"-g", "--global", "--user", "--system", "--break-system-packages", "--root", "--prefix", "-t"})
_FOREIGN_SOURCE = (
    "-i",
    "--index",
    "--index-url",
    "--extra-index-url",
    "--default-index",
    "-f",
    "--find-links",
    "--registry",
    "--trusted-host",
    "--git",
    "--path",
    "--source",
    "--url",
)
# options whose value is the next word (so it is not read as a package name)
_VALUED = frozenset(
    {"-w", "--workspace", "--filter", "-p", "--package", "--save-prefix", "--tag", "--python", "-E", "--extras"}
    | {"--features", "-F", "--group", "-G", "--upgrade-strategy", "--only", "--with", "--without", "--target-dir"}
    | {"-P", "--upgrade-package", "-j", "--jobs", "--retry"}
)
_PY_NAME = lazyre.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[\w,.\s-]*\])?\s*(?:[=<>!~;].*)?$")
_NPM_NAME = lazyre.compile(r"^((?:@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*)(?:@[\w.^~<>=*|\s-]+)?$", re.I)
_CARGO_NAME = lazyre.compile(r"^([A-Za-z0-9][\w-]*)(?:@[\w.^~<>=*-]+)?$")
_GO_NAME = lazyre.compile(r"^([a-z0-9][\w.-]*(?:\.[a-z]+)(?:/[\w.~-]+)+)(?:@[\w.+-]+)?$")
_LOCAL_PY = lazyre.compile(r"^\.{1,2}(?:/[\w./-]*)?(?:\[[\w,.\s-]*\])?$")


def classify(manager: str, sub: str, args: Iterable[str]) -> str | tuple[str, tuple[str, ...]] | None:
    """``LOCKED``, ``(ecosystem, names)`` for a named install to check on disk, or None (G183 stands).

    >>> classify("npm", "ci", [])
    'locked'
    >>> classify("npm", "install", ["zod@latest"])
    ('npm', ('zod',))
    >>> classify("pip", "install", ["--index-url", "https://x.example/simple", "requests"]) is None
    True
    """
    words = list(args)
    if (
        manager == "swift"
    ):  # ``swift package resolve``: Package.swift and Package.resolved (``swift build`` does it too)
        return LOCKED if sub == "package" and words == ["resolve"] else None
    eco = _ECOSYSTEM.get(manager)
    if eco is None:
        return None
    if manager == "go":  # ``go mod download|tidy|verify``: the go.mod's own modules
        if sub == "mod":
            return LOCKED if words[:1] in (["download"], ["tidy"], ["vendor"]) and len(words) == 1 else None
    names: list[str] = []
    skip = False
    for i, word in enumerate(words):
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            flag = word.split("=", 1)[0]
            if flag in _GLOBAL or flag in _FOREIGN_SOURCE or flag in ("-h", "--help"):
                return None
            if flag in ("-r", "--requirement", "-c", "--constraint", "-e", "--editable"):
                value = word.split("=", 1)[1] if "=" in word else (words[i + 1] if i + 1 < len(words) else "")
                if not _local_file(value, editable=flag in ("-e", "--editable")):
                    return None
                skip = "=" not in word
            elif flag in _VALUED and "=" not in word:
                skip = True
            continue
        if eco == PY and _LOCAL_PY.match(word):  # ``pip install .`` / ``'.[test]'``: the project itself
            continue
        name = _name(eco, word)
        if name is None:
            return None  # a URL, a path, a git source: not the usual registry
        names.append(name)
    if not names:
        return LOCKED if sub in _FROM_MANIFEST.get(eco, frozenset()) else None
    return (eco, tuple(names)) if sub in _ADDS.get(eco, frozenset()) else None


def _local_file(value: str, editable: bool) -> bool:
    if not value or "://" in value or value.startswith(("/", "~", "git+")) or ".." in value.split("/"):
        return False
    return bool(_LOCAL_PY.match(value)) if editable else True


def _name(eco: str, word: str) -> str | None:
    pattern = {NPM: _NPM_NAME, PY: _PY_NAME, CARGO: _CARGO_NAME, GO: _GO_NAME}.get(eco)
    m = pattern.match(word.strip()) if pattern is not None else None  # (bundle, composer: no named installs)
    if m is None or "://" in word:
        return None
    return normalise(eco, m.group(1))


def normalise(eco: str, name: str) -> str:
    """Names as the registry compares them (PEP 503 for Python, lower case for npm)."""
    if eco == PY:
        return re.sub(r"[-_.]+", "-", name).lower()
    if eco == NPM:
        return name.lower()
    if eco == CARGO:
        return name.replace("_", "-").lower()
    return name


# -- the check on disk ------------------------------------------------------------------------

_MANIFESTS = {
    NPM: ("package.json",),
    PY: ("pyproject.toml", "requirements.txt", "requirements-dev.txt", "requirements-test.txt", "setup.cfg"),
    CARGO: ("Cargo.toml",),
    GO: ("go.mod",),
}
_MAX_UP = 6
_MAX_BYTES = 1 << 20


def undeclared(eco: str, names: Iterable[str], cwd: str | None) -> list[str]:
    """The names the project does not declare (all of them when no manifest is found)."""
    wanted = list(names)
    if not cwd or not cwd.startswith("/"):
        return wanted
    declared = _declared_near(eco, os.path.normpath(cwd))
    return [n for n in wanted if n not in declared]


def _declared_near(eco: str, cwd: str) -> frozenset[str]:
    folder = cwd
    home = os.path.expanduser("~")
    for _ in range(_MAX_UP):
        found = [os.path.join(folder, f) for f in _MANIFESTS[eco] if os.path.isfile(os.path.join(folder, f))]
        if found:
            out: set[str] = set()
            for path in found:
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                out |= _read(eco, path, st.st_mtime_ns, st.st_size)
            return frozenset(out)
        parent = os.path.dirname(folder)
        if parent == folder or folder == home:
            break
        folder = parent
    return frozenset()


@lru_cache(maxsize=64)
def _read(eco: str, path: str, mtime_ns: int, size: int) -> frozenset[str]:
    """The names one manifest declares (keyed on its mtime and size: an edit is seen at once)."""
    if size > _MAX_BYTES:
        return frozenset()
    try:
        with open(path, "rb") as fh:
            raw = fh.read(_MAX_BYTES)
        names = _parse(eco, os.path.basename(path), raw)
    except (OSError, ValueError, TypeError, AttributeError):
        return frozenset()  # unreadable: nothing is declared, the install asks
    return frozenset(normalise(eco, n) for n in names if isinstance(n, str))


def _parse(eco: str, base: str, raw: bytes) -> list[str]:
    if base == "package.json":
        data = json.loads(raw)
        keys = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")
        return [n for k in keys if isinstance(data.get(k), dict) for n in data[k]]
    if base == "go.mod":
        text = raw.decode("utf-8", "replace")
        return re.findall(r"(?m)^\s*(?:require\s+)?([a-z0-9][\w.-]*\.[a-z]+/[\w./~-]+)\s+v[\w.+-]+", text)
    if base.endswith(".txt"):
        return [
            m.group(1) for line in raw.decode("utf-8", "replace").splitlines() if (m := _PY_NAME.match(line.strip()))
        ]
    if base == "setup.cfg":
        return []
    import tomllib  # (1.6 ms, for the rare pyproject read: not at every hook's import)

    data = tomllib.loads(raw.decode("utf-8", "replace"))
    if base == "Cargo.toml":
        tables = [data.get(k) for k in ("dependencies", "dev-dependencies", "build-dependencies")]
        tables.append((data.get("workspace") or {}).get("dependencies"))
        return [n for t in tables if isinstance(t, dict) for n in t]
    project = data.get("project") or {}
    specs: list[str] = list(project.get("dependencies") or [])
    for extra in (project.get("optional-dependencies") or {}).values():
        specs.extend(extra)
    for group in (data.get("dependency-groups") or {}).values():
        specs.extend(s for s in group if isinstance(s, str))
    names = [m.group(1) for s in specs if isinstance(s, str) and (m := _PY_NAME.match(s.strip()))]
    poetry = (data.get("tool") or {}).get("poetry") or {}
    names.extend(n for n in (poetry.get("dependencies") or {}) if n != "python")
    for group in (poetry.get("group") or {}).values():
        names.extend((group or {}).get("dependencies") or {})
    return names
