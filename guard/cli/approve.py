"""guard approve [ID|last] [--deny]: answer a confirmation a host could not ask for.

Codex hooks (and hooks run with ``--no-ask``) cannot put a question to the person, so a call
guard wants confirmed is denied with an id. Approving it records the person's answer in
``.user-interactions.jsonl`` and lets the next identical call in that session run once.
"""

from __future__ import annotations

import argparse
import time

from guard.cli import add_workspace
from guard.cli.common import error, open_guard, print_json, table
from guard.errors import InputError

HELP = """\
Answer a confirmation that an agent host could not ask for (Codex, or a hook run with --no-ask).

  guard approve            # list calls waiting for an answer
  guard approve last       # approve the most recent one; the agent retries the same call
  guard approve 3f2a9c1d --deny
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "approve",
        help="approve (or --deny) a call a hook is holding for confirmation",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("ref", nargs="?", metavar="ID", help="the id from the agent's message, or 'last'")
    p.add_argument("--deny", action="store_true", help="record a refusal instead")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_workspace(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from guard.signature import signature
    from integrations.pending import AWAITING, Pending

    with open_guard(args) as g:
        pending = Pending(g.workspace, float(g.config.get("hooks.pending_ttl_seconds")))
        if not args.ref:
            rows = [e for e in pending.entries() if e.state == AWAITING]
            if args.json:
                print_json([{"id": e.id, "host": e.host, "tool": e.tool, "params": dict(e.params)} for e in rows])
            elif rows:
                now = time.time()
                print(
                    table(
                        [
                            [e.id, e.host, f"{(now - e.created) / 60:.0f} min", signature(e.tool, e.params)]
                            for e in rows
                        ],
                        ["id", "host", "age", "call"],
                    )
                )
            else:
                print("guard: no call is waiting for approval")
            return 0
        try:
            entry = pending.resolve(args.ref, approved=not args.deny)
        except InputError as exc:
            return error(str(exc))
        g.record_interaction(entry.tool, entry.params, session_id=entry.session_id, approved=not args.deny)
    call = signature(entry.tool, entry.params)
    if args.json:
        print_json({"id": entry.id, "approved": not args.deny, "call": call})
    elif args.deny:
        print(f"guard: denied {entry.id}: {call}")
    else:
        print(f"guard: approved {entry.id}: {call}\n  the agent may now retry exactly this call once")
    return 0
