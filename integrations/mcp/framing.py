"""Reading MCP's stdio framing strictly: one JSON-RPC message per line, nothing guard cannot see.

A line guard would read differently from the server (duplicate keys, ``NaN``, not UTF-8) or
that is too large to judge is answered with a JSON-RPC error and never forwarded; what is
forwarded is re-encoded from what guard read (:func:`encode`), never the client's bytes. Lines are
read from an ``asyncio.StreamReader`` whose ``limit`` is the size cap: :func:`read_line`
returns the line, an :class:`Oversized` with the line's first bytes, or None at the end.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import attrs

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
SERVER_GONE = -32000  # implementation-defined server error: the MCP server is no longer there
TOO_LARGE = -32001

HEAD = 4096  # bytes of an oversized line kept to find its id


@attrs.frozen
class Oversized:
    size: int
    head: bytes


class Malformed(ValueError):
    """A line that is not one JSON-RPC message guard can read unambiguously."""


async def read_line(reader: asyncio.StreamReader) -> bytes | Oversized | None:
    """The next line (without its newline), an oversized one's head, or None at end of input."""
    try:
        line = await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        return exc.partial or None
    except asyncio.LimitOverrunError as exc:
        head = await reader.readexactly(exc.consumed)
        size = len(head)
        while True:  # drop the rest of this line, in chunks the reader can hold
            try:
                size += len(await reader.readuntil(b"\n"))
                break
            except asyncio.IncompleteReadError as rest:
                size += len(rest.partial)
                break
            except asyncio.LimitOverrunError as more:
                size += len(await reader.readexactly(more.consumed))
        return Oversized(size, head[:HEAD])
    return line[:-1]


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise Malformed(f"the key {key!r} appears twice in one object")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise Malformed(f"{name} is not JSON")


def parse(line: bytes) -> Any:
    """The message, or :class:`Malformed` saying why it cannot be read unambiguously."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise Malformed("the line is not UTF-8 text") from None
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except Malformed:
        raise
    except ValueError as exc:
        raise Malformed(f"the line is not JSON ({exc})") from None
    except RecursionError:
        raise Malformed("the line nests too deeply") from None


def encode(message: Any, *, ascii_only: bool = False) -> bytes:
    """One line for the wire; ``Malformed`` for what cannot be written as UTF-8 (lone surrogates).

    ``ascii_only`` for what goes to the server: every message the client sent is written again
    as the message guard read, in plain ASCII with no whitespace between tokens, so no server
    can split it into other lines than guard saw (some split on CR, or on U+2028).
    """
    try:
        text = json.dumps(message, ensure_ascii=ascii_only, separators=(",", ":"))
        return text.encode("utf-8") + b"\n"
    except (UnicodeEncodeError, ValueError, RecursionError) as exc:
        raise Malformed(f"the message cannot be written back as JSON ({exc})") from None


def valid_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def id_key(value: Any) -> str:
    """``1`` and ``"1"`` are different JSON-RPC ids."""
    return json.dumps(value)


# A top-level ``"id"`` among the scalar members before any nested value: how SDKs write requests.
_ID = re.compile(
    rb'^\s*\{(?:\s*"[^"\\]*"\s*:\s*(?:"(?:[^"\\]|\\.)*"|[-\w.+]+)\s*,)*?\s*"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)'
)


def id_in_head(head: bytes) -> Any:
    """The id of a message guard could not parse, when its first bytes show it plainly; else None."""
    match = _ID.match(head)
    if not match:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if valid_id(value) else None


def error(id_: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}


def tool_error(id_: Any, text: str) -> dict[str, Any]:
    """A ``tools/call`` answered by guard instead of the server: the agent reads ``text``."""
    return {"jsonrpc": "2.0", "id": id_, "result": {"content": [{"type": "text", "text": text}], "isError": True}}
