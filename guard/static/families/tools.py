"""Tools other than the shell: write, edit, read, glob, grep, web_fetch, and tools guard does not know.

They are judged on their paths and content with the same path policy as shell commands, so
``Write(~/.bashrc)`` with ``curl … | sh`` in it is persistence of remote code, ``Read(.env)`` is a
secret read and ``Edit(.claude/settings.json)`` switches guard off. Parameter names differ by host
(``file_path``/``path``/``filePath``…, ``content``/``new_string``/``edits[].new_string``), so they
are looked up by every known alias. An unknown tool is never judged safe here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from guard import docsites, lazyre
from guard.static.facts.hosts import LOCAL_HOST, host_of, leaked_secret, secret_in_url
from guard.static.families import effects, prod
from guard.static.reading.text import wordset
from guard.static.scan import EMPTY, Flow, Scan

PATH_KEYS = (
    "file_path",
    "path",
    "file",
    "filePath",
    "absolute_path",
    "filename",
    "notebook_path",
    "target_file",
    "target",
    "dir_path",
    "directory",
    "absolutePath",
    "relative_path",
    "uri",
    "paths",
)
CONTENT_KEYS = (
    "content",
    "new_string",
    "file_text",
    "contents",
    "text",
    "new_str",
    "code",
    "new_source",
    "body",
    "insert_text",
    "replacement",
)
COMMAND_KEYS = ("command", "cmd", "script", "commandLine", "shell_command")
URL_KEYS = ("url", "urls", "uri", "href", "query")
_EDIT_NEW_KEYS = ("new_string", "newText", "new_text", "newString", "replacement", "content")
# ``move_file(source, destination)``, ``copy(src, dst)``: a move or copy between two paths
_MOVE_KEYS = (("source", "destination"), ("src", "dst"), ("src", "dest"), ("from", "to"), ("old_path", "new_path"))
_MOVE_WORDS = lazyre.compile(r"move|rename|copy|cp\b|mv\b", re.I)
_PROMPT_URL = lazyre.compile(r"(?:https?|file)://[^\s\"'<>)]+", re.I)
_BEGIN_PATCH = "*** Begin Patch"
_PATCH_FILE = lazyre.compile(r"^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+)$|^\+\+\+ (?:b/)?(\S+)", re.M)
_WRITE_WORDS = lazyre.compile(
    r"write|edit|create|save|put|upload|append|replace|insert|patch|update|move|rename|copy", re.I
)
_DELETE_WORDS = lazyre.compile(r"delete|remove|unlink|rm\b|destroy|drop|purge|trash", re.I)
# A tool named for removing data, matched on whole words of its name (``delete_rows``, ``drop-collection``,
# ``resetBranch``): ``undelete`` or ``drops_report`` are not.
_DESTROY_ACTION = lazyre.compile(
    r"(?:^|[_\-.]|(?<=[a-z])(?=[A-Z]))(?:delete|remove|drop|destroy|truncate|purge|wipe|reset|erase|flush)"
    r"(?=$|[_\-.A-Z])",
)
# A tool named for sending text to other people or places (chat, issues, mail, webhooks, uploads).
_SENDS = lazyre.compile(
    r"post|send|message|comment|reply|publish|upload|share|issue|email|mail|notify|tweet|webhook|gist|paste", re.I
)
_READ_WORDS = lazyre.compile(r"read|get|cat|view|open|download|fetch|list|search|find", re.I)


def first(params: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        value = params.get(key)
        if value not in (None, ""):
            return value
    return None


def command_text(params: Mapping[str, Any]) -> str | None:
    """The shell command of a bash-like call; argv lists (Codex ``shell``) are quoted back together."""
    value = first(params, COMMAND_KEYS)
    if isinstance(value, (list, tuple)):
        words = [str(w) for w in value]
        if len(words) >= 3 and words[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and words[1] in ("-c", "-lc"):
            return words[2]
        import shlex  # (only an argv list that is not ``sh -c TEXT`` is quoted back)

        return " ".join(shlex.quote(w) for w in words)
    return value if isinstance(value, str) else None


def written_parts(params: Mapping[str, Any]) -> list[str]:
    """Everything a write or edit call puts into files (content, new strings, patch additions)."""
    parts = [v for v in (first(params, CONTENT_KEYS),) if isinstance(v, str)]
    edits = params.get("edits")
    if isinstance(edits, list):
        # Claude's MultiEdit ``new_string``; the MCP filesystem server's ``edit_file`` ``newText``
        parts += [str(first(e, _EDIT_NEW_KEYS) or "") for e in edits if isinstance(e, Mapping)]
    patch = patch_text(params)
    if isinstance(patch, str) and ("*** " in patch or "+++ " in patch):
        added = [line[1:] for line in patch.splitlines() if line.startswith("+") and not line.startswith("+++")]
        parts.append("\n".join(added) + ("\n" if added else ""))
    return parts


def patch_text(params: Mapping[str, Any]) -> str | None:
    """The patch of an ``apply_patch`` call: ``input``/``patch``, or Codex's ``command``.

    Codex sends the patch as ``command``: the text ``*** Begin Patch … *** End Patch`` (maybe
    after ``apply_patch`` and a heredoc), or the argv ``["apply_patch", "<patch>"]``.
    """
    patch = params.get("input") or params.get("patch")
    if isinstance(patch, str):
        return patch
    for key in ("command", "cmd"):
        value = params.get(key)
        words = value if isinstance(value, (list, tuple)) else [value]
        for word in words:
            if isinstance(word, str) and _BEGIN_PATCH in word:
                return word
    return None


def lines_of(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def targets(params: Mapping[str, Any]) -> list[str]:
    path = first(params, PATH_KEYS)
    found = [str(path)] if isinstance(path, str) else [str(p) for p in path] if isinstance(path, list) else []
    patch = patch_text(params)
    if isinstance(patch, str):
        found += [a or b for a, b in _PATCH_FILE.findall(patch)]
    return [p[7:] if p.startswith("file://") else p for p in found]


def expand(scan: Scan, path: str) -> str:
    home = scan.resolver.home
    if path == "~" or path.startswith("~/"):
        return home + path[1:]
    for var in ("$HOME", "${HOME}"):
        if path.startswith(var):
            return home + path[len(var) :]
    return path


def judge_write(scan: Scan, params: Mapping[str, Any]) -> int:
    parts = written_parts(params)
    text = "\n".join(parts)
    paths = targets(params)
    for path in paths:
        effects.write(scan, expand(scan, path), Flow(0, text), "write")
    if not paths:
        scan.hit("G126", "write without a file path")
    return sum(lines_of(p) for p in parts)


def judge_read(scan: Scan, params: Mapping[str, Any], content: bool) -> None:
    paths = targets(params)
    for path in paths:
        place = effects.read(scan, expand(scan, path), content=content)
        if content and place.search_reads_keys and not place.secret:
            scan.hit("G140", f"search over {place.path}")
    if not any(h.rule_id in ("G140", "G141") for h in scan.hits):
        scan.hit("G180", ", ".join(paths) or "project")


def judge_fetch(scan: Scan, params: Mapping[str, Any]) -> None:

    value = first(params, URL_KEYS)
    urls = [str(u) for u in value] if isinstance(value, list) else [str(value)] if value else []
    prompt = params.get("prompt")
    if not urls and isinstance(prompt, str):  # Gemini's ``web_fetch`` takes its URLs inside the prompt
        urls = _PROMPT_URL.findall(prompt[:8192])
    local = [u for u in urls if u.lower().startswith("file://")]
    for url in local:  # ``file://`` is a read of this machine, not a fetch
        effects.read(scan, expand(scan, url[7:]))
    if local and len(local) == len(urls):
        if not any(h.rule_id in ("G140", "G141") for h in scan.hits):
            scan.hit("G180", local[0])
        return
    scan.urls.extend(urls)
    scan.tag("network", "untrusted_input")
    from guard.static.families.net import metadata_urls  # (the network family: a fetch's URLs only)

    metadata_urls(scan, urls)
    leaked = next((found for u in urls if (found := leaked_secret(u, host_of(u)))), None)
    if leaked:
        scan.hit("G440", f"{leaked} in {urls[0][:80]}")
    elif any(secret_in_url(u) for u in urls):
        scan.hit("G147", urls[0][:120])
    elif urls and all(LOCAL_HOST.match(host_of(u)) for u in urls):
        scan.hit("G148", urls[0])
    elif docsites.only_docs(urls, scan.docs_hosts):
        scan.hit("G465", urls[0][:120])  # documentation reading is ordinary (issue 14)
    else:
        scan.hit("G146", (urls[0] if urls else "web search")[:120])


# Host tools that only coordinate the agent itself: plans, to-do lists, questions, sub-agents (whose
# own tool calls are judged one by one).
BOOKKEEPING = wordset(
    "todowrite todoread exitplanmode enterplanmode askuserquestion update_plan think task agent taskoutput "
    "killshell bashoutput save_memory"
)


def _all_text(params: Mapping[str, Any]) -> str:
    """The string values of ``params`` (one level of nesting), joined."""
    parts: list[str] = []
    for value in list(params.values())[:64]:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, (list, tuple)):
            parts += [v for v in value[:64] if isinstance(v, str)]
        elif isinstance(value, Mapping):
            parts += [v for v in list(value.values())[:64] if isinstance(v, str)]
    return "\n".join(parts)


def judge_unknown(scan: Scan, tool: str, params: Mapping[str, Any]) -> int | None:
    """An unknown tool: medium at least; its parameters still reveal commands, paths and URLs."""
    if tool.lower() in BOOKKEEPING:
        scan.hit("G100", tool)
        return None
    scan.hit("G187", tool)
    command = command_text(params)
    if command:
        scan.engine.top(command, EMPTY)
    action = tool.rsplit("__", 1)[-1]
    lines = None
    paths = targets(params)
    move = next(((params[a], params[b]) for a, b in _MOVE_KEYS if isinstance(params.get(a), str)), None)
    if move and isinstance(move[1], str) and _MOVE_WORDS.search(action):  # judged as ``mv``/``cp`` would be
        verb = "cp" if re.search("copy|cp", action, re.I) else "mv"
        scan.engine.run([verb, expand(scan, move[0]), expand(scan, move[1])])
    elif paths and _DELETE_WORDS.search(action):
        for path in paths:
            effects.delete(scan, expand(scan, path), True)
    elif paths and _WRITE_WORDS.search(action):
        lines = judge_write(scan, params)
    elif paths and _READ_WORDS.search(action):
        for path in paths:
            effects.read(scan, expand(scan, path))
    elif not paths and _DESTROY_ACTION.search(action):
        scan.hit("G437", tool)  # ``drop-collection``, ``delete_rows``: what it removes is in its parameters
    if first(params, ("url", "urls")):
        judge_fetch(scan, params)
    if _SENDS.search(action) and (leaked := leaked_secret(_all_text(params), "", named=True)):
        scan.hit("G440", f"{leaked} sent by {tool}")  # ``slack post_message`` with a key in its text
    sql = first(params, ("sql", "query", "statement"))
    if isinstance(sql, str):
        from guard.static.families.db import sql_rule

        rule = sql_rule(sql)
        if rule:
            scan.hit(rule, sql[:80])
    prod.raise_on_params(scan, params)  # ``{"project_id": "shop-prod", "query": "DROP TABLE …"}``: G434
    return lines


def judge_declared(scan: Scan, kind: str, params: Mapping[str, Any]) -> None:
    """A tool its application declared a kind (``search_docs`` is a ``read``) is judged as that kind,
    and a command or URL among its parameters is still judged as one: ``{"query": "x", "command":
    "rm -rf ~"}`` blocks however the tool was declared."""
    command = command_text(params)
    if command:
        scan.engine.top(command, EMPTY)
    if kind != "web_fetch" and first(params, ("url", "urls")):
        judge_fetch(scan, params)
