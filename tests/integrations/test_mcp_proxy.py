"""``guard mcp-proxy`` end to end: a real FastMCP stdio server, a real ``mcp`` client, guard between.

The server's tools are harmless by construction: ``run`` only writes the command string it was
given into a record file (it never executes it), ``write_file`` writes inside the test's folder,
``crash`` ends the server process. Every run has its own HOME and GUARD_HOME.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, guard_cli_env

mcp = pytest.importorskip("mcp", reason="the [mcp] extra is not installed")
from mcp import ClientSession, StdioServerParameters, types  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.shared.exceptions import McpError  # noqa: E402

SERVER = '''
import asyncio, os, sys
from pathlib import Path
from mcp.server.fastmcp import Context, FastMCP
from mcp.types import SamplingMessage, TextContent
from pydantic import BaseModel

RECORD = Path(sys.argv[1])
ROOT = RECORD.parent
server = FastMCP("demo")
arrived = 0
everyone = asyncio.Event()
finished = {}


def note(*words):
    with RECORD.open("a", encoding="utf-8") as f:
        f.write("\\t".join(str(w) for w in words) + "\\n")


@server.tool()
def echo(text: str) -> str:
    note("echo", text)
    return text


@server.tool()
def run(command: str) -> str:
    """Records the command string. It never executes it."""
    note("run", command)
    return "recorded"


@server.tool()
def write_file(path: str, content: str) -> str:
    target = (ROOT / path).resolve()
    if ROOT.resolve() not in target.parents:
        raise ValueError("outside the test folder")
    target.write_text(content, encoding="utf-8")
    note("write_file", path)
    return "written"


@server.tool()
def fail(reason: str) -> str:
    note("fail", reason)
    raise ValueError(reason)


@server.tool()
async def gate(n: int, total: int) -> str:
    """Answers only once all calls are in, the highest n first: responses leave in reverse order."""
    global arrived
    arrived += 1
    if arrived == total:
        everyone.set()
    await everyone.wait()
    if n + 1 < total:
        await finished.setdefault(n + 1, asyncio.Event()).wait()
    note("gate", n)
    finished.setdefault(n, asyncio.Event()).set()
    return f"gate {n}"


@server.tool()
async def hang() -> str:
    note("hang")
    await asyncio.Event().wait()
    return "never"


class Name(BaseModel):
    name: str


@server.tool()
async def relay(ctx: Context) -> str:
    """Uses every server-to-client channel: a log notification, roots, sampling, elicitation."""
    await ctx.info("hello from the server")
    roots = await ctx.session.list_roots()
    reply = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text="ping"))], max_tokens=5
    )
    asked = await ctx.elicit("your name?", schema=Name)
    name = asked.data.name if asked.action == "accept" else "-"
    return f"{reply.content.text} {len(roots.roots)} {name}"


@server.tool()
def crash() -> str:
    note("crash")
    sys.stdout.flush()
    os._exit(3)


server.run()
'''

ALLOWED = [
    "mcp__demo__echo",
    "mcp__demo__relay",
    "mcp__demo__fail",
    "mcp__demo__gate",
    "mcp__demo__hang",
    "mcp__demo__crash",
]
TIMEOUT = timedelta(seconds=60)  # a hang fails the test instead of stalling the suite; nothing is timed


class Rig:
    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path
        self.home = tmp_path / "home"
        self.ws = tmp_path / "guard-home"
        self.home.mkdir()
        self.ws.mkdir(mode=0o700)
        allow = ", ".join(json.dumps(t) for t in ALLOWED)
        (self.ws / "guard.toml").write_text(f"[permissions]\nallow = [{allow}]\n", encoding="utf-8")
        self.server = tmp_path / "server.py"
        self.server.write_text(SERVER, encoding="utf-8")
        self.record = tmp_path / "record.txt"
        self.errlog = tmp_path / "proxy-stderr.txt"
        self.env = guard_cli_env() | {"HOME": str(self.home), "GUARD_HOME": str(self.ws)}
        self.env["PYTHONPATH"] = str(ROOT) + os.pathsep + self.env.get("PYTHONPATH", "")

    def argv(self, *flags: str) -> list[str]:
        return [
            "-m",
            "guard",
            "mcp-proxy",
            "--name",
            "demo",
            *flags,
            "--",
            sys.executable,
            str(self.server),
            str(self.record),
        ]

    def seen(self) -> list[list[str]]:
        """What the server's tools were called with, in the order they ran."""
        if not self.record.exists():
            return []
        return [line.split("\t") for line in self.record.read_text(encoding="utf-8").splitlines()]

    def jsonl(self, name: str) -> list[dict[str, Any]]:
        path = self.ws / name
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    @contextlib.asynccontextmanager
    async def client(
        self, *, elicit: Any = None, flags: tuple[str, ...] = (), **callbacks: Any
    ) -> AsyncIterator[ClientSession]:
        params = StdioServerParameters(command=sys.executable, args=self.argv(*flags), env=self.env, cwd=self.root)
        with self.errlog.open("a", encoding="utf-8") as err:
            async with (
                stdio_client(params, errlog=err) as (read, write),
                ClientSession(read, write, read_timeout_seconds=TIMEOUT, elicitation_callback=elicit, **callbacks) as s,
            ):
                await s.initialize()
                yield s


@pytest.fixture
def rig(tmp_path: Path) -> Rig:
    return Rig(tmp_path)


def drive(scenario: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(scenario())


def text_of(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


def answer(action: str) -> Any:
    asked: list[str] = []

    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action=action, content={} if action == "accept" else None)  # type: ignore[arg-type]

    callback.asked = asked  # type: ignore[attr-defined]
    return callback


# -- relaying and judging ------------------------------------------------------------------
def test_tools_are_listed_and_an_allowed_call_is_relayed_and_recorded(rig: Rig) -> None:
    async def scenario() -> tuple[list[str], types.CallToolResult]:
        async with rig.client() as s:
            tools = await s.list_tools()
            return [t.name for t in tools.tools], await s.call_tool("echo", {"text": "hello"})

    names, result = drive(scenario)
    assert {"echo", "run", "write_file", "gate", "crash"} <= set(names)
    assert not result.isError and text_of(result) == "hello"
    assert rig.seen() == [["echo", "hello"]]
    runs = rig.jsonl(".command-execution.jsonl")
    assert [(r["tool"], r["status"]) for r in runs] == [("mcp__demo__echo", "success")]
    assert isinstance(runs[0]["duration_ms"], (int, float))
    decisions = rig.jsonl(".fusion-decisions.jsonl")
    assert [(d["host"], d["via"], d["decision"]) for d in decisions] == [("mcp", "mcp-proxy", "auto_allow")]


def test_server_requests_and_notifications_pass_both_ways(rig: Rig) -> None:
    """Sampling, roots, the server's own elicitation and its log messages reach the client, and back."""
    logged: list[str] = []

    async def sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="pong"), model="fake"
        )

    async def roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=types.FileUrl(rig.root.as_uri()))])

    async def log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(str(params.data))

    async def name(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert params.message == "your name?"  # the server's own question, not guard's
        return types.ElicitResult(action="accept", content={"name": "ada"})

    async def scenario() -> types.CallToolResult:
        callbacks = {"sampling_callback": sampling, "list_roots_callback": roots, "logging_callback": log}
        async with rig.client(elicit=name, **callbacks) as s:
            return await s.call_tool("relay", {})

    result = drive(scenario)
    assert not result.isError and text_of(result) == "pong 1 ada"
    assert logged == ["hello from the server"]


def test_the_clients_session_id_is_the_guard_session(rig: Rig) -> None:
    async def scenario() -> None:
        async with rig.client(flags=("--session-id", "desk-1")) as s:
            await s.call_tool("echo", {"text": "a"})
            await s.call_tool("echo", {"text": "b"}, meta={"sessionId": "chat-7"})

    drive(scenario)
    assert [d["session_id"] for d in rig.jsonl(".fusion-decisions.jsonl")] == ["desk-1", "chat-7"]
    assert [r["session_id"] for r in rig.jsonl(".command-execution.jsonl")] == ["desk-1", "chat-7"]


def test_a_dangerous_command_given_as_data_is_blocked_and_never_reaches_the_server(rig: Rig) -> None:
    async def scenario() -> tuple[types.CallToolResult, types.CallToolResult]:
        async with rig.client() as s:
            blocked = await s.call_tool("run", {"command": "rm -rf ~"})
            near_miss = await s.call_tool("echo", {"text": "rm -rf ~"})  # the same words as an echo's text
            return blocked, near_miss

    blocked, near_miss = drive(scenario)
    assert blocked.isError
    assert text_of(blocked).startswith("guard: this mcp__demo__run call is blocked")
    block = next(d for d in rig.jsonl(".fusion-decisions.jsonl") if d["decision"] == "block")
    assert block["tool"] == "mcp__demo__run" and block["risk"] == "critical"
    assert "Instead" in text_of(blocked) or "Do not retry" in text_of(blocked)
    assert not near_miss.isError and text_of(near_miss) == "rm -rf ~"
    assert rig.seen() == [["echo", "rm -rf ~"]]
    assert [r["tool"] for r in rig.jsonl(".command-execution.jsonl")] == ["mcp__demo__echo"]


def test_a_tool_error_is_recorded_as_a_failure(rig: Rig) -> None:
    async def scenario() -> types.CallToolResult:
        async with rig.client() as s:
            return await s.call_tool("fail", {"reason": "disk full"})

    result = drive(scenario)
    assert result.isError and "disk full" in text_of(result)
    runs = rig.jsonl(".command-execution.jsonl")
    assert [(r["tool"], r["status"]) for r in runs] == [("mcp__demo__fail", "failure")]


# -- request_confirm: elicitation ----------------------------------------------------------
def test_confirm_accepted_through_elicitation_is_forwarded(rig: Rig) -> None:
    accept = answer("accept")

    async def scenario() -> types.CallToolResult:
        async with rig.client(elicit=accept) as s:
            return await s.call_tool("write_file", {"path": "notes.txt", "content": "hi"})

    result = drive(scenario)
    assert not result.isError and text_of(result) == "written"
    assert (rig.root / "notes.txt").read_text(encoding="utf-8") == "hi"
    assert len(accept.asked) == 1 and "mcp__demo__write_file" in accept.asked[0]
    assert [i["action"] for i in rig.jsonl(".user-interactions.jsonl")] == ["approved"]
    assert [r["status"] for r in rig.jsonl(".command-execution.jsonl")] == ["success"]


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_confirm_declined_or_cancelled_is_refused(rig: Rig, action: str) -> None:
    refuse = answer(action)

    async def scenario() -> types.CallToolResult:
        async with rig.client(elicit=refuse) as s:
            return await s.call_tool("write_file", {"path": "notes.txt", "content": "hi"})

    result = drive(scenario)
    assert result.isError and "Do not retry" in text_of(result)
    assert len(refuse.asked) == 1
    assert not (rig.root / "notes.txt").exists() and rig.seen() == []
    expected = ["denied"] if action == "decline" else []  # a dismissed question is no answer
    assert [i["action"] for i in rig.jsonl(".user-interactions.jsonl")] == expected
    assert rig.jsonl(".command-execution.jsonl") == []


def test_confirm_without_elicitation_is_refused_with_the_reason(rig: Rig) -> None:
    async def scenario() -> types.CallToolResult:
        async with rig.client() as s:  # no elicitation callback: the client declares no capability
            return await s.call_tool("write_file", {"path": "notes.txt", "content": "hi"})

    result = drive(scenario)
    assert result.isError
    text = text_of(result)
    assert "needs the user's confirmation" in text and "G187" in text and "guard approve" in text
    assert not (rig.root / "notes.txt").exists() and rig.seen() == []


# -- concurrency and the server going away --------------------------------------------------
def test_twenty_calls_in_flight_are_all_answered_with_their_own_ids(rig: Rig) -> None:
    total = 20

    async def scenario() -> list[types.CallToolResult]:
        async with rig.client() as s:
            return list(await asyncio.gather(*(s.call_tool("gate", {"n": n, "total": total}) for n in range(total))))

    results = drive(scenario)
    assert [text_of(r) for r in results] == [f"gate {n}" for n in range(total)]
    assert [int(w[1]) for w in rig.seen()] == list(reversed(range(total)))  # answered out of order
    assert len(rig.jsonl(".command-execution.jsonl")) == total


def test_a_server_crash_answers_open_calls_with_errors(rig: Rig) -> None:
    async def scenario() -> list[BaseException | types.CallToolResult]:
        async with rig.client() as s:
            hanging = asyncio.ensure_future(s.call_tool("hang", {}))
            while ["hang"] not in rig.seen():  # the hang call has reached the server
                await asyncio.sleep(0.01)
            crashed = asyncio.ensure_future(s.call_tool("crash", {}))
            return list(await asyncio.gather(hanging, crashed, return_exceptions=True))

    outcomes = drive(scenario)
    assert all(isinstance(o, McpError) for o in outcomes), outcomes
    assert all("exited with code 3" in str(o) for o in outcomes)
    assert "exited with code 3" in rig.errlog.read_text(encoding="utf-8")
    failures = [r for r in rig.jsonl(".command-execution.jsonl") if r["status"] == "failure"]
    assert {r["tool"] for r in failures} == {"mcp__demo__hang", "mcp__demo__crash"}


# -- the wire, byte by byte ------------------------------------------------------------------
class Wire:
    """The proxy driven over raw pipes, for what no SDK client would send."""

    def __init__(self, rig: Rig, *flags: str) -> None:
        self.rig, self.flags = rig, flags

    async def __aenter__(self) -> Wire:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            *self.rig.argv(*self.flags),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self.rig.env,
            cwd=self.rig.root,
        )
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "wire", "version": "0"}}
        await self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
        assert (await self.read())["id"] == 0
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self.proc.returncode is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            await asyncio.wait_for(self.proc.wait(), 30)

    async def send(self, message: Any) -> None:
        await self.send_raw(json.dumps(message).encode() + b"\n")

    async def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        await self.proc.stdin.drain()

    async def read(self) -> Any:
        """The next response (the server's log notifications are skipped)."""
        assert self.proc.stdout is not None
        while True:
            message = json.loads(await asyncio.wait_for(self.proc.stdout.readline(), 30))
            if isinstance(message, list) or "id" in message:
                return message

    async def call(self, id_: Any, name: str, arguments: Any) -> Any:
        await self.send(
            {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
        )
        return await self.read()


def test_malformed_messages_get_errors_and_are_not_forwarded(rig: Rig) -> None:
    rm = '"arguments": {"command": "rm -rf ~"}'
    lines = [
        b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "run", ' + rm.encode(),  # cut short
        b'{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "echo", "name": "run", '
        + rm.encode()
        + b"}}",  # duplicate key: the server might read the other one
        b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "run", "arguments": "rm -rf ~"}}',
        b'{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "run", "arguments": {"command": NaN}}}',
        b'\xff{"jsonrpc": "2.0"}',
        b'[{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "run", ' + rm.encode() + b"}}]",
    ]

    async def scenario() -> tuple[list[Any], Any]:
        async with Wire(rig) as wire:
            answers = []
            for line in lines:
                await wire.send_raw(line + b"\n")
                answers.append(await wire.read())
            return answers, await wire.call(10, "echo", {"text": "still here"})

    answers, after = drive(scenario)
    *singles, batch = answers
    assert [(a["id"], a["error"]["code"]) for a in singles] == [
        (None, -32700),
        (None, -32700),
        (7, -32602),
        (None, -32700),
        (None, -32700),
    ]
    assert [(a["id"], a["error"]["code"]) for a in batch] == [(9, -32600)]
    assert after["id"] == 10 and after["result"]["content"][0]["text"] == "still here"
    assert rig.seen() == [["echo", "still here"]]


def test_a_call_hidden_behind_a_carriage_return_never_reaches_the_server(rig: Rig) -> None:
    """One JSON line for guard, three lines for a server that also splits on CR: forwarded re-encoded."""
    inner = b'{"jsonrpc": "2.0", "id": 21, "method": "tools/call", "params": {"name": "run", "arguments": {"command": "rm -rf ~"}}}'
    line = b'{"jsonrpc": "2.0", "id": 20, "method": "ping", "params": {"x":\r' + inner + b"\r}}"

    async def scenario() -> tuple[Any, Any]:
        async with Wire(rig) as wire:
            await wire.send_raw(line + b"\n")
            pong = await wire.read()
            return pong, await wire.call(22, "echo", {"text": "after"})

    pong, after = drive(scenario)
    assert pong == {"jsonrpc": "2.0", "id": 20, "result": {}}
    assert after["id"] == 22
    assert rig.seen() == [["echo", "after"]]


def test_an_oversized_message_is_refused_and_the_stream_carries_on(rig: Rig) -> None:
    async def scenario() -> tuple[Any, Any]:
        async with Wire(rig, "--max-message-bytes", "2048") as wire:
            big = await wire.call(11, "echo", {"text": "x" * 5000})
            small = await wire.call(12, "echo", {"text": "small"})
            return big, small

    big, small = drive(scenario)
    assert big["id"] == 11 and big["error"]["code"] == -32001 and "not forwarded" in big["error"]["message"]
    assert small["id"] == 12 and small["result"]["content"][0]["text"] == "small"
    assert rig.seen() == [["echo", "small"]]


def test_the_proxy_exits_when_the_server_crashes(rig: Rig) -> None:
    async def scenario() -> tuple[Any, int, bytes]:
        async with Wire(rig) as wire:
            answer = await wire.call(13, "crash", {})
            code = await asyncio.wait_for(wire.proc.wait(), 30)
            assert wire.proc.stderr is not None
            return answer, code, await wire.proc.stderr.read()

    answer, code, stderr = drive(scenario)
    assert answer["id"] == 13 and answer["error"]["code"] == -32000
    assert code == 1
    assert b"guard mcp-proxy: the MCP server" in stderr and b"exited with code 3" in stderr


def test_a_server_that_cannot_start_is_reported(rig: Rig) -> None:
    import subprocess

    missing = str(rig.root / "no-such-server")
    proc = subprocess.run(
        [sys.executable, "-m", "guard", "mcp-proxy", "--", missing],
        input=b"",
        capture_output=True,
        env=rig.env,
        timeout=60,
    )
    assert proc.returncode == 127
    assert b"cannot start the MCP server" in proc.stderr and proc.stdout == b""


def test_no_server_command_is_a_usage_error(rig: Rig) -> None:
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "guard", "mcp-proxy", "--name", "x"], capture_output=True, env=rig.env, timeout=60
    )
    assert proc.returncode == 2 and b"after --" in proc.stderr and proc.stdout == b""
