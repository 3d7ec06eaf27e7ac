"""``guard_tools`` / ``guard_input_guardrail`` in real OpenAI Agents SDK runs, offline.

The model is the SDK's own scripted test model (``agents.testing.ScriptedModel``): no network,
no API key, tracing off. The tools are harmless by construction: ``shell`` only appends the
command string it was given to a list (it never executes it), ``write_sentinel`` writes a file
inside the test's folder. Every test runs through ``Runner.run`` (async) and ``Runner.run_sync``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents", reason="the [openai-agents] extra is not installed")
from agents import Agent, FunctionTool, Runner, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from guard.integrations.openai_agents import guard_input_guardrail, guard_tools

MODES = ["sync", "async"]


@pytest.fixture(autouse=True)
def _offline() -> Iterator[None]:
    set_tracing_disabled(True)
    yield


class Rig:
    def __init__(self, root: Path, make_guard: Callable[..., Any]) -> None:
        self.root = root
        self.ws = root / "ws"
        self.guard = make_guard(workspace=self.ws)
        self.seen: list[str] = []
        seen, folder = self.seen, root

        @function_tool
        def shell(command: str) -> str:
            """Run a shell command (here: only records the command string)."""
            seen.append(command)
            return "recorded"

        @function_tool
        def write_sentinel(name: str) -> str:
            """Write a sentinel file in the test's folder."""
            (folder / f"{name}.sentinel").write_text("x", encoding="utf-8")
            seen.append(f"sentinel {name}")
            return "written"

        @function_tool
        def read_file(path: str) -> str:
            """Read a file (here: always fails)."""
            raise RuntimeError(f"{path}: disk full")

        self.tools: list[FunctionTool] = [shell, write_sentinel, read_file]

    def agent(self, *calls: tuple[str, dict[str, Any]], armed: bool = True, **options: Any) -> Agent[Any]:
        step = [function_call(name, args, call_id=f"call_{i}") for i, (name, args) in enumerate(calls)]
        model = ScriptedModel([step, [assistant_message("done")]])
        if armed:
            tools = guard_tools(self.tools, self.guard, **options)
        else:
            guardrail = guard_input_guardrail(self.guard, **options)
            for tool in self.tools:
                tool.tool_input_guardrails = [guardrail]
            tools = self.tools
        return Agent(name="ops", instructions="Do what the user asks.", model=model, tools=tools)

    def jsonl(self, name: str) -> list[dict[str, Any]]:
        path = self.ws / name
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture
def rig(tmp_path: Path, make_guard: Callable[..., Any]) -> Rig:
    return Rig(tmp_path, make_guard)


def run(agent: Agent[Any], value: Any, mode: str) -> Any:
    if mode == "async":
        return asyncio.run(Runner.run(agent, value))
    # run_sync runs on the thread's default loop and leaves it open, by design: give it one, then close it.
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        return Runner.run_sync(agent, value)
    finally:
        asyncio.set_event_loop(None)
        loop.close()


def outputs(result: Any) -> dict[str, str]:
    """Each tool call's output as the model reads it, by call id."""
    found = {}
    for item in result.new_items:
        if item.type == "tool_call_output_item":
            raw = item.raw_item
            call_id = raw["call_id"] if isinstance(raw, dict) else raw.call_id
            found[call_id] = str(item.output)
    return found


# -- auto_allow and block -------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_an_allowed_call_runs_and_its_result_is_recorded(rig: Rig, mode: str) -> None:
    result = run(rig.agent(("shell", {"command": "ls -la"}), session_id="chat-1"), "list files", mode)
    assert outputs(result) == {"call_0": "recorded"} and result.final_output == "done"
    assert rig.seen == ["ls -la"]
    [decision] = rig.jsonl(".fusion-decisions.jsonl")
    assert (decision["tool"], decision["decision"], decision["session_id"]) == ("shell", "auto_allow", "chat-1")
    assert decision["via"] == "openai-agents"
    [record] = rig.jsonl(".command-execution.jsonl")
    assert (record["tool"], record["status"], record["session_id"]) == ("shell", "success", "chat-1")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("armed", [True, False], ids=["guard_tools", "guardrail alone"])
def test_a_dangerous_command_given_as_data_is_rejected_with_the_reason(rig: Rig, mode: str, armed: bool) -> None:
    agent = rig.agent(("shell", {"command": "rm -rf ~"}), ("shell", {"command": "git status"}), armed=armed)
    result = run(agent, "clean up", mode)
    found = outputs(result)
    assert found["call_0"].startswith("guard: this shell call is blocked") and "G1" in found["call_0"]
    assert found["call_1"] == "recorded"  # a read-only command in the same turn still runs
    assert rig.seen == ["git status"]
    assert {d["decision"] for d in rig.jsonl(".fusion-decisions.jsonl")} == {"block", "auto_allow"}
    assert result.interruptions == []


def test_the_session_may_come_from_the_run_context(rig: Rig) -> None:
    agent = rig.agent(("shell", {"command": "pwd"}), session_id=lambda ctx: ctx.context["conversation"])
    asyncio.run(Runner.run(agent, "where am I", context={"conversation": "conv-9"}))
    assert [d["session_id"] for d in rig.jsonl(".fusion-decisions.jsonl")] == ["conv-9"]
    assert [r["session_id"] for r in rig.jsonl(".command-execution.jsonl")] == ["conv-9"]


# -- request_confirm: the SDK's approvals ---------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_a_call_guard_asks_about_pauses_the_run_for_approval(rig: Rig, mode: str) -> None:
    result = run(rig.agent(("write_sentinel", {"name": "a"}), ("shell", {"command": "ls"})), "mark it", mode)
    [item] = result.interruptions
    assert item.name == "write_sentinel" and json.loads(item.arguments) == {"name": "a"}
    assert rig.seen == ["ls"] and not (rig.root / "a.sentinel").exists()
    assert [d["decision"] for d in rig.jsonl(".fusion-decisions.jsonl") if d["tool"] == "write_sentinel"] == [
        "request_confirm"
    ]


@pytest.mark.parametrize("mode", MODES)
def test_approving_runs_the_call_and_records_the_answer_and_the_result(rig: Rig, mode: str) -> None:
    agent = rig.agent(("write_sentinel", {"name": "a"}))
    first = run(agent, "mark it", mode)
    state = first.to_state()
    state.approve(first.interruptions[0])
    result = run(agent, state, mode)
    assert outputs(result)["call_0"] == "written" and (rig.root / "a.sentinel").exists()
    assert [i["action"] for i in rig.jsonl(".user-interactions.jsonl")] == ["approved"]
    assert [r["status"] for r in rig.jsonl(".command-execution.jsonl")] == ["success"]
    assert [d["decision"] for d in rig.jsonl(".fusion-decisions.jsonl")] == ["request_confirm"]  # decided once


@pytest.mark.parametrize("mode", MODES)
def test_rejecting_never_runs_the_call(rig: Rig, mode: str) -> None:
    agent = rig.agent(("write_sentinel", {"name": "a"}))
    first = run(agent, "mark it", mode)
    state = first.to_state()
    state.reject(first.interruptions[0])
    result = run(agent, state, mode)
    assert "call_0" in outputs(result) and outputs(result)["call_0"] != "written"
    assert rig.seen == [] and not (rig.root / "a.sentinel").exists()
    assert rig.jsonl(".command-execution.jsonl") == []


@pytest.mark.parametrize("mode", MODES)
def test_the_guardrail_alone_refuses_with_an_out_of_band_approval_that_works_once(rig: Rig, mode: str) -> None:
    from guard.integrations.pending import Pending

    first = run(rig.agent(("write_sentinel", {"name": "a"}), armed=False, session_id="s"), "mark it", mode)
    assert first.interruptions == []
    text = outputs(first)["call_0"]
    assert "needs the user's confirmation" in text and "guard approve" in text
    Pending(rig.ws, 3600).resolve("last", approved=True, session_id="s")  # what `guard approve` does
    second = run(rig.agent(("write_sentinel", {"name": "a"}), armed=False, session_id="s"), "mark it", mode)
    assert outputs(second)["call_0"] == "written"
    third = run(rig.agent(("write_sentinel", {"name": "a"}), armed=False, session_id="s"), "mark it", mode)
    assert "guard approve" in outputs(third)["call_0"]
    assert rig.seen == ["sentinel a"]


def test_the_guardrail_alone_takes_the_persons_approval_in_the_sdk(rig: Rig) -> None:
    rig.tools[1].needs_approval = True  # write_sentinel: the developer's own approval step
    agent = rig.agent(("write_sentinel", {"name": "a"}), armed=False)
    first = asyncio.run(Runner.run(agent, "mark it"))
    state = first.to_state()
    state.approve(first.interruptions[0])
    result = asyncio.run(Runner.run(agent, state))
    assert outputs(result)["call_0"] == "written"
    assert [i["action"] for i in rig.jsonl(".user-interactions.jsonl")] == ["approved"]


def test_a_tool_that_already_needed_approval_still_does(rig: Rig) -> None:
    rig.tools[0].needs_approval = True  # shell: the developer wants every call approved
    result = asyncio.run(Runner.run(rig.agent(("shell", {"command": "ls"})), "list"))
    assert [i.name for i in result.interruptions] == ["shell"] and rig.seen == []


# -- results --------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_a_tool_error_the_sdk_hands_to_the_model_is_recorded_as_a_failure(rig: Rig, mode: str) -> None:
    result = run(rig.agent(("read_file", {"path": "notes.txt"})), "read it", mode)
    assert "error occurred" in outputs(result)["call_0"]  # the SDK's own message to the model, unchanged
    [record] = rig.jsonl(".command-execution.jsonl")
    assert record["status"] == "failure" and "disk full" in record["error"]


def test_arming_twice_changes_nothing(rig: Rig) -> None:
    once = guard_tools(rig.tools, rig.guard)
    twice = guard_tools(once, rig.guard)
    assert [len(t.tool_input_guardrails or []) for t in twice] == [1, 1, 1]
    assert [len(t.tool_output_guardrails or []) for t in twice] == [1, 1, 1]
