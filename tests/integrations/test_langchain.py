"""``GuardMiddleware`` in a real LangChain v1 agent (``create_agent``), driven by LangChain's own fake chat model.

The tools are harmless by construction: ``shell`` only appends the command string it was given
to a list (it never executes it), ``write_sentinel`` writes a file inside the test's folder.
Every test runs sync (``invoke``) and async (``ainvoke``), through the same scripted calls.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents", reason="the [langchain] extra is not installed")
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from guard.integrations.langchain import GuardMiddleware

MODES = ["sync", "async"]


class ToolCallingFake(GenericFakeChatModel):
    """LangChain's generic fake chat model; ``create_agent`` binds tools, which the script ignores."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ToolCallingFake:
        return self


def calls(*specs: tuple[str, dict[str, Any]]) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": n, "args": a, "id": f"call_{i}"} for i, (n, a) in enumerate(specs)])


class Rig:
    def __init__(self, root: Path, make_guard: Callable[..., Any]) -> None:
        self.root = root
        self.ws = root / "ws"
        self.guard = make_guard(workspace=self.ws)
        self.seen: list[str] = []
        seen, folder = self.seen, root

        @tool
        def shell(command: str) -> str:
            """Run a shell command (here: only records the command string)."""
            seen.append(command)
            return "recorded"

        @tool
        def write_sentinel(name: str) -> str:
            """Write a sentinel file in the test's folder."""
            (folder / f"{name}.sentinel").write_text("x", encoding="utf-8")
            seen.append(f"sentinel {name}")
            return "written"

        @tool
        def read_file(path: str) -> str:
            """Read a file (here: always fails)."""
            raise RuntimeError(f"{path}: disk full")

        @tool
        def grumble(reason: str) -> str:
            """Fails the LangChain way: a ToolException the tool node turns into an error message."""
            raise ToolException(reason)

        grumble.handle_tool_error = True
        self.tools = [shell, write_sentinel, read_file, grumble]

    def agent(self, *script: AIMessage, checkpointer: bool = True, **options: Any) -> Any:
        model = ToolCallingFake(messages=iter([*script, AIMessage("done")]))
        middleware = GuardMiddleware(self.guard, **options)
        saver = InMemorySaver() if checkpointer else None
        return create_agent(model, self.tools, middleware=[middleware], checkpointer=saver)

    def jsonl(self, name: str) -> list[dict[str, Any]]:
        path = self.ws / name
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture
def rig(tmp_path: Path, make_guard: Callable[..., Any]) -> Rig:
    return Rig(tmp_path, make_guard)


def invoke(agent: Any, value: Any, mode: str, thread: str = "thread-1") -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread}}
    if isinstance(value, str):
        value = {"messages": [("user", value)]}
    if mode == "sync":
        return dict(agent.invoke(value, config))
    return dict(asyncio.run(agent.ainvoke(value, config)))


def tool_messages(result: dict[str, Any]) -> Iterator[ToolMessage]:
    return (m for m in result["messages"] if isinstance(m, ToolMessage))


def by_id(result: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in tool_messages(result)}


# -- auto_allow and block -------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_an_allowed_call_runs_and_its_result_is_recorded_in_the_thread_session(rig: Rig, mode: str) -> None:
    result = invoke(rig.agent(calls(("shell", {"command": "ls -la"}))), "list files", mode)
    message = by_id(result)["call_0"]
    assert message.content == "recorded" and message.status == "success"
    assert rig.seen == ["ls -la"]
    [decision] = rig.jsonl(".fusion-decisions.jsonl")
    assert (decision["tool"], decision["decision"], decision["session_id"]) == ("shell", "auto_allow", "thread-1")
    assert decision["via"] == "langchain"
    [run] = rig.jsonl(".command-execution.jsonl")
    assert (run["tool"], run["status"], run["session_id"]) == ("shell", "success", "thread-1")


@pytest.mark.parametrize("mode", MODES)
def test_a_dangerous_command_given_as_data_is_blocked_and_the_model_reads_why(rig: Rig, mode: str) -> None:
    agent = rig.agent(calls(("shell", {"command": "rm -rf ~"}), ("shell", {"command": "git status"})))
    result = invoke(agent, "clean up", mode)
    blocked, near_miss = by_id(result)["call_0"], by_id(result)["call_1"]
    assert blocked.status == "error" and blocked.name == "shell"
    assert str(blocked.content).startswith("guard: this shell call is blocked")
    assert "G1" in str(blocked.content)  # the rule id the model and the person can look up
    assert near_miss.status == "success"  # a read-only command in the same turn still runs
    assert rig.seen == ["git status"]
    decisions = {d["decision"] for d in rig.jsonl(".fusion-decisions.jsonl")}
    assert decisions == {"block", "auto_allow"}
    assert [r["params"] for r in rig.jsonl(".command-execution.jsonl")] == [{"command": "git status"}]


# -- request_confirm: LangGraph interrupt -------------------------------------------------
def test_a_call_guard_asks_about_pauses_the_graph_with_the_reason(rig: Rig) -> None:
    result = invoke(rig.agent(calls(("write_sentinel", {"name": "a"}))), "mark it", "sync")
    [pause] = result["__interrupt__"]
    [request] = pause.value["action_requests"]
    assert request["name"] == "write_sentinel" and request["args"] == {"name": "a"}
    assert "G187" in request["description"]
    assert pause.value["review_configs"] == [
        {"action_name": "write_sentinel", "allowed_decisions": ["approve", "reject"]}
    ]
    assert pause.value["guard"]["tool_call_id"] == "call_0" and pause.value["guard"]["session_id"] == "thread-1"
    assert rig.seen == [] and not (rig.root / "a.sentinel").exists()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("resume", [{"type": "approve"}, True, "approve", {"decisions": [{"type": "approve"}]}])
def test_approving_on_resume_runs_the_tool_and_records_the_answer(rig: Rig, mode: str, resume: Any) -> None:
    agent = rig.agent(calls(("write_sentinel", {"name": "a"})))
    assert "__interrupt__" in invoke(agent, "mark it", mode)
    result = invoke(agent, Command(resume=resume), mode)
    assert by_id(result)["call_0"].content == "written"
    assert (rig.root / "a.sentinel").exists()
    assert [i["action"] for i in rig.jsonl(".user-interactions.jsonl")] == ["approved"]
    assert [r["status"] for r in rig.jsonl(".command-execution.jsonl")] == ["success"]
    # LangGraph runs the tool step again on resume; guard decided (and counted) the call once.
    assert [d["decision"] for d in rig.jsonl(".fusion-decisions.jsonl")] == ["request_confirm"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("resume", [{"type": "reject", "message": "not now"}, False, "reject"])
def test_rejecting_on_resume_refuses_and_the_tool_never_runs(rig: Rig, mode: str, resume: Any) -> None:
    agent = rig.agent(calls(("write_sentinel", {"name": "a"})))
    invoke(agent, "mark it", mode)
    result = invoke(agent, Command(resume=resume), mode)
    refusal = by_id(result)["call_0"]
    assert refusal.status == "error" and "declined" in str(refusal.content) and "Do not retry" in str(refusal.content)
    if isinstance(resume, dict):
        assert "not now" in str(refusal.content)
    assert rig.seen == [] and not (rig.root / "a.sentinel").exists()
    assert [i["action"] for i in rig.jsonl(".user-interactions.jsonl")] == ["denied"]
    assert rig.jsonl(".command-execution.jsonl") == []


@pytest.mark.parametrize("mode", MODES)
def test_an_unreadable_resume_value_is_no_approval(rig: Rig, mode: str) -> None:
    agent = rig.agent(calls(("write_sentinel", {"name": "a"})))
    invoke(agent, "mark it", mode)
    result = invoke(agent, Command(resume={"type": "maybe"}), mode)
    assert by_id(result)["call_0"].status == "error"
    assert rig.seen == [] and rig.jsonl(".user-interactions.jsonl") == []  # dismissed: no answer learned


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("how", ["no checkpointer", "interrupt=False"])
def test_without_a_way_to_pause_the_call_is_refused_with_an_out_of_band_approval(rig: Rig, mode: str, how: str) -> None:
    options: dict[str, Any] = {"checkpointer": False} if how == "no checkpointer" else {"interrupt": False}
    result = invoke(rig.agent(calls(("write_sentinel", {"name": "a"})), **options), "mark it", mode)
    assert "__interrupt__" not in result
    refusal = by_id(result)["call_0"]
    assert refusal.status == "error"
    assert "needs the user's confirmation" in str(refusal.content) and "guard approve" in str(refusal.content)
    assert rig.seen == []


@pytest.mark.parametrize("mode", MODES)
def test_an_out_of_band_approval_lets_the_same_call_through_once(rig: Rig, mode: str) -> None:
    from guard.integrations.pending import Pending

    script = [calls(("write_sentinel", {"name": "a"}))] * 3
    first = invoke(rig.agent(script[0], interrupt=False), "mark it", mode)
    assert "guard approve" in str(by_id(first)["call_0"].content)
    Pending(rig.ws, 3600).resolve("last", approved=True, session_id="thread-1")  # what `guard approve` does
    second = invoke(rig.agent(script[1], interrupt=False), "mark it", mode, thread="thread-1")
    assert by_id(second)["call_0"].content == "written"
    third = invoke(rig.agent(script[2], interrupt=False), "mark it", mode, thread="thread-1")
    assert by_id(third)["call_0"].status == "error"  # the approval was for one call
    assert rig.seen == ["sentinel a"]


# -- results --------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_a_tool_that_raises_is_recorded_as_a_failure_and_the_error_propagates(rig: Rig, mode: str) -> None:
    with pytest.raises(RuntimeError, match="disk full"):
        invoke(rig.agent(calls(("read_file", {"path": "notes.txt"}))), "read it", mode)
    [decision] = rig.jsonl(".fusion-decisions.jsonl")
    assert decision["decision"] == "auto_allow"
    [run] = rig.jsonl(".command-execution.jsonl")
    assert run["status"] == "failure" and "disk full" in run["error"]


@pytest.mark.parametrize("mode", MODES)
def test_an_error_tool_message_is_recorded_as_a_failure(rig: Rig, mode: str) -> None:
    agent = rig.agent(calls(("grumble", {"reason": "quota exceeded"})))
    invoke(agent, "go", mode)
    result = invoke(agent, Command(resume=True), mode)
    assert by_id(result)["call_0"].status == "error"
    [run] = rig.jsonl(".command-execution.jsonl")
    assert run["status"] == "failure" and "quota exceeded" in run["error"]


@pytest.mark.parametrize("mode", MODES)
def test_without_a_thread_id_the_middlewares_session_is_used(rig: Rig, mode: str) -> None:
    agent = rig.agent(calls(("shell", {"command": "pwd"})), checkpointer=False, session_id="desk-1")
    value = {"messages": [("user", "where am I")]}
    result = agent.invoke(value) if mode == "sync" else asyncio.run(agent.ainvoke(value))
    assert by_id(result)["call_0"].content == "recorded"
    assert [d["session_id"] for d in rig.jsonl(".fusion-decisions.jsonl")] == ["desk-1"]


@pytest.mark.parametrize("mode", MODES)
def test_two_questions_in_one_step_are_answered_each_by_its_interrupt_id(rig: Rig, mode: str) -> None:
    agent = rig.agent(calls(("write_sentinel", {"name": "a"}), ("write_sentinel", {"name": "b"})))
    pauses = invoke(agent, "mark both", mode)["__interrupt__"]
    by_name = {p.value["action_requests"][0]["args"]["name"]: p.id for p in pauses}
    assert sorted(by_name) == ["a", "b"]
    resume = {by_name["a"]: {"type": "approve"}, by_name["b"]: {"type": "reject"}}
    result = invoke(agent, Command(resume=resume), mode)
    assert by_id(result)["call_0"].content == "written" and by_id(result)["call_1"].status == "error"
    assert rig.seen == ["sentinel a"]
    assert sorted(i["action"] for i in rig.jsonl(".user-interactions.jsonl")) == ["approved", "denied"]
    assert len(rig.jsonl(".fusion-decisions.jsonl")) == 2
