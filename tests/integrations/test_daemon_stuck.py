"""``guard serve`` makes way when a decision is stuck.

Decisions in the daemon are made one at a time under one lock. A decision that never returns (a
bug: ``mv /opt/app /tmp/n; rm -rf $Z`` looped in session 29 until the hook's watchdog refused it)
held that lock for good: every later hook waited on it and was refused, and the daemon did not even
stop on SIGTERM (its shutdown waited on the lock too). A decision running ``stuck_seconds`` now makes
the daemon stop serving, remove its socket and return, so hooks decide in-process again (the
clients already waiting hear nothing once the process ends, and decide in-process too). The accept
loop's housekeeping (flushing, settling the collector) no longer waits for the lock either: it hung
there behind the stuck decision, and took no connection again.

Driven on a real socket with the daemon's own accept loop; the stuck decision is a first layer that
waits until the test lets it go (it stands for the bug, not for any part of guard), and the client is
guard's own (``guard.integrations.daemon.call``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hookhelpers import ALLOW, hook_env, run_hook, sample, with_command

from guard import Guard
from guard.integrations import daemon
from guard.integrations.server import STUCK_SECONDS, HookServer
from guard.layers.base import Context
from guard.model import ToolCall, Verdict

CONFIG = {"system.health": 90, "memory.backend": "history"}


class Stuck:
    """A first layer that waits until the test lets it go."""

    name = "stuck"

    def __init__(self) -> None:
        self.entered, self.release = threading.Event(), threading.Event()

    def __call__(self, call: ToolCall, ctx: Context) -> Verdict:
        self.entered.set()
        self.release.wait(30)
        return Verdict(layer=self.name)


class StuckServer(HookServer):
    """The daemon, with a Guard whose chain starts with ``layer``."""

    def __init__(self, ws: Path, layer: Stuck, stuck_seconds: float) -> None:
        super().__init__(ws, version="test", stuck_seconds=stuck_seconds)
        self.layer = layer

    def _guard_for(self, env: Mapping[str, str]) -> Any:
        if self._guard is None:
            plain = Guard(self.workspace, CONFIG)
            layers = [self.layer, *plain.default_layers()]
            plain.close()
            self._guard = Guard(self.workspace, CONFIG, layers=layers)
        return self._guard


def _request() -> dict[str, Any]:
    payload = json.dumps(with_command(sample("claude-code", "pretooluse_bash.in.json"), ALLOW))
    return {"op": "hook", "host": "claude-code", "version": "test", "input": payload, "env": hook_env()}


def _serve(srv: HookServer) -> tuple[threading.Thread, list[bool], threading.Event]:
    listening, served = threading.Event(), []
    thread = threading.Thread(target=lambda: served.append(srv.serve(lambda _: listening.set())), daemon=True)
    thread.start()
    assert listening.wait(10)
    return thread, served, listening


def test_a_stuck_decision_makes_the_daemon_stop_and_give_its_socket_up(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    layer = Stuck()
    srv = StuckServer(ws, layer, stuck_seconds=0.5)
    thread, served, _ = _serve(srv)
    answers: list[Any] = []
    client = threading.Thread(target=lambda: answers.append(daemon.call(ws, _request(), timeout=20)), daemon=True)
    try:
        client.start()
        assert layer.entered.wait(10)  # the decision is running, and does not return
        thread.join(10)
        assert not thread.is_alive() and served == [True] and srv.gave_up  # the accept loop gave up
        assert not daemon.socket_path(ws).exists()  # hooks now find no daemon, and decide themselves
        assert daemon.call(ws, _request(), timeout=5) is None  # the next hook finds no daemon at once
        assert "a decision has run for" in capsys.readouterr().err
        out = run_hook("claude-code", json.loads(_request()["input"]), ws)  # (the hook decides in-process)
        assert out.json["hookSpecificOutput"]["permissionDecision"] == "allow"
    finally:
        layer.release.set()
        client.join(10)
        if srv._guard is not None:
            srv._guard.close()


def test_a_decision_under_the_limit_leaves_the_daemon_serving(ws: Path) -> None:
    """The near-miss: a slow decision that returns is answered, and the daemon keeps its socket."""
    layer = Stuck()
    srv = StuckServer(ws, layer, stuck_seconds=30.0)
    thread, served, _ = _serve(srv)
    answers: list[Any] = []
    client = threading.Thread(target=lambda: answers.append(daemon.call(ws, _request(), timeout=20)), daemon=True)
    try:
        client.start()
        assert layer.entered.wait(10)
        layer.release.set()  # it returns, well under the limit
        client.join(20)
        assert answers and answers[0] is not None and answers[0]["exit"] == 0
        assert thread.is_alive() and daemon.socket_path(ws).exists() and not srv.gave_up
    finally:
        layer.release.set()
        srv.stop()
        thread.join(10)
        if srv._guard is not None:
            srv._guard.close()
    assert served == [True]


def test_the_limit_is_far_above_any_decisions_budget() -> None:
    """A decision has 200 ms (``decision.budget_ms``) and hooks wait 10 s: a minute is stuck."""
    assert STUCK_SECONDS >= 6 * 10
