"""guard approve [ID|last] [--session S] [--deny]: answer a confirmation a host could not ask for.

Codex hooks (and hooks run with ``--no-ask``) cannot put a question to the person, so a call
guard wants confirmed is denied with an id. Approving it records the person's answer in
``.user-interactions.jsonl`` and lets the next identical call in that session run once.

An approval must come from the person, not from the agent running this command itself: it
needs the controlling terminal and a code typed on it (:mod:`guard.integrations.person`).
Listing and ``--deny`` need neither; refusing a call is never dangerous.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import deque
from pathlib import Path
from typing import Any

from guard.cli import add_workspace
from guard.cli.common import error, open_guard, print_json, table
from guard.errors import InputError

HELP = """\
Answer a confirmation that an agent host could not ask for (Codex, or a hook run with --no-ask).
Run it yourself, in your own terminal: it shows the held call there and asks you to type a
short code shown only there. It refuses inside an agent's tool call or without a terminal.

  guard approve                 # list calls waiting for an answer
  guard approve 3f2a9c1d        # approve that one call; the agent retries the same call once
  guard approve --session S     # approve the newest call held in session S
  guard approve last            # the newest call, when only one session has calls waiting
  guard approve 3f2a9c1d --deny # refuse it (no terminal needed)
"""

EXIT_REFUSED = 3  # no person: no terminal, an agent's shell, or the wrong code


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "approve",
        help="approve (or --deny) a call a hook is holding for confirmation",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("ref", nargs="?", metavar="ID", help="the id from the agent's message, or 'last'")
    p.add_argument("--session", metavar="S", help="the session whose held call to answer (its newest, without ID)")
    p.add_argument("--deny", action="store_true", help="record a refusal instead")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_workspace(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from guard.integrations.pending import Pending, SeveralSessions
    from guard.signature import signature

    with open_guard(args) as g:
        pending = Pending(g.workspace, float(g.config.get("hooks.pending_ttl_seconds")))
        if not args.ref and not args.session:
            return _list(pending.waiting(), as_json=args.json)
        try:
            entry = pending.pick(args.ref, session_id=args.session)
        except SeveralSessions:
            _list(pending.waiting(), as_json=False, to_stderr=True)
            return error(
                "calls are waiting in several sessions; say which: guard approve --session S, or guard approve ID"
            )
        except InputError as exc:
            return error(str(exc))
        if not args.deny:
            refused = _ask_the_person(entry, g.workspace)
            if refused is not None:
                return refused
        try:
            entry = pending.resolve(entry.id, approved=not args.deny, session_id=entry.session_id)
        except InputError as exc:  # answered or expired while the person was reading
            return error(str(exc))
        g.record_interaction(entry.tool, entry.params, session_id=entry.session_id, approved=not args.deny)
    call = signature(entry.tool, entry.params)
    if args.json:
        print_json({"id": entry.id, "session_id": entry.session_id, "approved": not args.deny, "call": call})
    elif args.deny:
        print(f"guard: denied {entry.id}: {call}")
    else:
        print(f"guard: approved {entry.id}: {call}\n  the agent may now retry exactly this call once")
    return 0


def _ask_the_person(entry: Any, workspace: Path) -> int | None:
    """None when the person typed the code on the controlling terminal; else the exit code."""
    import sys

    from guard.integrations.person import NotAPerson, confirm
    from guard.signature import signature

    summary = [
        ("id", entry.id),
        ("host", entry.host),
        ("session", str(entry.session_id)),
        ("tool", entry.tool),
        ("call", signature(entry.tool, entry.params)),
        ("cwd", str(entry.cwd or "?")),
        ("held", _ago(time.time() - entry.created)),
        ("why", _why(entry, workspace)),
    ]
    try:
        ok = confirm(summary, env=os.environ)
    except NotAPerson as exc:
        sys.stderr.write(f"guard: error: {exc}\n")
        return EXIT_REFUSED
    if not ok:
        sys.stderr.write(f"guard: error: {entry.id} not approved: the code typed did not match\n")
        return EXIT_REFUSED
    return None


def _why(entry: Any, workspace: Path) -> str:
    """The rules that held the call, from the newest matching line of the decision log."""
    from guard.workspace import DECISIONS

    for line in _tail_lines(workspace / DECISIONS):
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if (
            isinstance(d, dict)
            and d.get("host") == entry.host
            and d.get("session_id") == entry.session_id
            and d.get("params") == dict(entry.params)
            and d.get("decision") != "auto_allow"
        ):
            reasons = [r for r in d.get("reasons") or [] if isinstance(r, dict)]
            said = "; ".join(f"{r.get('id')} {r.get('message')}" for r in reasons[:3])
            return f"{d.get('decision')} (score {d.get('fusion_score')}): {said or 'no rule named'}"
    return "not in the decision log"


def _tail_lines(path: Path, size: int = 256 * 1024) -> list[str]:
    """The log's last lines, newest first, reading at most ``size`` bytes."""
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - size))
            data = f.read()
    except OSError:
        return []
    return list(deque(data.decode("utf-8", "replace").splitlines(), maxlen=2000))[::-1]


def _list(rows: list[Any], *, as_json: bool, to_stderr: bool = False) -> int:
    import sys

    from guard.signature import signature

    out = sys.stderr if to_stderr else sys.stdout
    if as_json:
        print_json(
            [
                {"id": e.id, "host": e.host, "session_id": e.session_id, "tool": e.tool, "params": dict(e.params)}
                for e in rows
            ]
        )
    elif rows:
        now = time.time()
        body = [
            [e.id, e.host, e.session_id, f"{(now - e.created) / 60:.0f} min", signature(e.tool, e.params)] for e in rows
        ]
        out.write(table(body, ["id", "host", "session", "age", "call"]) + "\n")
        out.write("approve one yourself, in your terminal: guard approve ID (or --session S)\n")
    else:
        out.write("guard: no call is waiting for approval\n")
    return 0


def _ago(seconds: float) -> str:
    return f"{max(0, int(seconds))} s ago" if seconds < 120 else f"{seconds / 60:.0f} min ago"
