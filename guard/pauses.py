"""The clock a decision's deadline is kept on: ``time.perf_counter()`` less garbage collections.

A full collection stops every thread of the process while it walks all its objects: 100-500 ms
in a process holding about a million of them (an application that embeds guard, a daemon with
warm caches, a long test run). A decision that happened to be running then would find its time
budget (``decision.budget_ms``, 200 ms) spent without having done anything, and ask about an
ordinary call. The budget exists to bound guard's own work on a crafted input, so it is counted
on this clock instead: every collection's length is added up by a ``gc`` callback installed when
this module is imported, and :func:`clock` subtracts the total.

A deadline is set with :func:`clock` and checked as ``time.perf_counter() - pauses.total >
deadline`` where a function call per check would cost too much (``total`` is a plain module float). Collections hold the interpreter lock, so one total serves every thread. Only a collection
that runs between its "start" and "stop" callbacks counts; a clock that jumps between them (a
test freezing time) is not a pause and adds nothing.
"""

from __future__ import annotations

import gc
import time
from typing import Any

total = 0.0  # seconds spent in garbage collections since import
_began: float | None = None
_LONGEST = 60.0  # no collection takes a minute: a longer gap is a clock that moved, not a pause


def clock() -> float:
    """``time.perf_counter()`` without the time garbage collections took: deadlines are on this."""
    return time.perf_counter() - total


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
