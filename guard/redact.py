"""Redact secrets from parameters before anything is written to disk.

Two passes: keys that name a secret (``password``, ``api_key``, ``token``...) have their
value replaced wholesale; every string is scanned for known secret shapes (AWS keys,
GitHub/Slack/OpenAI tokens, bearer tokens, passwords in URLs, private-key blocks,
``--password=…`` flags, ``KEY=value`` assignments of secret-named variables).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from guard import lazyre

MASK = "[REDACTED]"

_SECRET_KEY = lazyre.compile(
    r"(?i)(pass(word|wd|phrase)?|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|"
    r"client[_-]?secret|auth(orization)?|credentials?|cookie|session[_-]?key|signature)$"
)

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (lazyre.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.S), MASK),
    (lazyre.compile(r"\b(AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"), MASK),
    (lazyre.compile(r"\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})\b"), MASK),
    (lazyre.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}\b"), MASK),
    (lazyre.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}\b"), MASK),
    (lazyre.compile(r"\bsk-(ant-|proj-)?[A-Za-z0-9_\-]{20,}\b"), MASK),
    (lazyre.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"), MASK),
    (lazyre.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\b"), MASK),
    (lazyre.compile(r"(?i)\b(bearer|token|basic)\s+[A-Za-z0-9._~+/\-]{12,}=*"), r"\1 " + MASK),
    # The scheme is bounded: unbounded, a long run like "a.a.a…" made every word start
    # rescan the run (quadratic; 40 kB took 5 s). A run of 64+ scheme characters still
    # counts as a scheme, so nothing the unbounded pattern redacted is missed.
    (
        lazyre.compile(r"(?i)((?:\b[a-z][a-z0-9+.\-]{0,63}|[a-z0-9+.\-]{64})://[^\s:/@]+:)[^\s@/]+(@)"),
        r"\1" + MASK + r"\2",
    ),
    (
        lazyre.compile(
            r"(?i)(--?(?:password|passwd|pass|token|secret|api[-_]?key|access[-_]?key|auth)(?:=|\s+))"
            r"(\"[^\"]*\"|'[^']*'|\S+)"
        ),
        r"\1" + MASK,
    ),
    (
        lazyre.compile(
            # Look for the secret word ahead, then take the whole name atomically: the
            # backtracking form was quadratic on a long name ("PASSWORDPASSWORD…").
            r"(?i)\b(?=[A-Z0-9_]*?(?:PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY))([A-Z0-9_]++)"
            r"(\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|[^\s\"'$;&|]+)"
        ),
        r"\1\2" + MASK,
    ),
    (lazyre.compile(r"(?i)(-H\s*['\"]?(?:authorization|x-api-key|cookie):\s*)[^'\"\n]+"), r"\1" + MASK),
    # "password": "…" in JSON text or 'password': '…' in a Python repr: the signature of params
    # that have no command, a curl -d body, an exception message quoting its arguments.
    (
        lazyre.compile(
            r"""(?i)((["'])[^"'\\\n]{0,64}?(?:pass(?:word|wd|phrase)?|secret|token|api[_-]?key|access[_-]?key|"""
            r"""private[_-]?key|auth(?:orization)?|credentials?|cookie|session[_-]?key|signature)\2\s*:\s*)"""
            r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^\s,}\]]+)"""
        ),
        r"\1\2" + MASK + r"\2",
    ),
)


# Every pattern above needs one of these substrings (case-insensitively) to match. Most
# strings (notes, reasons, plain commands) contain none, and looking for them costs a
# fraction of thirteen ``sub`` calls: on the decision path this was most of the cost of
# writing the log line. Non-ASCII text always takes the full path (the patterns' case
# folding treats some non-ASCII letters as ASCII ones).
_TRIGGERS = (
    "-----begin",
    *("akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa"),
    *("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "sk-", "aiza", "eyj"),
    *("bearer", "token", "basic", "://", "pass", "secret", "auth", "cookie", "credential", "signature"),
    *("session_key", "session-key", "sessionkey"),
    *("apikey", "api_key", "api-key", "accesskey", "access_key", "access-key", "privatekey", "private_key"),
)


def _may_hold_secret(text: str) -> bool:
    if not text.isascii():
        return True
    low = text.lower()
    for trigger in _TRIGGERS:  # noqa: SIM110 (a plain loop is a third faster than any() here)
        if trigger in low:
            return True
    return False


def redact_text(text: str) -> str:
    """``redact_text("curl -u bob:hunter2@x")`` hides what looks like a secret."""
    if len(text) <= _SHORT:
        return _redact_short(text)
    return _redact(text)


def _redact(text: str) -> str:
    if len(text) > 1_000_000:
        text = text[:1_000_000] + "…[truncated]"
    if not _may_hold_secret(text):
        return text
    for pattern, repl in _PATTERNS:
        text = pattern.sub(repl, text)
    return text


# The same short strings (rule messages, notes, tool names, common commands) come back on
# every decision; redaction is a pure function, so their answer is remembered.
_SHORT = 200
_redact_short = functools.lru_cache(maxsize=4096)(_redact)


def redact(value: Any, _key: str | None = None, _depth: int = 0) -> Any:
    """A copy of ``value`` (params, nested dicts/lists) with secrets masked."""
    if _depth > 32:
        return "[nested too deep]"
    if _key is not None and _secret_key(_key) and value not in (None, "", [], {}):
        if isinstance(value, (str, int, float, bytes)):
            return MASK
    # Cheap concrete checks first: a decision line is mostly small dicts, strings and numbers.
    if isinstance(value, str):
        return redact_text(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (dict, Mapping)):
        return {str(k): redact(v, str(k), _depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v, None, _depth + 1) for v in value]
    if isinstance(value, bytes):
        return redact_text(value.decode("utf-8", "replace"))
    return redact_text(repr(value))


@functools.lru_cache(maxsize=4096)
def _secret_key(key: str) -> bool:
    return _SECRET_KEY.search(key) is not None
