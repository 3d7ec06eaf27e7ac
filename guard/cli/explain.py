"""guard explain TOOL PARAMS_JSON: each layer's reasoning, for a person."""

from __future__ import annotations

import argparse

from guard.cli import add_workspace
from guard.cli.common import add_call_arguments, decide_from_args, error, open_guard, parse_params, print_json
from guard.cli.render import explain_text
from guard.errors import InputError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "explain",
        help="show how each layer judged a call",
        description="Show the parse, the rules that fired, session health and the fused score's parts "
        'for one call. Nothing is saved.\n\nexample:\n  guard explain bash \'{"command": "sudo rm -rf /var"}\'',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_call_arguments(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_workspace(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        parse_params(args.params)
    except InputError as exc:
        return error(str(exc))
    with open_guard(args) as g:
        try:
            record = decide_from_args(g, args, save=False)
        except InputError as exc:
            return error(str(exc))
        details = g.layer_details(record.call)
        if args.json:
            print_json(record.to_dict() | {"explain": details})
        else:
            print(explain_text(record, details))
    return 0
