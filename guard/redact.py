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
import re
from collections.abc import Mapping
from typing import Any

from guard.digest import blake2b
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
    _key_info.cache_clear()
    return True


def placeholder(kind: str, value: str) -> str:
    """``[REDACTED:kind:hash]``, the same for the same value under the same key."""
    digest = blake2b(value.encode("utf-8", "surrogatepass"), key=_key[0][:64], digest_size=4)
    return f"{_OPEN}{kind}:{digest.hexdigest()}]"


def _inside_placeholder(text: str, pos: int) -> bool:
    start = text.rfind(_OPEN, 0, pos + 1)
    return start >= 0 and text.find("]", start) >= pos


_RESCAN = 256


def _apply(shape: Shape, text: str, depth: int = 0) -> str:
    """``text`` with every match of ``shape`` masked.

    A match whose name is no secret may hold one in its value (``Error: token: x``,
    ``--from-literal=password=x``, ``'command': '… "password":"x" …'``): the search goes on
    from the value's start when the value is short, and a long value is read again on its own,
    at most twice deep; so each character is read a bounded number of times.
    """
    pattern, pick = shape.pattern, shape.pick
    out: list[str] = []
    last = pos = 0
    while True:
        m = pattern.search(text, pos)
        if m is None:
            break
        groups = pick(m) if pick is not None else shape.groups
        masked = _masked_match(shape, m, groups)
        if masked is None and pick is not None:
            value_at = max((m.start(g) for g in shape.groups if m.group(g)), default=-1)  # the value's
            if value_at >= 0 and m.end() - value_at <= _RESCAN:
                pos = max(value_at, m.start() + 1)
                continue
            if depth < 2:
                masked = _masked_inner(shape, m, depth)
        if masked is not None:
            out += [text[last : m.start()], masked]
            last = m.end()
        pos = max(m.end(), m.start() + 1)
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _masked_match(shape: Shape, m: re.Match[str], groups: tuple[int, ...]) -> str | None:
    whole, base = m.group(0), m.start()
    out, at = [], 0
    for g in groups:
        value = m.group(g)
        if not value or _OPEN in value or _inside_placeholder(m.string, m.start(g)):
            continue
        s, e = m.start(g) - base, m.end(g) - base
        out += [whole[at:s], placeholder(shape.kind, value)]
        at = e
    if not out:
        return None
    out.append(whole[at:])
    return "".join(out)


def _masked_inner(shape: Shape, m: re.Match[str], depth: int) -> str | None:
    whole, base = m.group(0), m.start()
    out, at = [], 0
    for g in shape.groups:
        value = m.group(g)
        if value and any(c in value for c in "=:\"'"):
            inner = _apply(shape, value, depth + 1)
            if inner != value:
                s, e = m.start(g) - base, m.end(g) - base
                out += [whole[at:s], inner]
                at = e
    if not out:
        return None
    out.append(whole[at:])
    return "".join(out)


def redact_text(text: str) -> str:
    """``redact_text("curl -u bob:hunter2 x")`` → ``"curl -u bob:[REDACTED:user-password:…] x"``."""
    if len(text) <= _SHORT:
        return _redact_short(text)
    return _redact(text)


def _triggers() -> tuple[tuple[str, ...], tuple[str, ...], dict[str, tuple[int, ...]]]:
    """The shortest triggers (one of them is in any text a shape may match), without and with
    the ones only long texts need, and which shapes each of them may wake."""
    every = {t for shape in SHAPES for t in shape.triggers}
    # (by each trigger's own substrings, not every pair: this runs at every hook's import)
    roots = sorted(t for t in every if not (_substrings(t) - {t}) & every)
    joined = ["\0".join(shape.triggers) for shape in SHAPES]  # (no trigger holds a NUL)
    wakes = {r: tuple(i for i, text in enumerate(joined) if r in text) for r in roots}
    # "." wakes only the Discord shape, whose tokens are 59+ characters: a shorter text skips it.
    return tuple(r for r in roots if r != "."), tuple(roots), wakes


def _substrings(text: str) -> set[str]:
    return {text[a:b] for a in range(len(text)) for b in range(a + 1, len(text) + 1)}


_ROOTS_SHORT, _ROOTS, _WAKES = _triggers()
_LONG = 59


def _trie(words: tuple[str, ...]) -> str:
    """One regular expression that matches any of ``words`` (none of them holds another), as
    a trie: at each position only the branch of its first character is tried, so one scan in C
    costs a few times less than one ``in`` per word (71 of them)."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict[str, Any]) -> str:
        if "" in node:  # a word ends here; no word goes on (none holds another)
            return ""
        alts = [re.escape(ch) + build(sub) for ch, sub in sorted(node.items())]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return build(trie)


@functools.cache
def _any(long: bool) -> re.Pattern[str]:
    return re.compile(_trie(_ROOTS if long else _ROOTS_SHORT))


# Building and compiling the trie costs a millisecond or two, about a hundred scans' worth: a
# process (a hook's, deciding once) scans trigger by trigger for its first texts (those the
# short-text cache did not answer) and builds the trie only after this many.
_WARM = 100
_scans = [0]
_HITS = 64  # after this many occurrences, the remaining roots are looked for one by one


def _present(low: str, long: bool) -> list[str]:
    """The roots that occur in ``low``, the same set as ``[r for r in roots if r in low]``."""
    if _scans[0] < _WARM:
        _scans[0] += 1
        return [r for r in (_ROOTS if long else _ROOTS_SHORT) if r in low]
    return _present_by_trie(low, long)


def _present_by_trie(low: str, long: bool) -> list[str]:
    """:func:`_present` by the trie: each occurrence found in turn (searching on from the next
    character, so overlapping ones count)."""
    search = _any(long).search
    found: list[str] = []
    m = search(low)
    hits = 0
    while m is not None:
        root = m.group()
        if root not in found:
            found.append(root)
        hits += 1
        if hits >= _HITS:  # a text full of roots: one scan per remaining root from here on
            rest = low[m.start() + 1 :]
            found += [r for r in (_ROOTS if long else _ROOTS_SHORT) if r not in found and r in rest]
            break
        m = search(low, m.start() + 1)
    return found


def _long_token(text: str) -> bool:
    """Could ``text`` hold a Discord token (the one shape "." wakes)? It takes 59+ characters
    without a space and two dots: most long texts with a dot (a file name, "3.8") hold none."""
    return len(text) >= _LONG and text.count(".") >= 2 and any(len(word) >= _LONG for word in text.split())


def _redact(text: str) -> str:
    if len(text) > 1_000_000:
        text = text[:1_000_000] + "…[truncated]"
    if not text.isascii():  # case folding makes some non-ASCII letters match ASCII ones: try all
        for shape in SHAPES:
            text = _apply(shape, text)
        return text
    low = text.lower()
    woken: set[int] = set()
    for root in _present(low, _long_token(text)):
        woken.update(_WAKES[root])
    if not woken:
        return text
    for i in sorted(woken):
        shape = SHAPES[i]
        for trigger in shape.triggers:
            if trigger in low:
                text = _apply(shape, text)
                break
    return text


# The same short strings (rule messages, notes, tool names, common commands) come back on
# every decision; redaction is a pure function (for one key), so their answer is remembered.
_SHORT = 200
_redact_short = functools.lru_cache(maxsize=4096)(_redact)


def redact(value: Any, _key: str | None = None, _depth: int = 0) -> Any:
    """A copy of ``value`` (params, nested dicts/lists) with secrets masked, keys included."""
    if _depth > 32:
        return "[nested too deep]"
    if _key is not None and value not in (None, "", [], {}) and _key_info(_key)[1]:
        return _masked(value, _key, _depth)
    # Cheap concrete checks first: a decision line is mostly small dicts, strings and numbers.
    if isinstance(value, str):
        return redact_text(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (dict, Mapping)):
        out = {}
        for k, v in value.items():
            name, secret = _key_info(k if isinstance(k, str) else str(k))
            if secret and v not in (None, "", [], {}):
                out[name] = _masked(v, name, _depth + 1)
            elif type(v) is str:
                out[name] = redact_text(v)
            elif v is None or type(v) in (int, float, bool):
                out[name] = v
            else:
                out[name] = redact(v, None, _depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [redact(v, None, _depth + 1) for v in value]
    if isinstance(value, bytes):
        return redact_text(value.decode("utf-8", "replace"))
    return redact_text(repr(value))


def _masked(value: Any, key: str, depth: int) -> Any:
    """The value under a secret-named key: a scalar masked whole, each item of a list, a dict walked."""
    if isinstance(value, (str, int, float, bytes)) and not isinstance(value, bool):
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        return text if text.startswith(_OPEN) else placeholder("field", text)
    if isinstance(value, (list, tuple)):  # ("user", "pw") under "auth"
        return [_masked(v, key, depth + 1) if depth < 32 else "[nested too deep]" for v in value]
    return redact(value, None, depth)


@functools.lru_cache(maxsize=4096)
def _key_info(key: str) -> tuple[str, bool]:
    """A dict key as written (itself redacted) and whether it names a secret."""
    return redact_text(key), len(key) <= 80 and name_strength(key) == 2
