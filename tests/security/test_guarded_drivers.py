"""@guarded drivers: one per kind of tool function, recording when the work is really over.

A generator's or an async generator's body runs while it is iterated, so it is decided before
the first item and recorded after the last, with the whole iteration's duration. A
cancellation (the caller's timeout) is not the tool's failure and is not recorded.
Time is frozen (freezegun); the durations are the ticks the tool's body makes.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from freezegun import freeze_time

from guard import ToolBlocked, guarded

NOON = "2026-03-02 12:00:00"


def _executions(workspace: Any) -> list[dict[str, Any]]:
    path = workspace / ".command-execution.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


# -- the wrapper is of the tool's kind ------------------------------------------------------


def test_each_kind_keeps_its_kind_and_metadata(make_guard: Any) -> None:
    """inspect's predicates, the name, the doc and ``__wrapped__`` tell the truth about the wrapper."""
    g = make_guard()

    def plain(file_path: str) -> str:
        """plain"""
        return file_path

    async def coro(file_path: str) -> str:
        """coro"""
        return file_path

    def gen(file_path: str) -> Iterator[str]:
        """gen"""
        yield file_path

    async def agen(file_path: str) -> AsyncIterator[str]:
        """agen"""
        yield file_path

    kinds = (
        inspect.isfunction,
        inspect.iscoroutinefunction,
        inspect.isgeneratorfunction,
        inspect.isasyncgenfunction,
    )
    for fn in (plain, coro, gen, agen):
        wrapped = guarded(guard=g, tool="read")(fn)
        assert [k(wrapped) for k in kinds[1:]] == [k(fn) for k in kinds[1:]], fn.__name__
        assert wrapped.__wrapped__ is fn and wrapped.__name__ == fn.__name__ and wrapped.__doc__ == fn.__name__
        assert inspect.signature(wrapped) == inspect.signature(fn)


# -- generators --------------------------------------------------------------------------------


def test_generator_is_recorded_after_exhaustion_with_the_iteration_time(make_guard: Any, workspace: Any) -> None:
    """Nothing is recorded while items flow; exhaustion records one success lasting the whole iteration."""
    with freeze_time(NOON) as clock:
        g = make_guard()

        @guarded(guard=g, tool="read")
        def lines(file_path: str) -> Iterator[str]:
            for n in range(3):
                clock.tick(0.5)
                yield f"{file_path}:{n}"

        it = lines("notes.txt")
        assert next(it) == "notes.txt:0"
        assert _executions(workspace) == []  # main: success at ~0 ms before the body ran
        assert list(it) == ["notes.txt:1", "notes.txt:2"]
    (rec,) = _executions(workspace)
    assert rec["status"] == "success" and rec["duration_ms"] == pytest.approx(1500.0)


def test_generator_failure_during_iteration_is_recorded(make_guard: Any, workspace: Any) -> None:
    """An exception raised between items is the tool's failure, recorded once with its message."""
    g = make_guard()

    @guarded(guard=g, tool="read")
    def lines(file_path: str) -> Iterator[str]:
        yield "first"
        raise OSError("disk went away")

    it = lines("notes.txt")
    assert next(it) == "first"
    with pytest.raises(OSError, match="disk went away"):
        next(it)
    (rec,) = _executions(workspace)
    assert rec["status"] == "failure" and rec["error"] == "OSError: disk went away"


def test_generator_closed_early_is_a_success_not_a_failure(make_guard: Any, workspace: Any) -> None:
    """``close()`` after some items records one success (the duration up to the close)."""
    with freeze_time(NOON) as clock:
        g = make_guard()
        cleaned = []

        @guarded(guard=g, tool="read")
        def lines(file_path: str) -> Iterator[str]:
            try:
                while True:
                    clock.tick(1)
                    yield "line"
            finally:
                cleaned.append(True)

        it = lines("notes.txt")
        assert [next(it), next(it)] == ["line", "line"]
        it.close()
    (rec,) = _executions(workspace)
    assert rec["status"] == "success" and rec["duration_ms"] == pytest.approx(2000.0) and cleaned == [True]


def test_generator_never_iterated_decides_and_records_nothing(make_guard: Any, workspace: Any) -> None:
    """A generator created and dropped ran nothing: no record, no decision to learn from."""
    g = make_guard()

    @guarded(guard=g, tool="read")
    def lines(file_path: str) -> Iterator[str]:
        yield "line"

    lines("notes.txt").close()
    assert _executions(workspace) == []


def test_generator_block_raises_at_the_first_item_and_runs_nothing(make_guard: Any, workspace: Any) -> None:
    """A blocked generator raises ToolBlocked before its body runs; a read beside it still streams."""
    g = make_guard()
    ran = []

    @guarded(guard=g, tool="bash")
    def shell(command: str) -> Iterator[str]:
        ran.append(command)
        yield "out"

    with pytest.raises(ToolBlocked):
        next(shell("rm -rf ~"))
    assert ran == [] and _executions(workspace) == []
    assert list(shell("ls")) == ["out"]  # near miss: a read-only command runs
    assert [r["status"] for r in _executions(workspace)] == ["success"]


def test_generator_send_and_return_value_pass_through(make_guard: Any) -> None:
    """``send`` reaches the tool's generator and its return value ends the iteration."""
    g = make_guard()

    @guarded(guard=g, tool="read")
    def echo(file_path: str) -> Iterator[Any]:
        got = yield "ready"
        return got

    it = echo("x.txt")
    assert next(it) == "ready"
    with pytest.raises(StopIteration) as stop:
        it.send("payload")
    assert stop.value.value == "payload"


# -- async generators --------------------------------------------------------------------------


def test_async_generator_is_recorded_after_exhaustion(make_guard: Any, workspace: Any) -> None:
    """The async twin of the generator test: one success after the last item, the whole duration."""
    with freeze_time(NOON) as clock:
        g = make_guard()

        @guarded(guard=g, tool="read")
        async def lines(file_path: str) -> AsyncIterator[str]:
            for n in range(3):
                clock.tick(0.5)
                yield f"{file_path}:{n}"

        async def consume() -> list[str]:
            it = lines("notes.txt")
            first = await it.__anext__()
            assert _executions(workspace) == []
            return [first] + [x async for x in it]

        assert asyncio.run(consume()) == ["notes.txt:0", "notes.txt:1", "notes.txt:2"]
    (rec,) = _executions(workspace)
    assert rec["status"] == "success" and rec["duration_ms"] == pytest.approx(1500.0)


def test_async_generator_failure_during_iteration_is_recorded(make_guard: Any, workspace: Any) -> None:
    g = make_guard()

    @guarded(guard=g, tool="read")
    async def lines(file_path: str) -> AsyncIterator[str]:
        yield "first"
        raise OSError("disk went away")

    async def consume() -> list[str]:
        return [x async for x in lines("notes.txt")]

    with pytest.raises(OSError, match="disk went away"):
        asyncio.run(consume())
    (rec,) = _executions(workspace)
    assert rec["status"] == "failure" and rec["error"] == "OSError: disk went away"


def test_async_generator_aclose_is_a_success_and_reaches_the_tool(make_guard: Any, workspace: Any) -> None:
    """``aclose()`` closes the tool's generator (its finally runs) and records one success."""
    g = make_guard()
    cleaned = []

    @guarded(guard=g, tool="read")
    async def lines(file_path: str) -> AsyncIterator[str]:
        try:
            while True:
                yield "line"
        finally:
            cleaned.append(True)

    async def consume() -> None:
        it = lines("notes.txt")
        assert await it.__anext__() == "line"
        await it.aclose()

    asyncio.run(consume())
    (rec,) = _executions(workspace)
    assert rec["status"] == "success" and cleaned == [True]


def test_async_generator_asend_and_athrow_pass_through(make_guard: Any, workspace: Any) -> None:
    """``asend`` values reach the tool; an exception thrown in and handled by the tool is no failure."""
    g = make_guard()

    @guarded(guard=g, tool="read")
    async def echo(file_path: str) -> AsyncIterator[Any]:
        got = yield "ready"
        try:
            yield f"got {got}"
        except KeyError:
            yield "handled"

    async def consume() -> list[Any]:
        it = echo("x.txt")
        out = [await it.__anext__(), await it.asend("payload"), await it.athrow(KeyError("k"))]
        with pytest.raises(StopAsyncIteration):
            await it.__anext__()
        return out

    assert asyncio.run(consume()) == ["ready", "got payload", "handled"]
    assert [r["status"] for r in _executions(workspace)] == ["success"]


def test_async_generator_block_raises_before_the_body(make_guard: Any, workspace: Any) -> None:
    g = make_guard()
    ran = []

    @guarded(guard=g, tool="bash")
    async def shell(command: str) -> AsyncIterator[str]:
        ran.append(command)
        yield "out"

    with pytest.raises(ToolBlocked):
        asyncio.run(shell("rm -rf ~").__anext__())
    assert ran == [] and _executions(workspace) == []


# -- cancellation and the caller's timeouts ------------------------------------------------


def test_callers_timeouts_are_not_tool_failures(make_guard: Any, workspace: Any) -> None:
    """``make test`` cut short by the caller's ``asyncio.timeout`` / ``wait_for`` records nothing,
    so it still auto-allows afterwards (main: each timeout a failure; the breaker then blocks it)."""
    with freeze_time(NOON) as clock:
        g = make_guard()
        began, gate = asyncio.Event(), asyncio.Event()

        @guarded(guard=g, tool="bash", session_id="s-timeout")
        async def bash(command: str, slow: bool = False) -> str:
            began.set()
            if slow:
                await gate.wait()  # never set: only the caller's timeout ends it
            return "ok"

        async def main() -> str:
            for n in range(5):
                with pytest.raises(TimeoutError):
                    async with asyncio.timeout(0):  # expires at the tool's first await: no sleep
                        await bash("make test", slow=True)
                clock.tick(60)
                assert await bash(f"ls src{n}") == "ok"  # other work between the runs
                clock.tick(60)
            began.clear()
            task = asyncio.ensure_future(bash("make test", slow=True))
            started = asyncio.ensure_future(began.wait())
            await asyncio.wait({task, started}, return_when=asyncio.FIRST_COMPLETED)
            assert began.is_set() and not task.done()  # the tool runs when wait_for gives up on it
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(task, timeout=0)
            clock.tick(60)
            return await bash("make test")  # no confirm callback: only an auto_allow runs

        assert asyncio.run(main()) == "ok"
    recs = _executions(workspace)
    assert [r["params"]["command"] for r in recs] == [f"ls src{n}" for n in range(5)] + ["make test"]
    assert {r["status"] for r in recs} == {"success"}


def test_a_cancelled_task_is_not_recorded_but_a_real_failure_is(make_guard: Any, workspace: Any) -> None:
    """``task.cancel()`` mid-call records nothing; the tool's own TimeoutError is a failure."""
    g = make_guard()

    async def main() -> None:
        began, gate = asyncio.Event(), asyncio.Event()

        @guarded(guard=g, tool="bash")
        async def bash(command: str) -> str:
            began.set()
            await gate.wait()
            return "ok"

        task = asyncio.ensure_future(bash("make test"))
        await began.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

        @guarded(guard=g, tool="bash")
        async def flaky(command: str) -> str:
            raise TimeoutError("the test server did not answer")  # the tool's own timeout

        with pytest.raises(TimeoutError):
            await flaky("make test")

    asyncio.run(main())
    (rec,) = _executions(workspace)
    assert rec["status"] == "failure" and rec["error"] == "TimeoutError: the test server did not answer"


def test_a_cancelled_async_generator_is_not_recorded(make_guard: Any, workspace: Any) -> None:
    """A cancellation while the async generator awaits records nothing."""
    g = make_guard()

    async def main() -> None:
        gate = asyncio.Event()

        @guarded(guard=g, tool="read")
        async def lines(file_path: str) -> AsyncIterator[str]:
            yield "first"
            await gate.wait()
            yield "never"

        it = lines("notes.txt")
        assert await it.__anext__() == "first"
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0):
                await it.__anext__()

    asyncio.run(main())
    assert _executions(workspace) == []
