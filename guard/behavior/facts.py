"""What a call means for the session: the facts the behavior layer tracks.

The static layer is the real source (its verdict tags ``untrusted_input``, ``secret_read``,
``egress``, ``publish``, ``protected_path`` and ``data["lines_written"]``). So that the
session rules hold even with a static layer that knows less, a few canonical shapes are
recognised here too and added to its tags:

- a ``web_fetch`` call, or ``curl``/``wget`` fetching a URL, brings in untrusted content —
  unless every URL is a documentation or package-index page (``guard/docsites.py``);
  ``git fetch``/``git pull`` of the project's own remotes bring in the project, not a page;
- reading ``~/.ssh``, ``~/.aws``, ``~/.gnupg``, ``.env``, ``.netrc``, credential files or key
  files (by the ``read`` tool, or by a shell command that reads them) reads a secret; naming
  one (``ls ~/.ssh``, ``find ~ -name .ssh``, ``stat``, ``test -e``) reads nothing;
- ``curl -d/-F/-T/-X POST``, ``wget --post-*``, ``scp``/``rsync`` to a ``host:``,
  ``nc``/``socat``, ``git push``, ``npm publish``, ``twine upload``, ``docker push``, and
  unknown tools named like send/post/upload/publish/mail send data out (egress) — when the
  tool is the command (a grep pattern or a file name such as ``scp`` is data) and the
  destination is not this machine (``127.0.0.1``, ``localhost``, ``::1``).

The static layer's tags are added to these, except one: its ``untrusted_input`` on a docs
page, this machine or the project's own remote, which bring in no page from a stranger.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import Any

from guard import docsites, lazyre
from guard.digest import blake2b
from guard.layers.data import StaticData
from guard.model import Risk, ToolCall
from guard.namedtuple import NamedTuple
from guard.redact import redact_text
from guard.toolnames import canonical_tool

UNTRUSTED = "untrusted_input"
SECRET = "secret_read"
EGRESS = "egress"
RISKY_PATH = "protected_path"
SUBAGENT = "subagent"
TASK_END = "task_end"  # a commit: the work it records is done, the next call starts a new task
_EGRESS_TAGS = frozenset({"egress", "publish"})
_KEPT_TAGS = frozenset({UNTRUSTED, SECRET, RISKY_PATH})
_RELEVANT_TAGS = _KEPT_TAGS | _EGRESS_TAGS
_NONE: frozenset[str] = frozenset()
_UNTRUSTED_ONLY = frozenset({UNTRUSTED})
_SECRET_ONLY = frozenset({SECRET})
_EGRESS_ONLY = frozenset({EGRESS})
_SUBAGENT_ONLY = frozenset({SUBAGENT})
_TASK_END_ONLY = frozenset({TASK_END})

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
# The command word of a segment, after wrappers (sudo, env, timeout 5, VAR=x) and a directory.
_LEAD = (
    r"^\s*(?:(?:sudo|doas|env|time|nohup|command|exec|xargs|nice|stdbuf|timeout\s+\S+)\s+(?:-\S+\s+)*)*"
    r"(?:[A-Za-z_]\w*=\S*\s+)*(?:\S*/)?"
)
_FETCH = lazyre.compile(_LEAD + r"(?:curl|wget|aria2c|http|https)\s[^|;&]*(?:https?|ftp)://", re.I)
_EGRESS_SHELL = lazyre.compile(
    "(?x)"
    + _LEAD
    + r"""(?:
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
_SEGMENT = lazyre.compile(r"[|;&\n(`]|\$\(")
_COPY = lazyre.compile(r"(?:\S*/)?(?:scp|sftp|rsync)$")
_LOCAL_HOST = lazyre.compile(
    r"^(?:[a-z][\w+.-]*://)?(?:[^@/\s]+@)?(?:localhost|127(?:\.\d{1,3}){3}|\[?::1\]?|0\.0\.0\.0)(?:[:/]|$)", re.I
)
_REMOTE_HOST = lazyre.compile(
    r"^(?:[a-z][\w+.-]*://|[\w.-]+@[\w.-]|[\w-]+(?:\.[\w-]+)+(?::\d+)?/?$|[\w.-]+:(?!//))", re.I
)
_NAME_ONLY = frozenset(
    {
        "ls",
        "find",
        "stat",
        "test",
        "[",
        "[[",
        "du",
        "tree",
        "mkdir",
        "touch",
        "chmod",
        "chown",
        "realpath",
        "readlink",
        "basename",
        "dirname",
        "cd",
        "echo",
        "which",
        "file",
    }
)
_FIND_ACTS = lazyre.compile(r"\s-(?:exec|execdir|ok|okdir|fprint\w*|fls)\b")
_COMMIT = lazyre.compile(r"(?:^|[;&|]\s*)git\s+(?:-C\s+\S+\s+)?commit\b")
_OWN_REMOTE = lazyre.compile(r"^\s*git\s+(?:-C\s+\S+\s+)?(?:fetch|pull|remote\s+update)\b(?![^|;&]*(?:://|@))")
_MAX_SEGMENT = 2048
_MAX_SCAN = 64 * 1024
_EGRESS_TOOL = lazyre.compile(r"send|post|upload|publish|e?mail|message|webhook|tweet|share", re.I)
_SUBAGENT_KINDS = frozenset({"task", "agent", "spawn_agent", "subagent", "dispatch_agent", "delegate"})
_KNOWN = frozenset({"bash", "write", "edit", "read", "glob", "grep", "web_fetch"})
_URL_KEYS = ("url", "uri", "href")
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
    local: bool = False  # a write inside the project, on no protected path, at most medium risk

    @property
    def egress(self) -> bool:
        return EGRESS in self.facts


def task_id(sig: str) -> str:
    """A short, stable id for a normalised call (12 hex digits), safe to print and store."""
    return blake2b(sig.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


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
    return _short(redact_text(sig))


def shown(call: ToolCall) -> str:
    """``display`` of the call's signature, from the redaction the call already holds."""
    return _short(call.redacted_signature)


def _short(text: str) -> str:
    return text if len(text) <= 120 else text[:119] + "…"


def probe_of(
    call: ToolCall,
    sig: str,
    tags: frozenset[str],
    risk: Risk,
    data: Mapping[str, Any] | None,
    docs: frozenset[str] | None = None,
) -> Probe:
    """The probe for ``call`` given the earlier layers' tags, risk and data.

    Only a few of the call's values count (its kind, the command, URL or path its facts are read
    from, the lines and path it writes, its folder and agent): the probe is remembered by those,
    so a session that repeats a call works out its facts once.
    """
    kind = call.declared or _KINDS.get(call.tool) or _kind_of(call.tool)  # ``call.kind``, remembered by name
    params = call.params
    lines: Any = None
    path = None
    if kind == "write" or kind == "edit":
        if type(data) is StaticData:
            lines = data.lines_written
        else:
            lines = data.get("lines_written") if data else None
        if not isinstance(lines, int) or isinstance(lines, bool):
            lines = lines_of(call, kind)
        path = _first_str(params, _PATH_KEYS)
    elif type(data) is StaticData:  # a shell write the static layer measured
        lines = data.lines_written if isinstance(data.lines_written, int) else None
    elif data and "lines_written" in data:
        lines = data["lines_written"] if isinstance(data["lines_written"], int) else None
    text = params.get("command") if kind == "bash" else None  # (``_subject``: a shell command is most calls)
    if type(text) is not str:
        text = _subject(params, kind)
    cwd, agent = call.cwd, call.agent_id
    if (
        type(tags) is not frozenset
        or type(lines) is bool  # True == 1 as a key, but it reads "True lines"
        or not (cwd is None or type(cwd) is str)
        or not (agent is None or type(agent) is str)
        or (text is not None and len(text) > _MAX_KEPT)  # a huge command is not kept alive as a key
        or (path is not None and len(path) > _MAX_KEPT)
    ):
        return _probe(kind, text, sig, tags, risk, lines, path, cwd, agent, docs)
    key = (kind, text, sig, tags, risk, lines, path, cwd, agent, docs)
    probe = _PROBES.get(key)
    if probe is None:
        if len(_PROBES) >= 4096:
            _PROBES.clear()
        probe = _PROBES[key] = _probe(kind, text, sig, tags, risk, lines, path, cwd, agent, docs)
    return probe


_KINDS: dict[str, str] = {}
_MAX_KEPT = 4096


def _kind_of(tool: str) -> str:
    kind = canonical_tool(tool)
    if len(_KINDS) >= 1024:
        _KINDS.clear()
    _KINDS[tool] = kind
    return kind


# probes by every value ``_probe`` reads (see ``probe_of``)
_PROBES: dict[tuple[Any, ...], Probe] = {}


def _probe(
    kind: str,
    text: str | None,
    sig: str,
    tags: frozenset[str],
    risk: Risk,
    lines: int | None,
    path: str | None,
    cwd: str | None,
    agent: str | None,
    docs: frozenset[str] | None,
) -> Probe:
    facts = _facts(kind, text, docs)
    if tags and not tags.isdisjoint(_RELEVANT_TAGS):
        kept = tags & _KEPT_TAGS
        if kept & _UNTRUSTED_ONLY and UNTRUSTED not in facts and _ordinary_source(kind, text, docs):
            kept = kept - _UNTRUSTED_ONLY
        facts = facts | kept | (_EGRESS_ONLY if not tags.isdisjoint(_EGRESS_TAGS) else _NONE)
    if kind == "bash" and text and "commit" in text and _COMMIT.search(text):  # (the word first: no pattern to compile)
        facts = facts | _TASK_END_ONLY
    local = bool(path) and RISKY_PATH not in facts and risk <= Risk.MEDIUM and _inside(path or "", cwd)
    return Probe(
        _task_id(sig),
        sig,
        kind,
        int(risk),
        facts,
        lines,
        _task_id(path) if path else None,
        agent or "default",
        local,
    )


def _inside(path: str, cwd: str | None) -> bool:
    """Is ``path`` inside the call's working folder (the project), read lexically?"""
    if not cwd or not cwd.startswith("/") or "\x00" in path:
        return False
    root = posixpath.normpath(cwd)
    full = posixpath.normpath(path if path.startswith("/") else posixpath.join(root, path))
    return full.startswith(root.rstrip("/") + "/") and not secret_path(full)


def _subject(params: Mapping[str, Any], kind: str) -> str | None:
    """What a call's facts are read from: the URL fetched, the path read, or the command."""
    if kind == "web_fetch":
        return _first_str(params, _URL_KEYS)
    if kind == "read" or kind == "grep":
        return _first_str(params, _PATH_KEYS)
    if kind == "bash":
        return _command(params)
    return None


def fallback_facts(call: ToolCall, kind: str, docs: frozenset[str] | None = None) -> frozenset[str]:
    """The facts this module recognises in the call itself (see the module docstring)."""
    return _facts(kind, _subject(call.params, kind), docs)


def _facts(kind: str, text: str | None, docs: frozenset[str] | None) -> frozenset[str]:
    """``fallback_facts`` from the call's kind and its ``_subject``."""
    if kind == "web_fetch":
        return _NONE if text and docsites.is_docs_url(text, docs) else _UNTRUSTED_ONLY
    if kind == "read" or kind == "grep":
        return _SECRET_ONLY if text and secret_path(text) else _NONE
    if kind == "bash":
        command = text
        if command is None:
            return _NONE
        if len(command) > _MAX_SCAN:
            return _UNTRUSTED_ONLY  # too large to read cheaply: treat what it brings in as untrusted
        facts = _NONE
        segments: list[str] | None = None
        if _NET_WORDS.search(command):
            # Per pipeline segment, each capped: the patterns backtrack, and hostile input must
            # stay linear (``curl `` × 200,000 took minutes as one string).
            segments = [seg[:_MAX_SEGMENT] for seg in _SEGMENT.split(_quoted_separators_off(command))]
            net = [seg for seg in segments if _NET_WORDS.search(seg)]
            if any(_EGRESS_SHELL.search(seg) and not _stays_here(seg) for seg in net):
                facts = _EGRESS_ONLY
            elif any(_FETCH.search(seg) for seg in net) and not _ordinary_pages(docsites.urls_in(command), docs):
                facts = _UNTRUSTED_ONLY
        if secret_path(command) and reads_secret(command, segments):
            facts = facts | _SECRET_ONLY
        return facts
    if kind in _SUBAGENT_KINDS:
        return _SUBAGENT_ONLY
    if kind not in _KNOWN and _EGRESS_TOOL.search(kind):
        return _EGRESS_ONLY
    return _NONE


def _quoted_separators_off(command: str) -> str:
    """Quoted text is data: ``|;&`` inside quotes (and ``$(``/backticks inside single quotes) become spaces."""
    if "'" not in command and '"' not in command:
        return command
    out = []
    quote = ""
    for ch in command:
        if quote:
            if ch == quote:
                quote = ""
            elif ch in "|;&\n" or (quote == "'" and ch in "(`$"):
                ch = " "
        elif ch in "'\"":
            quote = ch
        out.append(ch)
    return "".join(out)


def _ordinary_pages(urls: list[str], docs: frozenset[str] | None) -> bool:
    """Every URL fetched is a docs page or this machine (a dev server): no untrusted page."""
    return bool(urls) and all(_LOCAL_HOST.search(u) or docsites.is_docs_url(u, docs) for u in urls)


def reads_secret(command: str, segments: list[str] | None = None) -> bool:
    """Does a segment that names a secret file read it (not only list, find or test it)?"""
    for seg in segments if segments is not None else _SEGMENT.split(_quoted_separators_off(command)):
        if not secret_path(seg):
            continue
        words = seg.split()
        head = _command_word(words)
        if head not in _NAME_ONLY or (head == "find" and _FIND_ACTS.search(seg)) or ">" in seg or "<" in seg:
            return True
    return False


def _command_word(words: list[str]) -> str:
    i = 0
    while i < len(words) and (words[i] in ("sudo", "doas", "env", "command", "nohup", "time") or "=" in words[i]):
        i += 1
    return words[i].rsplit("/", 1)[-1] if i < len(words) else ""


def _stays_here(seg: str) -> bool:
    """An egress-shaped segment whose only destinations are this machine (or, for a copy, local paths)."""
    words = seg.split()
    args = [w.strip("'\"") for w in words[1:] if not w.startswith(("-", "@", "<", ">")) and "=" not in w]
    remote = [a for a in args if _REMOTE_HOST.search(a) and not _LOCAL_HOST.search(a)]
    if remote:
        return False
    if words and _COPY.match(_command_word(words)):
        return True  # scp/rsync between local paths: nothing leaves
    return any(_LOCAL_HOST.search(a) for a in args)


def own_remote(command: str) -> bool:
    """Only ``git fetch``/``git pull`` of the project's named remotes: the project's own history."""
    net = [seg for seg in _SEGMENT.split(command[:_MAX_SCAN]) if _NET_WORDS.search(seg) or "git" in seg]
    return bool(net) and all(_OWN_REMOTE.search(seg) for seg in net if "git" in seg or _FETCH.search(seg))


def _command(params: Mapping[str, Any]) -> str | None:
    command = params.get("command")
    if isinstance(command, list):
        command = " ".join(str(c) for c in command)
    return command if isinstance(command, str) else None


def _ordinary_source(kind: str, text: str | None, docs: frozenset[str] | None) -> bool:
    """The static layer said "untrusted input", but the call reads a docs page or the project's own remote."""
    if kind == "web_fetch":
        return bool(text) and docsites.is_docs_url(text or "", docs)
    if kind == "bash":
        if text is None:
            return False
        return own_remote(text) or _ordinary_pages(docsites.urls_in(text), docs)
    return False


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
