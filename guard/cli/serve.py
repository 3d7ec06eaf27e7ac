"""guard serve: the long-lived process that keeps hook calls cheap."""

from __future__ import annotations

import argparse
import os
import sys
import time

from guard.cli import add_workspace
from guard.cli.common import error, print_json

HELP = """\
Answer agent-host hooks from one warm process over a Unix socket in the workspace.
Hooks use it when it runs and start it when it does not (setting hooks.daemon = "auto"),
deciding in their own process meanwhile; you rarely need to start it yourself.

  guard serve                      # foreground, until stopped
  guard serve --status [--wait 5]  # is one running? (exit 0 yes, 1 no)
  guard serve --stop [--wait 5]
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "serve", help="run the hook daemon", description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--idle", type=float, metavar="SECONDS", help="exit after this long without a request (0 = never)")
    p.add_argument("--on-demand", action="store_true", help="started by a hook: exit after hooks.daemon_idle_seconds")
    p.add_argument("--status", action="store_true", help="report whether a daemon runs for the workspace")
    p.add_argument("--stop", action="store_true", help="ask the running daemon to exit")
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS", help="with --status/--stop: wait for it")
    add_workspace(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from guard import __version__
    from guard.integrations import daemon
    from guard.workspace import ensure, resolve

    workspace = resolve(args.workspace)
    if args.status or args.stop:
        if args.stop:
            daemon.call(workspace, {"v": daemon.PROTOCOL, "op": "stop"})
        want_running = not args.stop
        deadline = time.monotonic() + args.wait
        while True:
            info = daemon.call(workspace, {"v": daemon.PROTOCOL, "op": "ping"}, timeout=2.0)
            if (info is not None) == want_running or time.monotonic() >= deadline:
                break
            time.sleep(0.02)
        print_json({"running": info is not None} | (info or {}))
        return 0 if (info is not None) == want_running else 1
    from guard.integrations.server import HookServer

    if not ensure(workspace):
        return error(f"workspace {workspace} is not usable")
    idle = args.idle
    if idle is None:
        idle = 0.0
        if args.on_demand:
            from guard.config import Config

            idle = float(Config.load(workspace).get("hooks.daemon_idle_seconds"))
    server = HookServer(workspace, idle_seconds=idle, version=__version__)
    server.install_signal_handlers()

    def ready(path: object) -> None:
        print(f"guard serve: listening on {path}", flush=True)

    if not server.serve(ready):
        sys.stderr.write(f"guard serve: already running for {workspace}\n")
    if server.gave_up:  # the stuck decision may hold what the exit handlers wait for: end now, lock and all
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(3)
    return 0
