"""An interactive host in a private tmux server: the screen is read with capture-pane, keys sent with send-keys."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import time
from collections.abc import Callable

from live_world import World


class Terminal:
    def __init__(self, world: World, argv: list[str], env: dict[str, str], name: str = "live") -> None:
        self.world = world
        self.env = env
        self.socket = str(world.root / f"tmux-{name}.sock")
        inner = " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())
        command = f"cd {shlex.quote(str(world.project))} && exec env -i {inner} {shlex.join(argv)}"
        self._tmux("new-session", "-d", "-x", "160", "-y", "45", "-s", "live", command)
        if name != "live":  # keep the pane after the command ends, to read its last words
            self._tmux("set-option", "-t", "live", "remain-on-exit", "on")

    def _tmux(self, *args: str) -> str:
        p = subprocess.run(
            ["tmux", "-S", self.socket, *args],
            env={"PATH": "/usr/bin:/bin", "HOME": str(self.world.home), "TERM": "xterm"},
            capture_output=True,
            text=True,
            timeout=30,
        )
        return p.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "live")

    def wait_for(self, done: Callable[[], bool], what: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {timeout}s for {what}\n{self.screen()}\n{self.world.describe()}")
            time.sleep(0.25)

    def send(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "live", *keys)

    def close(self) -> None:
        """End the host and everything it started (a CLI that relaunches itself leaves a child
        that outlives the tmux server): the pane's process group, then the server."""
        pid = self._tmux("display-message", "-p", "-t", "live", "#{pane_pid}").strip()
        if pid.isdigit():
            try:
                os.killpg(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._tmux("kill-server")


def hook_events(world: World, key: str = "hook_event_name") -> list[str]:
    return [c["payload"].get(key) for c in world.captures() if isinstance(c["payload"], dict)]


def approve_at_terminal(world: World) -> str:
    """The person, at a terminal of their own (no agent's variables), approves the one call guard
    holds: ``guard approve last``, then types the code guard shows there. Returns the screen."""
    t = Terminal(world, ["guard", "approve", "last"], {**world.env(), "TERM": "xterm-256color"}, name="person")
    try:
        t.wait_for(lambda: "press Enter" in t.screen(), "guard approve's code")
        [code] = re.findall(r"type ([A-Z0-9]{4}) and press Enter", t.screen())
        t.send(code, "Enter")
        t.wait_for(lambda: any(w in t.screen() for w in ("guard: approved", "error", "Pane is dead")), "its answer")
        return t.screen()
    finally:
        t.close()
