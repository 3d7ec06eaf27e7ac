"""Put the MCP servers a host already has behind ``guard mcp-proxy``, and take them out again.

``guard install claude-desktop`` (or ``guard install claude-code --mcp``, ``cursor --mcp``)
rewrites each stdio server of the host's MCP configuration

    "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {...}}

into the same server launched through the proxy, named by its key:

    "github": {"command": "/abs/python", "args": ["-I", "-m", "guard", "mcp-proxy", "--name", "github",
               "--", "npx", "-y", "@modelcontextprotocol/server-github"], "env": {...}}

Every other key of the entry, and of the file, stays as it was. The wrapped entry carries the
original command after ``--``, so ``guard uninstall ... --mcp`` restores it without any state
kept elsewhere; wrapping twice changes nothing. Servers reached by URL (``http``, ``sse``) are
not stdio and are left alone, and reported.

Files (``mcpServers`` in each): Claude Desktop ``claude_desktop_config.json`` (its folder per
platform); Claude Code ``~/.claude.json`` (user servers, and each project's ``projects.*``
servers) or ``./.mcp.json`` (``--project``); Cursor ``~/.cursor/mcp.json`` or
``./.cursor/mcp.json`` (``--project``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from guard.integrations.install import InstallError, _read, _write

MCP_HOSTS = ("claude-desktop", "claude-code", "cursor")
SEPARATOR = "--"


def config_path(host: str, *, project: bool, home: Path | None = None, cwd: Path | None = None) -> Path:
    """The host's MCP configuration file."""
    home = home or Path.home()
    cwd = cwd or Path.cwd()
    if host == "claude-desktop":
        if project:
            raise InstallError("Claude Desktop has no project configuration; leave out --project")
        if sys.platform == "darwin":
            return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
        if os.name == "nt":  # pragma: no cover - not a supported platform for guard's hooks
            return Path(os.environ.get("APPDATA", home)) / "Claude" / "claude_desktop_config.json"
        base = Path(os.environ["XDG_CONFIG_HOME"]) if os.environ.get("XDG_CONFIG_HOME") else home / ".config"
        return base / "Claude" / "claude_desktop_config.json"
    if host == "claude-code":
        return cwd / ".mcp.json" if project else home / ".claude.json"
    if host == "cursor":
        return (cwd if project else home) / ".cursor" / "mcp.json"
    raise InstallError(f"guard cannot wrap the MCP servers of {host!r}; expected one of {', '.join(MCP_HOSTS)}")


@attrs.frozen
class Outcome:
    changed: tuple[str, ...]  # servers wrapped (install) or restored (uninstall), as "where.name"
    skipped: tuple[tuple[str, str], ...]  # (server, why)
    doc: dict[str, Any]


def wrap(path: Path, proxy: list[str], *, workspace: str | None = None, dry_run: bool = False) -> Outcome:
    """Launch every stdio server in ``path`` through ``proxy`` (``[python, -I, -m, guard]``)."""
    original, doc = _read(path, {})
    changed, skipped = [], []
    for where, name, entry in _servers(doc, path):
        label = f"{where}{name}"
        if proxied(entry) is not None:
            continue
        command = entry.get("command")
        if not isinstance(command, str) or not command:
            why = "not a stdio server (it has a url)" if "url" in entry else "no command to launch"
            skipped.append((label, why))
            continue
        args = entry.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            skipped.append((label, '"args" is not a list of strings'))
            continue
        flags = ["--workspace", str(Path(workspace).expanduser().absolute())] if workspace else []
        entry["command"] = proxy[0]
        entry["args"] = [*proxy[1:], "mcp-proxy", "--name", name, *flags, SEPARATOR, command, *args]
        changed.append(label)
    if doc != original and not dry_run:
        _write(path, doc)
    return Outcome(tuple(changed), tuple(skipped), doc)


def unwrap(path: Path, *, dry_run: bool = False) -> Outcome:
    """Give every server guard wrapped its own command back."""
    if not path.exists():
        return Outcome((), (), {})
    original, doc = _read(path, {})
    changed = []
    for where, name, entry in _servers(doc, path):
        inner = proxied(entry)
        if inner is None:
            continue
        entry["command"] = inner[0]
        if inner[1:]:
            entry["args"] = inner[1:]
        else:
            entry.pop("args", None)
        changed.append(f"{where}{name}")
    if doc != original and not dry_run:
        _write(path, doc)
    return Outcome(tuple(changed), (), doc)


def proxied(entry: dict[str, Any]) -> list[str] | None:
    """The server's own command line when ``entry`` launches it through ``guard mcp-proxy``."""
    command, args = entry.get("command"), entry.get("args")
    if not isinstance(command, str) or not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return None
    words = [command, *args]
    for i in range(1, len(words)):
        if words[i] == "mcp-proxy" and os.path.basename(words[i - 1]) in ("guard", "guard.exe"):
            if SEPARATOR in words[i + 1 :]:
                inner = words[words.index(SEPARATOR, i + 1) + 1 :]
                return inner or None
    return None


def _servers(doc: dict[str, Any], path: Path) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(where, name, entry) for each server entry: the top ``mcpServers``, then each project's."""
    places: list[tuple[str, Any]] = [("", doc.get("mcpServers"))]
    projects = doc.get("projects")
    if path.name == ".claude.json" and isinstance(projects, dict):  # Claude Code's local-scope servers
        places += [(f"projects[{key}].", p.get("mcpServers")) for key, p in projects.items() if isinstance(p, dict)]
    for where, servers in places:
        if servers is None:
            continue
        if not isinstance(servers, dict):
            raise InstallError(f'{path}: "{where}mcpServers" is not an object; left untouched')
        for name, entry in servers.items():
            if isinstance(entry, dict):
                yield where, str(name), entry
