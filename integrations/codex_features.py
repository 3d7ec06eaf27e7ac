"""Turn on Codex's hooks feature in ``config.toml`` for ``guard install codex``, and back off again.

Codex runs no hook at all without ``[features] hooks = true`` (:mod:`guard.integrations.codex_trust`).
The file is the person's own, with comments, other tables and an order they chose, so it is edited
as text, one line at a time, never re-serialised:

- ``hooks = false`` (or any other value) under ``[features]`` becomes ``hooks = true``;
- a ``[features]`` table without ``hooks`` gets a ``hooks = true`` line right under its header;
- a file without ``[features]`` gets the table appended at its end (a missing file is created).

Each line guard writes ends in a marker comment that says what was there before
(``# guard install codex (was: false)``), so ``guard uninstall codex`` puts exactly that back and
touches nothing it did not write. Any other shape (``features.hooks = …`` as a dotted key, an inline
``features = {…}``, a file that does not parse) is left alone: the installer says what to add. The
result is parsed again before it is written: every table but ``features.hooks`` must read as before.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from guard.errors import GuardError
from guard.integrations.install import write_settings

MARK = "# guard install codex"
_HEADER = re.compile(r"^\s*\[\s*features\s*\]\s*(?:#.*)?$")
_ANY_HEADER = re.compile(r"^\s*\[")
_HOOKS_LINE = re.compile(r"^(\s*)(hooks|codex_hooks)(\s*=\s*)(.*?)\s*$")
_OURS = re.compile(rf"^(\s*)(hooks|codex_hooks)\s*=\s*true\s*{re.escape(MARK)} \(was: (.*)\)\s*$")
_OUR_HEADER = re.compile(rf"^\s*\[\s*features\s*\]\s*{re.escape(MARK)}\s*$")


class Unchanged(GuardError):
    """The file is not in a shape guard edits: it says why."""


def _parse(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise Unchanged(f"it does not parse as TOML ({exc})") from None


def _without_hooks(doc: dict[str, Any]) -> dict[str, Any]:
    out = dict(doc)
    features = dict(out.get("features") or {})
    features.pop("hooks", None)
    features.pop("codex_hooks", None)
    if features:
        out["features"] = features
    else:
        out.pop("features", None)
    return out


def enabled_text(text: str) -> str | None:
    """``text`` with the hooks feature on, or None when it already is. Raises :class:`Unchanged`.

    >>> enabled_text("model = 'o3'\\n")
    "model = 'o3'\\n\\n[features]  # guard install codex\\nhooks = true  # guard install codex (was: absent)\\n"
    """
    doc = _parse(text)
    features = doc.get("features")
    if isinstance(features, dict) and features.get("hooks", features.get("codex_hooks")) is True:
        return None
    nl = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines()
    headers = [i for i, line in enumerate(lines) if _HEADER.match(line)]
    if features is not None and len(headers) != 1:
        raise Unchanged("[features] is written as a dotted key or an inline table")
    if headers:
        start = headers[0]
        end = next((j for j in range(start + 1, len(lines)) if _ANY_HEADER.match(lines[j])), len(lines))
        found = [(j, m) for j in range(start + 1, end) if (m := _HOOKS_LINE.match(lines[j]))]
        if found:
            j, m = found[-1]
            lines[j] = f"{m.group(1)}{m.group(2)}{m.group(3)}true  {MARK} (was: {m.group(4)})"
        else:
            lines.insert(start + 1, f"hooks = true  {MARK} (was: absent)")
    else:
        if lines and lines[-1].strip():
            lines.append("")
        lines += [f"[features]  {MARK}", f"hooks = true  {MARK} (was: absent)"]
    new = nl.join(lines) + nl
    after = _parse(new)
    if (
        _without_hooks(after) != _without_hooks(doc)
        or after["features"].get("hooks", after["features"].get("codex_hooks")) is not True
    ):
        raise Unchanged("guard could not add the line without changing anything else")
    return new


def restored_text(text: str) -> str | None:
    """``text`` with the lines guard wrote put back as they were, or None when guard wrote none."""
    lines = text.splitlines()
    nl = "\r\n" if "\r\n" in text else "\n"
    out: list[str] = []
    changed = False
    for line in lines:
        m = _OURS.match(line)
        if m:
            changed = True
            if m.group(3) != "absent":
                out.append(f"{m.group(1)}{m.group(2)} = {m.group(3)}")
            continue
        if _OUR_HEADER.match(line):
            changed = True
            continue
        out.append(line)
    if not changed:
        return None
    while out and not out[-1].strip() and lines and lines[-1].strip():
        out.pop()  # the blank line guard put before the table it appended
    return nl.join(out) + nl if out else ""


def config_path(hooks_json: Path) -> Path:
    """Codex reads ``config.toml`` beside its ``hooks.json`` (``~/.codex``)."""
    return hooks_json.parent / "config.toml"


def enable(path: Path, *, dry_run: bool = False) -> bool:
    """Turn the feature on in ``path``; True when the file changed (or would). Raises :class:`Unchanged`."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise Unchanged(f"cannot read it ({exc})") from None
    new = enabled_text(text)
    if new is None:
        return False
    if not dry_run:
        _write(path, new)
    return True


def restore(path: Path, *, dry_run: bool = False) -> bool:
    """Put back what :func:`enable` replaced; True when the file changed (or would)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    new = restored_text(text)
    if new is None:
        return False
    if not dry_run:
        _write(path, new)
    return True


def _write(path: Path, text: str) -> None:
    write_settings(path, text, new_mode=0o600)
