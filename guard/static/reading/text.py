"""Word-level text normalisation: what bash would make of a word, before any rule looks at it.

Evasions live here: invisible code points and look-alike forms (stripped and NFKC-folded),
ANSI-C strings (``$'\\x72m'``), backslash escapes (``\\rm``), brace expansion
(``{build,/etc}``). Values the shell only knows at runtime are kept as *markers*: private-use
characters around an index into the scan's substitution table, so an argument stays a plain
``str`` while rules can still ask "is this dynamic, and where did it come from?".
"""

from __future__ import annotations

import functools
import re
import unicodedata

from guard import lazyre

DYN_OPEN = "\ue000"  # start of a runtime value: DYN_OPEN + index + DYN_CLOSE
DYN_CLOSE = "\ue001"
IFS = "\ue002"  # an unquoted $IFS: word splitting happens here
Q_LBRACE, Q_RBRACE, Q_COMMA = "\ue003", "\ue004", "\ue005"  # quoted brace characters (no expansion)

_MARKER_RE = lazyre.compile("\ue000(\\d+)\ue001")

# Invisible or direction-changing code points (OpenHands' list, plus tags and variation
# selectors) and the private-use block guard reserves for its markers.
_INVISIBLE_RE = lazyre.compile(
    "[\u0000\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\ue000-\uf8ff"
    "\ud800-\udfff\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)


@functools.cache
def wordset(text: str) -> frozenset[str]:
    """A table of names written as one string: ``wordset("ls cat head")``.

    Made once per string (a handler's option table written inline is a lookup, not a split and a
    set per call); the strings are literals in guard's source, so the cache holds a fixed few."""
    return frozenset(text.split())


def prefilter(text: str) -> tuple[str, bool]:
    """Strip invisible code points and fold look-alikes (NFKC); report whether anything was hidden.

    >>> prefilter("r\\u200bm -rf /")
    ('rm -rf /', True)
    """
    if text.isascii() and "\x00" not in text:
        return text, False
    cleaned = _INVISIBLE_RE.sub("", text)
    hidden = len(cleaned) != len(text)
    if not cleaned.isascii():
        cleaned = unicodedata.normalize("NFKC", cleaned)
    return cleaned, hidden


def join_continued(text: str) -> str:
    """Remove backslash-newline pairs as bash does before it splits words (``r\\<newline>m`` is ``rm``).

    Not inside single quotes, and not at the end of a comment (there the backslash is comment text
    and the next line is a command of its own).
    """
    out: list[str] = []
    i, n, quote = 0, len(text), ""
    while i < n:
        c = text[i]
        if quote == "'":
            out.append(c)
            quote = "" if c == "'" else quote
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            if text[i + 1] == "\n":
                i += 2
                continue
            out.append(text[i : i + 2])
            i += 2
            continue
        if quote == '"':
            quote = "" if c == '"' else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (not out or out[-1][-1:] in " \t\n;|&()<>"):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(text[i:end])
            i = end
            continue
        out.append(c)
        i += 1
    return "".join(out)


def marker(index: int) -> str:
    return f"{DYN_OPEN}{index}{DYN_CLOSE}"


def marker_ids(word: str) -> list[int]:
    return [int(m) for m in _MARKER_RE.findall(word)] if DYN_OPEN in word else []


def strip_markers(word: str, replacement: str = "*") -> str:
    """The word with every runtime value replaced (a glob, for path reasoning)."""
    return _MARKER_RE.sub(replacement, word) if DYN_OPEN in word else word


_SIMPLE_ESC = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI_RE = lazyre.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.S)


def decode_ansi_c(body: str) -> str:
    """Decode the inside of ``$'...'``: ``decode_ansi_c(r"\\x72m") == "rm"``."""

    def one(m: re.Match[str]) -> str:
        esc = m.group(1)
        head = esc[0]
        try:
            if head == "x":
                return chr(int(esc[1:], 16))
            if head in "uU":
                return chr(int(esc[1:], 16))
            if head in "01234567":
                return chr(int(esc, 8) & 0xFF)
        except (ValueError, OverflowError):
            return ""
        if head == "c" and len(esc) == 2:
            return chr(ord(esc[1]) & 0x1F)
        return _SIMPLE_ESC.get(esc, "\\" + esc)

    return _ANSI_RE.sub(one, body) if "\\" in body else body


def unescape_unquoted(text: str) -> str:
    """Backslash removal outside quotes: ``\\rm`` is ``rm``, a backslash-newline disappears."""
    if "\\" not in text:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt != "\n":
                out.append(_protect(nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def unescape_double(text: str) -> str:
    """Inside double quotes a backslash only escapes ``$ ` " \\`` and newline."""
    if "\\" not in text:
        return text
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def protect_braces(text: str) -> str:
    """Quoted text never brace-expands: hide its braces and commas from :func:`expand_braces`."""
    if "{" not in text and "}" not in text and "," not in text:
        return text
    return text.replace("{", Q_LBRACE).replace("}", Q_RBRACE).replace(",", Q_COMMA)


def _protect(ch: str) -> str:
    return {"{": Q_LBRACE, "}": Q_RBRACE, ",": Q_COMMA}.get(ch, ch)


def restore_braces(text: str) -> str:
    if Q_LBRACE not in text and Q_RBRACE not in text and Q_COMMA not in text:
        return text
    return text.replace(Q_LBRACE, "{").replace(Q_RBRACE, "}").replace(Q_COMMA, ",")


MAX_BRACE_WORDS = 64


def expand_braces(word: str) -> list[str]:
    """Bash brace expansion, bounded: ``expand_braces("a{b,c}d") == ["abd", "acd"]``.

    Quoted braces must already be hidden with :func:`protect_braces`.
    """
    if "{" not in word or "}" not in word:
        return [restore_braces(word)]
    out = _expand(word, 0)
    return [restore_braces(w) for w in out[:MAX_BRACE_WORDS]]


_SEQ_RE = lazyre.compile(r"^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$")


def _expand(word: str, depth: int) -> list[str]:
    if depth > 8:
        return [word]
    start = word.find("{")
    while start != -1:
        end, parts = _split_group(word, start)
        if end != -1:
            inner = word[start + 1 : end]
            alts = parts if len(parts) > 1 else _sequence(inner)
            if alts is not None:
                prefix, suffix = word[:start], word[end + 1 :]
                results: list[str] = []
                for alt in alts:
                    for tail in _expand(suffix, depth + 1):
                        for mid in _expand(alt, depth + 1):
                            results.append(prefix + mid + tail)
                            if len(results) >= MAX_BRACE_WORDS:
                                return results
                return results
        start = word.find("{", start + 1)
    return [word]


def _split_group(word: str, start: int) -> tuple[int, list[str]]:
    depth, parts, last = 0, [], start + 1
    for i in range(start, len(word)):
        ch = word[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                parts.append(word[last:i])
                return i, parts
        elif ch == "," and depth == 1:
            parts.append(word[last:i])
            last = i + 1
    return -1, []


def _sequence(inner: str) -> list[str] | None:
    m = _SEQ_RE.match(inner)
    if not m:
        return None
    a, b, step_text = m.groups()
    step = abs(int(step_text)) if step_text else 1
    step = step or 1
    if a.lstrip("-").isdigit() and b.lstrip("-").isdigit():
        lo, hi = int(a), int(b)
        rng = range(lo, hi + 1, step) if lo <= hi else range(lo, hi - 1, -step)
        return [str(x) for x in rng][:MAX_BRACE_WORDS]
    if a.isalpha() and b.isalpha():
        lo, hi = ord(a), ord(b)
        rng = range(lo, hi + 1, step) if lo <= hi else range(lo, hi - 1, -step)
        return [chr(x) for x in rng][:MAX_BRACE_WORDS]
    return None


def split_ifs(word: str) -> list[str]:
    """An unquoted ``$IFS`` splits a word the way a space would."""
    if IFS not in word:
        return [word]
    return [p for p in word.split(IFS) if p]


_TILDE_RE = lazyre.compile(r"^~([A-Za-z0-9_.-]*|[+-])(?=/|$)")


def tilde(text: str, home: str, cwd: str | None) -> str:
    """A leading ``~``, ``~+`` or ``~user``: the home, the working directory, that user's home."""
    m = _TILDE_RE.match(text)
    if not m:
        return text
    who = m.group(1)
    if who == "":
        base = home
    elif who == "+":
        base = cwd or "."
    elif who == "-":
        return text
    else:
        base = "/root" if who == "root" else f"/home/{who}"
    return base + text[m.end() :]


_ASSIGNMENT = lazyre.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def assignment_tilde(text: str, home: str, cwd: str | None) -> str:
    """``of=~/x``, ``PATH=~/bin:~/.local/bin``: bash expands the tildes after the ``=`` and each ``:``
    of a word shaped like an assignment, argument of a command or not (outside POSIX mode)."""
    m = _ASSIGNMENT.match(text)
    if m is None:
        return text
    value = text[m.end() :]
    return text[: m.end()] + ":".join(tilde(p, home, cwd) if p[:1] == "~" else p for p in value.split(":"))
