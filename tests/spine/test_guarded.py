"""@guarded: decide before, record after; sync and async mirror each other."""

from __future__ import annotations

import asyncio
import inspect
import json

import pytest

from guard import ConfirmationRequired, ToolBlocked, guarded
from guard.errors import GuardError
from guard.model import BLOCK, REQUEST_CONFIRM


def _executions(workspace):  # type: ignore[no-untyped-def]
    path = workspace / ".command-execution.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def _interactions(workspace):  # type: ignore[no-untyped-def]
    path = workspace / ".user-interactions.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_keeps_signature_name_and_wrapped(make_guard) -> None:  # type: ignore[no-untyped-def]
    g = make_guard()

    def bash(command: str, timeout: int = 5) -> str:
        """Run it."""
        return command

    wrapped = guarded(guard=g)(bash)
    assert inspect.signature(wrapped) == inspect.signature(bash)
    assert wrapped.__wrapped__ is bash and wrapped.__name__ == "bash" and wrapped.__doc__ == "Run it."
    assert not inspect.iscoroutinefunction(wrapped)


def test_async_stays_a_coroutine_function(make_guard) -> None:  # type: ignore[no-untyped-def]
    g = make_guard()

    @guarded(guard=g)
    async def bash(command: str) -> str:
        return command

    assert inspect.iscoroutinefunction(bash)


def test_bare_decorator_uses_the_shared_guard(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import guard.core as core

    monkeypatch.setattr(core, "_DEFAULT", None)
    monkeypatch.setenv("GUARD_HOME", str(tmp_path / "shared"))
    monkeypatch.setenv("GUARD_SYSTEM_HEALTH", "90")

    @guarded
    def bash(command: str) -> str:
        return "ran " + command

    assert bash("ls") == "ran ls"
    assert _executions(tmp_path / "shared")[0]["tool"] == "bash"
    assert core.default_guard() is core.default_guard()


def test_allowed_call_runs_and_records_success_with_duration(make_guard, workspace) -> None:  # type: ignore[no-untyped-def]
    g = make_guard()

    @guarded(guard=g, session_id="s1")
    def bash(command: str) -> str:
        return command.upper()

    assert bash("ls") == "LS"
    (rec,) = _executions(workspace)
    assert rec["status"] == "success" and rec["session_id"] == "s1" and rec["duration_ms"] >= 0
    assert rec["params"] == {"command": "ls"}


def test_exception_is_recorded_as_failure_and_reraised(make_guard, workspace) -> None:  # type: ignore[no-untyped-def]
    g = make_guard()

    @guarded(guard=g)
    def read(file_path: str) -> str:
        raise FileNotFoundError(file_path)

    with pytest.raises(FileNotFoundError):
        read("missing.txt")
    (rec,) = _executions(workspace)
    assert rec["status"] == "failure" and "FileNotFoundError" in rec["error"]


def test_block_raises_tool_blocked_with_the_record(make_guard, workspace) -> None:  # type: ignore[no-untyped-def]
    g = make_guard()
    ran = []

    @guarded(guard=g)
    def bash(command: str) -> None:
        ran.append(command)

    with pytest.raises(ToolBlocked) as info:
        bash("rm -rf ~")
    assert isinstance(info.value, PermissionError) and isinstance(info.value, GuardError)
    assert info.value.record.decision == BLOCK and ran == []
    assert _executions(workspace) == []


def test_confirm_without_callback_raises_confirmation_required(make_guard) -> None:  # type: ignore[no-untyped-def]
    g = make_guard()

    @guarded(guard=g)
    def bash(command: str) -> None:
        raise AssertionError("must not run")

    with pytest.raises(ConfirmationRequired) as info:
        bash("frobnicate --all")
    assert info.value.record.decision == REQUEST_CONFIRM


@pytest.mark.parametrize("answer", [True, False])
def test_confirm_callback_answer_is_recorded(make_guard, workspace, answer) -> None:  # type: ignore[no-untyped-def]
    g = make_guard()
    seen = []

    def ask(record):  # type: ignore[no-untyped-def]
        seen.append(record.decision)
        return answer

    @guarded(guard=g, confirm=ask, tool="shell", params={"command": "cmd"})
    def run(cmd: str) -> str:
        return "done"

    if answer:
        assert run("frobnicate --all") == "done"
    else:
        with pytest.raises(ToolBlocked, match="declined"):
            run("frobnicate --all")
    assert seen == [REQUEST_CONFIRM]
    (inter,) = _interactions(workspace)
    assert inter["action"] == ("approved" if answer else "denied") and inter["tool"] == "shell"
    assert inter["params"] == {"command": "frobnicate --all"}


def test_params_callable_and_session_callable(make_guard, workspace) -> None:  # type: ignore[no-untyped-def]
    g = make_guard()
    session = {"id": "a"}

    @guarded(guard=g, tool="bash", params=lambda *a, **k: {"command": " ".join(a)}, session_id=lambda: session["id"])
    def sh(*argv: str) -> int:
        return 0

    sh("ls", "-la")
    session["id"] = "b"
    sh("ls")
    recs = _executions(workspace)
    assert [r["params"]["command"] for r in recs] == ["ls -la", "ls"]
    assert [r["session_id"] for r in recs] == ["a", "b"]


def test_async_confirm_callback_is_awaited(make_guard, workspace) -> None:  # type: ignore[no-untyped-def]
    g = make_guard()

    async def ask(record):  # type: ignore[no-untyped-def]
        await asyncio.sleep(0)
        return True

    @guarded(guard=g, confirm=ask)
    async def bash(command: str) -> str:
        return "ok"

    assert asyncio.run(bash("frobnicate --all")) == "ok"
    assert _interactions(workspace)[0]["action"] == "approved"


def test_async_callback_on_sync_function_is_a_clear_error(make_guard) -> None:  # type: ignore[no-untyped-def]
    g = make_guard()

    async def ask(record):  # type: ignore[no-untyped-def]
        return True

    @guarded(guard=g, confirm=ask)
    def bash(command: str) -> str:
        return "ok"

    with pytest.raises(TypeError, match="async confirm"):
        bash("frobnicate --all")


CALLS = [
    ("ls", None),
    ("frobnicate --all", True),
    ("frobnicate --all", False),
    ("rm -rf ~", None),
    ("cat missing", "raise"),
]


def _drive_sync(g):  # type: ignore[no-untyped-def]
    answers = iter([True, False])

    @guarded(guard=g, tool="bash", confirm=lambda r: next(answers), session_id="p")
    def bash(command: str) -> str:
        if command == "cat missing":
            raise OSError("no such file")
        return command

    out = []
    for cmd, _ in CALLS:
        try:
            out.append(("ok", bash(cmd)))
        except Exception as exc:
            out.append((type(exc).__name__, None))
    return out


def _drive_async(g):  # type: ignore[no-untyped-def]
    answers = iter([True, False])

    async def ask(record):  # type: ignore[no-untyped-def]
        return next(answers)

    @guarded(guard=g, tool="bash", confirm=ask, session_id="p")
    async def bash(command: str) -> str:
        if command == "cat missing":
            raise OSError("no such file")
        return command

    async def main():  # type: ignore[no-untyped-def]
        out = []
        for cmd, _ in CALLS:
            try:
                out.append(("ok", await bash(cmd)))
            except Exception as exc:
                out.append((type(exc).__name__, None))
        return out

    return asyncio.run(main())


def test_sync_and_async_parity(make_guard, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The same calls through both drivers give the same outcomes and the same records."""
    sync_ws, async_ws = tmp_path / "sync", tmp_path / "async"
    sync_out = _drive_sync(make_guard(workspace=sync_ws))
    async_out = _drive_async(make_guard(workspace=async_ws))
    assert sync_out == async_out
    assert sync_out[0] == ("ok", "ls") and sync_out[3][0] == "ToolBlocked" and sync_out[4][0] == "OSError"

    def strip(recs):  # type: ignore[no-untyped-def]
        return [{k: v for k, v in r.items() if k not in ("timestamp", "duration_ms")} for r in recs]

    assert strip(_executions(sync_ws)) == strip(_executions(async_ws))
    assert strip(_interactions(sync_ws)) == strip(_interactions(async_ws))
