"""Command patterns: what one learned rule covers, and its Claude Code-style rule text.

A pattern generalises a call just enough to recur, and no further:

- **bash**: the program plus its subcommand words, up to the first word that is an option
  (``-x``), path-like (``/``, ``.``, ``~``), volatile (starts with a digit, a hash, has
  ``=``/``@``) or not a plain word, at most three words: ``npm run test -- --watch`` →
  ``npm run test`` → ``Bash(npm run test:*)``. An interpreter keeps its script
  (``python manage.py migrate``) or module (``python -m pytest``). Compound commands
  (``&&``, ``|``, ``;``, redirections, ``$(...)``), leading ``VAR=value`` assignments,
  wrappers that run another command (``sudo``, ``env``, ``xargs``, ``timeout``...) and
  shells (``bash -c``) get no pattern: a prefix rule for them would cover anything.
- **write / edit / read**: the file's directory as a glob, ``Write(src/**)``; absolute paths
  use Claude Code's ``//`` form (``Write(//srv/app/**)``); a file with no directory part is
  its own pattern (``Edit(notes.md)``); the filesystem root, the home directory and its
  ancestors, and paths with ``..`` get none.
- **web_fetch**: the host, ``WebFetch(domain:docs.python.org)``.
- any other tool: no pattern.

``covers`` matches a call by the same rules: whole words for prefixes (``npm run test``
covers ``npm run test --watch``, not ``npm run testing`` nor ``npm run test && rm x``),
path components for directories.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from pathlib import Path
from urllib.parse import urlsplit

import attrs

from guard.toolnames import canonical_tool

MAX_WORDS = 3

RULE_TOOL = {"bash": "Bash", "write": "Write", "edit": "Edit", "read": "Read", "web_fetch": "WebFetch"}
_KIND_OF_RULE_TOOL = {v.lower(): k for k, v in RULE_TOOL.items()}

# Programs that run another command: a prefix rule on them would allow anything.
WRAPPERS = frozenset(
    "sudo doas su env nohup nice ionice timeout time xargs exec eval command builtin watch stdbuf "  # noqa: SIM905
    "unbuffer chroot strace ltrace gdb setsid flock parallel caffeinate script".split()
)
SHELLS = frozenset("sh bash zsh dash ksh fish csh tcsh pwsh powershell cmd busybox".split())  # noqa: SIM905
INTERPRETERS = frozenset(
    "python python2 python3 pypy pypy3 node nodejs ruby perl php lua luajit Rscript julia "  # noqa: SIM905
    "deno bun tsx ts-node".split()
)

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_:+-]*\Z")
_PROGRAM = re.compile(r"[A-Za-z0-9_./+-]+\Z")
_HASHLIKE = re.compile(r"(?=[a-z]*[0-9])[0-9a-f]{7,}\Z")
_OPERATOR = re.compile(r"[();<>|&]+\Z")
_HOST = re.compile(r"[A-Za-z0-9.-]+\Z")


@attrs.frozen
class Pattern:
    """``kind`` is the canonical tool; ``shape`` one of prefix, dir, file, domain."""

    kind: str
    shape: str
    spec: str

    @property
    def rule(self) -> str:
        """The Claude Code-style rule text: ``Bash(npm run test:*)``, ``Write(src/**)``."""
        tool = RULE_TOOL[self.kind]
        if self.shape == "prefix":
            return f"{tool}({self.spec}:*)"
        if self.shape == "domain":
            return f"{tool}(domain:{self.spec})"
        path = "/" + self.spec if self.spec.startswith("/") else self.spec
        return f"{tool}({path}/**)" if self.shape == "dir" else f"{tool}({path})"

    def covers(self, tool: str, text: str) -> bool:
        """Whether a call of ``tool`` with ``text`` (command, path or URL) falls under this pattern."""
        if canonical_tool(tool) != self.kind:
            return False
        if self.shape == "prefix":
            words = bash_words(text)
            want = self.spec.split(" ")
            return words is not None and words[: len(want)] == want
        if self.shape == "domain":
            return _host(text) == self.spec
        path = _clean_path(text)
        if path is None:
            return False
        if self.shape == "file":
            return path == self.spec
        return path.startswith(self.spec.rstrip("/") + "/") if self.spec != "/" else path.startswith("/")


def bash_words(command: str) -> list[str] | None:
    """The words of a simple command, or None when it is compound or unparseable."""
    if "`" in command or "$(" in command or "\n" in command:
        return None
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:
        return None
    if not words or any(_OPERATOR.match(w) for w in words):
        return None
    return words


def pattern_of(tool: str, text: str) -> Pattern | None:
    """The pattern a call generalises to, or None when it should not be generalised.

    ``pattern_of("Bash", "npm run test -- --watch").rule == "Bash(npm run test:*)"``
    """
    kind = canonical_tool(tool)
    if kind == "bash":
        prefix = bash_prefix(text)
        return Pattern("bash", "prefix", prefix) if prefix else None
    if kind in ("write", "edit", "read"):
        return _file_pattern(kind, text)
    if kind == "web_fetch":
        host = _host(text)
        return Pattern(kind, "domain", host) if host else None
    return None


def bash_prefix(command: str) -> str | None:
    """``npm run test -- --watch`` → ``npm run test``; None for what must not be generalised."""
    words = bash_words(command)
    if not words:
        return None
    program = words[0]
    if "=" in program or not _PROGRAM.match(program):
        return None  # VAR=value assignments change what runs; odd program names are not patterns
    name = program.rsplit("/", 1)[-1]
    if name in WRAPPERS or name in SHELLS or not name:
        return None
    prefix = [program]
    rest = words[1:]
    if name in INTERPRETERS or re.fullmatch(r"python3?\.\d+", name):
        # The interpreter alone would allow any code; keep what it runs.
        if len(rest) >= 2 and rest[0] == "-m" and _WORD.match(rest[1]):
            prefix += rest[:2]
            rest = rest[2:]
        elif rest and not rest[0].startswith("-") and _PROGRAM.match(rest[0]):
            prefix.append(rest[0])
            rest = rest[1:]
        else:
            return None
    for word in rest:
        if len(prefix) >= MAX_WORDS or not _subcommand(word):
            break
        prefix.append(word)
    return " ".join(prefix)


def _subcommand(word: str) -> bool:
    return bool(_WORD.match(word)) and not _HASHLIKE.match(word) and "@" not in word


def _clean_path(text: str) -> str | None:
    text = text.strip()
    if not text or "\x00" in text:
        return None
    path = posixpath.normpath(text)
    if path.startswith("./"):
        path = path[2:]
    if path == ".." or path.startswith("../") or "/../" in path:
        return None
    return path


def _file_pattern(kind: str, text: str) -> Pattern | None:
    path = _clean_path(text)
    if path is None or path in (".", "/", "~") or "*" in path:
        return None
    parent = posixpath.dirname(path)
    if not parent:
        return Pattern(kind, "file", path)
    if _too_broad(parent):
        return None
    return Pattern(kind, "dir", parent)


def _too_broad(directory: str) -> bool:
    """The root, ``~`` and the home directory or any of its ancestors cover too much."""
    if directory in ("/", "~", "$HOME"):
        return True
    if directory.startswith("/"):
        home = str(Path.home())
        return home == directory or home.startswith(directory.rstrip("/") + "/")
    return False


def _host(url: str) -> str | None:
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    return host if host and _HOST.match(host) else None


def parse_rule(rule: str) -> Pattern | None:
    """The pattern of a rule text this module writes (``Bash(git status:*)`` ...), else None."""
    m = re.fullmatch(r"([A-Za-z]+)\((.*)\)", rule.strip(), re.S)
    if m is None:
        return None
    kind = _KIND_OF_RULE_TOOL.get(m.group(1).lower())
    body = m.group(2)
    if kind is None:
        return None
    if kind == "bash":
        return Pattern(kind, "prefix", " ".join(body[:-2].split())) if body.endswith(":*") and body[:-2] else None
    if kind == "web_fetch":
        return Pattern(kind, "domain", body[7:]) if body.startswith("domain:") and body[7:] else None
    shape = "dir" if body.endswith("/**") else "file"
    path = body[:-3] if shape == "dir" else body
    if path.startswith("//"):
        path = path[1:]
    elif path.startswith("/"):
        path = path[1:]  # Claude Code: relative to the project root
    path = path[2:] if path.startswith("./") else path
    return Pattern(kind, shape, path) if path else None
