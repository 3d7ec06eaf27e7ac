"""A structural scanner for TOML text: where tables, keys and values (and array elements) sit.

Not a TOML parser (``tomllib`` parses); it finds the *text spans* a careful editor needs:
table headers, top-level ``key = value`` entries with their value span, and the span of each
element of an array value. It understands basic, literal and multi-line strings, comments,
nested arrays and inline tables, so a ``]`` or ``#`` inside a string is not mistaken for
structure. Malformed text raises ``ConfigError``; callers parse with ``tomllib`` first.
"""

from __future__ import annotations

import tomllib

import attrs

from guard.errors import ConfigError


@attrs.frozen
class Entry:
    section: tuple[str, ...]
    key: tuple[str, ...]
    line_start: int
    value_start: int
    value_end: int
    elements: tuple[tuple[int, int], ...]  # spans of array elements, when the value is an array


# -- a structural scanner: tables, keys and value spans ---------------------------------------
def headers(text: str) -> list[tuple[int, tuple[str, ...]]]:
    """(offset, dotted name) of every ``[table]`` header."""
    return [(e.line_start, e.section) for e in scan(text, tables=True)]


def scan(text: str, tables: bool = False) -> list[Entry]:
    """Key/value entries (or, with ``tables``, table headers) at the document's top level."""
    out: list[Entry] = []
    section: tuple[str, ...] = ()
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
            continue
        if c == "#":
            i = _line_end(text, i)
            continue
        if c == "[":
            line_start = i
            double = text.startswith("[[", i)
            i += 2 if double else 1
            names, i = _parse_key(text, i)
            section = tuple(names)
            i = _line_end(text, i)
            if tables and not double:
                out.append(Entry(section, (), line_start, line_start, line_start, ()))
            if double:
                section = ("[[" + ".".join(names) + "]]",)
            continue
        line_start = i
        names, i = _parse_key(text, i)
        i = _skip_space(text, i)
        if i >= n or text[i] != "=":
            raise ConfigError(f"guard.toml: cannot read the line at offset {line_start}")
        i = _skip_space(text, i + 1)
        value_start = i
        i, elements = _skip_value(text, i)
        if not tables:
            out.append(Entry(section, tuple(names), line_start, value_start, i, tuple(elements)))
        i = _line_end(text, i)
    return out


def _line_end(text: str, i: int) -> int:
    nl = text.find("\n", i)
    return len(text) if nl < 0 else nl + 1


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


def skip_space_and_comments(text: str, i: int, limit: int | None = None) -> int:
    limit = len(text) if limit is None else limit
    while i < limit:
        if text[i] in " \t\r\n":
            i += 1
        elif text[i] == "#":
            i = min(_line_end(text, i), limit)
        else:
            break
    return i


def _parse_key(text: str, i: int) -> tuple[list[str], int]:
    """A dotted key (bare or quoted parts); stops at '=' or ']'."""
    names: list[str] = []
    n = len(text)
    while i < n:
        i = _skip_space(text, i)
        if i < n and text[i] in "\"'":
            end = _skip_string(text, i)
            names.append(tomllib.loads(f"k = {text[i:end]}")["k"])
            i = end
        else:
            j = i
            while j < n and (text[j].isalnum() or text[j] in "_-"):
                j += 1
            names.append(text[i:j])
            i = j
        i = _skip_space(text, i)
        if i < n and text[i] == ".":
            i += 1
            continue
        if i < n and text[i] == "]":
            i += 1
            if i < n and text[i] == "]":
                i += 1
        return names, i
    return names, i


def _skip_string(text: str, i: int) -> int:
    for quote in ('"""', "'''"):
        if text.startswith(quote, i):
            j = i + 3
            while True:
                k = text.find(quote, j)
                if k < 0:
                    return len(text)
                if quote == '"""' and _escaped(text, k):
                    j = k + 1
                    continue
                while text.startswith(quote[0], k + 3):  # up to two quotes may close the content
                    k += 1
                return k + 3
    q = text[i]
    j = i + 1
    while j < len(text) and text[j] != "\n":
        if text[j] == "\\" and q == '"':
            j += 2
            continue
        if text[j] == q:
            return j + 1
        j += 1
    return j


def _escaped(text: str, k: int) -> bool:
    backslashes = 0
    while k - 1 - backslashes >= 0 and text[k - 1 - backslashes] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def _skip_value(text: str, i: int) -> tuple[int, list[tuple[int, int]]]:
    """End offset of the value at ``i``, and its element spans when it is an array."""
    n = len(text)
    if i < n and text[i] in "\"'":
        return _skip_string(text, i), []
    if i < n and text[i] == "[":
        elements: list[tuple[int, int]] = []
        i += 1
        while i < n:
            i = skip_space_and_comments(text, i)
            if i >= n or text[i] == "]":
                return i + 1, elements
            if text[i] == ",":
                i += 1
                continue
            start = i
            i, _ = _skip_value(text, i)
            elements.append((start, i))
        return n, elements
    if i < n and text[i] == "{":
        depth_end = i + 1
        while depth_end < n:
            depth_end = _skip_space(text, depth_end)
            if depth_end < n and text[depth_end] == "}":
                return depth_end + 1, []
            if depth_end < n and text[depth_end] == ",":
                depth_end += 1
                continue
            _, depth_end = _parse_key(text, depth_end)
            depth_end = _skip_space(text, depth_end)
            if depth_end < n and text[depth_end] == "=":
                depth_end, _ = _skip_value(text, _skip_space(text, depth_end + 1))
            else:
                return depth_end, []
        return n, []
    j = i
    while j < n and text[j] not in ",]}\n#":
        j += 1
    while j > i and text[j - 1] in " \t\r":
        j -= 1
    return j, []
