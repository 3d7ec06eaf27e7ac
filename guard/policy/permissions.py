"""Edit the ``[permissions]`` table of ``guard.toml`` without touching anything else.

The standard library reads TOML but does not write it, and re-emitting a user's file would
drop their comments and layout. So this module finds the text spans of the
``[permissions]`` arrays (``allow``, ``deny``, ``ask``) with a small structural scanner
(strings, comments, arrays, inline tables) and splices elements in or out. Every edit is
checked by parsing the result: the new document must equal the old one except for exactly
the requested change, or nothing is written.

Forms it cannot edit in place (``permissions.allow = [...]`` dotted keys, an inline table)
raise ``ConfigError`` with a hint.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from guard.errors import ConfigError

KEYS = ("allow", "deny", "ask")


@attrs.frozen
class _Entry:
    section: tuple[str, ...]
    key: tuple[str, ...]
    line_start: int
    value_start: int
    value_end: int
    elements: tuple[tuple[int, int], ...]  # spans of array elements, when the value is an array


def read_permissions(text: str) -> dict[str, list[str]]:
    """``{"allow": [...], "deny": [...], "ask": [...]}`` from a guard.toml text."""
    table = _loads(text).get("permissions", {})
    out: dict[str, list[str]] = {}
    for key in KEYS:
        value = table.get(key, []) if isinstance(table, dict) else []
        out[key] = [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
    return out


def edit(
    text: str,
    add: Mapping[str, Sequence[str]] | None = None,
    remove: Mapping[str, Sequence[str]] | None = None,
    comments: Mapping[str, str] | None = None,
) -> str:
    """``text`` with rules added to / removed from ``[permissions]`` lists.

    ``add={"allow": ["Bash(git status:*)"]}`` appends what is not there yet;
    ``remove={"allow": [...]}`` drops every element equal to one given. ``comments`` maps a
    rule to a trailing comment written next to it where the array spans several lines.
    """
    adding: dict[str, list[str]] = {k: list(v) for k, v in (add or {}).items() if v}
    removing: dict[str, list[str]] = {k: list(v) for k, v in (remove or {}).items() if v}
    comments = comments or {}
    for key in (*adding, *removing):
        if key not in KEYS:
            raise ConfigError(f"permissions has no list {key!r}; expected one of {', '.join(KEYS)}")
    before = _loads(text)
    expected = _expected(before, adding, removing)
    if expected == before:
        return text
    entries = _scan(text)
    if any(e.section == () and e.key[:1] == ("permissions",) for e in entries):
        raise ConfigError(
            "guard.toml sets permissions with dotted keys or an inline table; "
            "move them into a [permissions] table so guard rules can edit it"
        )
    new = text
    # Splice from the end of the file backwards so earlier offsets stay valid.
    for key in sorted(set(adding) | set(removing), key=lambda k: -_position(entries, k)):
        entry = next((e for e in entries if e.section == ("permissions",) and e.key == (key,)), None)
        if entry is None:
            if key in adding:
                new = _insert_key(new, entries, key, adding[key], comments)
            continue
        values = before.get("permissions", {}).get(key)
        if not isinstance(values, list) or len(values) != len(entry.elements):
            raise ConfigError(f"[permissions] {key} is not an array of rule strings; fix it by hand")
        wanted_add = [r for r in adding.get(key, []) if r not in values]
        new = _edit_array(new, entry, values, wanted_add, set(removing.get(key, [])), comments)
    after = _loads(new, what="the edited guard.toml")
    if after != expected:
        raise ConfigError("could not edit [permissions] in guard.toml safely; nothing was changed")
    return new


def write_text(path: Path, text: str) -> None:
    """Replace ``path`` atomically, keeping its mode (0600 for a new file)."""
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o600
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


# -- what the result must be ----------------------------------------------------------------
def _loads(text: str, what: str = "guard.toml") -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{what} is not valid TOML ({exc}); fix it before editing rules") from None


def _expected(before: dict[str, Any], add: Mapping[str, list[str]], remove: Mapping[str, list[str]]) -> dict[str, Any]:
    table = before.get("permissions", {})
    if not isinstance(table, dict):
        raise ConfigError("guard.toml: 'permissions' must be a table")
    table = dict(table)
    for key in set(add) | set(remove):
        current = table.get(key, [])
        if not isinstance(current, list):
            raise ConfigError(f"[permissions] {key} must be an array of rule strings")
        out = [v for v in current if v not in set(remove.get(key, []))]
        out += [r for r in dict.fromkeys(add.get(key, [])) if r not in out]
        if out or key in table:
            table[key] = out
    after = dict(before)
    if table or "permissions" in before:
        after["permissions"] = table
    return after


# -- splicing -------------------------------------------------------------------------------------
def _position(entries: Sequence[_Entry], key: str) -> int:
    for e in entries:
        if e.section == ("permissions",) and e.key == (key,):
            return e.value_start
    return -1  # a key that is not there yet is inserted right after the header: edit it last


def _toml_string(value: str) -> str:
    # JSON string escapes are valid TOML basic-string escapes; TOML also forbids a raw DEL.
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _element_line(value: str, indent: str, comments: Mapping[str, str]) -> str:
    note = comments.get(value)
    return f"{indent}{_toml_string(value)},{f'  # {note}' if note else ''}\n"


def _insert_key(
    text: str, entries: Sequence[_Entry], key: str, values: Sequence[str], comments: Mapping[str, str]
) -> str:
    block = f"{key} = [\n" + "".join(_element_line(v, "    ", comments) for v in dict.fromkeys(values)) + "]\n"
    header = _header_end(text, entries)
    if header is None:
        sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        return f"{text}{sep}[permissions]\n{block}"
    return text[:header] + block + text[header:]


def _header_end(text: str, entries: Sequence[_Entry]) -> int | None:
    """Offset just after the ``[permissions]`` header line, if the file has one."""
    for start, name in _headers(text):
        if name == ("permissions",):
            nl = text.find("\n", start)
            return len(text) if nl < 0 else nl + 1
    return None


def _edit_array(
    text: str,
    entry: _Entry,
    values: Sequence[Any],
    add: Sequence[str],
    remove: set[str],
    comments: Mapping[str, str],
) -> str:
    start, end = entry.value_start, entry.value_end
    body = text[start:end]
    multiline = "\n" in body
    elements = list(zip(entry.elements, values, strict=True))
    # Additions first (they sit at the end of the array), then removals from the back.
    if add:
        close = end - 1  # the ']'
        if multiline:
            line_start = text.rfind("\n", start, close) + 1
            if text[line_start:close].strip():
                text = text[:close] + "\n" + text[close:]
                line_start, close = close + 1, close + 1
            last = elements[-1][0] if elements else None
            indent = _indent_of(text, last[0]) if last else "    "
            insert = "".join(_element_line(v, indent, comments) for v in add)
            text = text[:line_start] + insert + text[line_start:]
            if last is not None and not _comma_after(text, last[1], line_start):
                text = text[: last[1]] + "," + text[last[1] :]
        else:
            items = ", ".join(_toml_string(v) for v in add)
            if elements:
                last_end = elements[-1][0][1]
                text = text[:last_end] + ", " + items + text[last_end:]
            else:
                text = text[: start + 1] + items + text[start + 1 :]
    for (s, e), value in reversed(elements):
        if value in remove:
            text = _remove_element(text, s, e)
    return text


def _indent_of(text: str, pos: int) -> str:
    line_start = text.rfind("\n", 0, pos) + 1
    prefix = text[line_start:pos]
    return prefix if not prefix.strip() else "    "


def _comma_after(text: str, pos: int, limit: int) -> bool:
    i = _skip_space_and_comments(text, pos, limit)
    return i < limit and text[i] == ","


def _remove_element(text: str, s: int, e: int) -> str:
    line_start = text.rfind("\n", 0, s) + 1
    line_end = text.find("\n", e)
    line_end = len(text) if line_end < 0 else line_end
    before, after = text[line_start:s], text[e:line_end]
    rest = after.lstrip(" \t")
    rest = rest[1:].lstrip(" \t") if rest.startswith(",") else rest
    if not before.strip() and (not rest or rest.startswith("#")):
        return text[:line_start] + text[line_end + 1 :]  # the element's own line, comment included
    # Inline: drop the element with the comma after it, or the comma before it if it was last.
    j = e
    while j < len(text) and text[j] in " \t":
        j += 1
    if j < len(text) and text[j] == ",":
        j += 1
        while j < len(text) and text[j] in " \t":
            j += 1
        return text[:s] + text[j:]
    i = s
    while i > 0 and text[i - 1] in " \t":
        i -= 1
    if i > 0 and text[i - 1] == ",":
        i -= 1
    return text[:i] + text[e:]


# -- a structural scanner: tables, keys and value spans ---------------------------------------
def _headers(text: str) -> list[tuple[int, tuple[str, ...]]]:
    return [(e.line_start, e.section) for e in _scan(text, headers=True)]


def _scan(text: str, headers: bool = False) -> list[_Entry]:
    """Key/value entries (or, with ``headers``, table headers) at the document's top level."""
    out: list[_Entry] = []
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
            if headers and not double:
                out.append(_Entry(section, (), line_start, line_start, line_start, ()))
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
        if not headers:
            out.append(_Entry(section, tuple(names), line_start, value_start, i, tuple(elements)))
        i = _line_end(text, i)
    return out


def _line_end(text: str, i: int) -> int:
    nl = text.find("\n", i)
    return len(text) if nl < 0 else nl + 1


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


def _skip_space_and_comments(text: str, i: int, limit: int | None = None) -> int:
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
            i = _skip_space_and_comments(text, i)
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
