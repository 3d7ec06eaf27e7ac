"""guard reset: close circuit breakers, forget a session's behavior state."""

from __future__ import annotations

import argparse

from guard import workspace as ws
from guard.cli import add_workspace
from guard.cli.common import error, print_json

HELP = """\
Close circuit breakers or forget sessions' behavior state (counters, denials, taint, breakers).
Trust tiers are earned points and are kept.

  guard reset --session S              forget session S
  guard reset --session S --task T     close the breaker of task T in session S
  guard reset --task T                 close the breaker of task T in every session
  guard reset --all                    forget every session

T is a task id as 'guard stats --session S' shows it, the call's signature ('bash:make test'),
or a shell command ('make test'). A running guard process picks the change up on its next call.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "reset",
        help="close circuit breakers / clear session state",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--session", metavar="S", help="the session to reset")
    p.add_argument("--task", metavar="T", help="close this task's circuit breaker (in --session, else everywhere)")
    p.add_argument("--all", action="store_true", help="forget every session's behavior state")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_workspace(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from guard.behavior.reset import reset
    from guard.behavior.tracker import sessions_dir

    if args.all and (args.session or args.task):
        return error("--all cannot be combined with --session or --task")
    if not (args.all or args.session or args.task):
        return error("say what to reset: --session S, --task T, or --all")
    root = ws.resolve(args.workspace)
    try:
        done = reset(sessions_dir(root), session_id=args.session, task=args.task, everything=args.all)
    except OSError as exc:
        return error(f"cannot reset in {root}: {exc}")
    if args.json:
        print_json({"reset": done})
    elif done:
        print("\n".join(done))
    else:
        print("nothing to reset")
    return 0
