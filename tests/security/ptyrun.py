"""Run a command with a real pseudo-terminal as its controlling terminal, and answer on it.

The child starts a new session (``start_new_session``) and makes the pty's slave its
controlling terminal (``TIOCSCTTY``) before it execs the command; its stdin, stdout and
stderr stay pipes, as an agent's tool would have them. What the command writes to
``/dev/tty`` arrives on the master side, and what ``answer`` returns is typed there.
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
from collections.abc import Callable, Sequence

import attrs

from guard.integrations.person import AGENT_MARKERS
from tests.integrations.hookhelpers import hook_env

# Runs in the child: a session leader without a terminal takes the pty as its own, then execs.
LAUNCH = (
    "import fcntl, os, sys, termios\n"
    "fd = int(sys.argv[1])\n"
    "fcntl.ioctl(fd, termios.TIOCSCTTY, 0)\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n"
)

CODE = re.compile(r"type ([A-Z0-9]{4}) and press Enter")


@attrs.frozen
class TtyRun:
    code: int
    stdout: str
    stderr: str
    tty: str  # everything the command wrote to its terminal (and the echo of what was typed)


def run_on_tty(
    argv: Sequence[str],
    env: dict[str, str],
    answer: Callable[[str], str | None],
    *,
    stdin: bytes = b"",
    deadline_s: float = 60.0,
) -> TtyRun:
    """Run ``argv`` on a fresh pty; when ``answer(tty_text)`` returns text, type it (once)."""
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", LAUNCH, str(slave), *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
        pass_fds=(slave,),  # the child holds the slave from the start: the master sees EIO only when it exits
    )
    os.close(slave)
    assert proc.stdin is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    seen = b""
    typed = False
    try:
        while True:
            ready, _, _ = select.select([master], [], [], deadline_s)
            if not ready:
                proc.kill()
                raise TimeoutError(f"no output on the terminal for {deadline_s}s; saw {seen!r}")
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed its terminal (it exited)
                break
            if not chunk:
                break
            seen += chunk
            if not typed:
                reply = answer(seen.decode("utf-8", "replace"))
                if reply is not None:
                    os.write(master, reply.encode())
                    typed = True
        assert proc.stdout is not None and proc.stderr is not None
        out, err = proc.stdout.read(), proc.stderr.read()
        proc.wait(timeout=deadline_s)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
        proc.__exit__(None, None, None)  # closes the pipes and reaps the child
    return TtyRun(proc.returncode, out.decode(), err.decode(), seen.decode("utf-8", "replace"))


def type_the_code(text: str) -> str | None:
    """The person: reads the code off the terminal and types it back."""
    m = CODE.search(text)
    return f"{m.group(1)}\n" if m else None


def type_this(words: str) -> Callable[[str], str | None]:
    """Someone who types ``words`` once the question is on the terminal."""

    def answer(text: str) -> str | None:
        return words if CODE.search(text) else None

    return answer


def never_answer(text: str) -> str | None:
    return None


def person_env() -> dict[str, str]:
    """The environment of a person's own terminal: no agent host's markers (whoever runs the tests)."""
    env = hook_env()
    for name, _ in AGENT_MARKERS:
        env.pop(name, None)
    return env
