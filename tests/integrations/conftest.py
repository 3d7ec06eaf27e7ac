"""Fixtures for the integration tests; the helpers they use are in ``hookhelpers``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hookhelpers import prepare


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return prepare(tmp_path / "ws")


@pytest.fixture
def in_process(ws: Path) -> Iterator[Callable[..., Any]]:
    """Run one hook event through ``flow.run`` with a fresh Guard, as a per-call process would."""
    from guard import Guard
    from guard.integrations.hosts import get_host
    from guard.integrations.hosts.flow import run

    opened: list[Guard] = []

    def hook(host: str, payload: Any, *, workspace: Path = ws, env: dict[str, str] | None = None, **kw: Any) -> Any:
        def open_guard() -> Guard:
            g = Guard(workspace, {"system.health": 90, "memory.backend": "history"})
            opened.append(g)
            return g

        raw = payload if isinstance(payload, (str, bytes)) else json.dumps(payload)
        reply = run(get_host(host), raw, open_guard, env=env or {}, **kw)
        _close(opened)
        return reply

    yield hook
    _close(opened)


def _close(opened: list[Any]) -> None:
    """As ``guard hook`` does: the answer stands even if saving state fails (a workspace that is a file)."""
    for g in opened:
        try:
            g.close()
        except OSError:
            pass
    opened.clear()
