"""guard report: decisions, blocking rules, trust, session health and learned rules, as text or HTML."""

from __future__ import annotations

import argparse
from pathlib import Path

from guard.cli import add_workspace
from guard.cli.common import error, print_json

HELP = """\
Summarise the workspace: decisions per day by outcome, the rules that blocked most, tools by
trust (success and approval rates), sessions by health, and the prompts saved by rules
learned with 'guard rules'.

  guard report                      text on stdout
  guard report --html report.html   one self-contained page with charts (no network, no script)
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "report",
        help="a picture of decisions and learned rules",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--html", metavar="FILE", help="write an HTML page with charts to FILE")
    p.add_argument("--days", type=int, default=30, help="days in the per-day chart (default 30)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_workspace(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from guard.errors import InputError
    from guard.policy import page, report
    from guard.policy.permissions import write_text
    from guard.workspace import resolve

    if args.days < 1:
        return error("--days must be at least 1")
    root = resolve(args.workspace)
    try:
        data = report.build(root, days=args.days)
    except InputError as exc:
        return error(str(exc))
    if args.html:
        out = Path(args.html)
        try:
            write_text(out, page.render(data))
        except OSError as exc:
            return error(f"cannot write {out}: {exc.strerror or exc}")
    if args.json:
        print_json(data.to_dict() | ({"html": str(Path(args.html).absolute())} if args.html else {}))
    elif args.html:
        print(f"wrote {Path(args.html).absolute()}")
    else:
        print(report.text(data))
    return 0
