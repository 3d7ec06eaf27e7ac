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
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from guard.atomic import write_atomic
from guard.errors import ConfigError
from guard.policy.tomlscan import Entry, headers, scan, skip_space_and_comments

KEYS = ("allow", "deny", "ask")


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
    entries = scan(text)
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
    """Replace ``path`` atomically and durably (a person's file), keeping its mode (0600 for a new file)."""
    write_atomic(path, text, mode=0o600, keep_mode=True, fsync=True)


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
def _position(entries: Sequence[Entry], key: str) -> int:
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
    text: str, entries: Sequence[Entry], key: str, values: Sequence[str], comments: Mapping[str, str]
) -> str:
    block = f"{key} = [\n" + "".join(_element_line(v, "    ", comments) for v in dict.fromkeys(values)) + "]\n"
    header = _header_end(text, entries)
    if header is None:
        sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        return f"{text}{sep}[permissions]\n{block}"
    return text[:header] + block + text[header:]


def _header_end(text: str, entries: Sequence[Entry]) -> int | None:
    """Offset just after the ``[permissions]`` header line, if the file has one."""
    for start, name in headers(text):
        if name == ("permissions",):
            nl = text.find("\n", start)
            return len(text) if nl < 0 else nl + 1
    return None


def _edit_array(
    text: str,
    entry: Entry,
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
    i = skip_space_and_comments(text, pos, limit)
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
