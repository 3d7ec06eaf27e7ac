"""guard for LangChain v1 agents: one middleware judges every tool call.

    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver
    from guard.integrations.langchain import GuardMiddleware

    agent = create_agent(model, tools, middleware=[GuardMiddleware()], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "chat-1"}}
    result = agent.invoke({"messages": [("user", "tidy my home folder")]}, config)
    if "__interrupt__" in result:                       # guard asks the person about a call
        print(result["__interrupt__"][0].value["action_requests"][0]["description"])
        result = agent.invoke(Command(resume={"type": "approve"}), config)   # or "reject"

Each call goes through guard before its tool runs (``wrap_tool_call``, and
``awrap_tool_call`` for ``ainvoke``/``astream``):

- auto_allow: the tool runs; its result is recorded (a ``ToolMessage`` with
  ``status="error"`` or an exception is a failure).
- block: the tool does not run; the model gets a ``ToolMessage(status="error")`` with guard's
  reason and what to do instead.
- request_confirm: the graph pauses through LangGraph's ``interrupt()`` with a payload in the
  shape of LangChain's ``HumanInTheLoopMiddleware`` (``action_requests``, ``review_configs``)
  plus a ``guard`` entry. Resume with ``Command(resume=...)``: ``{"type": "approve"}`` (or
  ``True``, ``"approve"``, ``{"decisions": [{"type": "approve"}]}``) runs the tool;
  ``{"type": "reject", "message": ...}`` (or ``False``) answers with a refusal. The answer is
  recorded as the person's. Pausing needs a checkpointer; without one, or with
  ``interrupt=False``, the call is refused with the reason and a ``guard approve ID`` the person
  can run, after which the same call goes through once.

The session is the LangGraph thread (``configurable.thread_id``), else ``session_id``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage
from langgraph.errors import GraphBubbleUp
from langgraph.types import interrupt

from guard.integrations.frameworks import ALLOW, DENY, FrameworkJudge, declined, outcome_text
from guard.integrations.hosts.base import outcome_of

if TYPE_CHECKING:
    from pathlib import Path

    from langchain.agents.middleware import ToolCallRequest
    from langgraph.types import Command

    from guard.core import Guard

__all__ = ["GuardMiddleware"]

_APPROVE = {"approve", "approved", "accept", "allow", "yes", "y", "ok"}
_REJECT = {"reject", "rejected", "decline", "deny", "no", "n"}
_CHECKPOINTER_KEY = "__pregel_checkpointer"  # set in a task's config when the graph has a checkpointer


class GuardMiddleware(AgentMiddleware):
    """Judge every tool call of a ``create_agent`` agent with guard.

    ``guard``: a :class:`guard.Guard`, a workspace path, or None for the process's default
    Guard (``$GUARD_HOME`` or ``~/.guard``). ``session_id``: the guard session when the run has
    no ``thread_id``. ``interrupt``: ask the person through LangGraph's ``interrupt()`` (needs a
    checkpointer); False refuses such calls with the reason and an out-of-band approval.
    ``kinds``: what the agent's own tools are, ``{"search_docs": "read", "publish_note": "write"}``
    (see :mod:`guard.integrations.frameworks`); any other tool guard does not know asks.
    """

    def __init__(
        self,
        guard: Guard | str | Path | None = None,
        *,
        session_id: str | None = None,
        interrupt: bool = True,
        kinds: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.judge = FrameworkJudge("langchain", guard, kinds)
        self.session_id = session_id or f"langchain-{os.getpid()}-{os.urandom(3).hex()}"
        self.interrupt = interrupt

    # -- LangChain's hooks ------------------------------------------------------------------
    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]
    ) -> ToolMessage | Command[Any]:
        call = _Call.of(request, self)
        refusal = self._before(call, request)
        if refusal is not None:
            return refusal
        start = time.perf_counter()
        try:
            result = handler(request)
        except GraphBubbleUp:  # the tool itself paused the graph: no result yet
            raise
        except Exception as exc:
            self._failed(call, exc, start)
            raise
        self._record(call, result, start)
        return result

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]
    ) -> ToolMessage | Command[Any]:
        call = _Call.of(request, self)
        refusal = self._before(call, request)
        if refusal is not None:
            return refusal
        start = time.perf_counter()
        try:
            result = await handler(request)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            self._failed(call, exc, start)
            raise
        self._record(call, result, start)
        return result

    # -- one decision, both drivers -----------------------------------------------------------
    def _before(self, call: _Call, request: ToolCallRequest) -> ToolMessage | None:
        """None to run the tool, else the refusal the model reads. May pause the graph (interrupt)."""
        judge, reason = self.judge, "guard asked the user about this call"
        # On resume LangGraph runs this step again: the question is already out, so skip to the answer.
        if not (self.interrupt and judge.asked(call.id, call.tool, call.args, session_id=call.session)):
            verdict = judge.before(
                call.id, call.tool, call.args, session_id=call.session, can_ask=self.interrupt and _can_pause(request)
            )
            if verdict.answer == ALLOW:
                return None
            if verdict.answer == DENY:
                return call.refusal(verdict.text)
            reason = verdict.text
        answer = interrupt(_question(call, reason))  # raises GraphInterrupt until resumed
        approved, message = _approval(answer)
        judge.answered(call.id, call.tool, call.args, approved, session_id=call.session)
        if approved:
            return None
        text = declined(approved, reason)
        return call.refusal(f"{text} The user said: {message}" if message else text)

    def _record(self, call: _Call, result: ToolMessage | Command[Any], start: float) -> None:
        success, error = True, None
        if isinstance(result, ToolMessage):
            if result.status == "error":
                success, error = False, outcome_text(result.content)
            else:
                found, error = outcome_of(result.content)
                success = True if found is None else found
        self.judge.after(
            call.id, call.tool, call.args, session_id=call.session, success=success, error=error, duration_ms=_ms(start)
        )

    def _failed(self, call: _Call, exc: Exception, start: float) -> None:
        error = f"{type(exc).__name__}: {exc}"
        self.judge.after(
            call.id,
            call.tool,
            call.args,
            session_id=call.session,
            success=False,
            error=error[:500],
            duration_ms=_ms(start),
        )


class _Call:
    """The parts of a LangChain tool call guard needs."""

    __slots__ = ("args", "id", "session", "tool")

    def __init__(self, tool: str, args: Mapping[str, Any], id_: str, session: str) -> None:
        self.tool, self.args, self.id, self.session = tool, args, id_, session

    @classmethod
    def of(cls, request: ToolCallRequest, middleware: GuardMiddleware) -> _Call:
        tool_call = request.tool_call
        args = tool_call.get("args")
        configurable = _configurable(request)
        thread = configurable.get("thread_id")
        return cls(
            str(tool_call.get("name") or "tool"),
            args if isinstance(args, Mapping) else {"input": args},
            str(tool_call.get("id") or os.urandom(6).hex()),
            str(thread) if thread not in (None, "") else middleware.session_id,
        )

    def refusal(self, text: str) -> ToolMessage:
        return ToolMessage(content=text, tool_call_id=self.id, name=self.tool, status="error")


def _configurable(request: ToolCallRequest) -> Mapping[str, Any]:
    runtime = getattr(request, "runtime", None)
    config = getattr(runtime, "config", None) or {}
    configurable = config.get("configurable") if isinstance(config, Mapping) else None
    return configurable if isinstance(configurable, Mapping) else {}


def _can_pause(request: ToolCallRequest) -> bool:
    """``interrupt()`` can pause and later resume this run only when the graph has a checkpointer."""
    if _configurable(request).get(_CHECKPOINTER_KEY) is not None:
        return True
    try:
        from langgraph.config import get_config

        return get_config().get("configurable", {}).get(_CHECKPOINTER_KEY) is not None
    except RuntimeError:  # not inside a graph run
        return False


def _question(call: _Call, reason: str) -> dict[str, Any]:
    """The interrupt's payload, in the shape of LangChain's human-in-the-loop requests."""
    return {
        "action_requests": [{"name": call.tool, "args": dict(call.args), "description": reason}],
        "review_configs": [{"action_name": call.tool, "allowed_decisions": ["approve", "reject"]}],
        "guard": {"decision": "request_confirm", "reason": reason, "tool_call_id": call.id, "session_id": call.session},
    }


def _approval(answer: Any) -> tuple[bool | None, str | None]:
    """The person's resume value → (approved / rejected / no answer, their message)."""
    if isinstance(answer, Mapping) and isinstance(answer.get("decisions"), list) and answer["decisions"]:
        answer = answer["decisions"][0]  # HumanInTheLoopMiddleware's shape: one call per question
    message = None
    if isinstance(answer, Mapping):
        message = answer.get("message") if isinstance(answer.get("message"), str) else None
        if isinstance(answer.get("approved"), bool):
            return answer["approved"], message
        answer = answer.get("type", answer.get("action"))
    if isinstance(answer, bool):
        return answer, message
    if isinstance(answer, str):
        word = answer.strip().lower()
        if word in _APPROVE:
            return True, message
        if word in _REJECT:
            return False, message
    return None, message


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)
