"""When a decision is out of time: its budget gone on the wall clock, at least half of it guard's own work.

A full garbage collection stops every thread of the process while it walks all its objects:
100-500 ms in a process holding about a million of them (an application that embeds guard, a
daemon with warm caches, a long test run). A decision that happened to be running then found its
time budget (``decision.budget_ms``, 200 ms) spent without having done anything, and asked about
an ordinary call, or asked about one the static layer had not yet had the time to block.

So every collection's length is added up (:data:`total`, by a ``gc`` callback installed when this
module is imported), and a decision is out of time only when both have passed:

- its deadline on the wall clock (``time.perf_counter()``): the host is waiting, and
- its work deadline, half the budget on :func:`clock` (the wall clock less the collections): guard
  itself has done at least half a budget's work.

A collection can so take at most half the budget from a decision that needs the rest, and a call
built to be slow to judge is still cut at the budget: its own allocations make collections too,
and they cannot stretch it (a pause-free clock alone let a crafted 37 KB script run to 270 ms).
However long the collections, a decision is out of time :data:`ALLOWANCE_S` past its wall
deadline: the host's hook waits seconds (guard's own hook 10), never that long.
Collections hold the interpreter lock, so one total serves every thread. Only the time between a
collection's "start" and "stop" callbacks counts; a clock that jumps between them (a test setting
frozen time) is not a pause and adds nothing. The callback reads ``time.perf_counter`` like the
deadlines do, so under freezegun it reads frozen time (and, with ``auto_tick_seconds``, moves it
as any other call to the clock does).
"""

from __future__ import annotations

import gc
import time
from typing import Any

total = 0.0  # seconds spent in garbage collections since import
_began: float | None = None
_LONGEST = 60.0  # no collection takes a minute: a longer gap is a clock that moved, not a pause
ALLOWANCE_S = 1.0  # past the wall deadline by this much, a decision is out of time whatever paused it


def clock() -> float:
    """``time.perf_counter()`` without the time garbage collections took."""
    return time.perf_counter() - total


def deadlines(ms: float, start: float | None = None) -> tuple[float, float]:
    """(wall deadline, work deadline) for a budget of ``ms`` from ``start`` (``time.perf_counter()``,
    default now): ``ms`` on the wall clock, half of it on :func:`clock`."""
    if start is None:
        start = time.perf_counter()
    return start + ms / 1000, start - total + ms / 2000


def late(deadline: float, work: float | None) -> bool:
    """Are both deadlines past, or the wall deadline by :data:`ALLOWANCE_S`? (``work`` None: the
    wall deadline alone.)"""
    now = time.perf_counter()
    return now > deadline and (work is None or now - total > work or now > deadline + ALLOWANCE_S)


def _timed(phase: str, info: dict[str, Any]) -> None:
    global total, _began
    now = time.perf_counter()
    if phase == "start":
        _began = now
        return
    began, _began = _began, None
    if began is not None and 0.0 < now - began < _LONGEST:
        total += now - began


if _timed not in gc.callbacks:
    gc.callbacks.append(_timed)
