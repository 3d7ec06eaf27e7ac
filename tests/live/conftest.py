"""Fixtures for the live host suite: worlds (fake home and project) that clean up after themselves."""

from __future__ import annotations

import shutil
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from live_world import World


@pytest.fixture(autouse=True)
def _tools() -> None:
    """The worlds are git repositories; the scenarios use curl and node (hosts bring their own binaries)."""
    missing = [t for t in ("git", "curl", "node", "npm") if shutil.which(t) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")


@pytest.fixture
def make_world(tmp_path: Path) -> Iterator[Callable[[str], World]]:
    """A world with guard installed for HOST (``guard install HOST``), its hooks captured
    (:meth:`World.capture`); its daemon is stopped after."""
    made: list[World] = []

    def make(host: str, prepare: Callable[[World], None] | None = None) -> World:
        w = World.make(tmp_path / "live")
        made.append(w)
        if prepare is not None:
            prepare(w)
        installed = w.guard("install", host)
        assert installed.returncode == 0, installed.stderr
        w.capture(host)
        return w

    yield make
    for w in made:
        w.stop_daemon()
        w.reap()


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on: bound, never listening, so a connect is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port
