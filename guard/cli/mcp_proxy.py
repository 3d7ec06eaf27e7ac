"""guard mcp-proxy: run a stdio MCP server behind guard, judging every ``tools/call``."""

from __future__ import annotations

import os
import sys
from typing import Any

from guard.cli import add_workspace

HELP = """\
Run a stdio MCP server behind guard. Point your MCP client at this command instead of the
server's; every tools/call is judged as the tool mcp__NAME__TOOL with its arguments as params:

  guard mcp-proxy --name github -- npx -y @modelcontextprotocol/server-github
  guard mcp-proxy --name shell -- python my_server.py

auto_allow -> forwarded to the server; block -> a tool error with guard's reason (the server
never sees the call); request_confirm -> the person is asked through the client (MCP
elicitation) when it can ask, else the call is refused with the reason and `guard approve ID`.
Everything else is relayed unchanged. Results are recorded like every other tool call.
Exit status: the server's end (1 when the server exits while the client is connected;
127 when it cannot be started; 2 for a usage error).
"""


def register(sub: Any) -> None:
    import argparse

    p = sub.add_parser(
        "mcp-proxy",
        help="run a stdio MCP server behind guard (judges every tools/call)",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="guard mcp-proxy [--name NAME] [--workspace DIR] [--session-id ID] [--max-message-bytes N] -- COMMAND [ARG ...]",
    )
    p.add_argument("--name", help="the server's name in mcp__NAME__TOOL (default: from the command)")
    add_workspace(p)
    p.add_argument("--session-id", metavar="ID", help="guard session for this client (default: one per proxy run)")
    p.add_argument(
        "--max-message-bytes",
        type=int,
        metavar="N",
        help="refuse client messages larger than this (default: 8 MiB)",
    )
    p.add_argument("command", nargs=argparse.REMAINDER, help="the MCP server's command line, after --")
    p.set_defaults(func=run)


def run(args: Any) -> int:
    from guard.cli.common import open_guard
    from guard.integrations.mcp.judge import Judge, server_name
    from guard.integrations.mcp.proxy import DEFAULT_MAX_BYTES, serve

    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        sys.stderr.write(
            "guard mcp-proxy: name the MCP server's command after --, e.g. guard mcp-proxy -- npx server\n"
        )
        return 2
    limit = args.max_message_bytes or DEFAULT_MAX_BYTES
    if limit < 1024:
        sys.stderr.write("guard mcp-proxy: --max-message-bytes must be at least 1024\n")
        return 2
    name = server_name(command, args.name)
    session = args.session_id or f"mcp-{name}-{os.getpid()}-{os.urandom(3).hex()}"
    judge = Judge(lambda: open_guard(args), server=name, session_id=session, cwd=os.getcwd())
    code: int = serve(command, judge, max_bytes=limit)
    return code
