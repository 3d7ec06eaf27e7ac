"""guard check TOOL PARAMS_JSON: decide one call (the seed's CLI)."""

from __future__ import annotations

import argparse

from guard.cli import EXIT_CODES, add_workspace
from guard.cli.common import error, open_guard, parse_params, print_json
from guard.cli.render import explain_text
from guard.errors import InputError

HELP = """\
Decide one tool call and explain the decision.

examples:
  guard check bash '{"command": "ls"}'
  guard check write '{"file_path": "notes.txt", "content": "hi"}' --session-id s1 --save
  guard check bash '{"command": "rm -rf ~"}' --json

exit codes: 0 auto_allow, 10 request_confirm, 20 block, 2 bad input.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "check", help="decide one tool call", description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("tool", help="tool name, e.g. bash, write, Read, WebFetch")
    p.add_argument("params", metavar="PARAMS_JSON", help="the call's parameters as a JSON object")
    p.add_argument("--session-id", help="session the call belongs to")
    p.add_argument("--cwd", help="working directory the call runs in")
    p.add_argument("--save", action="store_true", help="append the decision to .fusion-decisions.jsonl")
    p.add_argument("--json", action="store_true", help="print the decision record as JSON")
    add_workspace(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        params = parse_params(args.params)
    except InputError as exc:
        return error(str(exc))
    with open_guard(args) as g:
        try:
            record = g.decide(args.tool, params, session_id=args.session_id, cwd=args.cwd, save=args.save)
        except InputError as exc:
            return error(str(exc))
        if args.json:
            print_json(record.to_dict())
        else:
            print(explain_text(record))
    return EXIT_CODES[record.decision]
