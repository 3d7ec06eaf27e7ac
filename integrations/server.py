"""``guard serve``: a long-lived process that answers hook calls with a warm ``Guard``.

A hook process that starts Python, imports guard, opens the workspace and samples the
system for every tool call spends most of its time before the decision. The daemon keeps
all of that (and the session tracker, and LanceDB memory where configured) in memory;
hooks become thin clients (``guard.integrations.daemon``). When the daemon is down, hooks decide
in-process and start it in the background (``hooks.daemon = "auto"``).

One daemon per workspace: an ``flock`` on ``.guard-serve.lock`` guards the socket. The
socket is 0600 in a private directory, and a connection from another user is refused
(``SO_PEERCRED`` where the platform has it). Each connection gets a worker thread (at
most ``WORKERS``; the listen backlog holds ``BACKLOG``) that says it is alive at once and
then waits its turn: decisions are made one at a time, well under a millisecond each once
warm. Every decision line the daemon writes says ``"via": "daemon"``. The daemon reloads its ``Guard`` when
``guard.toml`` or the client's ``GUARD_*`` environment changes, flushes its aggregates to
the workspace while idle, and exits after ``idle`` seconds without a request (0 = never),
on ``stop``, or on SIGTERM/SIGINT.

A decision that has run for ``STUCK_SECONDS`` is stuck (a bug: every decision has a 200 ms budget and
a hook waits seconds). It holds the one lock every other decision waits for, so the daemon would
answer nothing again and not even stop on SIGTERM: it stops serving instead, removes its socket and
ends, and hooks decide in-process (and start a fresh daemon) until it is back.
"""

from __future__ import annotations

import fcntl
import gc
import json
import os
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from guard.integrations.daemon import ALIVE, LOCK_NAME, PROTOCOL, private_dir, socket_path

MAX_REQUEST = 32 * 1024 * 1024
FLUSH_EVERY = 5.0
# Every hook of a busy agent host (parallel sub-agents, Codex running matching hooks at once) may
# connect in the same instant: the kernel queues BACKLOG of them while the accept loop catches up
# (64 answered only 65-69 of 100), and at most WORKERS are served at once, the rest wait in line.
BACKLOG = 512
WORKERS = 256
STUCK_SECONDS = 60.0  # a decision running this long is stuck: the daemon makes way (see above)


class HookServer:
    def __init__(
        self, workspace: Path, *, idle_seconds: float = 0.0, version: str = "", stuck_seconds: float = STUCK_SECONDS
    ) -> None:
        self.workspace = workspace
        self.idle_seconds = idle_seconds
        self.version = version
        self.stuck_seconds = stuck_seconds
        self._deciding: float | None = None  # when the decision running now began (time.monotonic())
        self.gave_up = False  # serving stopped because a decision was stuck (``guard serve`` then ends at once)
        self.path = socket_path(workspace)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._guard: Any = None
        self._guard_key: tuple[Any, ...] | None = None
        self._last = time.monotonic()
        self._dirty = False
        self._workers = threading.BoundedSemaphore(WORKERS)
        self._settled: int | None = None  # modules loaded when the collector last settled (None: not since a new Guard)

    # -- lifecycle ----------------------------------------------------------------------
    def serve(self, ready: Callable[[Path], None] | None = None) -> bool:
        """Serve until idle or stopped; False (at once) when another daemon holds the workspace."""
        lock = os.open(self.workspace / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return False
            sock = self._listen()
            try:
                if ready is not None:
                    ready(self.path)
                self._loop(sock)
            finally:
                sock.close()
                try:
                    self.path.unlink()
                except OSError:
                    pass
                if self._lock.acquire(timeout=1.0):  # (a stuck decision keeps it: the Guard goes with the process)
                    try:
                        if self._guard is not None:
                            self._guard.close()
                    finally:
                        self._lock.release()
            return True
        finally:
            os.close(lock)

    def stop(self, *_: object) -> None:
        self._stop.set()

    def install_signal_handlers(self) -> None:
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)

    def _listen(self) -> socket.socket:
        parent = self.path.parent
        if parent != self.workspace:
            parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not private_dir(parent):
            raise PermissionError(f"{parent} must be a directory only you can enter (mode 0700)")
        try:
            self.path.unlink()  # a socket left by a daemon that died; we hold the lock
        except FileNotFoundError:
            pass
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(str(self.path))
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        sock.listen(BACKLOG)
        sock.settimeout(0.5)
        return sock

    def _loop(self, sock: socket.socket) -> None:
        last_flush = time.monotonic()
        while not self._stop.is_set():
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                now = time.monotonic()
                if self._stuck(now):
                    return
                if self._dirty and now - last_flush >= FLUSH_EVERY and self._flush():
                    last_flush = now
                self.settle()
                if self.idle_seconds and now - self._last > self.idle_seconds:
                    return
                continue
            except OSError:
                if self._stop.is_set():
                    return
                raise
            self._last = time.monotonic()
            if self._stuck(self._last):  # (busy or not: a stuck decision is found between connections too)
                conn.close()
                return
            self._workers.acquire()
            try:
                threading.Thread(target=self._serve_one, args=(conn,), daemon=True).start()
            except RuntimeError:  # no thread to be had: the client falls back in-process
                self._workers.release()
                conn.close()

    def _stuck(self, now: float) -> bool:
        began = self._deciding
        if began is None or now - began < self.stuck_seconds:
            return False
        sys.stderr.write(
            f"guard serve: a decision has run for {now - began:.0f} s and holds every other one up; "
            "stopping so that hooks decide on their own\n"
        )
        self.gave_up = True
        return True

    def settle(self) -> None:
        """While idle, once modules were loaded or the Guard was rebuilt since the last time: put
        everything the daemon holds out of the garbage collector's walk (``gc.freeze``).

        What it holds then (the modules, LanceDB, pyarrow and pydantic, imported on a background
        thread after the first call; the warm Guard) lives as long as the daemon. A full collection
        walking all of it paused whichever decision was running: 45-170 ms with LanceDB loaded on
        this 2-core machine (``guard.pauses``); frozen, it walks only what came since. The young
        generations are collected first: a frozen object is never collected. (Not while a decision
        runs: the accept loop never waits for one, so that it can tell when one is stuck.)"""
        if not self._lock.acquire(blocking=False):
            return
        try:
            now = len(sys.modules)
            if self._guard is None or now == self._settled:
                return
            gc.collect(1)
            gc.freeze()
            self._settled = now
        finally:
            self._lock.release()

    def _flush(self) -> bool:
        """Write the aggregates out; False when a decision is running (the loop tries again later)."""
        if not self._lock.acquire(blocking=False):
            return False
        try:
            if self._guard is not None:
                self._guard.flush()
            self._dirty = False
        finally:
            self._lock.release()
        return True

    # -- one connection -------------------------------------------------------------------
    def _serve_one(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(10.0)
            if not _same_user(conn):
                return
            conn.sendall(ALIVE)  # before any waiting: the client knows within a second that we live
            try:
                answer = self._answer(_read_line(conn))
            except Exception as exc:  # hostile input must not cost the daemon a thread's answer
                answer = {"v": PROTOCOL, "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
            conn.sendall(json.dumps(answer, ensure_ascii=False).encode() + b"\n")
        except OSError:
            pass
        finally:
            conn.close()
            self._workers.release()

    def _answer(self, data: bytes) -> dict[str, Any]:
        try:
            request = json.loads(data)
        except (ValueError, RecursionError):
            return {"v": PROTOCOL, "error": "request is not JSON"}
        if not isinstance(request, dict):
            return {"v": PROTOCOL, "error": "request is not an object"}
        op = request.get("op")
        if op == "ping":
            return {"v": PROTOCOL, "pid": os.getpid(), "version": self.version, "workspace": str(self.workspace)}
        if op == "stop":
            self.stop()
            return {"v": PROTOCOL, "ok": True}
        if op != "hook":
            return {"v": PROTOCOL, "error": f"unknown op {op!r}"}
        if "version" in request and request["version"] != self.version:
            self.stop()  # an upgraded client: make way for a daemon running its code
            return {"v": PROTOCOL, "error": f"daemon runs guard {self.version}"}
        return self._hook(request)

    def _hook(self, request: Mapping[str, Any]) -> dict[str, Any]:
        from guard.integrations.hosts import get_host
        from guard.integrations.hosts.flow import run

        try:
            host = get_host(str(request.get("host")))
        except ValueError as exc:
            return {"v": PROTOCOL, "error": str(exc)}
        raw_env = request.get("env")
        env = {str(k): str(v) for k, v in raw_env.items()} if isinstance(raw_env, dict) else {}
        text = request.get("input")
        with self._lock:  # ``run`` answers every failure in the host's own refusal; it does not raise
            self._deciding = time.monotonic()
            try:
                reply = run(
                    host,
                    text if isinstance(text, str) else "",
                    lambda: self._guard_for(env),
                    headless=request.get("headless") is True,
                    may_ask=request.get("may_ask") is not False,
                    env=env,
                    via="daemon",
                )
            finally:
                self._deciding = None
            self._dirty = True
        return {"v": PROTOCOL, "stdout": reply.stdout, "exit": reply.exit_code, "stderr": reply.stderr}

    def _guard_for(self, env: Mapping[str, str]) -> Any:
        """The warm Guard, rebuilt when guard.toml or the caller's GUARD_* settings change."""
        from guard.config import CONFIG_FILENAME, Config
        from guard.core import Guard
        from guard.workspace import ensure

        try:
            mtime = (self.workspace / CONFIG_FILENAME).stat().st_mtime_ns
        except OSError:
            mtime = None
        settings = {k: v for k, v in env.items() if k.startswith("GUARD_")}
        key = (mtime, tuple(sorted(settings.items())))
        if self._guard is None or key != self._guard_key:
            if self._guard is not None:
                gc.unfreeze()  # the old Guard's objects may be collected again (``settle`` freezes anew)
                self._guard.close()
                self._settled = None
            ensure(self.workspace)
            base = {k: v for k, v in os.environ.items() if not k.startswith("GUARD_")}
            config = Config.load(self.workspace, env=base | settings)
            # The daemon is the workspace's memory writer: LanceDB here, the published snapshot for the rest.
            backend = "lancedb" if config.get("memory.backend") == "auto" else None
            self._guard, self._guard_key = Guard(self.workspace, config, memory_backend=backend), key
        return self._guard


def _read_line(conn: socket.socket) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n") or size > MAX_REQUEST:
            break
    return b"".join(chunks)


def _same_user(conn: socket.socket) -> bool:
    peercred = getattr(socket, "SO_PEERCRED", None)
    if peercred is None:
        return True  # the socket's directory is private; that is the check here
    raw = conn.getsockopt(socket.SOL_SOCKET, peercred, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", raw)
    return bool(uid == os.getuid())
