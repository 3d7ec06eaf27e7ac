"""guard config: every effective setting and where it came from."""

from __future__ import annotations

import argparse

from guard.cli import add_workspace
from guard.cli.common import print_json, table
from guard.config import Config, describe
from guard.workspace import resolve


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "config",
        help="show effective configuration",
        description="Print every setting's effective value and its source (code, file, env, default). "
        "Set values in <workspace>/guard.toml ([weights] memory = 0.4) or as GUARD_WEIGHTS_MEMORY=0.4.",
    )
    p.add_argument("--json", action="store_true")
    add_workspace(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    root = resolve(args.workspace)
    config = Config.load(root if root.is_dir() else None)
    rows = describe(config)
    if args.json:
        print_json(
            {"file": str(config.file) if config.file else None, "settings": rows, "warnings": list(config.warnings)}
        )
        return 0
    print(f"configuration file: {config.file} ({'present' if config.file and config.file.is_file() else 'absent'})")
    print(table([[r["key"], r["value"], r["source"], r["env"]] for r in rows], ["key", "value", "source", "env"]))
    for w in config.warnings:
        print(f"warning: {w}")
    return 0
