"""guard doctor [--json]: is guard wired up safely? Each problem comes with the command that fixes it."""

from __future__ import annotations

import argparse
from pathlib import Path

from guard.cli import add_workspace
from guard.cli.common import print_json

HELP = """\
Check, without changing anything: for each agent host, whether guard's hooks are installed, run
this guard by absolute path with isolated imports, and sit in a settings file that parses, and a
self-test: the installed hook command, run as the host runs it on a sample `ls -la` (must allow)
and a sample `rm -rf /` (must deny; given as data, never run), in a throwaway workspace so
nothing is recorded. For Codex, whether its hooks feature is on and guard's hooks are trusted.
Whether the hook daemon answers and runs this version; whether the workspace is private (0700,
files 0600).
Exit 0 when nothing is wrong, 1 when something is; each problem names the command that fixes it.
"""

MARK = {"ok": "ok", "info": "-", "problem": "PROBLEM"}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "doctor",
        help="check guard's hooks, daemon and workspace; print the fix for each problem",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--no-self-test",
        action="store_true",
        help="skip running each installed hook command on a sample read and a sample rm -rf /",
    )
    add_workspace(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import attrs

    from guard.integrations.doctor import PROBLEM, run_all
    from guard.workspace import resolve

    found = run_all(Path.home(), Path.cwd(), resolve(args.workspace), self_test=not args.no_self_test)
    problems = [f for f in found if f.status == PROBLEM]
    if args.json:
        print_json({"ok": not problems, "checks": [attrs.asdict(f) for f in found]})
    else:
        width = max(len(f.check) for f in found)
        for f in found:
            where = f" ({f.path})" if f.path and f.check not in ("workspace", "daemon") else ""
            print(f"{MARK[f.status]:<8} {f.check.ljust(width)}  {f.message}{where}")
            if f.fix and f.status == PROBLEM:
                print(f"{'':<8} {''.ljust(width)}  fix: {f.fix}")
        print(f"guard doctor: {len(problems)} problem(s)" if problems else "guard doctor: no problems")
    return 1 if problems else 0
