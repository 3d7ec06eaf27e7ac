"""Redact secrets from what guard writes: every log line, state file, journal and memory row.

Two passes over a value (params, nested dicts/lists, free text such as an error message or
the body a Write tool writes): a key that names a secret (``password``, ``api_key``,
``Authorization``...) has its value masked wholesale, and every string, keys included, is
scanned for the shapes in ``guard/secretshapes.py`` (well-known token formats; secrets by
their place: ``--password X``, ``DB_PASSWORD=x``, ``curl -u user:pw``, ``mysql -ppw``...).

A masked value becomes a stable placeholder, ``[REDACTED:github:1a2b3c4d]``: the shape's
kind and a short keyed hash of the value, so the same secret always reads the same (memory
similarity and loop detection still see one call) and a placeholder cannot be checked
against a guessed password without the workspace's key (``use_key``; a built-in key until a
``Guard`` sets its workspace's). Redacting twice changes nothing.

Only what is written is redacted: the decision itself reads the real call.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from typing import Any

from guard.secretshapes import SHAPES, Shape, name_strength

MASK = "[REDACTED"  # every placeholder starts with this
_OPEN = MASK + ":"
_DEFAULT_KEY = b"guard-redact-v1"
_key = [_DEFAULT_KEY]


def use_key(key: bytes | None) -> bool:
    """Hash placeholders with ``key`` (None: the built-in one); True when that changed them."""
    key = key or _DEFAULT_KEY
    if key == _key[0]:
        return False
    _key[0] = key
    _redact_short.cache_clear()
    return True


def placeholder(kind: str, value: str) -> str:
    """``[REDACTED:kind:hash]``, the same for the same value under the same key."""
    digest = hashlib.blake2b(value.encode("utf-8", "surrogatepass"), key=_key[0][:64], digest_size=4)
    return f"{_OPEN}{kind}:{digest.hexdigest()}]"


def _inside_placeholder(text: str, pos: int) -> bool:
    start = text.rfind(_OPEN, 0, pos + 1)
    return start >= 0 and text.find("]", start) >= pos


def _apply(shape: Shape, text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        groups = shape.pick(m) if shape.pick is not None else shape.groups
        whole, base = m.group(0), m.start()
        out, at = [], 0
        for g in groups:
            value = m.group(g)
            if not value or _OPEN in value or _inside_placeholder(m.string, m.start(g)):
                continue
            s, e = m.start(g) - base, m.end(g) - base
            out.append(whole[at:s])
            out.append(placeholder(shape.kind, value))
            at = e
        if not out:
            return whole
        out.append(whole[at:])
        return "".join(out)

    return shape.pattern.sub(repl, text)


def redact_text(text: str) -> str:
    """``redact_text("curl -u bob:hunter2 x")`` → ``"curl -u bob:[REDACTED:user-password:…] x"``."""
    if len(text) <= _SHORT:
        return _redact_short(text)
    return _redact(text)


def _redact(text: str) -> str:
    if len(text) > 1_000_000:
        text = text[:1_000_000] + "…[truncated]"
    # Non-ASCII text tries every shape: case folding makes some non-ASCII letters match ASCII ones.
    low = text.lower() if text.isascii() else None
    for shape in SHAPES:
        if low is not None:
            for trigger in shape.triggers:
                if trigger in low:
                    break
            else:
                continue
        text = _apply(shape, text)
    return text


# The same short strings (rule messages, notes, tool names, common commands) come back on
# every decision; redaction is a pure function (for one key), so their answer is remembered.
_SHORT = 200
_redact_short = functools.lru_cache(maxsize=4096)(_redact)


def redact(value: Any, _key: str | None = None, _depth: int = 0) -> Any:
    """A copy of ``value`` (params, nested dicts/lists) with secrets masked, keys included."""
    if _depth > 32:
        return "[nested too deep]"
    if _key is not None and value not in (None, "", [], {}) and _secret_key(_key):
        if isinstance(value, (str, int, float, bytes)) and not isinstance(value, bool):
            text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
            return text if text.startswith(_OPEN) else placeholder("field", text)
        if isinstance(value, (list, tuple)):  # ("user", "pw") under "auth"
            return [redact(v, _key, _depth + 1) for v in value]
    # Cheap concrete checks first: a decision line is mostly small dicts, strings and numbers.
    if isinstance(value, str):
        return redact_text(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (dict, Mapping)):
        return {redact_text(str(k)): redact(v, str(k), _depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v, None, _depth + 1) for v in value]
    if isinstance(value, bytes):
        return redact_text(value.decode("utf-8", "replace"))
    return redact_text(repr(value))


@functools.lru_cache(maxsize=4096)
def _secret_key(key: str) -> bool:
    return len(key) <= 80 and name_strength(key) == 2
