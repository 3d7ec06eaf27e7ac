"""Shared helpers: a Guard whose static layer is a small tag table chosen by the test."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from guard.core import Guard
from guard.layers.base import Context
from guard.layers.behavior import BehaviorLayer
from guard.layers.fusion import FusionLayer
from guard.model import AUTO_ALLOW, Risk, ToolCall, Verdict
from guard.signature import signature

BASE_CONFIG = {"system.health": 90}


class TagLayer:
    """A real layer standing in for the static classifier: risk and tags looked up per call.

    ``table`` maps a signature (``bash:make deploy``) or a tool kind (``web_fetch``) to
    ``(risk, tags)`` or ``(risk, tags, data)``; anything else is MEDIUM without tags.
    """

    name = "static"

    def __init__(self, table: Mapping[str, tuple[Any, ...]]) -> None:
        self.table = dict(table)

    def __call__(self, call: ToolCall, ctx: Context) -> Verdict:
        entry = self.table.get(signature(call.tool, call.params)) or self.table.get(call.kind)
        risk, tags, data = (Risk.MEDIUM, set(), {}) if entry is None else (*entry, {})[:3]
        floor = AUTO_ALLOW if "read_only" in tags and risk <= Risk.LOW else None
        return Verdict("static", risk, floor=floor, tags=frozenset(tags), data=data)


READS = {"read": (Risk.SAFE, {"read_only"}), "grep": (Risk.SAFE, {"read_only"}), "glob": (Risk.SAFE, {"read_only"})}


def tagged_guard(workspace: Path, table: Mapping[str, tuple[Any, ...]], **config: Any) -> Guard:
    g = Guard(workspace, {**BASE_CONFIG, **config}, memory_backend="history")
    g.chain = type(g.chain)([TagLayer({**READS, **table}), BehaviorLayer(g.config), FusionLayer(g.config)])
    return g


def default_guard(workspace: Path, **config: Any) -> Guard:
    """The shipped chain (the spine's static layer, behavior, fusion)."""
    return Guard(workspace, {**BASE_CONFIG, **config}, memory_backend="history")


@pytest.fixture
def make_guard(tmp_path: Path) -> Iterator[Callable[..., Guard]]:
    made: list[Guard] = []

    def make(table: Mapping[str, tuple[Any, ...]] | None = None, **config: Any) -> Guard:
        g = default_guard(tmp_path, **config) if table is None else tagged_guard(tmp_path, table, **config)
        made.append(g)
        return g

    yield make
    for g in made:
        g.close()


def behavior(record: Any) -> Verdict:
    v = record.layer("behavior")
    assert v is not None, "the behavior layer did not run"
    return v


def ids(record: Any) -> list[str]:
    return list(behavior(record).data["signals"])
