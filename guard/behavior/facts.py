"""What a call means for the session: the facts the behavior layer tracks.

The static layer is the real source (its verdict tags ``untrusted_input``, ``secret_read``,
``egress``, ``publish``, ``protected_path`` and ``data["lines_written"]``). So that the
session rules hold even with a static layer that knows less, a few canonical shapes are
recognised here too and added to its tags (never removed):

- a ``web_fetch`` call, or ``curl``/``wget`` fetching a URL, brings in untrusted content;
- reading ``~/.ssh``, ``~/.aws``, ``~/.gnupg``, ``.env``, ``.netrc``, credential files or key
  files (by the ``read`` tool or named in a shell command) reads a secret;
- ``curl -d/-F/-T/-X POST``, ``wget --post-*``, ``scp``/``rsync``/``nc``, ``git push``,
  ``npm publish``, ``twine upload``, ``docker push``, and unknown tools named like
  send/post/upload/publish/mail send data out (egress).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from guard import lazyre
from guard.model import Risk, ToolCall
from guard.redact import redact_text

UNTRUSTED = "untrusted_input"
SECRET = "secret_read"
EGRESS = "egress"
RISKY_PATH = "protected_path"
SUBAGENT = "subagent"
_EGRESS_TAGS = frozenset({"egress", "publish"})
_KEPT_TAGS = frozenset({UNTRUSTED, SECRET, RISKY_PATH})
_RELEVANT_TAGS = _KEPT_TAGS | _EGRESS_TAGS
_NONE: frozenset[str] = frozenset()
_UNTRUSTED_ONLY = frozenset({UNTRUSTED})
_SECRET_ONLY = frozenset({SECRET})
_EGRESS_ONLY = frozenset({EGRESS})
_SUBAGENT_ONLY = frozenset({SUBAGENT})

_END = r"""(?=$|[\s'"`;|&)<>])"""
_SECRET_SHAPES = (
    r"\.(?:ssh|aws|gnupg|kube|docker|azure|password-store)(?:/|{end})",
    r"\.config/(?:gcloud|gh)(?:/|{end})",
    r"\.env(?!\.(?:example|sample|template|dist)\b)(?:\.[\w.-]+)?{end}",
    r"\.(?:netrc|pypirc|npmrc|git-credentials|pgpass){end}",
    r"id_(?:rsa|dsa|ecdsa|ed25519){end}",
    r"[\w.-]*credentials(?:\.json|\.csv)?{end}",
    r"[\w.-]+\.(?:pem|p12|pfx|key){end}",
)
_SECRET_PATH = lazyre.compile(
    r"""(?i)(?:^|(?<=[\s/'"=:`(]))(?:""" + "|".join(x.format(end=_END) for x in _SECRET_SHAPES) + ")"
)
# Cheap first passes: the full patterns run only when one of their words occurs at all.
_SECRET_WORDS = lazyre.compile(
    r"\.(?:ssh|aws|gnupg|kube|docker|azure|password-store|config/g|env|netrc|pypirc|npmrc|git-credentials|pgpass)"
    r"|id_|credentials|\.(?:pem|p12|pfx|key)"
)
_NET_WORDS = lazyre.compile(r"curl|wget|scp|ftp|nc|socat|rsync|push|publish|upload|gh|aria2c|http")
_FETCH = lazyre.compile(r"(?:^|[\s;|&(`])(?:curl|wget|aria2c|http|https)\s[^|;&]*(?:https?|ftp)://", re.I)
_EGRESS_SHELL = lazyre.compile(
    r"""(?x)(?:^|[\s;|&(`])(?:
        curl\b[^|;&]*?\s(?:-d|--data[\w-]*|-F|--form[\w-]*|-T|--upload-file|-X\s*(?:POST|PUT|PATCH)|--request\s+(?:POST|PUT|PATCH))\b
      | wget\s[^|;&]*--post-(?:data|file)
      | (?:scp|sftp|ftp|nc|ncat|netcat|socat|rsync)\s
      | git\s+(?:-\S+(?:\s+[^-\s]\S*)?\s+)*push\b
      | (?:npm|pnpm|yarn|cargo|gem|poetry|flit|hatch)\s+publish\b
      | twine\s+upload\b
      | docker\s+push\b
      | gh\s+(?:gist\s+create|release\s+upload|issue\s+create|pr\s+create)\b
    )""",
    re.I,
)
_SEGMENT = lazyre.compile(r"[|;&\n]")
_MAX_SEGMENT = 2048
_MAX_SCAN = 64 * 1024
_EGRESS_TOOL = lazyre.compile(r"send|post|upload|publish|e?mail|message|webhook|tweet|share", re.I)
_SUBAGENT_KINDS = frozenset({"task", "agent", "spawn_agent", "subagent", "dispatch_agent", "delegate"})
_KNOWN = frozenset({"bash", "write", "edit", "read", "glob", "grep", "web_fetch"})
_PATH_KEYS = ("file_path", "path", "file", "filePath", "absolute_path", "notebook_path")
_CONTENT_KEYS = ("content", "contents", "text")
_NEW_KEYS = ("new_string", "new_str", "newString", "new_text")


class Probe(NamedTuple):
    """One call as the session sees it: its task id, risk, facts and write size."""

    task: str
    sig: str  # the raw signature: never stored as is (see ``display``)
    kind: str
    risk: int
    facts: frozenset[str]
    lines: int | None = None
    path: str | None = None
    agent: str = "default"

    @property
    def egress(self) -> bool:
        return EGRESS in self.facts


def task_id(sig: str) -> str:
    """A short, stable id for a normalised call (12 hex digits), safe to print and store."""
    return hashlib.blake2b(sig.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


_IDS: dict[str, str] = {}


def _task_id(sig: str) -> str:
    """``task_id`` with a small cache: sessions repeat calls."""
    tid = _IDS.get(sig)
    if tid is None:
        if len(_IDS) >= 4096:
            _IDS.clear()
        tid = _IDS[sig] = task_id(sig)
    return tid


def display(sig: str) -> str:
    """The signature as stored and shown: redacted, at most 120 characters."""
    text = redact_text(sig)
    return text if len(text) <= 120 else text[:119] + "…"


def probe_of(call: ToolCall, sig: str, tags: frozenset[str], risk: Risk, data: Mapping[str, Any] | None) -> Probe:
    """The probe for ``call`` given the earlier layers' tags, risk and data."""
    kind = call.kind
    facts = fallback_facts(call, kind)
    if tags and not tags.isdisjoint(_RELEVANT_TAGS):
        facts = facts | (tags & _KEPT_TAGS) | (_EGRESS_ONLY if not tags.isdisjoint(_EGRESS_TAGS) else _NONE)
    lines: Any = None
    path = None
    if kind == "write" or kind == "edit":
        lines = data.get("lines_written") if data else None
        if not isinstance(lines, int) or isinstance(lines, bool):
            lines = lines_of(call, kind)
        path = _first_str(call.params, _PATH_KEYS)
    elif data and "lines_written" in data:  # a shell write the static layer measured
        lines = data["lines_written"] if isinstance(data["lines_written"], int) else None
    return Probe(
        _task_id(sig),
        sig,
        kind,
        int(risk),
        facts,
        lines,
        _task_id(path) if path else None,
        call.agent_id or "default",
    )


def fallback_facts(call: ToolCall, kind: str) -> frozenset[str]:
    """The facts this module recognises in the call itself (see the module docstring)."""
    params = call.params
    if kind == "web_fetch":
        return _UNTRUSTED_ONLY
    if kind == "read" or kind == "grep":
        path = _first_str(params, _PATH_KEYS)
        return _SECRET_ONLY if path and secret_path(path) else _NONE
    if kind == "bash":
        command = params.get("command")
        if isinstance(command, list):
            command = " ".join(str(c) for c in command)
        if not isinstance(command, str):
            return _NONE
        if len(command) > _MAX_SCAN:
            return _UNTRUSTED_ONLY  # too large to read cheaply: treat what it brings in as untrusted
        facts = _NONE
        if _NET_WORDS.search(command):
            # Per pipeline segment, each capped: the patterns backtrack, and hostile input must
            # stay linear (``curl `` × 200,000 took minutes as one string).
            segments = [seg[:_MAX_SEGMENT] for seg in _SEGMENT.split(command) if _NET_WORDS.search(seg)]
            if any(_EGRESS_SHELL.search(seg) for seg in segments):
                facts = _EGRESS_ONLY
            elif any(_FETCH.search(seg) for seg in segments):
                facts = _UNTRUSTED_ONLY
        if secret_path(command):
            facts = facts | _SECRET_ONLY
        return facts
    if kind in _SUBAGENT_KINDS:
        return _SUBAGENT_ONLY
    if kind not in _KNOWN and _EGRESS_TOOL.search(kind):
        return _EGRESS_ONLY
    return _NONE


def secret_path(text: str) -> bool:
    """Does ``text`` name a secret file (``~/.ssh/…``, ``.env``, ``credentials``…)?"""
    return _SECRET_WORDS.search(text) is not None and _SECRET_PATH.search(text) is not None


def lines_of(call: ToolCall, kind: str) -> int | None:
    """Lines a write or edit puts into a file, from its parameters (None when unknown)."""
    params = call.params
    if kind == "write":
        text = _first_str(params, _CONTENT_KEYS)
        return _count(text) if text is not None else None
    if kind == "edit":
        text = _first_str(params, _NEW_KEYS)
        if text is not None:
            return _count(text)
        edits = params.get("edits")
        if isinstance(edits, list):
            total = 0
            for e in edits:
                if isinstance(e, Mapping):
                    t = _first_str(e, _NEW_KEYS)
                    total += _count(t) if t is not None else 0
            return total
    return None


def difficulty_of(risk: int) -> str:
    """Seed difficulty of a success: safe/low trivial, medium normal, high/critical hard."""
    if risk <= Risk.LOW:
        return "trivial"
    if risk == Risk.MEDIUM:
        return "normal"
    return "hard"


def _count(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _first_str(params: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = params.get(key)
        if isinstance(value, str):
            return value
    return None
