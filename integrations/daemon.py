"""The thin client of ``guard serve``, and where its socket lives.

A hook process that finds a running daemon sends it the raw hook input and prints the
answer: no decision code is imported, so the process costs little more than Python's own
start. This module therefore imports only the standard library's cheapest parts.

Protocol: one JSON line each way over a Unix socket.

    → {"v": 1, "op": "hook", "host": "claude-code", "input": "<stdin text>", "headless": false,
       "may_ask": true, "env": {...}, "version": "0.1.0"}
    ← " " (at once: the daemon is alive), then {"v": 1, "stdout": "...", "exit": 0, "stderr": ""}

``version`` is optional (the OpenClaw plugin does not know it); a daemon whose version differs
from the client's answers with an ``error`` and exits, so the next hook starts a current one.
Other ops: ``ping`` (← ``pid``, ``version``, ``workspace``) and ``stop``. The socket is
``<workspace>/guard.sock`` in the 0700 workspace; when that path is too long for a Unix
socket, ``$XDG_RUNTIME_DIR`` (else ``$TMPDIR``, else /tmp) ``/guard-<uid>/<hash>.sock``. Client
and server refuse a socket directory that is not the user's own and private.
"""

from __future__ import annotations

import _socket  # the C module: ``socket`` adds 2 ms of enum and selectors set-up to every hook
import json
import os

TYPE_CHECKING = False  # not ``typing``'s: importing typing costs a hook's thin client ~2 ms
if TYPE_CHECKING:  # pathlib costs the thin client ~5 ms more; the client works on strings
    from pathlib import Path
    from typing import Any

PROTOCOL = 1
SOCKET_NAME = "guard.sock"
MAX_SOCKET_PATH = 100  # bytes; sun_path holds 108 on Linux, 104 on macOS
ENV_PREFIXES = ("GUARD_", "CLAUDE_CODE_", "GEMINI_", "CODEX_", "CURSOR_")
ALIVE_TIMEOUT = 1.0  # seconds for a daemon to take the connection and say it is alive
ALIVE = b" "  # what it says: a blank before the JSON answer
LOCK_NAME = ".guard-serve.lock"  # held by the running daemon (guard.integrations.server)
SPAWN_MARK = ".guard-serve.spawned"  # touched when a hook starts one (spawn)


def socket_path(workspace: Path) -> Path:
    from pathlib import Path

    path = Path(workspace) / SOCKET_NAME
    if len(os.fsencode(path)) <= MAX_SOCKET_PATH:
        return path
    import hashlib

    base = os.environ.get("XDG_RUNTIME_DIR") or os.environ.get("TMPDIR") or "/tmp"
    digest = hashlib.sha256(os.fsencode(workspace)).hexdigest()[:16]
    return Path(base) / f"guard-{os.getuid()}" / f"{digest}.sock"


def socket_file(workspace: str | os.PathLike[str]) -> str:
    """:func:`socket_path` as a string, without pathlib when the short path fits (the usual case).

    An unnormalised path that fits normalises to one that fits too, so the daemon (which holds
    the normalised ``Path``) uses the same file; a long one goes through :func:`socket_path`."""
    path = os.path.join(os.fspath(workspace), SOCKET_NAME)
    if len(os.fsencode(path)) <= MAX_SOCKET_PATH:
        return path
    from pathlib import Path

    return str(socket_path(Path(workspace).expanduser().absolute()))


def private_dir(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a directory owned by this user that nobody else can enter."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & 0o077


ANSWER_TIMEOUT = 5.0  # seconds a hook waits for a live daemon's answer (hooks.timeout_seconds caps it)


class Unanswered(Exception):
    """The daemon said it was alive and did not answer in time: the hook refuses rather than wait on."""


def call(
    workspace: str | os.PathLike[str],
    message: dict[str, Any],
    *,
    timeout: float = ANSWER_TIMEOUT,
    alive_timeout: float = ALIVE_TIMEOUT,
    raise_timeout: bool = False,
) -> dict[str, Any] | None:
    """Send one request; the decoded answer, or None when no usable daemon answered.

    A live daemon writes a blank the moment it takes the connection (JSON allows leading
    whitespace). A daemon that cannot connect or send that within ``alive_timeout`` (stopped,
    hung, its backlog full) is given up on at once, so the hook decides in-process instead of
    waiting the whole ``timeout``, which bounds only the answer of a daemon known to be alive.
    ``raise_timeout``: a daemon that said it was alive and then stays silent past ``timeout``
    raises :class:`Unanswered` instead of returning None (a hook must not spend its host's time twice).
    """
    path = socket_file(workspace)
    if not private_dir(os.path.dirname(path)):
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    alive = False
    try:
        sock.settimeout(min(alive_timeout, timeout))
        sock.connect(path)
        sock.sendall(json.dumps(message, ensure_ascii=False).encode() + b"\n")
        chunks = [sock.recv(65536)]  # the first byte: the daemon is alive
        alive = bool(chunks[0])
        sock.settimeout(timeout)
        while chunks[-1]:
            chunks.append(sock.recv(65536))
        answer = json.loads(b"".join(chunks))
    except TimeoutError:
        if alive and raise_timeout:
            raise Unanswered(f"guard serve did not answer within {timeout:g} s") from None
        return None
    except (OSError, ValueError):
        return None
    finally:
        sock.close()
    return answer if isinstance(answer, dict) else None


def hook(
    workspace: str | os.PathLike[str],
    host: str,
    data: bytes,
    *,
    headless: bool,
    may_ask: bool,
    version: str,
    timeout: float = ANSWER_TIMEOUT,
) -> tuple[str, int, str] | None:
    """Ask the daemon to answer one hook: (stdout, exit code, stderr), or None to decide in-process.

    Raises :class:`Unanswered` when the daemon took the event and stayed silent past ``timeout``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None  # the in-process path answers unreadable input
    env = {k: v for k, v in os.environ.items() if k.startswith(ENV_PREFIXES)}
    answer = call(
        workspace,
        {
            "v": PROTOCOL,
            "op": "hook",
            "host": host,
            "input": text,
            "headless": headless,
            "may_ask": may_ask,
            "env": env,
            "version": version,
        },
        timeout=timeout,
        raise_timeout=True,
    )
    if answer is None:
        return None
    out, code, err = answer.get("stdout"), answer.get("exit"), answer.get("stderr", "")
    if not isinstance(out, str) or not isinstance(code, int) or not isinstance(err, str):
        return None
    return out, code, err


def spawn(workspace: Path) -> bool:
    """Start ``guard serve --on-demand`` in the background unless one is starting or ran lately."""
    import fcntl
    import time

    mark = workspace / SPAWN_MARK
    try:
        if time.time() - mark.stat().st_mtime < 30:
            return False  # started (or failed to start) moments ago: do not pile up
    except FileNotFoundError:
        pass
    try:
        fd = os.open(workspace / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False  # a daemon holds the lock: it is running or starting
    os.close(fd)
    try:
        mark.touch(mode=0o600)
        os.utime(mark)
    except OSError:
        return False
    import subprocess
    import sys

    log = os.open(workspace / "guard-serve.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        subprocess.Popen(
            [sys.executable, *_same_isolation(), "-m", "guard", "serve", "--on-demand", "--workspace", str(workspace)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            cwd=workspace,  # not the agent's project: `-m guard` must not find a package named guard there
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        return False
    finally:
        os.close(log)
    return True


def _same_isolation() -> list[str]:
    """The daemon starts with the import isolation its hook started with (``-I`` when installed)."""
    import sys

    if sys.flags.isolated:
        return ["-I"]
    flags = sys.flags
    return [
        f for f, on in (("-E", flags.ignore_environment), ("-P", flags.safe_path), ("-s", flags.no_user_site)) if on
    ]
