"""guard config: every effective setting and where it came from."""

from __future__ import annotations

import argparse
from pathlib import Path

import attrs

from guard.cli import add_workspace
from guard.cli.common import error, print_json, table
from guard.config import CONFIG_FILENAME, Config, describe
from guard.workspace import resolve


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "config",
        help="show effective configuration",
        description="Print every setting's effective value and its source (code, file, env, default). "
        "Set values in <workspace>/guard.toml ([weights] memory = 0.4) or as GUARD_WEIGHTS_MEMORY=0.4.",
    )
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--check",
        nargs="?",
        const="",
        metavar="FILE",
        help="validate FILE (default: the workspace's guard.toml): parse errors, unknown keys, bad values, "
        "weights that do not sum to 1.0, each as FILE:LINE:COL; exit 0, or 2 on an error",
    )
    add_workspace(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    root = resolve(args.workspace)
    if args.check is not None:
        return check(Path(args.check) if args.check else root / CONFIG_FILENAME, as_json=args.json)
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


def check(path: Path, *, as_json: bool = False) -> int:
    """``guard config --check [FILE]``: one line per finding; 2 when any is an error."""
    from guard.configfile import check as check_file

    if not path.is_file():
        return error(f"{path}: no such configuration file")
    findings = check_file(path)
    errors = sum(f.level == "error" for f in findings)
    if as_json:
        print_json({"file": str(path), "ok": not errors, "findings": [attrs.asdict(f) for f in findings]})
    else:
        for f in findings:
            print(f)
        if not findings:
            print(f"{path}: ok")
    return 2 if errors else 0
