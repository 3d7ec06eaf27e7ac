"""``guard tidy``: maintain the memory store: retention, near-duplicate merges, compaction.

Long-lived processes run the same maintenance in the background on a schedule; this command
runs it now. ``--dry-run`` reports what it would do and changes nothing. Exit code 0, or 1
when the store could not be read or a step failed (the report says which).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from guard.cli import add_workspace


def register(subparsers: Any) -> None:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "tidy",
        help="maintain the memory store (retention, merges, compaction)",
        description=(__doc__ or "").split("\n\n", 1)[1],
    )
    add_workspace(p)
    p.add_argument("--dry-run", action="store_true", help="report what would change; change nothing")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--force", action="store_true", help="run even if nothing changed since the last run")
    p.set_defaults(func=run)


def resolve_workspace(arg: str | None) -> Path:
    """``--workspace DIR``, else ``$GUARD_HOME``, else ``~/.guard``; created with mode 0700."""
    raw = arg or os.environ.get("GUARD_HOME") or str(Path.home() / ".guard")
    path = Path(raw).expanduser()
    if not path.exists():
        path.mkdir(mode=0o700, parents=True)
        path.chmod(0o700)
    return path


def _republished(first: Any, second: Any) -> Any:
    """The second hand-off (after maintenance changed rows) republished; count both drains."""
    second.ingested += first.ingested
    return second


def run(args: argparse.Namespace) -> int:
    import attrs

    from guard.config import Config
    from guard.memory.table import resolve_uri
    from guard.memory.tidy import MARKER_NAME, tidy_uri

    workspace = resolve_workspace(args.workspace)
    config = Config.load(workspace)
    uri = resolve_uri(config, workspace)
    handoff = None
    if not args.dry_run:  # readers' queued outcomes first, so maintenance sees them
        from guard.memory.handoff import ingest_and_publish

        handoff = ingest_and_publish(uri, config, workspace)
    report = tidy_uri(uri, config, marker=workspace / MARKER_NAME, dry_run=args.dry_run, force=args.force)
    if handoff is not None and (report.deleted or report.merged):
        handoff = _republished(handoff, ingest_and_publish(uri, config, workspace))
    if handoff is not None and handoff.error:
        report.errors.append(f"snapshot: {handoff.error}")
    if args.json:
        json.dump(
            report.to_dict() | ({"handoff": attrs.asdict(handoff)} if handoff else {}),
            sys.stdout,
            indent=2,
            sort_keys=True,
            default=str,
        )
        sys.stdout.write("\n")
    else:
        print("\n".join(report.lines()))
        if handoff is not None and not handoff.error:
            print(handoff.line())
    return 1 if report.errors else 0
