"""Map host-specific tool names onto guard's canonical tool kinds.

Agent hosts name the same tools differently (Claude Code's ``Bash``, Gemini CLI's
``run_shell_command``, Codex's ``shell``); layers judge by kind, so names are folded
case-insensitively onto ``bash``, ``write``, ``edit``, ``read``, ``glob``, ``grep``,
``web_fetch``. Anything else keeps its lower-cased name and is treated as unknown.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

KNOWN_KINDS = ("bash", "write", "edit", "read", "glob", "grep", "web_fetch")

_ALIASES = {
    "bash": "bash",
    "shell": "bash",
    "sh": "bash",
    "exec": "bash",
    "exec_command": "bash",
    "run_shell_command": "bash",
    "shell_command": "bash",
    "terminal": "bash",
    "run_terminal_cmd": "bash",
    "local_shell": "bash",
    "write": "write",
    "write_file": "write",
    "create_file": "write",
    "edit": "edit",
    "multiedit": "edit",
    "multi_edit": "edit",
    "str_replace": "edit",
    "replace": "edit",
    "edit_file": "edit",
    "apply_patch": "edit",
    "notebookedit": "edit",
    "read": "read",
    "read_file": "read",
    "view": "read",
    "read_many_files": "read",
    "glob": "glob",
    "ls": "glob",
    "list_directory": "glob",
    "grep": "grep",
    "search_file_content": "grep",
    "web_fetch": "web_fetch",
    "webfetch": "web_fetch",
    "fetch": "web_fetch",
    "http_get": "web_fetch",
    "browser": "web_fetch",
    "web_search": "web_fetch",
    "websearch": "web_fetch",
    "google_web_search": "web_fetch",
}


# What an application may declare one of its own tools to be (``@guarded(kind="read")``): the kinds
# guard judges by their parameters. A declared tool is judged as that kind, and still by any command
# or URL its parameters carry (a declaration never lifts a block).
DECLARABLE = frozenset(KNOWN_KINDS)


def declared_kind(kind: str | None) -> str | None:
    """A declared tool kind, checked: ``declared_kind("Read") == "read"``; an unknown kind is an error."""
    if kind is None:
        return None
    value = canonical_tool(kind) if isinstance(kind, str) else ""
    if value not in DECLARABLE:
        from guard.errors import ConfigError

        raise ConfigError(f"unknown tool kind {kind!r}: one of {', '.join(sorted(DECLARABLE))}")
    return value


def declared_kinds(kinds: Mapping[str, str] | None) -> dict[str, str]:
    """``{"search_docs": "read"}`` checked, so a typo fails where it is written, not at the first call."""
    out: dict[str, str] = {}
    for name, kind in (kinds or {}).items():
        value = declared_kind(kind)
        if value is not None:
            out[str(name)] = value
    return out


@lru_cache(maxsize=1024)
def canonical_tool(name: str) -> str:
    """``canonical_tool("Bash") == "bash"``; unknown names come back lower-cased."""
    key = (name or "").strip().lower()
    return _ALIASES.get(key, key)
