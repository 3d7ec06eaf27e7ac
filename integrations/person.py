"""Is a person at this terminal? What ``guard approve`` asks before it lets a held call run.

An agent that is told "the user runs ``guard approve ID``" can run that command itself, from
its own shell tool (it did, under Codex). So an approval needs three things an agent's tool
call does not have:

1. **No agent host in the environment.** Agent hosts mark the shells they run tool calls in
   (:data:`AGENT_MARKERS`); ``guard approve`` refuses in such a shell. This is a cheap check
   an agent can get round (``env -u``), so it is not the barrier, only the first clear refusal.
2. **A controlling terminal.** ``/dev/tty`` must open: stdin and stdout being a pipe or a file
   is not enough, and a tool call without a terminal of its own has none.
3. **An answer typed on that terminal.** The held call and a random code are written to
   ``/dev/tty`` only (never stdout or stderr, which the agent reads), and the person types the
   code back on ``/dev/tty`` (never stdin). A wrong code, an empty line, end of input or no
   answer within the timeout approves nothing.

What remains: an agent whose tool runs commands in a terminal of their own (a pseudo-terminal
the agent reads and writes) *and* that removes its host's marker could read the code and type
it. Hosts that run tool calls that way are why the marker check exists.
"""

from __future__ import annotations

import os
import secrets
import select
from collections.abc import Mapping

# Variables the hosts set in the environment of the shells they run tool calls in. A person's
# own terminal has none of them. ``CODEX_HOME`` is deliberately absent: people export it.
AGENT_MARKERS: tuple[tuple[str, str], ...] = (
    ("CLAUDECODE", "Claude Code"),
    ("CLAUDE_CODE_ENTRYPOINT", "Claude Code"),
    ("CODEX_SANDBOX", "Codex"),
    ("CODEX_SANDBOX_NETWORK_DISABLED", "Codex"),
    ("CODEX_THREAD_ID", "Codex"),
    ("CODEX_MANAGED_BY_NPM", "Codex"),
    ("CODEX_MANAGED_BY_BUN", "Codex"),
    ("CODEX_CI", "Codex"),
    ("GEMINI_CLI", "Gemini CLI"),
    ("CURSOR_AGENT", "Cursor"),
    ("OPENCLAW_SHELL", "OpenClaw"),
)

# No 0/O, 1/I/L: the person reads the code off a screen and types it.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 4
ANSWER_TIMEOUT_S = 120.0

NO_TERMINAL = "guard approve needs your terminal: run it yourself in a terminal, not through the agent"


class NotAPerson(Exception):
    """Why this process cannot be taken for the person; the message is one line for the user."""


def agent_marker(env: Mapping[str, str]) -> tuple[str, str] | None:
    """(variable, host) of the first agent host marker set in ``env``, else None."""
    for name, host in AGENT_MARKERS:
        if env.get(name):
            return name, host
    return None


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


class Terminal:
    """The controlling terminal, opened directly: ``/dev/tty``, never stdin or stdout."""

    def __init__(self, path: str = "/dev/tty") -> None:
        try:
            # O_NOCTTY: opening must never make a terminal ours; it has to be ours already.
            self.fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        except OSError:
            raise NotAPerson(NO_TERMINAL) from None
        if not os.isatty(self.fd):
            os.close(self.fd)
            raise NotAPerson(NO_TERMINAL)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)

    def write(self, text: str) -> None:
        data = text.encode("utf-8", "replace")
        while data:
            data = data[os.write(self.fd, data) :]

    def read_line(self, timeout_s: float) -> str | None:
        """One line typed on the terminal; None at end of input or when nothing came in time."""
        got = b""
        while not got.endswith((b"\n", b"\r")):
            ready, _, _ = select.select([self.fd], [], [], timeout_s)
            if not ready:
                return None
            try:
                chunk = os.read(self.fd, 256)
            except OSError:
                return None
            if not chunk:
                return None
            got += chunk
            if len(got) > 4096:
                return None
        return got.decode("utf-8", "replace").strip()


def check_environment(env: Mapping[str, str]) -> None:
    marker = agent_marker(env)
    if marker is not None:
        name, host = marker
        raise NotAPerson(
            f"guard approve refuses to run inside {host}'s tool calls ({name} is set): "
            "run it yourself in a terminal, not through the agent"
        )


def confirm(summary: list[tuple[str, str]], *, env: Mapping[str, str], timeout_s: float = ANSWER_TIMEOUT_S) -> bool:
    """Show the held call on the controlling terminal and ask for the code shown there.

    Raises :class:`NotAPerson` when the environment is an agent's or there is no controlling
    terminal; returns whether the person typed the code.
    """
    check_environment(env)
    code = new_code()
    with Terminal() as tty:
        width = max(len(k) for k, _ in summary)
        lines = ["", "guard: a call is held until you approve it", ""]
        lines += [f"  {k.ljust(width)}  {v}" for k, v in summary]
        lines += ["", f"To let this one call run once, type {code} and press Enter (anything else refuses): "]
        tty.write("\n".join(lines))
        answer = tty.read_line(timeout_s)
        ok = answer is not None and secrets.compare_digest(answer.upper().encode(), code.encode())
        tty.write("" if ok else "guard: not approved\n")
        return ok
