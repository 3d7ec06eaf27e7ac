"""Text filters guard can apply itself: what ``head``, ``cut``, ``sed s///`` or ``awk '{print $2}'`` make of known text.

``printf 'x\\nrm -rf ~' | tail -1 | sh`` runs ``rm -rf ~``: when the text reaching a filter is known
and the filter is simple and literal, guard computes its output so the shell at the end of the pipe
is judged on what it really reads. Any option or program form not modelled here gives ``None``, and
the caller falls back to an unknown output (a shell reading it asks, G194).
"""

from __future__ import annotations

import re

from guard import lazyre

_COUNT = lazyre.compile(r"[+-]?\d+")
_RANGE = lazyre.compile(r"(\d*)(-?)(\d*)")
_AWK_PRINT = lazyre.compile(r"\s*\{\s*print\s*((?:\$(?:\d+|NF)\s*,?\s*)*)\s*;?\s*\}\s*")


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _count_option(args: tuple[str, ...], *, strict: bool) -> tuple[str, bool] | None:
    """The count ``head``/``tail`` take (``-n 2``, ``-c 5``, ``--lines=3``, ``-5``; default 10)
    and whether it counts bytes; None for an option it does not know, when ``strict``."""
    count, by_bytes, i = "10", False, 0
    while i < len(args):
        a = args[i]
        if a in ("-n", "--lines", "-c", "--bytes") and i + 1 < len(args):
            count, by_bytes, i = args[i + 1], a in ("-c", "--bytes"), i + 2
            continue
        if a.startswith(("--lines=", "--bytes=")):
            count, by_bytes = a.split("=", 1)[1], a.startswith("--bytes")
        elif a.startswith(("-n", "-c")) and len(a) > 2:
            count, by_bytes = a[2:], a[1] == "c"
        elif a.startswith("-") and _COUNT.fullmatch(a[1:]):
            count = a[1:]
        elif strict and a not in ("-q", "--quiet", "--silent"):
            return None
        i += 1
    return count, by_bytes


def head_tail(name: str, args: tuple[str, ...], text: str) -> str | None:
    """``head -n 2``, ``head -1``, ``tail -n +2``, ``tail -c 5`` on known text."""
    found = _count_option(args, strict=True)
    if found is None:
        return None
    count, by_bytes = found
    if not _COUNT.fullmatch(count):
        return None
    n = int(count)
    items: list[str] | str = text if by_bytes else _lines(text)
    if name == "head":
        out = items[:n] if n >= 0 and not count.startswith("+") else items[: len(items) + n]
    elif count.startswith("+"):
        out = items[max(n - 1, 0) :]
    else:
        out = items[len(items) - abs(n) :] if n else items[:0]
    return "".join(out)


def _fields(spec: str) -> list[tuple[int, int]] | None:
    ranges = []
    for part in spec.split(","):
        m = _RANGE.fullmatch(part)
        if not m or not (m[1] or m[3]):
            return None
        low = int(m[1]) if m[1] else 1
        high = int(m[3]) if m[3] else (low if not m[2] else 1 << 30)
        ranges.append((low, high))
    return ranges


def cut(args: tuple[str, ...], text: str) -> str | None:
    """``cut -d: -f2``, ``cut -c3-`` on known text."""
    delim, spec, chars, i = "\t", None, False, 0
    while i < len(args):
        a = args[i]
        if a in ("-d", "-f", "-c", "-b") and i + 1 < len(args):
            value, i = args[i + 1], i + 2
        elif a[:2] in ("-d", "-f", "-c", "-b") and len(a) > 2:
            value, i = a[2:], i + 1
        else:
            return None
        if a.startswith("-d"):
            if len(value) != 1:
                return None
            delim = value
        else:
            spec, chars = value, not a.startswith("-f")
    ranges = _fields(spec) if spec else None
    if ranges is None:
        return None
    out = []
    for line in text.split("\n"):
        parts = list(line) if chars else line.split(delim)
        if not chars and len(parts) == 1:
            out.append(line)  # a line without the delimiter prints whole
            continue
        kept = [p for n, p in enumerate(parts, 1) if any(lo <= n <= hi for lo, hi in ranges)]
        out.append(("" if chars else delim).join(kept))
    return "\n".join(out)


def sort_uniq(name: str, args: tuple[str, ...], text: str) -> str | None:
    """``sort``, ``sort -r``, ``sort -u``, ``uniq`` on known text (no keys, no locale subtleties)."""
    flags = set("".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--")))
    if any(not a.startswith("-") or a.startswith("--") for a in args) or flags - (
        {"r", "u"} if name == "sort" else set()
    ):
        return None
    lines = [line.rstrip("\n") for line in _lines(text)]
    if name == "sort":
        lines = sorted(set(lines) if "u" in flags else lines, reverse="r" in flags)
    else:
        lines = [line for n, line in enumerate(lines) if n == 0 or lines[n - 1] != line]
    return "".join(line + "\n" for line in lines)


def _bre(pattern: str) -> str | None:
    """A sed basic regular expression as a Python one; ``None`` for groups, intervals and back-references."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt.isalnum() or nxt in "(){}|+?<>`'":
                return None
            out.append(re.escape(nxt))
            i += 2
            continue
        out.append(re.escape(c) if c in "+?|(){}" else c)
        i += 1
    return "".join(out)


def sed_subst(delim: str, regex: str, replacement: str, flags: str, text: str) -> str | None:
    """``s/regex/replacement/[g|N]`` applied to every line of known text."""
    if flags not in ("", "g") and not flags.isdigit():
        return None
    if delim != "/":
        regex = regex.replace("\\" + delim, delim)
        replacement = replacement.replace("\\" + delim, delim)
    pattern = _bre(regex)
    if pattern is None:
        return None
    try:
        compiled = re.compile(pattern)
    except re.error:
        return None
    repl, i = [], 0
    while i < len(replacement):
        c = replacement[i]
        if c == "\\" and i + 1 < len(replacement):
            nxt = replacement[i + 1]
            if nxt.isdigit():
                return None
            repl.append({"n": "\n", "t": "\t"}.get(nxt, nxt))
            i += 2
            continue
        repl.append(c)
        i += 1
    parts = "".join(repl).split("&")

    def sub(line: str) -> str:
        if flags.isdigit():
            matches = list(compiled.finditer(line))
            n = int(flags)
            if n < 1 or len(matches) < n:
                return line
            m = matches[n - 1]
            return line[: m.start()] + m.group(0).join(parts) + line[m.end() :]
        return compiled.sub(lambda m: m.group(0).join(parts), line, count=0 if flags == "g" else 1)

    return "\n".join(sub(line) for line in text.split("\n"))


def awk_print(program: str, separator: str | None, text: str) -> str | None:
    """``awk '{print}'``, ``awk '{print $2}'``, ``awk -F: '{print $1, $3}'`` on known text."""
    m = _AWK_PRINT.fullmatch(program)
    if not m or (separator is not None and len(separator) != 1):
        return None
    fields = re.findall(r"\$(\d+|NF)", m[1])
    out = []
    for line in text.split("\n"):
        if not fields or fields == ["0"]:
            out.append(line)
            continue
        parts = line.split(separator) if separator is not None else line.split()
        if not line and not parts:
            out.append("")
            continue
        picked = []
        for f in fields:
            n = len(parts) if f == "NF" else int(f)
            picked.append(line if n == 0 else parts[n - 1] if 0 < n <= len(parts) else "")
        out.append(" ".join(picked))
    return "\n".join(out)


FILL_BYTES = 1 << 30  # a write of this much or more can fill a disk (G009)
_SIZE = lazyre.compile(r"^\+?(\d+(?:\.\d+)?)\s*([KMGTPE]?)(i?B?)?$", re.I)


def size_bytes(text: str) -> float | None:
    """``100G`` → bytes (K/M/G/T/P/E, binary like dd and coreutils; ``KB`` decimal); None if unreadable."""
    m = _SIZE.match(text.strip())
    if m is None:
        return None
    power = "KMGTPE".find(m.group(2).upper()) + 1 if m.group(2) else 0
    base = 1000 if (m.group(3) or "").upper() == "B" and power else 1024
    return float(m.group(1)) * float(base**power)


def head_bounded(args: tuple[str, ...]) -> bool:
    """``head -c 100``, ``head -n 3``, ``head -5``: output that ends well below a disk-filling size."""
    count, by_bytes = _count_option(args, strict=False) or ("10", False)
    size = size_bytes(count) if not count.startswith("-") else None
    if size is None:
        return False
    return size < (FILL_BYTES if by_bytes else FILL_BYTES // 1024)  # lines: at most a million or so
