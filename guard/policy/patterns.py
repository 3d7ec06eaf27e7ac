"""Command patterns: what one learned rule covers, and its Claude Code-style rule text.

A learned **allow** rule for a shell command is exact (:func:`exact_of`): the operation as
the fusion layer keys its history (:func:`guard.signature.signature`: blanks folded, every
argument kept), ``Bash(pip install requests)``. It covers that command and nothing else, so
no argument that changes the target (a package, ``--index-url``, ``git+URL``, ``-f FILE``,
``--context``, a host, a remote or a branch) can be added under it. Commands the rule syntax
cannot spell exactly (a ``*``, longer than the signature keeps) get none.

A learned **deny** rule, and any rule for another tool, generalises a call just enough to
recur (a broader deny only refuses more):

- **bash**: the program plus its subcommand words, up to the first word that is an option
  (``-x``), path-like (``/``, ``.``, ``~``), volatile (starts with a digit, a hash, has
  ``=``/``@``) or not a plain word, at most three words: ``npm run test -- --watch`` →
  ``npm run test`` → ``Bash(npm run test:*)``. An interpreter keeps its script
  (``python manage.py migrate``) or module (``python -m pytest``). Compound commands
  (``&&``, ``|``, ``;``, redirections, ``$(...)``, keywords such as ``if``), leading
  ``VAR=value`` assignments, builtins that change the shell (``export``, ``alias``,
  ``source``...), wrappers that run another command (``sudo``, ``env``, ``xargs``,
  ``timeout``...) and shells (``bash -c``) get no pattern: a prefix rule for them would
  cover anything.
- **write / edit / read**: the file's directory as a glob, ``Write(src/**)``; absolute paths
  use Claude Code's ``//`` form (``Write(//srv/app/**)``); a file with no directory part is
  its own pattern, anchored at the working directory (``Edit(/notes.md)``: the static layer
  reads a bare ``notes.md`` as that name at any depth); the filesystem root, the home
  directory and its ancestors, and paths with ``..`` get none.
- **web_fetch**: the host, ``WebFetch(domain:docs.python.org)``.
- any other tool: no pattern.

``Pattern.covers`` asks the static layer's own ``[permissions]`` matcher
(:mod:`guard.policy.coverage`), because that is what a written rule does: whole words for
prefixes (``npm run test`` covers ``npm run test --watch`` and ``npm run test:unit``, not
``npm run testing`` nor ``npm run test && rm x``), path components for directories.
"""

from __future__ import annotations

import posixpath
import re
import shlex
import unicodedata
from pathlib import Path
from urllib.parse import urlsplit

import attrs

from guard import lazyre
from guard.model import ToolCall
from guard.signature import signature
from guard.toolnames import canonical_tool

MAX_WORDS = 3
SIGNATURE_MAX = 512  # guard.signature keeps this many characters of a command

RULE_TOOL = {"bash": "Bash", "write": "Write", "edit": "Edit", "read": "Read", "web_fetch": "WebFetch"}
_KIND_OF_RULE_TOOL = {v.lower(): k for k, v in RULE_TOOL.items()}

# Programs that run another command: a prefix rule on them would allow anything.
WRAPPERS = frozenset(
    "sudo doas su env nohup nice ionice timeout time xargs exec eval command builtin watch stdbuf "  # noqa: SIM905
    "unbuffer chroot strace ltrace gdb setsid flock parallel caffeinate script".split()
)
# Words bash reads as syntax where a command name would be: what follows is not a simple command.
RESERVED = frozenset("if then else elif fi case esac for select while until do done in function coproc".split())  # noqa: SIM905
# Builtins that change the shell itself (variables, aliases, traps) or run a file in it.
SHELL_STATE = frozenset("export declare typeset local readonly alias unalias set unset shopt source . trap".split())  # noqa: SIM905
SHELLS = frozenset("sh bash zsh dash ksh fish csh tcsh pwsh powershell cmd busybox".split())  # noqa: SIM905
INTERPRETERS = frozenset(
    "python python2 python3 pypy pypy3 node nodejs ruby perl php lua luajit Rscript julia "  # noqa: SIM905
    "deno bun tsx ts-node".split()
)

_WORD = lazyre.compile(r"[A-Za-z][A-Za-z0-9_:+-]*\Z")
_PROGRAM = lazyre.compile(r"[A-Za-z0-9_./+-]+\Z")
_HASHLIKE = lazyre.compile(r"(?=[a-z]*[0-9])[0-9a-f]{7,}\Z")
_OPERATOR = lazyre.compile(r"[();<>|&]+\Z")
_HOST = lazyre.compile(r"[A-Za-z0-9.-]+\Z")


@attrs.frozen
class Pattern:
    """``kind`` is the canonical tool; ``shape`` one of exact, prefix, dir, file, domain."""

    kind: str
    shape: str
    spec: str

    @property
    def rule(self) -> str:
        """The Claude Code-style rule text: ``Bash(npm run test:*)``, ``Write(src/**)``."""
        tool = RULE_TOOL[self.kind]
        if self.shape == "exact":
            return f"{tool}({self.spec})"
        if self.shape == "prefix":
            return f"{tool}({self.spec}:*)"
        if self.shape == "domain":
            return f"{tool}(domain:{self.spec})"
        if self.spec.startswith("/"):
            path = "/" + self.spec  # Claude Code's form of an absolute path
        elif self.shape == "file" and not self.spec.startswith("~/"):
            path = "/" + self.spec  # anchored: a bare name would match at any depth
        else:
            path = self.spec
        return f"{tool}({path}/**)" if self.shape == "dir" else f"{tool}({path})"

    @property
    def scope(self) -> str:
        """What the rule covers, in words: ``exactly `pip install requests`, no other arguments``."""
        if self.shape == "exact":
            return f"exactly `{self.spec}`, no other arguments"
        if self.shape == "prefix":
            return f"`{self.spec}` followed by any arguments"
        if self.shape == "domain":
            return f"any URL on {self.spec} or its subdomains"
        if self.shape == "dir":
            return f"any file under {self.spec}/"
        return f"the file {self.spec}"

    def covers(self, tool: str, text: str, cwd: str | None = None) -> bool:
        """Whether the static layer reads this pattern's rule as covering a call of ``tool`` with
        ``text`` (command, path or URL): ``Pattern("bash", "prefix", "npm run test").covers("Bash",
        "npm run test -x")``."""
        from guard.policy.coverage import rule_covers  # the static layer: loaded only when asked

        params = params_for(canonical_tool(tool), text)
        return params is not None and rule_covers(self.rule, ToolCall(tool, params, cwd=cwd))


def params_for(kind: str, text: str) -> dict[str, str] | None:
    """The parameters of a ``kind`` call whose signature text is ``text`` (None for other kinds)."""
    if kind == "bash":
        return {"command": text}
    if kind == "write":
        return {"file_path": text, "content": ""}
    if kind == "edit":
        return {"file_path": text, "old_string": "", "new_string": ""}
    if kind == "read":
        return {"file_path": text}
    if kind == "web_fetch":
        return {"url": text}
    return None


def bash_words(command: str) -> list[str] | None:
    """The words of a simple command, or None when it is compound or unparseable."""
    if "`" in command or "$(" in command or "\n" in command:
        return None
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""  # bash starts a comment only at a word's start: ``a#b`` is one word
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


def exact_of(tool: str, text: str) -> Pattern | None:
    """The exact rule for a shell operation, or None (another tool, or nothing to spell exactly).

    ``exact_of("Bash", "pip install  requests").rule == "Bash(pip install requests)"``; ``text``
    is the command, and the rule's text is its signature (the fusion layer's operation key).
    """
    if canonical_tool(tool) != "bash" or bash_prefix(text) is None:
        return None
    op = signature("Bash", {"command": text}).partition(":")[2]
    if "*" in op or len(op) >= SIGNATURE_MAX or not op.isprintable():
        return None  # ``*`` is the rule syntax's wildcard; a cut signature is not the command
    return Pattern("bash", "exact", op)


def bash_prefix(command: str) -> str | None:
    """``npm run test -- --watch`` → ``npm run test``; None for what must not be generalised."""
    words = bash_words(command)
    if not words:
        return None
    program = words[0]
    if "=" in program or program.startswith("-") or not _PROGRAM.match(program):
        return None  # VAR=value assignments change what runs; odd program names are not patterns
    name = program.rsplit("/", 1)[-1]
    if name in WRAPPERS or name in SHELLS or program in RESERVED or program in SHELL_STATE or not name:
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
    """The normalised path, or None for one a rule cannot name exactly: surrounding blanks
    (rule texts are stripped), control characters, ``$``/backticks (expanded by the static
    layer) and ``~user`` forms."""
    if not text or text != text.strip() or any(unicodedata.category(c)[0] == "C" for c in text):
        return None
    if "$" in text or "`" in text or text.startswith("//"):
        return None
    if text.startswith("~") and text != "~" and not text.startswith("~/"):
        return None
    if ".." in text.split("/"):
        return None  # normpath would fold ``~/../x`` into ``x``
    path = posixpath.normpath(text)
    if path.startswith("./"):
        path = path[2:]
    if path.startswith("~") and not text.startswith("~"):
        return None  # ``./~/x`` is a directory named ~, which a rule would read as home
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
    """The host of an http(s) URL, or None where parsers disagree on it (``@``, ``\\``, blanks,
    control characters)."""
    if any(c in url for c in "@\\") or any(c.isspace() or unicodedata.category(c)[0] == "C" for c in url):
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return None
    return host if parts.scheme.lower() in ("http", "https") and host and _HOST.match(host) else None


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
        if body.endswith(":*"):
            return Pattern(kind, "prefix", " ".join(body[:-2].split())) if body[:-2] else None
        spec = " ".join(body.split())
        return Pattern(kind, "exact", spec) if spec and "*" not in spec else None
    if kind == "web_fetch":
        return Pattern(kind, "domain", body[7:]) if body.startswith("domain:") and body[7:] else None
    shape = "dir" if body.endswith("/**") else "file"
    path = body[:-3] if shape == "dir" else body
    anchored = path.startswith("/")
    if path.startswith("//"):
        path = path[1:]
    elif anchored:
        path = path[1:]  # Claude Code: relative to the project root
    path = path[2:] if path.startswith("./") else path
    if shape == "file" and not anchored and "/" not in path:
        return None  # the static layer reads a bare name at any depth: not one file
    return Pattern(kind, shape, path) if path else None
