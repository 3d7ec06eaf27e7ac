"""guard for the OpenAI Agents SDK: a tool input guardrail, the SDK's approvals, result recording.

    from agents import Agent, Runner, function_tool
    from guard.integrations.openai_agents import guard_tools

    agent = Agent(name="ops", tools=guard_tools([shell, write_note]))
    result = await Runner.run(agent, "tidy my home folder")
    while result.interruptions:                      # guard asks the person about a call
        state = result.to_state()
        for item in result.interruptions:
            state.approve(item) if input(f"run {item.name} {item.arguments}? ") == "y" else state.reject(item)
        result = await Runner.run(agent, state)

:func:`guard_tools` arms each ``FunctionTool`` (in place, and returns them):

- a tool input guardrail named ``guard``: auto_allow lets the call run; block rejects it with
  ``ToolGuardrailFunctionOutput.reject_content``, so the model reads guard's reason and what
  to do instead, and the tool never runs;
- ``needs_approval``: request_confirm pauses the run with the SDK's own approval interruption
  (``result.interruptions``); ``state.approve(item)`` runs the call and is recorded as the
  person's approval. A tool that already needed approval still does;
- a tool output guardrail and the tool's failure handler: each result is recorded (an error the
  SDK turned into a message for the model is a failure).

:func:`guard_input_guardrail` is the guardrail alone, for ``@function_tool(tool_input_guardrails=[...])``:
it cannot pause the run, so request_confirm is refused with the reason and a
``guard approve ID`` the person can run, after which the same call goes through once (a call
the person approved in the tool's own ``needs_approval`` step runs); it records no results.

The session is ``session_id`` (a string, or a function of the run context), else one per
:func:`guard_tools` / :func:`guard_input_guardrail` call.
"""

from __future__ import annotations

import json
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from agents import (
    FunctionTool,
    RunContextWrapper,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrail,
    ToolInputGuardrailData,
    ToolOutputGuardrail,
    ToolOutputGuardrailData,
)
from agents.tool import resolve_function_tool_failure_error_function, set_function_tool_failure_error_function

from guard.integrations.frameworks import ALLOW, ASK, FrameworkJudge, Verdict, outcome_text

if TYPE_CHECKING:
    from pathlib import Path

    from guard.core import Guard

__all__ = ["guard_input_guardrail", "guard_tools"]

SessionId = str | Callable[[RunContextWrapper[Any]], str | None] | None
_MEMO = 1024  # open calls remembered per link (asked, running); older ones are forgotten


def guard_tools(
    tools: Iterable[Any],
    guard: Guard | str | Path | None = None,
    *,
    session_id: SessionId = None,
    kinds: Mapping[str, str] | None = None,
) -> list[Any]:
    """Arm every ``FunctionTool`` in ``tools`` with guard (in place) and return the list.

    ``guard``: a :class:`guard.Guard`, a workspace path, or None for the process's default
    Guard (``$GUARD_HOME`` or ``~/.guard``). Other kinds of tool (hosted, MCP) pass unchanged.
    ``kinds``: what the application's own tools are, ``{"search_docs": "read"}`` (see
    :mod:`guard.integrations.frameworks`); any other tool guard does not know asks.
    """
    link = _Link(guard, session_id, kinds)
    armed = []
    for tool in tools:
        if isinstance(tool, FunctionTool) and not getattr(tool, "_guard_armed", False):
            link.arm(tool)
        armed.append(tool)
    return armed


def guard_input_guardrail(
    guard: Guard | str | Path | None = None, *, session_id: SessionId = None
) -> ToolInputGuardrail[Any]:
    """guard's tool input guardrail alone: allow, or reject with the reason (confirmations out of band)."""
    return _Link(guard, session_id).input_guardrail


class _Link:
    """One guard link shared by the tools of one :func:`guard_tools` call."""

    def __init__(
        self, guard: Guard | str | Path | None, session_id: SessionId, kinds: Mapping[str, str] | None = None
    ) -> None:
        self.judge = FrameworkJudge("openai-agents", guard, kinds)
        self.session_id = session_id
        self.default_session = f"openai-agents-{os.getpid()}-{os.urandom(3).hex()}"
        self.verdicts: OrderedDict[str, Verdict] = OrderedDict()  # decided in needs_approval, used by the guardrail
        self.started: OrderedDict[str, float] = OrderedDict()
        self.failed: OrderedDict[str, str] = OrderedDict()
        self.input_guardrail: ToolInputGuardrail[Any] = ToolInputGuardrail(guardrail_function=self._check, name="guard")
        self.output_guardrail: ToolOutputGuardrail[Any] = ToolOutputGuardrail(
            guardrail_function=self._record, name="guard"
        )

    def arm(self, tool: FunctionTool) -> None:
        tool.tool_input_guardrails = [self.input_guardrail, *(tool.tool_input_guardrails or [])]
        tool.tool_output_guardrails = [*(tool.tool_output_guardrails or []), self.output_guardrail]
        tool.needs_approval = self._needs_approval(tool.name, tool.needs_approval)
        handler = resolve_function_tool_failure_error_function(tool)
        if handler is not None:  # None: the SDK lets the exception end the run, and no result is recorded
            set_function_tool_failure_error_function(tool, self._on_failure(handler))
        tool._guard_armed = True  # type: ignore[attr-defined]

    # -- before the call ------------------------------------------------------------------
    def _needs_approval(self, tool: str, theirs: Any) -> Callable[..., Any]:
        async def needs_approval(ctx: RunContextWrapper[Any], params: dict[str, Any], call_id: str) -> bool:
            verdict = self.judge.before(call_id, tool, params, session_id=self._session(ctx), can_ask=True)
            _remember(self.verdicts, call_id, verdict)
            if verdict.answer == ASK:
                return True
            if verdict.answer != ALLOW:  # blocked: the guardrail refuses it; asking the person is moot
                return False
            if callable(theirs):
                result = theirs(ctx, params, call_id)
                return bool(await result if hasattr(result, "__await__") else result)
            return bool(theirs)

        return needs_approval

    def _check(self, data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        ctx = data.context
        tool, call_id, session = ctx.tool_name, ctx.tool_call_id, self._session(ctx)
        params = _arguments(ctx.tool_arguments)
        approved = ctx.is_tool_approved(tool, call_id)  # the person's answer in the SDK, if it asked
        verdict = self.verdicts.get(call_id)
        if verdict is None:  # not seen by needs_approval (a bare guardrail, or a run resumed elsewhere)
            verdict = self.judge.before(call_id, tool, params, session_id=session, can_ask=approved is True)
        if verdict.answer == ASK:
            if approved is None:  # checked before the SDK's approval step; it asks next
                _remember(self.verdicts, call_id, verdict)
                return ToolGuardrailFunctionOutput.allow(output_info={"guard": ASK, "reason": verdict.text})
            self.verdicts.pop(call_id, None)
            self.judge.answered(call_id, tool, params, approved, session_id=session)
            if not approved:
                return ToolGuardrailFunctionOutput.reject_content(verdict.text, output_info={"guard": "declined"})
        else:
            self.verdicts.pop(call_id, None)
            if verdict.answer != ALLOW:
                return ToolGuardrailFunctionOutput.reject_content(verdict.text, output_info={"guard": verdict.answer})
        _remember(self.started, call_id, time.perf_counter())
        return ToolGuardrailFunctionOutput.allow(output_info={"guard": ALLOW, "reason": verdict.text})

    # -- after the call -------------------------------------------------------------------
    def _on_failure(self, handler: Callable[..., Any]) -> Callable[..., Any]:
        def on_failure(ctx: RunContextWrapper[Any], error: Exception) -> Any:
            call_id = getattr(ctx, "tool_call_id", None)
            if isinstance(call_id, str):
                _remember(self.failed, call_id, f"{type(error).__name__}: {error}"[:500])
            return handler(ctx, error)

        return on_failure

    def _record(self, data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        ctx = data.context
        call_id = ctx.tool_call_id
        start = self.started.pop(call_id, None)
        if start is None:  # rejected before running, or not started through guard's guardrail
            return ToolGuardrailFunctionOutput.allow()
        error = self.failed.pop(call_id, None)
        self.judge.after(
            call_id,
            ctx.tool_name,
            _arguments(ctx.tool_arguments),
            session_id=self._session(ctx),
            success=error is None,
            error=error if error is None else outcome_text(error),
            duration_ms=round((time.perf_counter() - start) * 1000, 3),
        )
        return ToolGuardrailFunctionOutput.allow()

    def _session(self, ctx: RunContextWrapper[Any]) -> str:
        given = self.session_id(ctx) if callable(self.session_id) else self.session_id
        return str(given) if given else self.default_session


def _arguments(raw: str) -> Mapping[str, Any]:
    try:
        value = json.loads(raw) if raw else {}
    except (TypeError, ValueError):
        return {"input": raw}
    return value if isinstance(value, dict) else {"input": value}


def _remember(memo: OrderedDict[str, Any], key: str, value: Any) -> None:
    memo[key] = value
    memo.move_to_end(key)
    while len(memo) > _MEMO:
        memo.popitem(last=False)
