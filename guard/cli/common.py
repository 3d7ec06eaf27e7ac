"""Helpers every subcommand shares: logging, opening a Guard, JSON in and out."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from guard.errors import InputError


def enable_logging() -> None:
    """Warnings to stderr, one line each; ``GUARD_LOG_LEVEL`` changes the level."""
    from guard.log import to_stderr

    to_stderr(os.environ.get("GUARD_LOG_LEVEL", "WARNING"))


def open_guard(args: argparse.Namespace, *, per_call: bool = True, **kw: Any) -> Any:
    """A ``Guard`` on ``--workspace``; per-call commands keep LanceDB out unless configured in."""
    from guard.config import Config
    from guard.core import Guard
    from guard.workspace import ensure, resolve

    workspace = resolve(getattr(args, "workspace", None))
    ensure(workspace)
    config = Config.load(workspace if workspace.is_dir() else None)
    backend = None
    if per_call and config.get("memory.backend") == "auto":
        backend = "history"
    return Guard(workspace, config, memory_backend=backend, **kw)


def parse_params(text: str) -> dict[str, Any]:
    """PARAMS_JSON → dict, with an error that says what is wrong."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"PARAMS_JSON is not valid JSON ({exc.msg} at column {exc.colno}): {text[:80]!r}") from None
    except RecursionError:
        raise InputError("PARAMS_JSON nests too deeply") from None
    except ValueError as exc:  # a number too long to convert
        raise InputError(f"PARAMS_JSON is not usable JSON ({exc})") from None
    if not isinstance(value, dict):
        raise InputError(f'PARAMS_JSON must be a JSON object like \'{{"command": "ls"}}\', got {type(value).__name__}')
    return value


def print_json(obj: Any) -> None:
    text = json.dumps(obj, ensure_ascii=False, default=str)
    try:
        text.encode(sys.stdout.encoding or "utf-8")
    except (UnicodeEncodeError, LookupError):  # a lone surrogate from a "\ud800" escape
        text = json.dumps(obj, default=str)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def error(message: str) -> int:
    sys.stderr.write(f"guard: error: {message}\n")
    return 2


def table(rows: list[list[Any]], headers: list[str]) -> str:
    """A plain aligned text table."""
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def add_call_arguments(p: argparse.ArgumentParser) -> None:
    """TOOL PARAMS_JSON [--session-id S] [--cwd DIR]: one tool call on the command line."""
    p.add_argument("tool", help="tool name, e.g. bash, write, Read, WebFetch")
    p.add_argument(
        "params", metavar="PARAMS_JSON", help="the call's parameters as a JSON object ('-': read it from stdin)"
    )
    p.add_argument("--session-id", help="session the call belongs to")
    p.add_argument("--cwd", help="working directory the call runs in")


def read_params(args: argparse.Namespace) -> None:
    """PARAMS_JSON ``-``: the parameters come on stdin (a call too large for the command line)."""
    if args.params == "-":
        args.params = sys.stdin.read()


def decide_from_args(g: Any, args: argparse.Namespace, *, save: bool) -> Any:
    """The decision record for the call named by ``add_call_arguments``; InputError if malformed."""
    params = parse_params(args.params)
    return g.decide(args.tool, params, session_id=args.session_id, cwd=args.cwd, save=save)
