"""``@guarded``: decide before a tool function runs, record how it went after.

    @guarded
    def bash(command: str) -> str: ...

    @guarded(tool="write", confirm=ask_user, session_id=lambda: current_session)
    async def write_file(file_path: str, content: str) -> None: ...

One decision core (``_Spec.enter``, ``_Spec.after``) and one thin driver per kind of function,
chosen once at decoration time (stamina's pattern), so the wrapper is of the same kind as the
tool (``inspect.iscoroutinefunction`` and friends stay true):

- a plain function: decided before the call, recorded when it returns or raises;
- a coroutine function: a real ``async def`` that awaits an async confirm callback;
- a generator / async generator function: decided before the first item, recorded when the
  iteration is over, with the duration of the whole iteration: success when exhausted,
  failure with the exception raised while iterating, success when the consumer stops early
  (``close()`` / ``aclose()``: what it took came without error).

Only an ``Exception`` is a tool failure: a cancellation (the caller's ``asyncio.timeout`` or
``wait_for`` cancels the tool) or a Ctrl-C is not recorded at all.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ParamSpec, TypeVar, overload

from guard.core import Guard, default_guard
from guard.errors import ConfirmationRequired, ToolBlocked
from guard.model import AUTO_ALLOW, BLOCK, DecisionRecord
from guard.toolnames import declared_kind

P = ParamSpec("P")
R = TypeVar("R")

ConfirmCallback = Callable[[DecisionRecord], "bool | Awaitable[bool]"]
ParamsSpec = Callable[..., Mapping[str, Any]] | Mapping[str, str] | None
SessionSpec = str | Callable[[], str | None] | None


@overload
def guarded(func: Callable[P, R], /) -> Callable[P, R]: ...


@overload
def guarded(
    *,
    tool: str | None = None,
    params: ParamsSpec = None,
    session_id: SessionSpec = None,
    confirm: ConfirmCallback | None = None,
    guard: Guard | None = None,
    kind: str | None = None,
) -> Callable[[Callable[P, R]], Callable[P, R]]: ...


def guarded(
    func: Callable[P, R] | None = None,
    /,
    *,
    tool: str | None = None,
    params: ParamsSpec = None,
    session_id: SessionSpec = None,
    confirm: ConfirmCallback | None = None,
    guard: Guard | None = None,
    kind: str | None = None,
) -> Any:
    """Guard a tool function, bare (``@guarded``) or with options (``@guarded(tool="bash")``).

    - ``tool``: the tool name guard sees (default: the function's name).
    - ``params``: how the call's arguments become params: a mapping ``{param: argument}``,
      a callable receiving the call's arguments, or None for the bound arguments by name.
    - ``session_id``: a value or a zero-argument callable.
    - ``confirm``: called with the record on request_confirm; returns (or awaits) True to
      run the call. Without it, request_confirm raises ``ConfirmationRequired``.
    - ``guard``: the ``Guard`` to use (default: one shared per process).
    - ``kind``: what a tool guard does not know by name is (``"read"``, ``"write"``, ``"edit"``,
      ``"glob"``, ``"grep"``, ``"web_fetch"``, ``"bash"``): ``@guarded(kind="read")`` on
      ``search_docs`` is judged as a read instead of asking as unknown (G187). A command or URL in
      its parameters is still judged as one: a declaration never lifts a block. A kind guard does
      not have is a ``ConfigError`` at decoration.

    A block raises ``ToolBlocked`` (a ``PermissionError``) carrying the record; the result or
    exception of the call is recorded with its duration (for a generator: when the iteration is
    over). A cancellation is not recorded: the caller's timeout is no tool failure.
    """

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        spec = _Spec(fn, tool or fn.__name__, params, session_id, confirm, guard, declared_kind(kind))
        return _driver_for(fn)(spec, fn)

    return decorate(func) if func is not None else decorate


def _driver_for(fn: Callable[..., Any]) -> Callable[[_Spec, Callable[..., Any]], Callable[..., Any]]:
    """The driver of ``fn``'s kind, chosen once: the wrapper is of the same kind as ``fn``."""
    if inspect.isasyncgenfunction(fn):
        return _async_generator_driver
    if inspect.iscoroutinefunction(fn):
        return _coroutine_driver
    if inspect.isgeneratorfunction(fn):
        return _generator_driver
    return _function_driver


def _function_driver(spec: _Spec, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        run = spec.enter(args, kwargs)
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:
            spec.after(run, exc)
            raise
        spec.after(run, None)
        return result

    return wrapper


def _coroutine_driver(spec: _Spec, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        run = await spec.enter_async(args, kwargs)
        try:
            result = await fn(*args, **kwargs)
        except BaseException as exc:
            spec.after(run, exc)
            raise
        spec.after(run, None)
        return result

    return wrapper


def _generator_driver(spec: _Spec, fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decides at the first ``next()``; records once the iteration is over (``yield from``
    passes ``send``/``throw``/``close`` through)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        run = spec.enter(args, kwargs)
        try:
            result = yield from fn(*args, **kwargs)
        except GeneratorExit:
            spec.after(run, None)  # the consumer stopped early: what it took came without error
            raise
        except BaseException as exc:
            spec.after(run, exc)
            raise
        spec.after(run, None)
        return result

    return wrapper


def _async_generator_driver(spec: _Spec, fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decides at the first ``__anext__()``; records once the iteration is over. ``async for``
    would not pass ``asend``/``athrow``/``aclose`` through, so the loop does it by hand."""

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        run = await spec.enter_async(args, kwargs)
        agen = fn(*args, **kwargs)
        try:
            try:
                item = await agen.__anext__()
                while True:
                    try:
                        sent = yield item
                    except GeneratorExit:
                        await agen.aclose()
                        raise
                    except BaseException as thrown:
                        item = await agen.athrow(thrown)
                    else:
                        item = await agen.asend(sent)
            except StopAsyncIteration:
                pass
        except GeneratorExit:
            spec.after(run, None)  # the consumer stopped early (aclose): not a tool failure
            raise
        except BaseException as exc:
            spec.after(run, exc)
            raise
        spec.after(run, None)

    return wrapper


def _outcome(exc: BaseException | None) -> bool | None:
    """Success, failure, or None for an interruption that is not the tool's doing.

    Only an ``Exception`` is a tool failure. Cancellation (``asyncio.CancelledError``, also
    what the caller's ``asyncio.timeout``/``wait_for`` raise inside the tool), Ctrl-C and
    ``SystemExit`` derive from ``BaseException`` alone: they are not recorded, as a host's
    interrupted call is not, so a caller's timeout never starts a failure streak.
    """
    if exc is None:
        return True
    return False if isinstance(exc, Exception) else None


class _Run:
    """One call under way: what was decided and when the tool started."""

    __slots__ = ("params", "record", "sid", "start")

    def __init__(self, params: dict[str, Any], sid: str | None, record: DecisionRecord) -> None:
        self.params, self.sid, self.record = params, sid, record
        self.start = time.perf_counter()


class _Spec:
    """What a decoration fixed once: names, parameter mapping, session, callback, guard."""

    def __init__(
        self,
        fn: Callable[..., Any],
        tool: str,
        params: ParamsSpec,
        session_id: SessionSpec,
        confirm: ConfirmCallback | None,
        guard: Guard | None,
        kind: str | None = None,
    ) -> None:
        self.signature = inspect.signature(fn)
        self.kind = kind
        self.tool = tool
        self.params = params
        self.session_id = session_id
        self.confirm = confirm
        self._guard = guard

    @property
    def guard(self) -> Guard:
        return self._guard or default_guard()

    def call_params(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        if callable(self.params):
            return dict(self.params(*args, **kwargs))
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        named = dict(bound.arguments)
        for p in self.signature.parameters.values():  # fold **kwargs into the params
            if p.kind is inspect.Parameter.VAR_KEYWORD and p.name in named:
                named.update(named.pop(p.name))
        if isinstance(self.params, Mapping):
            return {key: named.get(arg) for key, arg in self.params.items()}
        return named

    def session(self) -> str | None:
        sid = self.session_id() if callable(self.session_id) else self.session_id
        return None if sid is None else str(sid)

    def before(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[dict[str, Any], str | None, DecisionRecord]:
        call_params = self.call_params(args, kwargs)
        sid = self.session()
        record = self.guard.decide(self.tool, call_params, session_id=sid, kind=self.kind)
        if record.decision == BLOCK:
            raise ToolBlocked(record)
        return call_params, sid, record

    def enter(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Run:
        """Decide and, on request_confirm, ask (a sync callback): the run to record after."""
        call_params, sid, record = self.before(args, kwargs)
        if record.decision != AUTO_ALLOW:
            answer = self.ask(record)
            if inspect.isawaitable(answer):
                close = getattr(answer, "close", None)
                if callable(close):
                    close()
                raise TypeError("an async confirm callback needs an async tool function")
            self.answered(record, call_params, sid, bool(answer))
        return _Run(call_params, sid, record)

    async def enter_async(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Run:
        """:meth:`enter` for async tools: the confirm callback may be awaited."""
        call_params, sid, record = self.before(args, kwargs)
        if record.decision != AUTO_ALLOW:
            answer = self.ask(record)
            if inspect.isawaitable(answer):
                answer = await answer
            self.answered(record, call_params, sid, bool(answer))
        return _Run(call_params, sid, record)

    def ask(self, record: DecisionRecord) -> Any:
        if self.confirm is None:
            raise ConfirmationRequired(record)
        return self.confirm(record)

    def answered(self, record: DecisionRecord, params: dict[str, Any], sid: str | None, approved: bool) -> None:
        self.guard.record_interaction(self.tool, params, session_id=sid, approved=approved)
        if not approved:
            raise ToolBlocked(record, f"the user declined {self.tool}: {record.summary()}")

    def after(self, run: _Run, exc: BaseException | None) -> None:
        success = _outcome(exc)
        if success is None:
            return
        duration = (time.perf_counter() - run.start) * 1000
        static = run.record.layer("static")  # the risk decided on: no second classification
        self.guard.record_result(
            self.tool,
            run.params,
            session_id=run.sid,
            success=success,
            duration_ms=round(duration, 3),
            error=None if exc is None else f"{type(exc).__name__}: {exc}",
            risk=static.risk if static is not None else None,
        )
