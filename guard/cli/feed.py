"""guard feed [FILE|-]: apply hook events, print one decision per dispatch."""

from __future__ import annotations

import argparse
import sys
from typing import BinaryIO

from guard.cli import add_workspace
from guard.cli.common import error, open_guard, print_json
from guard.feed import feed

HELP = """\
Read hook events, one JSON object per line, apply them in order, and print exactly one JSON
decision record per tool_dispatch line (an error record, never auto_allow, for a malformed line).

  {"event": "tool_dispatch", "tool": "bash", "params": {"command": "ls"}, "session_id": "s1"}
  {"event": "tool_result", "tool": "bash", "params": {...}, "status": "success", "duration_ms": 12}
  {"event": "user_confirmation", "tool": "bash", "params": {...}, "action": "approved", "satisfaction": 5}

No "event" key means tool_dispatch; unknown keys are ignored. Exit code 0, or 1 if any line was unreadable.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "feed",
        help="apply a stream of hook events",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", nargs="?", default="-", help="JSON-lines file, or - for standard input (default)")
    add_workspace(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Bytes, not text: a line splits only at \n, and a line that is not UTF-8 becomes an
    # error record instead of a command with replacement characters in it.
    try:
        if args.file == "-":
            stream: BinaryIO = sys.stdin.buffer
        else:
            stream = open(args.file, "rb")  # noqa: SIM115
    except OSError as exc:
        return error(f"cannot read {args.file}: {exc.strerror}")
    bad = 0
    with stream, open_guard(args) as g:
        for out in feed(g, stream):
            bad += "error" in out
            print_json(out)
    return 1 if bad else 0
