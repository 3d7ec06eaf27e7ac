"""guard install HOST --mcp / guard uninstall HOST --mcp: a host's MCP servers behind guard mcp-proxy."""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

from guard.cli.common import error

RESTART = "  Restart {app} (or reload its MCP servers) for the change to take effect."
TWICE = (
    "  guard's {host} hooks are installed too, and they already judge MCP tool calls: each call is\n"
    "  now judged twice. Keep one of the two (`guard uninstall {host}` removes the hooks)."
)
APPS = {"claude-desktop": "Claude Desktop", "claude-code": "Claude Code", "cursor": "Cursor"}


def run_mcp(args: argparse.Namespace, *, install: bool) -> int:
    from guard.integrations.install import InstallError, python_argv
    from guard.integrations.mcp.install import config_path, unwrap, wrap

    host = _host(args.host)
    if host is None:
        return error(f"guard can wrap the MCP servers of claude-desktop, claude-code or cursor, not {args.host!r}")
    if install and (args.headless or args.no_ask):
        return error("--headless and --no-ask are for hooks; an MCP client asks through elicitation")
    try:
        path = Path(args.settings).expanduser() if args.settings else config_path(host, project=args.project)
        path = path.absolute()
        if install:
            proxy = shlex.split(args.command) if args.command else python_argv()
            outcome = wrap(path, proxy, workspace=args.workspace, dry_run=args.dry_run)
        else:
            outcome = unwrap(path, dry_run=args.dry_run)
    except InstallError as exc:
        return error(str(exc))
    if args.dry_run:
        print(json.dumps(outcome.doc, indent=2, ensure_ascii=False))
        return 0
    names = ", ".join(outcome.changed)
    if install and outcome.changed:
        print(f"guard: {len(outcome.changed)} MCP server(s) in {path} now run behind guard mcp-proxy: {names}")
    elif install:
        print(f"guard: no MCP server to wrap in {path} (none configured, or all already behind guard)")
    elif outcome.changed:
        print(f"guard: {len(outcome.changed)} MCP server(s) in {path} run their own command again: {names}")
    else:
        print(f"guard: no MCP server of guard's in {path}")
    for name, why in outcome.skipped:
        print(f"  left as it is: {name} ({why})")
    if outcome.changed:
        print(RESTART.format(app=APPS[host]))
    if install and outcome.changed and _hooks_installed(host, args.project):
        print(TWICE.format(host=host))
    return 0


def _host(name: str) -> str | None:
    key = name.strip().lower().replace("_", "-")
    if key in ("claude-desktop", "desktop"):
        return "claude-desktop"
    from guard.integrations.hosts import host_name

    try:
        key = host_name(name)
    except ValueError:
        return None
    return key if key in ("claude-code", "cursor") else None


def _hooks_installed(host: str, project: bool) -> bool:
    from guard.integrations.install import TARGETS, is_ours, settings_path

    if host not in TARGETS:
        return False
    try:
        doc = json.loads(settings_path(host, project=project).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    if not isinstance(hooks, dict):
        return False
    entries = [e for group in hooks.values() if isinstance(group, list) for e in group]
    handlers = [h for e in entries if isinstance(e, dict) for h in (e.get("hooks") or [e])]
    return any(is_ours(h, host) for h in handlers)
