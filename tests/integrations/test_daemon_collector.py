"""``guard serve`` settles what it holds out of the garbage collector's walk while idle, and lets a
replaced Guard go.

A warm daemon holds its modules (LanceDB, pyarrow and pydantic where memory is on) and its Guard
for as long as it lives: a full collection walking all of that paused whichever decision was
running (``guard.pauses``). While idle, once modules were loaded or the Guard was rebuilt, the
daemon freezes what it holds (``HookServer.settle``); it unfreezes before it builds another Guard,
so the replaced one can still be collected. Driven through the daemon's own request handler and,
for the idle step, its accept loop on a real socket.
"""

from __future__ import annotations

import gc
import json
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hookhelpers import ALLOW, decisions, hook_env, sample, with_command

from guard.integrations import daemon
from guard.integrations.server import HookServer


@pytest.fixture
def server(ws: Path) -> Iterator[HookServer]:
    was_frozen = gc.get_freeze_count()
    gc.unfreeze()  # (a frozen test process would hide what the daemon froze)
    srv = HookServer(ws, version="test")
    yield srv
    with srv._lock:
        if srv._guard is not None:
            srv._guard.close()
    gc.unfreeze()
    if was_frozen:
        gc.freeze()


def _payload() -> str:
    return json.dumps(with_command(sample("claude-code", "pretooluse_bash.in.json"), ALLOW))


def _hook(srv: HookServer, **env: str) -> dict[str, Any]:
    # (the history backend: LanceDB's import on a background thread would load modules while a test counts)
    settings = hook_env(GUARD_MEMORY_BACKEND="history", **env)
    request = {"op": "hook", "host": "claude-code", "version": "test", "input": _payload(), "env": settings}
    return srv._answer(json.dumps(request).encode())


def test_settling_freezes_what_the_daemon_holds_once(server: HookServer, ws: Path) -> None:
    server.settle()
    assert gc.get_freeze_count() == 0  # no Guard yet: nothing of the daemon's to settle
    answer = _hook(server)
    assert answer["exit"] == 0 and "error" not in answer
    assert decisions(ws)[-1]["via"] == "daemon"
    assert gc.get_freeze_count() == 0  # answering freezes nothing: only the idle loop settles
    server.settle()
    frozen = gc.get_freeze_count()
    assert frozen > 1000  # the modules, the Guard and its layers
    _hook(server)
    server.settle()  # nothing loaded since: nothing new frozen
    assert gc.get_freeze_count() <= frozen  # (frozen objects freed by their count may lower it)


def test_settling_again_once_a_module_was_loaded(server: HookServer, tmp_path: Path) -> None:
    _hook(server)
    server.settle()
    frozen = gc.get_freeze_count()
    (tmp_path / "late_loaded_for_settle.py").write_text("TABLE = {i: [i] for i in range(500)}\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import late_loaded_for_settle  # noqa: F401  (as LanceDB loads on a background thread)

        server.settle()
        assert gc.get_freeze_count() >= frozen + 500  # its table came along
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("late_loaded_for_settle", None)


def test_a_replaced_guard_can_be_collected_and_the_new_one_settles(server: HookServer) -> None:
    _hook(server)
    server.settle()
    old = weakref.ref(server._guard)
    _hook(server, GUARD_DECISION_BUDGET_MS="150")  # other settings: a new Guard
    assert server._guard is not old()
    assert gc.get_freeze_count() == 0  # unfrozen before the old one was closed
    gc.collect()
    assert old() is None
    server.settle()
    assert gc.get_freeze_count() > 1000


def test_the_idle_accept_loop_settles(ws: Path, server: HookServer) -> None:
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    try:
        answer = None
        for _ in range(200):  # until it listens
            answer = daemon.call(ws, {"op": "ping"}, timeout=2.0)
            if answer is not None:
                break
            time.sleep(0.05)
        assert answer is not None and answer["pid"]
        replied = daemon.hook(
            ws, "claude-code", _payload().encode(), headless=False, may_ask=True, version="test", timeout=30.0
        )
        assert replied is not None and replied[1] == 0
        for _ in range(400):  # the accept loop wakes every 0.5 s without a connection
            if server._settled is not None:
                break
            time.sleep(0.05)
        assert server._settled is not None and gc.get_freeze_count() > 1000
    finally:
        server.stop()
        thread.join(10)
