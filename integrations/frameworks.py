"""What the Python agent-framework adapters share: one link to guard per middleware or guardrail.

LangChain (:mod:`guard.integrations.langchain`) and the OpenAI Agents SDK
(:mod:`guard.integrations.openai_agents`) run tools in the agent's own process, so they need no hook
protocol: :class:`FrameworkJudge` hands each step of a call to the flow every host shares
(:func:`guard.integrations.hosts.flow.run`, through the MCP proxy's small event dialect), so a call
is decided, logged, counted and recorded exactly like a hook's, and any error inside guard
becomes a refusal, never a pass. Nothing here imports a framework.

    judge = FrameworkJudge("langchain", guard)
    verdict = judge.before("call_1", "shell", {"command": "ls"}, session_id="thread-1", can_ask=True)
    judge.after("call_1", "shell", {"command": "ls"}, session_id="thread-1", success=True)

The tool keeps its own name (``shell``, ``write_file``): guard's rules for well-known tools
apply, and any other tool is judged by what its arguments carry. ``kinds`` says what the
application's own tools are (``{"search_docs": "read", "publish_note": "write"}``): each is then
judged as that kind (a read auto-allows, a write is judged on its path parameters) instead of
asking as unknown (G187); a command or URL among its arguments is still judged as one.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from guard.integrations.hosts.base import Event
from guard.integrations.mcp.judge import (
    ALLOW,
    ANSWER,
    ASK,
    CALL,
    DENY,
    RESULT,
    McpHost,
    Verdict,
    verdict_of,
    warn_unrecorded,
)
from guard.toolnames import declared_kinds

if TYPE_CHECKING:
    from pathlib import Path

    from guard.core import Guard

__all__ = ["ALLOW", "ASK", "DENY", "FrameworkJudge", "Verdict", "declined", "outcome_text"]


class _FrameworkHost(McpHost):
    """The MCP proxy's event dialect under the framework's name; ``can_ask`` is fixed per host."""

    declares = True  # the application's own ``kinds`` (FrameworkJudge)

    def __init__(self, name: str, *, can_ask: bool) -> None:
        super().__init__()
        self.name = name
        self.can_elicit = can_ask


class FrameworkJudge:
    """An adapter's link to guard; safe to share between the threads a framework runs tools on.

    ``guard`` is a :class:`guard.Guard`, or None for the process's default one (the one
    ``@guarded`` uses, on ``$GUARD_HOME`` or ``~/.guard``), or a workspace path for a Guard of
    its own, opened on the first call.
    """

    def __init__(
        self, framework: str, guard: Guard | str | Path | None = None, kinds: Mapping[str, str] | None = None
    ) -> None:
        self.framework = framework
        self.kinds = declared_kinds(kinds)  # ``{"search_docs": "read"}``: checked here, a typo fails at once
        self._hosts = {True: _FrameworkHost(framework, can_ask=True), False: _FrameworkHost(framework, can_ask=False)}
        self._given = guard
        self._guard: Guard | None = None
        self._lock = threading.Lock()
        self.cwd = os.getcwd()  # the tools run in this process

    @property
    def guard(self) -> Guard:
        if self._guard is None:
            with self._lock:
                if self._guard is None:
                    self._guard = self._open()
        return self._guard

    def _open(self) -> Guard:
        from guard.core import Guard, default_guard

        if self._given is None:
            return default_guard()
        if isinstance(self._given, Guard):
            return self._given
        return Guard(self._given)

    # -- the three steps of a call --------------------------------------------------------
    def before(
        self, call_id: str, tool: str, arguments: Mapping[str, Any], *, session_id: str, can_ask: bool
    ) -> Verdict:
        """allow, ask (only when ``can_ask``: the caller then asks the person) or deny, with the words."""
        return verdict_of(self._run(CALL, call_id, tool, arguments, session_id, can_ask=can_ask))

    def asked(self, call_id: str, tool: str, arguments: Mapping[str, Any], *, session_id: str) -> bool:
        """Whether guard already asked the person about this very call and awaits the answer.

        A framework that pauses to ask (LangGraph's ``interrupt``) runs the tool step again
        on resume; this tells that second run apart, so the call is decided and counted once.
        """
        from guard.integrations.pending import ASKED, Pending

        event = Event(
            host=self.framework,
            name=CALL,
            kind="pre",
            tool=tool,
            params=dict(arguments),
            session_id=session_id,
            call_id=self._call_id(call_id),
        )
        try:
            guard = self.guard
            pending = Pending(guard.workspace, float(guard.config.get("hooks.pending_ttl_seconds")))
            return pending.find(event, (ASKED,)) is not None
        except Exception:  # unknown: decide afresh, which asks again rather than lets through
            return False

    def answered(
        self, call_id: str, tool: str, arguments: Mapping[str, Any], answer: bool | None, *, session_id: str
    ) -> None:
        """The person approved (True), rejected (False) or dismissed (None) guard's question."""
        self._warn(self._run(ANSWER, call_id, tool, arguments, session_id, answer=answer))

    def after(
        self,
        call_id: str,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        session_id: str,
        success: bool | None,
        error: str | None = None,
        duration_ms: float | None = None,
    ) -> None:
        out = self._run(
            RESULT, call_id, tool, arguments, session_id, success=success, error=error, duration_ms=duration_ms
        )
        self._warn(out)

    # -- plumbing -------------------------------------------------------------------------
    def _call_id(self, call_id: str) -> str:
        return f"{self.framework}:{call_id}"

    def _warn(self, out: Mapping[str, Any]) -> None:
        warn_unrecorded(out, f"guard ({self.framework})")

    def _run(
        self,
        event: str,
        call_id: str,
        tool: str,
        arguments: Mapping[str, Any],
        session_id: str,
        *,
        can_ask: bool = False,
        **extra: Any,
    ) -> Mapping[str, Any]:
        from guard.integrations.hosts.flow import run

        payload = {
            "event": event,
            "tool": tool,
            "arguments": dict(arguments),
            "session_id": session_id,
            "call_id": self._call_id(call_id),
            "cwd": self.cwd,
            **extra,
        }
        if tool in self.kinds:
            payload["kind"] = self.kinds[tool]
        try:
            raw = json.dumps(payload, ensure_ascii=False, default=str)
        except (TypeError, ValueError) as exc:  # arguments guard cannot even write down are refused
            raw = json.dumps({**payload, "arguments": f"unserialisable ({exc})"})
        reply = run(self._hosts[can_ask], raw, lambda: self.guard, via=self.framework)
        return reply.output or {}


def declined(answer: bool | None, reason: str) -> str:
    """The refusal the agent reads when the person rejected or dismissed guard's question."""
    why = "guard: the user declined this call when asked." if answer is False else "guard: the call was not approved."
    return f"{why} ({reason}) Do not retry it; carry on without it or ask the user what they want."


def outcome_text(value: Any, limit: int = 500) -> str:
    """A short text of a tool's error for the result log."""
    text = value if isinstance(value, str) else repr(value)
    return text[:limit]
