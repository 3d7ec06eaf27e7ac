"""What ``guard mcp-proxy`` asks guard about a ``tools/call``, through the flow every host shares.

The proxy is one more host: :class:`McpHost` reads the proxy's own small events (a call about
to be forwarded, the person's answer to an elicitation, the server's result) into an ``Event``
and shapes guard's answer into ``{"answer": "allow" | "ask" | "deny", "text": ...}``.
:class:`Judge` hands each event to :func:`guard.integrations.hosts.flow.run`, so a call through the
proxy is decided, logged, counted and recorded exactly like a hook's (dispatch → decide →
record result), and any error inside guard becomes a refusal, never a pass.

    judge = Judge(open_guard, server="github", session_id="s1")
    verdict = judge.before("7", "create_issue", {"title": "x"})   # Verdict(answer="ask", text=...)
    judge.answered("7", "create_issue", {"title": "x"}, True)
    judge.after("7", "create_issue", {"title": "x"}, success=True, error=None, duration_ms=12.0)
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from guard.integrations.hosts.base import (
    POST,
    PRE,
    RESOLUTION,
    Event,
    Host,
    Reply,
    opt_number,
    opt_str,
    req_obj,
    req_str,
)

if TYPE_CHECKING:
    from guard.core import Guard

ALLOW, ASK, DENY = "allow", "ask", "deny"

CALL, RESULT, ANSWER = "tools/call", "tools/result", "elicitation"

# ``python server.py`` names no server: look past launchers for the script or package.
_LAUNCHERS = {"python", "python3", "node", "npx", "uv", "uvx", "bunx", "bun", "deno", "pipx", "docker", "podman"}
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def server_name(command: list[str], name: str | None = None) -> str:
    """The server's name as hosts spell it in ``mcp__<server>__<tool>``.

    ``--name`` wins; else the command's basename, or for a launcher (``python``, ``npx``,
    ``uvx``, ``docker`` ...) the first later argument that is not a flag:
    ``npx -y @modelcontextprotocol/server-github`` → ``server-github``.
    """
    raw = name
    if not raw:
        words = [os.path.basename(w) for w in command]
        raw = words[0] if words else "server"
        if re.sub(r"\d+(\.\d+)*$", "", raw) in _LAUNCHERS:
            raw = next((w for w in words[1:] if w and not w.startswith("-") and w != "run"), raw)
        raw = raw.rsplit("/", 1)[-1].split("@", 1)[0] or raw
        raw = re.sub(r"\.(py|js|mjs|cjs|ts)$", "", raw)
    return _UNSAFE.sub("_", raw).strip("_") or "server"


@attrs.frozen
class Verdict:
    answer: str  # allow / ask / deny
    text: str
    risk: str | None = None


class McpHost(Host):
    """The proxy's dialect: events it builds itself, answers it interprets itself."""

    name = "mcp"
    event_key = "event"
    events: ClassVar[Mapping[str, str]] = {CALL: PRE, RESULT: POST, ANSWER: RESOLUTION}

    declares = False  # an MCP server's tools are never taken at a declared kind

    def __init__(self) -> None:
        self.can_elicit = False  # set from the client's ``initialize`` capabilities

    def parse(self, payload: Mapping[str, Any], env: Mapping[str, str]) -> Event:
        name = str(payload[self.event_key])
        fields: dict[str, Any] = {
            "tool": req_str(payload, "tool"),
            "params": req_obj(payload, "arguments"),
            "session_id": opt_str(payload, "session_id"),
            "call_id": opt_str(payload, "call_id"),
            "cwd": opt_str(payload, "cwd"),
        }
        if self.declares:  # guard's own framework adapters say what an application's tool is
            fields["declared"] = opt_str(payload, "kind")
        if name == RESULT:
            success = payload.get("success")
            fields["success"] = success if isinstance(success, bool) else None
            fields["error"] = opt_str(payload, "error")
            fields["duration_ms"] = opt_number(payload, "duration_ms")
        if name == ANSWER:
            answer = payload.get("answer")
            fields["answer"] = answer if isinstance(answer, bool) else None
        return Event(host=self.name, name=name, kind=self.events[name], **fields)

    def can_ask(self, event: Event) -> bool:
        return self.can_elicit

    def allow(self, event: Event, reason: str) -> Reply:
        return Reply({"answer": ALLOW, "text": reason})

    def ask(self, event: Event, reason: str, risk: str | None = None) -> Reply:
        return Reply({"answer": ASK, "text": reason, "risk": risk})

    def deny(self, event: Event, why: str, instead: str) -> Reply:
        return Reply({"answer": DENY, "text": f"{why} {instead}"})

    def block_prompt(self, event: Event, reason: str) -> Reply:
        return Reply({"answer": DENY, "text": reason})

    def unreadable(self, message: str) -> Reply:
        return Reply({"answer": DENY, "text": message})


def verdict_of(out: Mapping[str, Any]) -> Verdict:
    """The shared flow's answer to a call event, as a verdict; anything but allow/ask/deny is refused."""
    answer = out.get("answer")
    if answer not in (ALLOW, ASK, DENY):  # the flow always answers; anything else is refused
        return Verdict(DENY, str(out.get("text") or "guard: no decision for this call; it is refused."))
    risk = out.get("risk")
    return Verdict(str(answer), str(out.get("text") or ""), risk if isinstance(risk, str) else None)


def warn_unrecorded(out: Mapping[str, Any], who: str) -> None:
    """guard failed to record an answer or a result: say so on stderr; the call is not affected."""
    message = out.get("systemMessage")
    if isinstance(message, str) and message:
        sys.stderr.write(f"{who}: {message}\n")


class Judge:
    """One proxy's link to guard: every method runs one event through the shared flow.

    Not thread-safe: the proxy calls it from one worker thread, in the order calls arrive.
    """

    def __init__(
        self,
        open_guard: Callable[[], Guard],
        *,
        server: str,
        session_id: str,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.host = McpHost()
        self.server = server
        self.session_id = session_id
        self.cwd = cwd
        self.env = dict(os.environ if env is None else env)
        self._open = open_guard
        self._guard: Guard | None = None
        self.nonce = os.urandom(3).hex()  # call ids of two proxies in one session never meet

    def tool(self, name: str) -> str:
        return f"mcp__{self.server}__{name}"

    def before(self, call_id: str, tool: str, arguments: Mapping[str, Any], session_id: str | None = None) -> Verdict:
        return verdict_of(self._run(CALL, call_id, tool, arguments, session_id))

    def answered(
        self, call_id: str, tool: str, arguments: Mapping[str, Any], answer: bool | None, session_id: str | None = None
    ) -> None:
        """The person accepted (True), declined (False) or dismissed (None) guard's question."""
        self._warn(self._run(ANSWER, call_id, tool, arguments, session_id, answer=answer))

    def after(
        self,
        call_id: str,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        success: bool | None,
        error: str | None,
        duration_ms: float | None,
        session_id: str | None = None,
    ) -> None:
        fields = {"success": success, "error": error, "duration_ms": duration_ms}
        self._warn(self._run(RESULT, call_id, tool, arguments, session_id, **fields))

    @staticmethod
    def _warn(out: Mapping[str, Any]) -> None:
        warn_unrecorded(out, "guard mcp-proxy")

    def close(self) -> None:
        if self._guard is not None:
            self._guard.close()
            self._guard = None

    def _guard_once(self) -> Guard:
        if self._guard is None:
            self._guard = self._open()
        return self._guard

    def _run(
        self, event: str, call_id: str, tool: str, arguments: Mapping[str, Any], session_id: str | None, **extra: Any
    ) -> Mapping[str, Any]:
        from guard.integrations.hosts.flow import run

        payload = {
            "event": event,
            "tool": self.tool(tool),
            "arguments": dict(arguments),
            "session_id": session_id or self.session_id,
            "call_id": f"{self.nonce}:{call_id}",
            "cwd": self.cwd,
            **extra,
        }
        reply = run(self.host, json.dumps(payload, ensure_ascii=False), self._guard_once, env=self.env, via="mcp-proxy")
        return reply.output or {}
