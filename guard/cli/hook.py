"""guard hook HOST: answer one agent-host hook event read on standard input.

This runs once per tool call, so it is built to start lean: ``guard.cli.main`` hands
``guard hook ...`` straight to :func:`main` (no full parser), and a running ``guard serve``
answers the event without this process importing any decision code. Only when no daemon
answers does it open the workspace and decide in-process (starting the daemon for next
time when ``hooks.daemon`` is ``auto``).

Whatever goes wrong, the host gets an answer in its own format that refuses (or asks
about) the call: most hosts let a call through when a hook crashes or prints garbage.
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path
from typing import Any

from guard.hookclient import (
    FLAGS,
    HOOK_TIMEOUT,
    ask_daemon,
    daemon_mode,
    emit,
    finish,
    hook_timeout,
    hooks_table,
    parse,
    workspace_of,
)
from guard.hookclient import last_resort as _last_resort

__all__ = ["FLAGS", "HOOK_TIMEOUT", "answer", "main", "register"]

HELP = """\
Answer one hook event from an agent host: read its JSON on stdin, print the host's answer.

hosts: claude-code, codex, gemini (gemini-cli), cursor, openclaw

  guard hook claude-code < event.json
  guard hook codex --workspace ~/.guard-work < event.json

Decisions map to the host's vocabulary: auto_allow -> allow; request_confirm -> ask (or,
where the host cannot ask, deny with `guard approve ID` instructions); block -> deny with
the reason and what to do instead. Use `guard install HOST` to register the hooks.
"""


def register(sub: Any) -> None:
    import argparse

    p = sub.add_parser(
        "hook",
        help="answer one agent-host hook event (stdin → stdout)",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("host", help="claude-code, codex, gemini, cursor or openclaw")
    p.add_argument("--workspace", metavar="DIR", help="guard's data directory (default: $GUARD_HOME, else ~/.guard)")
    p.add_argument("--headless", action="store_true", help="nobody can answer a prompt: never ask, deny instead")
    p.add_argument(
        "--no-ask", action="store_true", help="the host's ask is unreliable: deny with an out-of-band approval"
    )
    p.add_argument("--no-daemon", action="store_true", help="decide in this process; do not use or start guard serve")
    p.set_defaults(func=lambda args: answer(args.host, args.workspace, set(_flags(args))))


def _flags(args: Any) -> list[str]:
    return [f"--{k.replace('_', '-')}" for k in ("headless", "no_ask", "no_daemon") if getattr(args, k)]


def program(argv: list[str], read: int | bytes | None) -> None:
    """``guard hook …`` as a program, after the thin client (``read``: what
    :func:`guard.hookclient.main` returned): decide here when no daemon answered, then end the
    process (:func:`guard.hookclient.finish`). Returns only when the full parser must explain the
    arguments (``--help``, a typo). The caller turned the collector off before the imports; it is
    back on, frozen, once the Guard is built (``_in_process``)."""
    if isinstance(read, int):
        finish(read)
    parsed = parse(argv)
    if parsed is None:  # the full parser explains
        gc.enable()
        return
    from guard.cli.attrscode import CodeCache

    try:
        cache: CodeCache | None = CodeCache.open(workspace_of(parsed[1]))
    except Exception:  # a cache that cannot be had: attrs compiles as usual
        cache = None
    code = answer(*parsed, read, asked=read is not None)
    if cache is not None:
        sys.stdout.flush()  # (the answer first)
        cache.save()
    finish(code)


def main(argv: list[str], data: bytes | None = None) -> int | None:
    """The fast path for ``guard hook HOST [--workspace DIR] [--headless] [--no-ask] [--no-daemon]``;
    ``data``: the event the thin client read when no daemon answered it (then decided here at once).

    None when the arguments need the full parser (``--help``, a typo): it explains better.
    """
    parsed = parse(argv)
    if parsed is None:
        return None
    return answer(*parsed, data, asked=data is not None)


def answer(
    host: str, workspace_arg: str | None, flags: set[str], data: bytes | None = None, *, asked: bool = False
) -> int:
    """Answer the event (``data``, else standard input) and print it; the exit code.

    ``asked``: the thin client (:mod:`guard.hookclient`) already asked the daemon and nobody
    answered, so decide here at once (and start the daemon for the next call)."""
    if data is None:
        data = sys.stdin.buffer.read()
    start: list[Path] = []
    try:
        out, code, err = _answer(host, workspace_arg, flags, data, asked=asked, start=start)
    except Exception as exc:  # the last line of defence: the host must get a refusal
        out, code, err = _last_resort(host, f"guard: hook failed ({type(exc).__name__}: {exc}); the call is refused.")
    code = emit(out, code, err)
    for workspace in start:  # the answer is out: the daemon for the next call costs this one nothing
        try:
            from guard.integrations import daemon

            daemon.spawn(workspace)
        except Exception:  # an optimisation that failed changes no answer
            pass
    return code


def _answer(
    host_arg: str, workspace_arg: str | None, flags: set[str], data: bytes, *, asked: bool, start: list[Path]
) -> tuple[str, int, str]:
    """The answer; ``start`` gets the workspace whose daemon should be started once it is printed."""
    from guard.integrations.hosts import host_name
    from guard.workspace import resolve

    try:
        host = host_name(host_arg)
    except ValueError as exc:
        return _last_resort(host_arg, f"guard: {exc}; the call is refused.")
    workspace = resolve(workspace_arg)
    headless, may_ask = "--headless" in flags, "--no-ask" not in flags
    hooks = hooks_table(workspace)
    limit = hook_timeout(hooks)
    if "--no-daemon" in flags or daemon_mode(hooks) == "off":
        return _in_time(host, limit, lambda: _in_process(host, workspace, data, headless=headless, may_ask=may_ask))
    if asked:
        answered = None
    else:
        answered = ask_daemon(workspace, host, data, headless=headless, may_ask=may_ask, limit=limit)
    if isinstance(answered, str):
        return _last_resort(host, answered)
    if answered is not None:
        return answered
    reply = _in_time(host, limit / 2, lambda: _in_process(host, workspace, data, headless=headless, may_ask=may_ask))
    start.append(workspace)
    return reply


def _in_process(host_name: str, workspace: Path, data: bytes, *, headless: bool, may_ask: bool) -> tuple[str, int, str]:
    from guard.integrations.hosts import get_host
    from guard.integrations.hosts.flow import run
    from guard.log import to_stderr

    to_stderr(os.environ.get("GUARD_LOG_LEVEL", "WARNING"))
    opened: list[Any] = []

    def open_guard() -> Any:
        from guard.config import Config
        from guard.core import Guard
        from guard.workspace import ensure

        ensure(workspace)
        config = Config.load(workspace if workspace.is_dir() else None)
        backend = "history" if config.get("memory.backend") == "auto" else None
        guard = Guard(workspace, config, memory_backend=backend)
        opened.append(guard)
        if not gc.isenabled():  # off for the imports (``program``'s caller): on again, past them
            gc.freeze()
            gc.enable()
        return guard

    reply = run(get_host(host_name), data, open_guard, headless=headless, may_ask=may_ask)
    for guard in opened:
        try:
            guard.close()
        except Exception as exc:  # the answer is decided; a failed flush only costs a warm start
            from guard.workspace import note_write_failure

            if not note_write_failure(exc, workspace):
                sys.stderr.write(f"guard: could not save state: {exc}\n")
    return reply.stdout, reply.exit_code, reply.stderr


def _in_time(host: str, seconds: float, decide: Any) -> tuple[str, int, str]:
    """``decide()``'s answer, or, when it is not ready within ``seconds``, a refusal printed by a
    watchdog thread that then ends the process: a host that times out a hook lets the call through,
    so the host must hear "no" from guard first. (A thread and ``os._exit``, not a signal: the
    decision itself stops on its own budget; this is the backstop for everything around it. A bare
    ``_thread``: ``threading.Thread.start`` waits until the new thread has run, one scheduler slice
    and up to ~10 ms of every hook on a busy machine.)"""
    import _thread
    import threading

    lock = threading.Lock()
    done = threading.Lock()
    done.acquire()
    answered = False

    def too_late() -> None:
        nonlocal answered
        if done.acquire(timeout=seconds):
            return  # answered in time
        with lock:
            if answered:
                return
            answered = True
            out, code, err = _last_resort(
                host, f"guard: no decision within {seconds:g} s (hooks.timeout_seconds); the call is refused."
            )
            try:
                os.write(1, out.encode())
                os.write(2, err.encode())
            finally:
                os._exit(code)

    _thread.start_new_thread(too_late, ())
    try:
        reply: tuple[str, int, str] = decide()
    finally:
        with lock:
            late, answered = answered, True
        done.release()
    if late:  # (the watchdog is exiting the process)
        threading.Event().wait()
    return reply
