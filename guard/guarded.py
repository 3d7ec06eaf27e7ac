"""``@guarded``: decide before a tool function runs, record how it went after.

    @guarded
    def bash(command: str) -> str: ...

    @guarded(tool="write", confirm=ask_user, session_id=lambda: current_session)
    async def write_file(file_path: str, content: str) -> None: ...

One decision core (:func:`_before`, :func:`_after`) and two thin drivers chosen once at
decoration time: a plain wrapper for sync functions and a real ``async def`` for coroutine
functions; they differ only where the async one awaits the confirm callback.
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
) -> Any:
    """Guard a tool function, bare (``@guarded``) or with options (``@guarded(tool="bash")``).

    - ``tool``: the tool name guard sees (default: the function's name).
    - ``params``: how the call's arguments become params: a mapping ``{param: argument}``,
      a callable receiving the call's arguments, or None for the bound arguments by name.
    - ``session_id``: a value or a zero-argument callable.
    - ``confirm``: called with the record on request_confirm; returns (or awaits) True to
      run the call. Without it, request_confirm raises ``ConfirmationRequired``.
    - ``guard``: the ``Guard`` to use (default: one shared per process).

    A block raises ``ToolBlocked`` (a ``PermissionError``) carrying the record; the result or
    exception of the call is recorded with its duration.
    """

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        spec = _Spec(fn, tool or fn.__name__, params, session_id, confirm, guard)
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                call_params, sid, record = spec.before(args, kwargs)
                if record.decision != AUTO_ALLOW:
                    answer = spec.ask(record)
                    if inspect.isawaitable(answer):
                        answer = await answer
                    spec.answered(record, call_params, sid, bool(answer))
                start = time.perf_counter()
                try:
                    result = await fn(*args, **kwargs)
                except BaseException as exc:
                    spec.after(call_params, sid, start, exc, record)
                    raise
                spec.after(call_params, sid, start, None, record)
                return result

            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            call_params, sid, record = spec.before(args, kwargs)
            if record.decision != AUTO_ALLOW:
                answer = spec.ask(record)
                if inspect.isawaitable(answer):
                    close = getattr(answer, "close", None)
                    if callable(close):
                        close()
                    raise TypeError("an async confirm callback needs an async tool function")
                spec.answered(record, call_params, sid, bool(answer))
            start = time.perf_counter()
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:
                spec.after(call_params, sid, start, exc, record)
                raise
            spec.after(call_params, sid, start, None, record)
            return result

        return wrapper

    return decorate(func) if func is not None else decorate


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
    ) -> None:
        self.signature = inspect.signature(fn)
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
        record = self.guard.decide(self.tool, call_params, session_id=sid)
        if record.decision == BLOCK:
            raise ToolBlocked(record)
        return call_params, sid, record

    def ask(self, record: DecisionRecord) -> Any:
        if self.confirm is None:
            raise ConfirmationRequired(record)
        return self.confirm(record)

    def answered(self, record: DecisionRecord, params: dict[str, Any], sid: str | None, approved: bool) -> None:
        self.guard.record_interaction(self.tool, params, session_id=sid, approved=approved)
        if not approved:
            raise ToolBlocked(record, f"the user declined {self.tool}: {record.summary()}")

    def after(
        self,
        params: dict[str, Any],
        sid: str | None,
        start: float,
        exc: BaseException | None,
        record: DecisionRecord,
    ) -> None:
        duration = (time.perf_counter() - start) * 1000
        static = record.layer("static")  # the risk decided on: no second classification
        self.guard.record_result(
            self.tool,
            params,
            session_id=sid,
            success=exc is None,
            duration_ms=round(duration, 3),
            error=None if exc is None else f"{type(exc).__name__}: {exc}",
            risk=static.risk if static is not None else None,
        )
