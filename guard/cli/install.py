"""guard install HOST / guard uninstall HOST: register guard's hooks with an agent host."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from guard.cli.common import error

HOSTS_HELP = (
    "claude-code, codex, gemini, cursor (openclaw: prints how to add the plugin; "
    "claude-desktop: its MCP servers, as --mcp)"
)

INSTALL_HELP = """\
Add guard's hooks to an agent host's settings, keeping every other setting as it is.
Running it again changes nothing; `guard uninstall HOST` removes only guard's entries.

  guard install claude-code            # ~/.claude/settings.json
  guard install claude-code --project  # ./.claude/settings.json
  guard install codex                  # ~/.codex/hooks.json
  guard install gemini --project       # ./.gemini/settings.json
  guard install cursor --project       # ./.cursor/hooks.json

Note: Cursor also runs Claude Code's hooks when third-party hooks are enabled; install one
of the two there, not both.

--mcp puts the MCP servers already configured for the host behind `guard mcp-proxy` instead
(each stdio server's command moves after `guard mcp-proxy --name NAME --`); `guard uninstall
HOST --mcp` gives them their own commands back:

  guard install claude-desktop         # claude_desktop_config.json (Claude Desktop has no hooks)
  guard install claude-code --mcp      # ~/.claude.json (--project: ./.mcp.json)
  guard install cursor --mcp           # ~/.cursor/mcp.json (--project: ./.cursor/mcp.json)
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "install",
        help="add guard's hooks to an agent host",
        description=INSTALL_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(p)
    p.add_argument("--workspace", metavar="DIR", help="workspace the hooks should use (default: theirs at run time)")
    p.add_argument(
        "--command",
        metavar="CMD",
        help="how the host runs guard (default: this Python by absolute path, isolated: PY -I -m guard)",
    )
    p.add_argument("--headless", action="store_true", help="the host runs unattended: never ask, deny instead")
    p.add_argument(
        "--no-ask", action="store_true", help="the host's ask is unreliable: deny with an out-of-band approval"
    )
    p.set_defaults(func=run_install)
    u = sub.add_parser("uninstall", help="remove guard's hooks from an agent host (only guard's)")
    _common(u)
    u.set_defaults(func=run_uninstall)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("host", help=HOSTS_HELP)
    where = p.add_mutually_exclusive_group()
    where.add_argument("--user", dest="project", action="store_false", help="the user's settings (default)")
    where.add_argument("--project", dest="project", action="store_true", help="the current project's settings")
    where.add_argument("--settings", metavar="FILE", help="this settings file")
    p.add_argument("--dry-run", action="store_true", help="print the resulting file instead of writing it")
    p.add_argument("--mcp", action="store_true", help="the host's configured MCP servers, through guard mcp-proxy")
    p.set_defaults(project=False)


def _target(args: argparse.Namespace) -> tuple[str, Path] | int:
    from guard.integrations.hosts import host_name
    from guard.integrations.install import settings_path

    try:
        host = host_name(args.host)
    except ValueError as exc:
        return error(str(exc))
    if host == "openclaw":
        _openclaw_help()
        return 0
    path = Path(args.settings).expanduser() if args.settings else settings_path(host, project=args.project)
    return host, path.absolute()


def run_install(args: argparse.Namespace) -> int:
    from guard.integrations.install import InstallError, hook_command, install

    if args.mcp or _desktop(args.host):
        from guard.cli.install_mcp import run_mcp

        return run_mcp(args, install=True)
    target = _target(args)
    if isinstance(target, int):
        return target
    host, path = target
    flags = tuple(f for f, on in (("--headless", args.headless), ("--no-ask", args.no_ask)) if on)
    command = hook_command(host, base=args.command, workspace=args.workspace, flags=flags)
    try:
        changed, doc = install(path, host, command, dry_run=args.dry_run)
    except InstallError as exc:
        return error(str(exc))
    if args.dry_run:
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    elif changed:
        print(f"guard: {host} hooks installed in {path}\n  command: {command}")
    else:
        print(f"guard: {host} hooks already installed in {path}")
    if host == "codex":
        _codex_feature(path, dry_run=args.dry_run)
        if changed and not args.dry_run:
            print(_CODEX_TRUST)
    if not args.dry_run and host in HEADLESS_NOTES:
        print(HEADLESS_NOTES[host])
    return 0


# Hosts whose hooks cannot tell a run nobody watches from an interactive one.
HEADLESS_NOTES = {
    "gemini": (
        "  headless: Gemini CLI does not tell its hooks when nobody can answer (gemini -p, CI), and an ask\n"
        "  there waits forever. Run such sessions as GUARD_HEADLESS=1 gemini -p '...': guard then denies,\n"
        "  with the reason, what it would have asked about (or install with --headless for every session)."
    ),
}


def run_uninstall(args: argparse.Namespace) -> int:
    from guard.integrations.install import InstallError, uninstall

    if args.mcp or _desktop(args.host):
        from guard.cli.install_mcp import run_mcp

        return run_mcp(args, install=False)
    target = _target(args)
    if isinstance(target, int):
        return target
    host, path = target
    try:
        removed, doc = uninstall(path, host, dry_run=args.dry_run)
    except InstallError as exc:
        return error(str(exc))
    if args.dry_run:
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    elif removed:
        print(f"guard: removed {removed} {host} hook(s) from {path}")
    else:
        print(f"guard: no {host} hooks of guard's in {path}")
    if host == "codex":
        from guard.integrations import codex_features

        config = codex_features.config_path(path)
        if codex_features.restore(config, dry_run=args.dry_run):
            out = sys.stderr if args.dry_run else sys.stdout
            print(f"guard: put back the [features] hooks setting guard changed in {config}", file=out)
    return 0


def _desktop(host: str) -> bool:
    return host.strip().lower().replace("_", "-") in ("claude-desktop", "desktop")


def _codex_feature(hooks_json: Path, *, dry_run: bool) -> None:
    """Codex runs no hook without ``[features] hooks = true``: guard turns it on, or says how."""
    from guard.integrations import codex_features
    from guard.integrations.codex_trust import FEATURE_FIX

    config = codex_features.config_path(hooks_json)
    out = sys.stderr if dry_run else sys.stdout  # (a dry run prints the hooks file on stdout)
    try:
        changed = codex_features.enable(config, dry_run=dry_run)
    except codex_features.Unchanged as exc:
        fix = FEATURE_FIX.format(config=config)
        print(f"guard: {config} left as it is: {exc}\n  Codex runs no hook until you {fix}", file=out)
        return
    if changed:
        verb = "would turn" if dry_run else "turned"
        print(f"guard: {verb} on Codex's hooks feature ([features] hooks = true) in {config}", file=out)


# Codex 0.171 runs a new or changed hook only once the person has trusted it (checked live).
_CODEX_TRUST = (
    "  Codex runs these hooks only after you trust them: start `codex` once and choose\n"
    '  "Trust all and continue" at "Hooks need review" (`codex exec` runs without them until then).'
)


def openclaw_plugin_dir() -> Path:
    """The OpenClaw plugin's folder, shipped inside ``guard.integrations`` (``integrations/openclaw``
    in the repository)."""
    from guard import integrations

    return Path(integrations.__file__).resolve().parent / "openclaw"


def _openclaw_help() -> None:
    from guard.integrations.install import InstallError, python_argv

    plugin = openclaw_plugin_dir()
    try:
        command = json.dumps({"command": python_argv()})
    except InstallError as exc:
        command = f'{{"command": ["/absolute/path/to/python", "-I", "-m", "guard"]}}  ({exc})'
    print(
        "OpenClaw runs plugins, not hook commands. Add guard's plugin:\n"
        f"  openclaw plugins install {shlex.quote(str(plugin))} --force --accept-capabilities\n"
        "(a local folder needs both flags: the source is outside ClawHub's review, and the plugin's\n"
        "capabilities need consent), then run agents with `openclaw agent --local` or a Gateway\n"
        "(`openclaw agent exec` runs no plugins),\n"
        "and tell it how to run this guard, by absolute path (and, if needed, the workspace), under\n"
        f"  plugins.entries.guard.config: {command}"
    )
