"""guard check TOOL PARAMS_JSON: decide one call (the seed's CLI)."""

from __future__ import annotations

import argparse

from guard.cli import EXIT_CODES, add_workspace
from guard.cli.common import (
    add_call_arguments,
    decide_from_args,
    error,
    open_guard,
    parse_params,
    print_json,
    read_params,
)
from guard.cli.render import explain_text
from guard.errors import InputError

HELP = """\
Decide one tool call and explain the decision.

examples:
  guard check bash '{"command": "ls"}'
  guard check write '{"file_path": "notes.txt", "content": "hi"}' --session-id s1 --save
  guard check bash '{"command": "rm -rf ~"}' --json
  guard check bash - < call.json          # parameters on stdin (large calls)

exit codes: 0 auto_allow, 10 request_confirm, 20 block, 2 bad input.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "check", help="decide one tool call", description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_call_arguments(p)
    p.add_argument("--save", action="store_true", help="append the decision to .fusion-decisions.jsonl")
    p.add_argument("--json", action="store_true", help="print the decision record as JSON")
    add_workspace(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    read_params(args)
    try:
        parse_params(args.params)  # a usage error before any workspace is touched
    except InputError as exc:
        return error(str(exc))
    with open_guard(args) as g:
        try:
            record = decide_from_args(g, args, save=args.save)
        except InputError as exc:
            return error(str(exc))
        if args.json:
            print_json(record.to_dict())
        else:
            print(explain_text(record))
    return EXIT_CODES[record.decision]
