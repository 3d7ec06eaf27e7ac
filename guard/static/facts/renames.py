"""Member names rewritten on the way out of an archive: ``tar --transform`` and ``pax -s``.

Both take sed's ``s`` command: ``s/REGEX/REPLACEMENT/FLAGS``, any delimiter, a POSIX basic regular
expression (GNU's ``\\+ \\? \\|`` and ``\\< \\>`` included; an extended one with tar's ``x`` flag).
``tar --transform 's,^,.claude/,' -xf x.tar`` puts a member ``settings.json`` on the project's hook
settings, so the names an unpack lands on are the rewritten ones (:func:`guard.static.facts.ondisk`).

:func:`parse` reads the expressions into a :class:`Renamer`, or None when one is beyond what is
read here exactly (a case conversion ``\\U``, a scope flag, a malformed expression): the caller
then cannot say where members land, and asks (G126) instead of guessing. GNU tar applies every
expression in turn (``--transform`` may be given several times, or ``;``-separated); pax stops at
the first that matches, and skips a member whose name becomes empty.

    >>> parse(["s,^,.claude/,"]).rename("settings.json")
    '.claude/settings.json'
    >>> parse([r"s/\\(.*\\)\\.txt$/\\1.json/"]).rename("a/b.txt")
    'a/b.json'
    >>> parse(["s/x/\\\\U&/"]) is None
    True
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache

_CLASSES = {
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "alnum": "a-zA-Z0-9",
    "upper": "A-Z",
    "lower": "a-z",
    "space": " \\t\\n\\r\\f\\v",
    "blank": " \\t",
    "punct": "!-/:-@\\[-`{-~",
    "xdigit": "0-9A-Fa-f",
    "cntrl": "\\x00-\\x1f\\x7f",
    "print": " -~",
    "graph": "!-~",
}
_FLAGS = frozenset("gixp0123456789")  # (tar's r R h H s S choose which members: not read here)


class Unread(ValueError):
    """An expression beyond what is read exactly."""


class Renamer:
    """Compiled ``s`` expressions; ``first_only``: pax's rule (the first that matches is the last)."""

    def __init__(self, steps: list[Callable[[str], tuple[str, bool]]], first_only: bool) -> None:
        self.steps, self.first_only = steps, first_only

    def rename(self, name: str) -> str:
        for step in self.steps:
            name, matched = step(name)
            if matched and self.first_only:
                break
        return name


def parse(expressions: Iterable[str], first_only: bool = False) -> Renamer | None:
    """The :class:`Renamer` for ``expressions`` (each maybe several, ``;``-separated), or None."""
    return _parse(tuple(expressions), first_only)


@lru_cache(maxsize=64)
def _parse(expressions: tuple[str, ...], first_only: bool) -> Renamer | None:
    steps: list[Callable[[str], tuple[str, bool]]] = []
    try:
        for text in expressions:
            rest = text
            while rest:
                step, rest = _one(rest)
                steps.append(step)
    except (Unread, re.error, IndexError):
        return None
    return Renamer(steps, first_only) if steps else None


def _one(text: str) -> tuple[Callable[[str], tuple[str, bool]], str]:
    """The first ``s`` expression of ``text`` and what follows it (after a ``;``)."""
    if len(text) < 4 or text[0] != "s" or text[1] in "\\\n":
        raise Unread(text)
    delim = text[1]
    regex, i = _until(text, 2, delim)
    replacement, i = _until(text, i, delim)
    end = text.find(";", i)
    flags, rest = (text[i:], "") if end < 0 else (text[i:end], text[end + 1 :])
    if not set(flags) <= _FLAGS:
        raise Unread(flags)
    count = int("".join(c for c in flags if c.isdigit()) or "0")
    pattern = re.compile(_ere(regex) if "x" in flags else _bre(regex), re.IGNORECASE if "i" in flags else 0)
    template = _replacement(replacement, pattern.groups)
    every = "g" in flags

    def step(name: str) -> tuple[str, bool]:
        seen = 0
        out, last, matched = [], 0, False
        for m in pattern.finditer(name):
            seen += 1
            if count and seen < count:
                continue
            out.append(name[last : m.start()])
            out.append(template(m))
            last, matched = m.end(), True
            if not every:
                break
        if not matched:
            return name, False
        out.append(name[last:])
        return "".join(out), True

    return step, rest


def _until(text: str, i: int, delim: str) -> tuple[str, int]:
    """``text[i:]`` up to an unescaped ``delim`` (``\\delim`` kept as the delimiter itself), and the
    index after it."""
    out = []
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            out.append(text[i + 1] if text[i + 1] == delim else text[i : i + 2])
            i += 2
            continue
        if c == delim:
            return "".join(out), i + 1
        out.append(c)
        i += 1
    raise Unread(text)


def _bracket(regex: str, i: int) -> tuple[str, int]:
    """A bracket expression starting at ``regex[i] == '['``: Python's spelling, and the index after it."""
    j = i + 1
    out = ["["]
    if j < len(regex) and regex[j] == "^":
        out.append("^")
        j += 1
    first = True
    while j < len(regex):
        c = regex[j]
        if c == "]" and not first:
            out.append("]")
            return "".join(out), j + 1
        if c == "[" and regex[j + 1 : j + 2] == ":":
            end = regex.find(":]", j + 2)
            if end < 0 or regex[j + 2 : end] not in _CLASSES:
                raise Unread(regex)
            out.append(_CLASSES[regex[j + 2 : end]])
            j = end + 2
        elif c == "[" and regex[j + 1 : j + 2] in ("=", "."):
            raise Unread(regex)  # (equivalence classes, collating symbols)
        else:
            out.append("\\" + c if c in "\\[]^" and not (c == "^" and not first) else c)
            j += 1
        first = False
    raise Unread(regex)


def _bre(regex: str) -> str:
    """A POSIX basic regular expression (with GNU's extensions) in Python's syntax."""
    out: list[str] = []
    i, start = 0, True  # ``start``: where ``*`` is a plain character and ``^`` an anchor
    while i < len(regex):
        c = regex[i]
        if c == "\\" and i + 1 < len(regex):
            n = regex[i + 1]
            i += 2
            if n in "(|":
                out.append(n)
                start = True
                continue
            out.append(n if n in ")+?{}" else _escaped(n, regex))
            start = False
            continue
        if c == "[":
            part, i = _bracket(regex, i)
            out.append(part)
        elif c == "*":
            out.append("\\*" if start else "*")
            i += 1
        elif c == "^":
            out.append("^" if start else "\\^")
            i += 1
            if out[-1] == "^":
                continue  # (still the start: ``^*`` is a literal star)
        elif c == "$":
            at_end = i + 1 == len(regex) or regex[i + 1 : i + 3] in ("\\)", "\\|")
            out.append("$" if at_end else "\\$")
            i += 1
        elif c == ".":
            out.append(".")
            i += 1
        else:
            out.append(re.escape(c))
            i += 1
        start = False
    return "".join(out)


def _ere(regex: str) -> str:
    """A POSIX extended regular expression in Python's syntax (brackets and escapes translated)."""
    out: list[str] = []
    i = 0
    while i < len(regex):
        c = regex[i]
        if c == "\\" and i + 1 < len(regex):
            n = regex[i + 1]
            i += 2
            out.append(_escaped(n, regex))
            continue
        if c == "[":
            part, i = _bracket(regex, i)
            out.append(part)
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _escaped(n: str, regex: str) -> str:
    """``\\n`` in either syntax: GNU's word boundaries (``\\< \\>``) and classes, a back-reference, a
    tab or newline, or the character itself; any other letter is an escape not read here."""
    if n in "<>":
        return "\\b"
    if (n.isdigit() and n != "0") or n in "wWsSbB":
        return "\\" + n
    if n in "nt":
        return "\\" + n
    if n.isalnum():
        raise Unread(regex)
    return re.escape(n)


def _replacement(text: str, groups: int) -> Callable[[re.Match[str]], str]:
    """sed's replacement: ``&`` the match, ``\\1``-``\\9`` its groups, ``\\&`` and ``\\\\`` themselves."""
    parts: list[str | int] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            n = text[i + 1]
            i += 2
            if n.isdigit():
                if int(n) > groups:
                    raise Unread(text)
                parts.append(int(n))
            elif n == "n":
                parts.append("\n")
            elif n.isalpha():
                raise Unread(text)  # (``\U``, ``\L``… case conversions)
            else:
                parts.append(n)
            continue
        parts.append(0 if c == "&" else c)
        i += 1

    def fill(m: re.Match[str]) -> str:
        return "".join(p if isinstance(p, str) else (m.group(p) or "") for p in parts)

    return fill
