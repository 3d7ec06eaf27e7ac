"""guard replay: re-decide the logged calls under another configuration and show what changes."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from guard.cli import add_workspace
from guard.cli.common import error, print_json
from guard.errors import ConfigError, InputError

HELP = """\
Play the workspace's history forward and re-decide every logged call twice: under the
current configuration and under the current one with FILE's values on top. Prints how many
decisions would change (transitions such as auto_allow->request_confirm, with examples) and
the prompt rate before and after. Nothing in the workspace is written.

examples:
  guard replay --config stricter.toml            # e.g. [thresholds] auto_allow = 85
  guard replay --config new-rules.toml --since 2025-06-01 --json

Parameters in the decision log are redacted: calls are re-decided on their redacted form.
"""

BAR_MIN_EVENTS = 500


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "replay",
        help="show what a configuration change would change",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--config", metavar="FILE", help="a guard.toml whose values apply over the current configuration")
    p.add_argument("--since", metavar="DATE", help="re-decide only calls from this date (YYYY-MM-DD or ISO time) on")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--progress", action="store_true", help="show a progress bar on stderr even when it is not a TTY")
    add_workspace(p)
    p.set_defaults(func=run)


class ProgressBar:
    """``replay [#####.....]  52%  5200/10000`` on stderr, redrawn when the percentage moves."""

    def __init__(self, stream: TextIO, force: bool = False, min_total: int = BAR_MIN_EVENTS) -> None:
        self.stream = stream
        self.enabled = force or stream.isatty()
        self.min_total = 0 if force else min_total
        self._shown = -1

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total < self.min_total or total <= 0:
            return
        pct = done * 100 // total
        if pct == self._shown:
            return
        self._shown = pct
        filled = pct * 30 // 100
        self.stream.write(f"\rreplay [{'#' * filled}{'.' * (30 - filled)}] {pct:3d}%  {done}/{total}")
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()


def run(args: argparse.Namespace) -> int:
    from guard.config import Config
    from guard.policy.history import parse_date
    from guard.policy.replay import load_candidate, replay
    from guard.workspace import resolve

    root = resolve(args.workspace)
    try:
        since = parse_date(args.since) if args.since else None
    except ValueError as exc:
        return error(f"--since: {exc}")
    try:
        base = Config.load(root if root.is_dir() else None)
        candidate = load_candidate(root, Path(args.config) if args.config else None, base)
    except (InputError, ConfigError) as exc:
        return error(str(exc))
    result = replay(root, candidate, baseline=base, since=since, progress=ProgressBar(sys.stderr, args.progress))
    if args.json:
        print_json(result.to_dict() | {"config": args.config})
        return 0
    if not result.total:
        print(f"no logged decisions to replay in {root}")
        return 0
    what = f"with {args.config} over the current configuration" if args.config else "under the current configuration"
    print(f"replayed {result.replayed} of {result.total} logged calls {what} (history: {result.events} events)")
    print(f"  {'':<16} {'current':>8} {'new':>8}")
    for d in ("auto_allow", "request_confirm", "block"):
        print(f"  {d:<16} {result.before.get(d, 0):>8} {result.after.get(d, 0):>8}")
    before, after = result.rate("before"), result.rate("after")
    print(f"prompts: {before:.1%} -> {after:.1%} ({(after - before) * 100:+.1f} points)")
    if result.transitions:
        print("changes:")
        for key, n in result.transitions.items():
            print(f"  {key:<34} {n}")
            for e in result.examples[key]:
                print(
                    f"      {e.timestamp} {e.tool} {e.session_id or '-'}: {e.call[:60]!r} "
                    f"score {e.score_before:.1f} -> {e.score_after:.1f}"
                )
    else:
        print("no decision changes")
    print(f"unchanged: {result.unchanged}")
    print(f"fidelity: the current configuration reproduces {result.fidelity} of {result.replayed} logged decisions")
    print("note: parameters in the decision log are redacted; calls were re-decided on their redacted form")
    return 0
