"""``Guard``: the chain, the stores and the configuration behind one object.

    g = Guard(workspace="/tmp/ws")
    record = g.decide("bash", {"command": "ls"})
    g.record_result("bash", {"command": "ls"}, success=True, duration_ms=3)

``decide`` never awaits and never waits on a slow store: it reads in-memory aggregates
(caught up from the history files by byte offset) and appends one decision line.
"""

from __future__ import annotations

import atexit
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs

from guard import logline
from guard import redact as redaction
from guard import workspace as ws
from guard.chain import BEHAVIOR, DEFAULT_ORDER, FUSION, STATIC, Chain, combine
from guard.config import Config
from guard.errors import InputError
from guard.inputs import check_params, clamp_time
from guard.layers.base import Context, Layer
from guard.log import logger
from guard.logline import decision_line, decision_text
from guard.model import REQUEST_CONFIRM, DecisionRecord, Reason, Risk, ToolCall, Verdict
from guard.redact import redact, redact_text

__all__ = ["Guard", "decision_line", "default_guard"]
from guard.state import State

UNRECORDED_RULE = "G004"  # the workspace cannot be written: the static verdict stands
BAD_CONFIG_RULE = "G005"  # guard.toml does not parse: its last good copy stands in, non-reads are confirmed


def _now() -> datetime:
    """Now, in local time: read as UTC and turned local (one ``localtime`` for the instant), the
    same value as ``datetime.now().astimezone()``, which first works out which instant a local wall
    time names (1.0 → 0.84 µs in UTC, 2.3 → 1.1 µs in a zone with summer time)."""
    return datetime.now(UTC).astimezone()


class Guard:
    """Decide on tool calls and learn from their outcomes.

    ``config`` is a ``Config`` or a mapping of overrides (``{"weights.memory": 0.4}`` or
    ``{"weights": {"memory": 0.4}}``) applied over the workspace file and environment.
    ``layers`` replaces the default chain (static → behavior → fusion); build on
    :meth:`default_layers` to add your own anywhere in the order. Layers are found by name
    (a result is recorded with the risk of the layer named ``static``, the fused score is the
    layer named ``fusion``); two layers with one name raise ``ConfigError``.
    """

    def __init__(
        self,
        workspace: str | Path | None = None,
        config: Config | Mapping[str, Any] | None = None,
        *,
        layers: Sequence[Layer] | None = None,
        human_present: bool | None = None,
        memory_backend: str | None = None,
        evaluators: Any | None = None,
    ) -> None:
        self.workspace = ws.resolve(workspace)
        self.writable = ws.ensure(self.workspace)
        # Placeholders are hashed with the workspace's key (one per process: the last Guard's).
        if redaction.use_key(ws.redaction_key(self.workspace) if self.writable else None):
            logline.clear()
        # Why the workspace cannot take a write (read-only, full, ...), while that lasts: calls
        # then keep their static verdict (see ``_unrecorded``) instead of learning nothing silently.
        self.unrecorded: str | None = None if self.writable else (ws.write_problem(self.workspace) or "not writable")
        if isinstance(config, Config):
            self.config = config
        else:
            self.config = Config.load(self.workspace if self.workspace.is_dir() else None, overrides=config)
        self.human_present = (not self.config.get("guard.headless")) if human_present is None else human_present
        self.evaluators = evaluators
        # Before the stores open: a chain that does not fit (two layers, one name) refuses here.
        self.chain = Chain(layers if layers is not None else self.default_layers())
        self.state = State(self.workspace, self.config, memory_backend=memory_backend)
        self._closed = False
        _LIVE.add(self)

    def default_layers(self) -> list[Layer]:
        """The built-in layers in ``guard.chain.DEFAULT_ORDER`` (static → behavior → fusion)."""
        from guard.layers.behavior import BehaviorLayer
        from guard.layers.fusion import FusionLayer
        from guard.layers.static import StaticLayer

        build: dict[str, Callable[[], Layer]] = {
            STATIC: lambda: StaticLayer(self.config, workspace=self.workspace),
            BEHAVIOR: lambda: BehaviorLayer(self.config),
            FUSION: lambda: FusionLayer(self.config, self.evaluators),
        }
        return [build[name]() for name in DEFAULT_ORDER]

    # -- deciding -----------------------------------------------------------------------
    def make_call(
        self,
        tool: str,
        params: Mapping[str, Any] | None = None,
        *,
        session_id: str | None = None,
        cwd: str | None = None,
        agent_id: str | None = None,
        kind: str | None = None,
    ) -> ToolCall:
        if not isinstance(tool, str) or not tool.strip():
            raise InputError(f"tool must be a non-empty string, got {tool!r}")
        if params is None:
            params = {}
        elif type(params) is not dict and not isinstance(params, Mapping):  # (an ABC's check: the slow way to True)
            raise InputError(f"params must be a JSON object (mapping), got {type(params).__name__}")
        for key, value in params.items():  # (``check_params``' first question, as a loop: the usual
            if type(key) is not str or type(value) is not str:  # call is text only, 0.5 → 0.1 µs)
                check_params(params)
                break
        if session_id is not None and not isinstance(session_id, str):
            session_id = str(session_id)
        return ToolCall.built(tool, params, session_id, cwd, agent_id, _now(), kind)

    def decide(
        self,
        tool: str,
        params: Mapping[str, Any] | None = None,
        *,
        session_id: str | None = None,
        cwd: str | None = None,
        agent_id: str | None = None,
        save: bool = True,
        track: bool | None = None,
        log_extra: Mapping[str, Any] | None = None,
        prefer: Callable[[DecisionRecord], DecisionRecord] | None = None,
        kind: str | None = None,
    ) -> DecisionRecord:
        """Run the chain on one call and (by default) log it and count it in its session.

        ``kind`` declares what an application's own tool is (``"read"``, ``"write"`` …, see
        :data:`guard.toolnames.DECLARABLE`): it is judged as that kind instead of asking as unknown."""
        call = self.make_call(tool, params, session_id=session_id, cwd=cwd, agent_id=agent_id, kind=kind)
        return self._decide(call, save, save if track is None else track, log_extra, prefer)

    def decide_call(
        self,
        call: ToolCall,
        *,
        save: bool = True,
        track: bool | None = None,
        log_extra: Mapping[str, Any] | None = None,
        prefer: Callable[[DecisionRecord], DecisionRecord] | None = None,
    ) -> DecisionRecord:
        """Decide a prepared call. ``track`` (default: ``save``) feeds the session layer.

        ``guard explain`` and what-if questions pass ``save=False`` and are not counted as the
        session having made the call; replays pass ``track=True``. ``log_extra`` adds fields
        to the decision line (a hook's host and event). ``prefer`` folds the person's standing
        answers kept by the host (``guard.integrations.hosts.host_rules``) into the record before it is
        logged and counted.
        """
        if call.timestamp is not None:
            ts = clamp_time(call.timestamp, self._skew)
            if ts is not call.timestamp:
                call = attrs.evolve(call, timestamp=ts)
        return self._decide(call, save, save if track is None else track, log_extra, prefer)

    def _decide(
        self,
        call: ToolCall,
        save: bool,
        track: bool,
        log_extra: Mapping[str, Any] | None,
        prefer: Callable[[DecisionRecord], DecisionRecord] | None = None,
    ) -> DecisionRecord:
        """The decision on a call whose time is trusted (``make_call`` dated it now)."""
        unavailable: list[str] = []
        try:
            self.state.aggregates.catch_up()
        except Exception as exc:
            if not ws.note_write_failure(exc, self.workspace):
                logger.warning(f"history unavailable: {exc}")
            unavailable.append("history")
        # (positional: attrs' ``__init__`` takes keywords at twice the cost)
        ctx = Context(self.config, call.timestamp or _now(), self.state, self.human_present)
        record = self.chain.run(call, ctx)
        if prefer is not None:
            record = prefer(record)
        if save:
            try:
                self.state.decisions.append_text(decision_text(record, log_extra))
                if self.writable:
                    self.unrecorded = None  # space came back
            except OSError as exc:
                if not ws.note_write_failure(exc, self.workspace):
                    logger.warning(f"decision log unavailable: {exc}")
                self.unrecorded = exc.strerror or str(exc)
                unavailable.append("decision_log")
        if self.unrecorded is not None:
            record = self._degraded(
                record, ctx, UNRECORDED_RULE, f"guard cannot write its workspace ({self.unrecorded})"
            )
        if self.config.error is not None:
            record = self._degraded(record, ctx, BAD_CONFIG_RULE, f"{self.config.error} (guard's configuration)")
        if track:
            try:
                self.state.sessions.on_dispatch(call, record)
            except Exception as exc:
                if not ws.note_write_failure(exc, self.workspace):
                    logger.warning(f"session tracking unavailable: {exc}")
                unavailable.append("sessions")
        if unavailable:
            record = attrs.evolve(record, unavailable=(*record.unavailable, *unavailable))
        return record

    def _degraded(self, record: DecisionRecord, ctx: Context, rule_id: str, problem: str) -> DecisionRecord:
        """Keep the static verdict while part of guard is broken: blocks stay blocks, only what
        the static layer rates safe may run unasked.

        G004, the workspace cannot be written: the session's history stops (loops, failure
        streaks, approvals go unseen), so learned trust must not lift a call above what the
        static layer alone says. G005, guard.toml does not parse: its last good copy's deny and
        ask rules stand in, and the person sees which file and line to fix.
        """
        static = record.layer(STATIC)
        safe = static is not None and static.risk is Risk.SAFE and static.error is None
        message = f"{problem}: the call keeps its static verdict" + ("" if safe else " (at most request_confirm)")
        if rule_id == UNRECORDED_RULE:
            message += " and is not recorded"
        ctx.verdicts.append(
            Verdict(
                "workspace" if rule_id == UNRECORDED_RULE else "config",
                ceiling=None if safe else REQUEST_CONFIRM,
                reasons=(Reason(rule_id, message),),
            )
        )
        return combine(record.call, ctx, record.elapsed_us, fusion=self.chain.fusion)

    # -- learning -----------------------------------------------------------------------
    def record_result(
        self,
        tool: str,
        params: Mapping[str, Any] | None = None,
        *,
        session_id: str | None = None,
        success: bool,
        duration_ms: float | None = None,
        error: str | None = None,
        risk: Risk | str | None = None,
        timestamp: datetime | None = None,
        agent_id: str | None = None,
    ) -> None:
        """Record how a call went (the seed's ``.command-execution.jsonl``)."""
        call = self.make_call(tool, params, session_id=session_id, agent_id=agent_id)
        self.record_result_call(
            call, success=success, duration_ms=duration_ms, error=error, risk=risk, timestamp=timestamp
        )

    def record_result_call(
        self,
        call: ToolCall,
        *,
        success: bool,
        duration_ms: float | None = None,
        error: str | None = None,
        risk: Risk | str | None = None,
        timestamp: datetime | None = None,
    ) -> None:
        """:meth:`record_result` for a prepared call (one the hook flow also decided on: its
        parameters are redacted once for every line it reaches)."""
        now = _now() if timestamp is None else clamp_time(timestamp, self._skew)
        risk = self._risk_of(call) if risk is None else Risk.parse(risk)
        sig = self.state.signature_of(call)
        line = _history_line(
            call,
            now,
            sig,
            status="success" if success else "failure",
            duration_ms=duration_ms,
            error=redact(error) if error else None,
            risk=risk.label,
        )
        aggregates = self.state.aggregates
        recorded = self._recording("result", lambda: aggregates.add(aggregates.executions, line))
        if self._recording("result", lambda: self.state.sessions.on_result(call, success, now)) and recorded:
            self._written()
        self.state.remember(call, sig, success=success, risk=risk, now=now)

    def record_interaction(
        self,
        tool: str,
        params: Mapping[str, Any] | None = None,
        *,
        session_id: str | None = None,
        approved: bool,
        satisfaction: int | None = None,
        timestamp: datetime | None = None,
    ) -> None:
        """Record the person's answer to a confirmation (the seed's ``.user-interactions.jsonl``)."""
        call = self.make_call(tool, params, session_id=session_id)
        self.record_interaction_call(call, approved=approved, satisfaction=satisfaction, timestamp=timestamp)

    def record_interaction_call(
        self, call: ToolCall, *, approved: bool, satisfaction: int | None = None, timestamp: datetime | None = None
    ) -> None:
        """:meth:`record_interaction` for a prepared call."""
        if satisfaction is not None and (isinstance(satisfaction, bool) or not 1 <= satisfaction <= 5):
            raise InputError(f"satisfaction must be 1-5, got {satisfaction!r}")
        now = _now() if timestamp is None else clamp_time(timestamp, self._skew)
        line = _history_line(
            call,
            now,
            self.state.signature_of(call),
            action="approved" if approved else "denied",
            satisfaction=satisfaction,
        )
        aggregates = self.state.aggregates
        recorded = self._recording("answer", lambda: aggregates.add(aggregates.interactions, line))
        if self._recording("answer", lambda: self.state.sessions.on_interaction(call, approved, now)) and recorded:
            self._written()

    def _recording(self, what: str, step: Callable[[], None]) -> bool:
        """One step of recording; a workspace that refuses the write (a full disk, a read-only
        mount, a file size limit) is said once and the caller's call goes on: guard's bookkeeping
        must not fail the tool it guards. What was written before stays (a torn append is taken
        back), and later decisions keep their static verdict (G004) until writes work again.
        True when the step was written."""
        try:
            step()
        except OSError as exc:
            if not ws.note_write_failure(exc, self.workspace):
                logger.warning(f"guard could not record this {what}: {exc}")
            self.unrecorded = exc.strerror or str(exc)
            return False
        return True

    def _written(self) -> None:
        """A whole result or answer reached the workspace: space came back (a workspace that was
        never writable stays unrecorded)."""
        if self.writable:
            self.unrecorded = None

    @property
    def _skew(self) -> float:
        return float(self.config.get("guard.clock_skew_seconds"))

    def _risk_of(self, call: ToolCall) -> Risk:
        """The risk a result is recorded with: the static layer's, wherever it stands in the
        chain (MEDIUM without one: unknown is not safe)."""
        static = self.chain.layer(STATIC)
        if static is None:
            return Risk.MEDIUM
        try:
            ctx = Context(config=self.config, now=_now(), state=None, human_present=self.human_present)
            verdict = static(call, ctx)
            return verdict.risk if verdict.risk is not None else Risk.MEDIUM  # SAFE is 0, falsy
        except Exception:
            return Risk.MEDIUM

    # -- explaining -----------------------------------------------------------------------
    def explain(self, tool: str, params: Mapping[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        """The decision plus each layer's own explanation (the static parse, ...), not saved."""
        record = self.decide(tool, params, save=False, **kw)
        return record.to_dict() | {"explain": self.layer_details(record.call)}

    def layer_details(self, call: ToolCall) -> dict[str, Any]:
        """What each layer with an ``explain(call)`` method says about the call."""
        details: dict[str, Any] = {}
        for name, layer in zip(self.chain.names, self.chain.layers, strict=True):
            explain = getattr(layer, "explain", None)
            if callable(explain):
                try:
                    details[name] = explain(call)
                except Exception as exc:
                    details[name] = {"error": f"{type(exc).__name__}: {exc}"}
        return details

    # -- lifecycle ------------------------------------------------------------------------
    def flush(self) -> None:
        """Persist aggregates and hand buffered memories to their store."""
        self.state.flush()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.state.close()

    def __enter__(self) -> Guard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _history_line(call: ToolCall, now: datetime, signature: str, **fields: Any) -> dict[str, Any]:
    """A history line in the seed's shape (timestamp, tool, ...) with guard's extra fields."""
    return {
        "timestamp": now.isoformat(timespec="seconds"),
        "tool": redact_text(call.tool),
        **fields,
        "session_id": redact(call.session_id),
        "signature": signature,
        "params": call.redacted_params,
    }


_LIVE: weakref.WeakSet[Guard] = weakref.WeakSet()
_DEFAULT: Guard | None = None
_DEFAULT_LOCK = threading.Lock()


def default_guard() -> Guard:
    """One ``Guard`` per process for ``@guarded`` without ``guard=``."""
    global _DEFAULT
    if _DEFAULT is None:
        with _DEFAULT_LOCK:
            if _DEFAULT is None:
                _DEFAULT = Guard()
    return _DEFAULT


@atexit.register
def _close_all() -> None:
    for g in list(_LIVE):
        try:
            g.close()
        except Exception:  # at exit, nothing is worth a traceback
            pass
