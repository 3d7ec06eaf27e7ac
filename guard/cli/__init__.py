"""The ``guard`` command. Each subcommand is a module in this package with ``register(subparsers)``.

Exit codes of ``guard check`` (documented in ``--help``): 0 auto_allow, 10 request_confirm,
20 block, 2 usage or input error.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # argparse is imported when a parser is built: ``guard hook`` (once per call) skips it
    import argparse

# Subcommand modules, in the order ``--help`` lists them. One line each.
COMMANDS = (
    "check",
    "feed",
    "explain",
    "log",
    "stats",
    "config_cmd",
    "reset",
    "tidy",
    "hook",
    "install",
    "approve",
    "serve",
    "doctor",
    "rules",
    "replay",
    "report",
    "mcp_proxy",
)

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_CODES = {"auto_allow": 0, "request_confirm": 10, "block": 20}


def build_parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(
        prog="guard",
        description="Decide, before an AI agent's tool call runs, whether to auto_allow it, "
        "request_confirm it with the person, or block it, and say why.",
        epilog="Workspace: --workspace DIR, else $GUARD_HOME, else ~/.guard. "
        "Run 'guard COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"guard.cli.{name}").register(sub)
    return parser


def add_workspace(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workspace", metavar="DIR", help="guard's data directory (default: $GUARD_HOME, else ~/.guard)")


def main(argv: Sequence[str] | None = None) -> int:
    program = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["hook"]:  # once per tool call: the daemon's thin client, then no whole parser
        from guard.cli import hook
        from guard.hookclient import main as thin

        if program:  # the ``guard`` command: as ``python -m guard hook`` (guard/__main__.py)
            import gc

            gc.disable()
            hook.program(argv[1:], thin(argv[1:]))
            code = None
        else:
            read = thin(argv[1:])
            code = read if isinstance(read, int) else hook.main(argv[1:], read)
        if code is not None:
            return code
    from guard.cli.common import enable_logging

    enable_logging()
    from guard.errors import GuardError

    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        return 130
    except (GuardError, RecursionError, UnicodeError, OverflowError) as exc:
        # hostile input that got past a command's own checks: one line and exit 2, no traceback
        from guard.cli.common import error

        return error(f"{type(exc).__name__}: {str(exc)[:300]}")


def _version() -> str:
    from guard import __version__

    return f"guard {__version__}"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
