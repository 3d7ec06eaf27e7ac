"""Agent hosts guard answers hooks for: ``guard hook NAME`` / ``guard install NAME``.

The table maps each name to its dialect; a module is imported only when its host is used,
so a hook process loads one dialect.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from guard.integrations.hosts.base import Host

HOSTS = {
    "claude-code": ("guard.integrations.hosts.claude_code", "ClaudeCode"),
    "codex": ("guard.integrations.hosts.codex", "Codex"),
    "gemini": ("guard.integrations.hosts.gemini_cli", "GeminiCli"),
    "cursor": ("guard.integrations.hosts.cursor", "Cursor"),
    "openclaw": ("guard.integrations.hosts.openclaw", "OpenClaw"),
}
ALIASES = {"claude": "claude-code", "claude_code": "claude-code", "gemini-cli": "gemini", "gemini_cli": "gemini"}


def host_name(name: str) -> str:
    """The canonical host name; ``ValueError`` naming the known ones otherwise."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in HOSTS:
        raise ValueError(f"unknown host {name!r}; expected one of {', '.join(HOSTS)}")
    return key


def get_host(name: str) -> Host:
    module, cls = HOSTS[host_name(name)]
    host: Host = getattr(importlib.import_module(module), cls)()
    return host
