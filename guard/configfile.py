"""The workspace's ``guard.toml`` read so that its deny and ask rules are never silently dropped.

Each time the file parses, guard keeps a private copy of it (``.guard-config-good.toml``, 0600)
in the workspace. When it stops parsing (a typo, an editor that died mid-save, bytes that are
not UTF-8), guard goes on with that last good copy, minus its ``allow`` rules, and the
configuration carries the parse error as ``path:line:col: message``. ``Guard`` then confirms
every call the static layer does not rate safe (G005), naming the file and line, until the
file parses again; a hook with nobody to ask denies them.

``check(path)`` is ``guard config --check``: parse errors, unknown keys, bad values and weights
that do not sum to 1.0, each with its line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from guard.atomic import write_atomic

GOOD_COPY = ".guard-config-good.toml"
_AT = re.compile(r"\s*\(at (?:line (\d+), column (\d+)|end of document)\)\s*$")


@attrs.frozen
class Finding:
    """One thing ``guard config --check`` (or loading) says about a file."""

    path: str
    line: int
    col: int
    level: str  # "error" | "warning"
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.level}: {self.message}"


def parse(path: Path) -> tuple[dict[str, Any], Finding | None, bytes]:
    """The TOML document, or ``{}`` and the parse error with its line and column; and the bytes read."""
    import tomllib

    where = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return {}, Finding(where, 1, 1, "error", f"cannot read ({exc.strerror or exc})"), b""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        return {}, Finding(where, line, col, "error", f"not UTF-8 ({exc.reason})"), data
    try:
        return tomllib.loads(text), None, data
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        m = _AT.search(message)
        line, col = (int(m.group(1)), int(m.group(2))) if m and m.group(1) else (text.count("\n") + 1, 1)
        return {}, Finding(where, line, col, "error", _AT.sub("", message) or "not TOML"), data
    except (RecursionError, ValueError) as exc:  # nesting, or a number too long to convert
        return {}, Finding(where, 1, 1, "error", f"not usable TOML ({type(exc).__name__})"), data


def load(path: Path) -> tuple[dict[str, Any], Finding | None, str | None]:
    """``(document, parse error, note)``: the file, or the last good copy without its allow rules."""
    raw, error, data = parse(path)
    good = path.with_name(GOOD_COPY)
    if error is None:
        _keep(good, data)
        return raw, None, None
    if not good.is_file():
        return {}, error, "no good copy was kept"
    kept, kept_error, _ = parse(good)
    if kept_error is not None:
        return {}, error, f"the kept copy {good} does not parse either"
    perms = kept.get("permissions")
    if isinstance(perms, Mapping):  # a broken file must not keep what it allowed, only what it forbade
        kept["permissions"] = {k: v for k, v in perms.items() if k != "allow"}
    return kept, error, f"using the deny and ask rules and settings of its last good copy ({good})"


def _keep(good: Path, data: bytes) -> None:
    """Save ``data`` as the last good copy when it changed; a workspace that cannot take it keeps the old one."""
    try:
        if good.is_file() and good.read_bytes() == data:
            return
        write_atomic(good, data, mode=0o600, keep_mode=False, fsync=False)
    except OSError:
        pass


def line_of(text: str, dotted: str) -> int:
    """The line that sets ``dotted`` (``weights.memory``) under its TOML table, or 1."""
    table = ""
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("["):
            table = line.strip("[]").strip().strip('"')
            if table == dotted:
                return n
            continue
        key = line.split("=", 1)[0].strip().strip('"') if "=" in line else None
        if key and (f"{table}.{key}" if table else key) == dotted:
            return n
    return 1


def check(path: Path) -> list[Finding]:
    """Everything wrong with a configuration file, errors first in file order, then warnings."""
    from guard.config import _BY_KEY, _LIST_SECTIONS, _flatten

    raw, error, data = parse(path)
    if error is not None:
        return [error]
    text = data.decode("utf-8")
    where = str(path)
    out: list[Finding] = []
    flat = _flatten(raw)
    for key, value in flat.items():
        section = key.split(".")[0]
        if section in _LIST_SECTIONS:
            continue
        setting = _BY_KEY.get(key)
        if setting is None:
            out.append(Finding(where, line_of(text, key), 1, "warning", f"unknown key {key!r} is ignored"))
            continue
        try:
            setting.parse(value)
        except (ValueError, TypeError) as exc:
            out.append(Finding(where, line_of(text, key), 1, "error", f"{key}: bad value {value!r} ({exc})"))
    out.extend(_check_permissions(raw, text, where))
    out.extend(_check_sums(flat, text, where))
    return sorted(out, key=lambda f: (f.level != "error", f.line))


def _check_permissions(raw: Mapping[str, Any], text: str, where: str) -> list[Finding]:
    from guard.static.rules.userrules import ACTIONS
    from guard.static.rules.userrules import parse as parse_rule

    perms = raw.get("permissions", {})
    if not isinstance(perms, Mapping):
        return [Finding(where, line_of(text, "permissions"), 1, "error", "[permissions] must be a table")]
    out: list[Finding] = []
    for action, entries in perms.items():
        line = line_of(text, f"permissions.{action}")
        if action not in ACTIONS:
            out.append(Finding(where, line, 1, "warning", f"permissions.{action} is not allow, ask or deny"))
            continue
        items = [entries] if isinstance(entries, str) else entries
        if not isinstance(items, list):
            out.append(Finding(where, line, 1, "error", f"permissions.{action} must be a list of rules"))
            continue
        for item in items:
            if not isinstance(item, str) or parse_rule(item, action, where, None, "~") is None:
                message = f"permissions.{action}: {item!r} is not a rule like Bash(npm test:*) or Read(./secrets/**)"
                out.append(Finding(where, line, 1, "error", message))
    return out


def _check_sums(flat: Mapping[str, Any], text: str, where: str) -> list[Finding]:
    """The loader's own rules for weights and thresholds (``config.weights_problem`` and
    ``thresholds_problem``), on the file's values with defaults for the rest; a value that
    does not parse is reported as a bad value already."""
    from guard.config import _BY_KEY, THRESHOLD_KEYS, WEIGHT_KEYS, thresholds_problem, weights_problem

    def parsed(keys: tuple[str, ...]) -> dict[str, Any] | None:
        try:
            return {k: _BY_KEY[k].parse(flat.get(k, _BY_KEY[k].default)) for k in keys}
        except (ValueError, TypeError):
            return None

    out: list[Finding] = []
    if any(k in flat for k in WEIGHT_KEYS):
        weights = parsed(WEIGHT_KEYS)
        if weights is None:
            return out
        if (problem := weights_problem(weights)) is not None:
            message = f"the {problem}: guard resets all four to the defaults"
            out.append(Finding(where, line_of(text, "weights"), 1, "warning", message))
    thresholds = parsed(THRESHOLD_KEYS)
    if thresholds is not None and (problem := thresholds_problem(thresholds)) is not None:
        message = f"{problem}: both fall back to the defaults"
        out.append(Finding(where, line_of(text, "thresholds"), 1, "error", message))
    return out
