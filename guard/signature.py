"""The normalised text of a call: what "the same operation" means across history.

Used as the key for per-pattern history, the loop detector and the memory store. Pure and
cheap: whitespace folded, NFKC, volatile values kept (``rm a`` and ``rm b`` differ).
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from guard.toolnames import canonical_tool

_MAX = 512
_COMMAND_KEYS = ("command", "cmd", "script")
_PATH_KEYS = ("file_path", "path", "file", "filePath", "absolute_path", "notebook_path", "url", "pattern")


def signature(tool: str, params: Mapping[str, Any]) -> str:
    """``signature("Bash", {"command": "ls   -la"}) == "bash:ls -la"``.

    Remembered by its exact inputs: the tool and the text the signature is made of (a
    command string, the common case, found with one look), or the items of a dict of plain
    strings with no such text (a JSON dump each time otherwise).
    """
    text = params.get("command")
    if type(text) is not str:
        found = _text_of(params)
        if found is None:
            return _made(tool, _dumped(params))
        key: tuple[str, Any] = (tool, found)
    else:
        key = (tool, text)
    sig = _SIGNATURES.get(key)
    if sig is None:
        found = key[1]
        sig = _made(tool, found if type(found) is str else _dumped(dict(found)))
        if len(_SIGNATURES) >= 4096:
            _SIGNATURES.clear()
        _SIGNATURES[key] = sig
    return sig


_SIGNATURES: dict[tuple[str, Any], str] = {}


def _text_of(params: Mapping[str, Any]) -> str | tuple[tuple[str, str], ...] | None:
    """What the signature is made of: a command, else a path, else (a dict of plain strings)
    its items; None when only a JSON dump of ``params`` says."""
    if type(params) is not dict or not params.keys().isdisjoint(_COMMAND_KEYS):  # (most calls have none)
        for key in _COMMAND_KEYS:
            value = params.get(key)
            if isinstance(value, str):
                return value
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                return " ".join(value)
    for key in _PATH_KEYS:
        value = params.get(key)
        if isinstance(value, str):
            return value
    if type(params) is dict and all(type(k) is str and type(v) is str for k, v in params.items()):
        return tuple(params.items())
    return None


def _dumped(params: Mapping[str, Any]) -> str:
    try:
        return json.dumps(params, sort_keys=True, default=str, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):  # RecursionError: params nested thousands deep
        return repr(sorted(params))


def _made(tool: str, text: str) -> str:
    text = " ".join(unicodedata.normalize("NFKC", text).split())
    return f"{canonical_tool(tool)}:{text[:_MAX]}"


_SUBCOMMAND = re.compile(r"[a-z][a-z0-9_-]*")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


@functools.lru_cache(maxsize=4096)
def family_of(sig: str) -> str:
    """The operation's family: the program and its subcommand, for evidence one level up.

    ``bash:pip install requests`` → ``bash:pip install``; ``bash:git push origin main`` →
    ``bash:git push``; ``bash:curl https://api.x/v1`` → ``bash:curl`` (a target is not a
    subcommand). Leading ``VAR=value`` words and ``python -m`` are skipped and a program's
    directory dropped. A tool without a command (``read:/src/a.py``) has the tool as family.
    """
    kind, _, text = sig.partition(":")
    if kind != "bash":
        return f"{kind}:"
    words = text.split()
    while words and _ASSIGNMENT.match(words[0]):
        words = words[1:]
    if not words:
        return f"{kind}:"
    prog = words[0].rsplit("/", 1)[-1]
    rest = words[1:]
    if prog.startswith("python") and len(rest) >= 2 and rest[0] == "-m":
        prog, rest = rest[1], rest[2:]
    if rest and _SUBCOMMAND.fullmatch(rest[0]):
        return f"{kind}:{prog} {rest[0]}"
    return f"{kind}:{prog}"
