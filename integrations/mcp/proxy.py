"""``guard mcp-proxy``: a stdio MCP server behind guard.

The MCP client launches the proxy instead of the server; the proxy starts the server and
relays newline-delimited JSON-RPC both ways, unchanged, with one exception: each
``tools/call`` from the client is held while guard judges it (:mod:`guard.integrations.mcp.judge`).

- auto_allow → forwarded (as the exact message guard judged), its result relayed and recorded;
- block → answered by the proxy with a tool result ``isError: true`` carrying guard's reason;
- request_confirm → the proxy asks the person with ``elicitation/create`` when the client
  declared the elicitation capability (accept → forwarded; decline or cancel → refused),
  else refuses with the reason and an out-of-band ``guard approve ID`` for a retry.

A line the proxy cannot read unambiguously, a ``tools/call`` it cannot parse and a message
over the size cap are answered with a JSON-RPC error and never forwarded. Calls run
concurrently (guard judges them one at a time, in arrival order, on one worker thread);
responses may come back in any order and keep their ids. When the server exits, every request
still open gets a JSON-RPC error and the proxy exits 1 with one line on stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any, TypeVar

import attrs

from guard.integrations.hosts.base import outcome_of
from guard.integrations.mcp import framing
from guard.integrations.mcp.framing import Malformed, Oversized
from guard.integrations.mcp.judge import ALLOW, ASK, Judge

T = TypeVar("T")

DEFAULT_MAX_BYTES = 8 * 1024 * 1024
SERVER_MAX_BYTES = 256 * 1024 * 1024  # what the server sends is relayed, not judged: only a sanity bound
GRACE_SECONDS = 5.0  # after the client leaves: how long the server gets to exit before SIGTERM
CONFIRM_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


@attrs.define
class Open:
    """A client request the server has not answered yet."""

    id: Any
    method: str
    tool: str | None = None  # tools/call only
    arguments: Mapping[str, Any] = attrs.field(factory=dict)
    session_id: str | None = None
    started: float = 0.0


class Proxy:
    def __init__(
        self,
        command: list[str],
        judge: Judge,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        stderr: IO[str] | None = None,
    ) -> None:
        self.command = command
        self.judge = judge
        self.max_bytes = max_bytes
        self.stderr = stderr or sys.stderr
        self.open: dict[str, Open] = {}  # forwarded client requests, by id key
        self.held: dict[str, tuple[Open, asyncio.Task[None]]] = {}  # tools/calls being judged or asked about
        self.asked: dict[str, asyncio.Future[Mapping[str, Any]]] = {}  # the proxy's own requests to the client
        self.tasks: set[asyncio.Future[Any]] = set()
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="guard-mcp")
        self._counter = 0
        self._out: Any = None
        self._server: asyncio.subprocess.Process | None = None

    # -- lifecycle ----------------------------------------------------------------------
    async def run(self) -> int:
        try:
            self._server = await asyncio.create_subprocess_exec(
                *self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=SERVER_MAX_BYTES
            )
        except OSError as exc:
            self._say(f"cannot start the MCP server {self._shown()}: {exc}")
            return 127
        client_in, self._out = await _stdio(self.max_bytes)
        from_client = asyncio.create_task(self._pump_client(client_in))
        from_server = asyncio.create_task(self._pump_server())
        done, _ = await asyncio.wait({from_client, from_server}, return_when=asyncio.FIRST_COMPLETED)
        try:
            if from_server in done:
                from_client.cancel()
                return await self._server_gone()
            await self._client_gone(from_server)
            return 0
        finally:
            await self._settle()
            await self._call(self.judge.close)
            self.pool.shutdown(wait=True)

    async def _client_gone(self, from_server: asyncio.Task[None]) -> None:
        """The client closed its end: let the server finish and exit, as the MCP spec's shutdown says."""
        server = self._server
        assert server is not None and server.stdin is not None
        for _, task in list(self.held.values()):
            task.cancel()
        with contextlib.suppress(OSError, RuntimeError):
            server.stdin.close()
        try:
            await asyncio.wait_for(asyncio.shield(from_server), GRACE_SECONDS)
            await asyncio.wait_for(server.wait(), GRACE_SECONDS)
        except TimeoutError:
            await _stop(server)
        from_server.cancel()

    async def _server_gone(self) -> int:
        server = self._server
        assert server is not None
        try:
            code: int | None = await asyncio.wait_for(server.wait(), GRACE_SECONDS)
        except TimeoutError:  # it closed its output but lives on: it can answer nothing more
            await _stop(server)
            code = server.returncode
        held = {key: entry for key, (entry, _) in self.held.items()}
        for _, task in list(self.held.values()):
            task.cancel()
        await self._settle()
        shown = f"exited with code {code}" if code is not None else "closed its output"
        message = f"guard mcp-proxy: the MCP server {self._shown()} {shown} before answering this request."
        unanswered = list((held | self.open).values())  # a call cancelled as it was forwarded is in both
        self.open.clear()
        for entry in unanswered:
            await self._send(framing.error(entry.id, framing.SERVER_GONE, message))
            if entry.tool is not None and entry.started:  # forwarded, so it ran (or began to)
                await self._record(entry, success=False, error=f"the MCP server {shown}")
        self._say(f"the MCP server {self._shown()} {shown}; {len(unanswered)} open request(s) answered with an error.")
        return 1

    async def _settle(self) -> None:
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)

    # -- client → server ----------------------------------------------------------------
    async def _pump_client(self, reader: asyncio.StreamReader) -> None:
        while True:
            line = await framing.read_line(reader)
            if line is None:
                return
            if isinstance(line, Oversized):
                id_ = framing.id_in_head(line.head)
                why = f"guard mcp-proxy: a message of {line.size} bytes is over the limit of {self.max_bytes} bytes"
                await self._send(framing.error(id_, framing.TOO_LARGE, f"{why}; it was not forwarded."))
                continue
            if not line.strip():
                continue
            await self._from_client(line)

    async def _from_client(self, line: bytes) -> None:
        try:
            message = framing.parse(line)
        except Malformed as exc:
            await self._send(framing.error(None, framing.PARSE_ERROR, f"guard mcp-proxy: {exc}; it was not forwarded."))
            return
        if isinstance(message, list):
            await self._batch(message)
        elif isinstance(message, dict):
            await self._one(message)
        else:
            await self._send(framing.error(None, framing.INVALID_REQUEST, "guard mcp-proxy: not a JSON-RPC message."))

    async def _one(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        id_ = message.get("id")
        if method is None and ("result" in message or "error" in message):  # an answer to a request
            future = self.asked.pop(framing.id_key(id_), None) if framing.valid_id(id_) else None
            if future is not None:
                if not future.done():
                    future.set_result(message)
                return
            await self._forward(message)
            return
        if not isinstance(method, str) or ("id" in message and not framing.valid_id(id_)):
            what = (
                "names no method" if not isinstance(method, str) else "has an id that is neither a string nor a number"
            )
            await self._send(
                framing.error(
                    id_ if framing.valid_id(id_) else None,
                    framing.INVALID_REQUEST,
                    f"guard mcp-proxy: the message {what}; it was not forwarded.",
                )
            )
            return
        if method == "tools/call":
            await self._tool_call(message)
            return
        if method == "initialize":
            self._capabilities(message.get("params"))
        if method == "notifications/cancelled" and self._cancel_held(message.get("params")):
            return
        if "id" in message:
            self.open[framing.id_key(id_)] = Open(id_, method)
        await self._forward(message)

    async def _batch(self, batch: list[Any]) -> None:
        """JSON-RPC batches (MCP 2025-03-26) pass unless they hold a tools/call, which must be judged alone."""
        ids = [m.get("id") for m in batch if isinstance(m, dict) and framing.valid_id(m.get("id"))]
        if not batch or any(not isinstance(m, dict) or m.get("method") == "tools/call" for m in batch):
            why = "guard mcp-proxy: a batch that is empty, holds a non-object or holds a tools/call is not forwarded; send tools/call on its own."
            errors = [framing.error(i, framing.INVALID_REQUEST, why) for i in ids] or framing.error(
                None, framing.INVALID_REQUEST, why
            )
            await self._send(errors)
            return
        for m in batch:
            if isinstance(m.get("method"), str) and framing.valid_id(m.get("id")):
                self.open[framing.id_key(m["id"])] = Open(m["id"], m["method"])
        await self._forward(batch)

    def _capabilities(self, params: Any) -> None:
        caps = params.get("capabilities") if isinstance(params, dict) else None
        elicitation = caps.get("elicitation") if isinstance(caps, dict) else None
        # ``{}`` is form mode (2025-06-18); 2025-11-25 names the modes and form must be one of them
        self.judge.host.can_elicit = isinstance(elicitation, dict) and (not elicitation or "form" in elicitation)

    def _cancel_held(self, params: Any) -> bool:
        """The client cancelled a call guard still holds: drop it; the server never heard of it."""
        request = params.get("requestId") if isinstance(params, dict) else None
        held = self.held.get(framing.id_key(request)) if framing.valid_id(request) else None
        if held is None:
            return False
        held[1].cancel()
        return True

    # -- tools/call ---------------------------------------------------------------------
    async def _tool_call(self, message: dict[str, Any]) -> None:
        id_ = message.get("id")
        params = message.get("params")
        problem = _call_problem(message)
        if problem:
            if "id" not in message:  # a notification cannot be answered: say it here, forward nothing
                self._say(f"a tools/call without an id was dropped ({problem}).")
                return
            text = f"guard mcp-proxy: this tools/call cannot be read ({problem}); it was not forwarded."
            await self._send(framing.error(id_, framing.INVALID_PARAMS, text))
            return
        assert isinstance(params, dict)
        key = framing.id_key(id_)
        if key in self.held or key in self.open:
            await self._send(
                framing.error(id_, framing.INVALID_REQUEST, "guard mcp-proxy: this request id is already in use.")
            )
            return
        meta = params.get("_meta")
        session = meta.get("sessionId") if isinstance(meta, dict) else None
        entry = Open(
            id_,
            "tools/call",
            tool=params["name"],
            arguments=params.get("arguments") or {},
            session_id=session if isinstance(session, str) and session else None,
        )
        task = asyncio.create_task(self._judge(key, entry, message))
        self.held[key] = (entry, task)
        self._track(task)

    async def _judge(self, key: str, entry: Open, message: dict[str, Any]) -> None:
        call_id = str(entry.id)
        tool, arguments, session = entry.tool or "", entry.arguments, entry.session_id
        asked = False
        try:
            verdict = await self._call(lambda: self.judge.before(call_id, tool, arguments, session))
            if verdict.answer == ASK:
                asked = True
                accepted, why = await self._confirm(entry, verdict.text)
                asked = False
                if not accepted:
                    await self._send(framing.tool_error(entry.id, why))
                    return
            elif verdict.answer != ALLOW:
                await self._send(framing.tool_error(entry.id, verdict.text))
                return
            try:
                line = framing.encode(message, ascii_only=True)
            except Malformed as exc:
                await self._send(framing.error(entry.id, framing.INVALID_PARAMS, f"guard mcp-proxy: {exc}."))
                return
            entry.started = time.monotonic()
            self.open[key] = entry
            self.held.pop(key, None)
            await self._to_server(line)
        except asyncio.CancelledError:
            if asked:  # the question stays unanswered: forget it
                self._track(
                    asyncio.ensure_future(
                        self._call(lambda: self.judge.answered(call_id, tool, arguments, None, session))
                    )
                )
            raise
        except Exception as exc:  # guard failed around the decision: refuse, never forward
            text = (
                f"guard: could not check this call ({type(exc).__name__}: {exc}). Do not retry it now; tell the user."
            )
            await self._send(framing.tool_error(entry.id, text))
        finally:
            if key in self.held and self.held[key][1] is asyncio.current_task():
                del self.held[key]

    async def _confirm(self, entry: Open, reason: str) -> tuple[bool, str]:
        """Ask the person through the client; (accepted, what the agent is told when not)."""
        from guard.redact import redact

        shown = json.dumps(redact(dict(entry.arguments)), ensure_ascii=False)
        shown = shown if len(shown) <= 600 else shown[:600] + "…"
        message = f"{reason}\n\nAllow {self.judge.tool(entry.tool or '')} with {shown}?"
        answer = await self._ask_client("elicitation/create", {"message": message, "requestedSchema": CONFIRM_SCHEMA})
        result = answer.get("result")
        action = result.get("action") if isinstance(result, dict) else None
        approved = {"accept": True, "decline": False}.get(action) if isinstance(action, str) else None
        call_id, tool, arguments, session = str(entry.id), entry.tool or "", entry.arguments, entry.session_id
        await self._call(lambda: self.judge.answered(call_id, tool, arguments, approved, session))
        if approved:
            return True, ""
        if approved is False:
            why = "guard: the user declined this call when asked."
        elif "error" in answer:
            why = "guard: this call needs the user's confirmation and the client could not ask them."
        else:
            why = "guard: the user dismissed the confirmation of this call."
        return False, f"{why} ({reason}) Do not retry it; carry on without it or ask the user what they want."

    async def _ask_client(self, method: str, params: dict[str, Any]) -> Mapping[str, Any]:
        self._counter += 1
        id_ = f"guard-mcp-proxy-{self.judge.nonce}-{self._counter}"
        future: asyncio.Future[Mapping[str, Any]] = asyncio.get_running_loop().create_future()
        key = framing.id_key(id_)
        self.asked[key] = future
        try:
            await self._send({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})
            return await future
        except asyncio.CancelledError:
            if self.asked.pop(key, None) is not None:
                notice = {"requestId": id_, "reason": "the tool call was cancelled"}
                await self._send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": notice})
            raise

    # -- server → client ----------------------------------------------------------------
    async def _pump_server(self) -> None:
        server = self._server
        assert server is not None and server.stdout is not None
        while True:
            line = await framing.read_line(server.stdout)
            if line is None:
                return
            if isinstance(line, Oversized):  # cannot happen below the bound; the client gets an error for it
                self._say(f"the MCP server sent a message of {line.size} bytes; it was dropped.")
                id_ = framing.id_in_head(line.head)
                entry = self.open.pop(framing.id_key(id_), None) if id_ is not None else None
                if entry is not None:
                    await self._send(
                        framing.error(
                            entry.id, framing.TOO_LARGE, "guard mcp-proxy: the server's answer was too large."
                        )
                    )
                continue
            await self._send_raw(line + b"\n")
            if self.open:
                self._answered(line)

    def _answered(self, line: bytes) -> None:
        try:
            message = framing.parse(line)
        except Malformed:
            return
        for m in message if isinstance(message, list) else [message]:
            if not isinstance(m, dict) or "method" in m or not framing.valid_id(m.get("id")):
                continue
            entry = self.open.pop(framing.id_key(m["id"]), None)
            if entry is None or entry.tool is None:
                continue
            result = m.get("result")
            if "error" in m:
                error = m["error"].get("message") if isinstance(m["error"], dict) else None
                self._track(
                    asyncio.ensure_future(self._record(entry, success=False, error=str(error or "error")[:500]))
                )
            elif isinstance(result, dict) and not ("task" in result and "content" not in result):
                success, error = outcome_of(result)  # isError → failure; a started task's outcome is not known yet
                self._track(asyncio.ensure_future(self._record(entry, success=success, error=error)))

    async def _record(self, entry: Open, *, success: bool | None, error: str | None) -> None:
        duration = (time.monotonic() - entry.started) * 1000 if entry.started else None
        call_id, tool, arguments, session = str(entry.id), entry.tool or "", entry.arguments, entry.session_id
        await self._call(
            lambda: self.judge.after(
                call_id, tool, arguments, success=success, error=error, duration_ms=duration, session_id=session
            )
        )

    # -- plumbing -----------------------------------------------------------------------
    async def _forward(self, message: Any) -> None:
        try:
            data = framing.encode(message, ascii_only=True)
        except Malformed as exc:
            await self._send(framing.error(None, framing.PARSE_ERROR, f"guard mcp-proxy: {exc}; it was not forwarded."))
            return
        await self._to_server(data)

    async def _to_server(self, data: bytes) -> None:
        server = self._server
        assert server is not None and server.stdin is not None
        try:
            server.stdin.write(data)
            await server.stdin.drain()
        except (ConnectionError, RuntimeError):
            pass  # the server is gone; _server_gone answers what is open

    async def _send(self, message: Any) -> None:
        await self._send_raw(framing.encode(message))

    async def _send_raw(self, data: bytes) -> None:
        assert self._out is not None
        try:
            self._out.write(data)
            await self._out.drain()
        except (ConnectionError, RuntimeError):
            pass  # the client is gone

    async def _call(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn)

    def _track(self, task: asyncio.Future[Any]) -> None:
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _say(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.stderr.write(f"guard mcp-proxy: {text}\n")
            self.stderr.flush()

    def _shown(self) -> str:
        import shlex

        return f"`{shlex.join(self.command)[:200]}`"


def _call_problem(message: Mapping[str, Any]) -> str | None:
    params = message.get("params")
    if not isinstance(params, dict):
        return "params must be an object"
    name = params.get("name")
    if not isinstance(name, str) or not name:
        return "params.name must be a non-empty string"
    arguments = params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        return "params.arguments must be an object"
    if "id" in message and not framing.valid_id(message.get("id")):
        return "the id must be a string or a number"
    return None


async def _stop(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    try:
        await asyncio.wait_for(process.wait(), 2.0)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


async def _stdio(limit: int) -> tuple[asyncio.StreamReader, Any]:
    """The proxy's own stdin and stdout as asyncio streams (pipes; a thread for files and terminals)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(os.dup(0), "rb", 0))
    except (ValueError, OSError):  # a regular file: feed it from a thread
        loop.run_in_executor(None, _feed, loop, reader)
    try:
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(os.dup(1), "wb", 0)
        )
    except (ValueError, OSError):  # a regular file: plain writes
        return reader, _FileWriter()
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


class _FileWriter:
    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(1, view) :]

    async def drain(self) -> None:
        return None


def _feed(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader) -> None:
    while chunk := os.read(0, 65536):
        loop.call_soon_threadsafe(reader.feed_data, chunk)
    loop.call_soon_threadsafe(reader.feed_eof)


def serve(command: list[str], judge: Judge, *, max_bytes: int = DEFAULT_MAX_BYTES) -> int:
    """Run the proxy until the client or the server goes; the exit code for ``guard mcp-proxy``."""
    return asyncio.run(Proxy(command, judge, max_bytes=max_bytes).run())
