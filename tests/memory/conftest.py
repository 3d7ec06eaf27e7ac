"""Shared fixtures for the memory tests.

LanceDB is imported once per session (≈0.8 s) by the ``lancedb`` fixture; every table lives
in its own temporary directory. Background threads are waited on with ``flush()`` and
``wait_ready()``, never with sleeps.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from memhelpers import make_config

from guard.config import Config

os.environ.setdefault("LANCE_LOG", "error")


@pytest.fixture(scope="session")
def lancedb() -> Any:
    """The one LanceDB import of the session."""
    return pytest.importorskip("lancedb")


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return make_config()


@pytest.fixture
def memory(lancedb: Any, tmp_path: Path, config: Config) -> Iterator[Any]:
    from guard.memory.lance import LanceMemory

    m = LanceMemory(str(tmp_path / "memory.lance"), config)
    assert m.wait_ready(60), m.status
    yield m
    m.close()
