"""When a decision is out of time: its budget gone on the wall clock, at least half of it guard's own work.

A decision may take ``decision.budget_ms`` (200 ms); past it the call is "too complex to check in
time" and asked. The wall clock alone is a poor judge of that, because a decision's thread can
stand still while the wall clock runs:

- A full garbage collection stops every thread while it walks all the process's objects: 100-500
  ms in a process holding about a million of them (an application that embeds guard, a daemon with
  warm caches, a long test run).
- The thread may not run at all: the machine is busy, a container's CPU quota is used up (the
  whole group then waits out the rest of a 100 ms period), or another thread of the process holds
  the interpreter lock. A daemon in a clean-clone CI run took 208 ms over ``rm -rf build``, whose
  analysis needs well under a millisecond, and asked about it.

So a decision is out of time only when both have passed:

- its deadline on the wall clock (``time.perf_counter()``): the host is waiting, and
- its work deadline, half the budget of guard's own work: on :func:`clock` (the wall clock less
  the collections, summed in :data:`total` by a ``gc`` callback installed when this module is
  imported) *and* on the thread's CPU clock (``time.thread_time()``), which does not run while
  the thread waits for a processor or for the lock.

A collection or a stall can so take at most half the budget from a decision that needs the rest,
and a call built to be slow to judge is still cut at the budget: it uses its own thread's CPU, and
its own allocations make collections too, which cannot stretch it (a pause-free clock alone let a
crafted 37 KB script run to 270 ms). However long the pauses, a decision is out of time
:data:`ALLOWANCE_S` past its wall deadline: the host's hook waits seconds (guard's own hook 10),
never that long.

A work deadline belongs to the thread that made it (the chain makes it on the thread that runs
the decision). Collections hold the interpreter lock, so one total serves every thread. Only the
time between a collection's "start" and "stop" callbacks counts; a clock that jumps between them
(a test setting frozen time) is not a pause and adds nothing. The callback reads
``time.perf_counter`` like the deadlines do, so under freezegun it reads frozen time (and, with
``auto_tick_seconds``, moves it as any other call to the clock does). The CPU clock is never frozen:
a test that stands for guard's own work spends real CPU time.
"""

from __future__ import annotations

import gc
import time
from typing import Any

total = 0.0  # seconds spent in garbage collections since import
_began: float | None = None
_LONGEST = 60.0  # no collection takes a minute: a longer gap is a clock that moved, not a pause
ALLOWANCE_S = 1.0  # past the wall deadline by this much, a decision is out of time whatever paused it


Work = tuple[float, float]  # a work deadline: (:func:`clock` seconds, ``time.thread_time()`` seconds)


def clock() -> float:
    """``time.perf_counter()`` without the time garbage collections took."""
    return time.perf_counter() - total


def deadlines(ms: float, start: float | None = None) -> tuple[float, Work]:
    """(wall deadline, work deadline) for a budget of ``ms`` from ``start`` (``time.perf_counter()``,
    default now): ``ms`` on the wall clock, half of it on :func:`clock` and on this thread's CPU."""
    if start is None:
        start = time.perf_counter()
    half = ms / 2000
    return start + ms / 1000, (start - total + half, time.thread_time() + half)


def sooner(work: Work | None, seconds: float) -> Work | None:
    """``work`` brought ``seconds`` forward on both of its clocks."""
    return None if work is None else (work[0] - seconds, work[1] - seconds)


def late(deadline: float, work: Work | None) -> bool:
    """Are both deadlines past, or the wall deadline by :data:`ALLOWANCE_S`? (``work`` None: the
    wall deadline alone.)"""
    now = time.perf_counter()
    if now <= deadline:
        return False
    if work is None or now > deadline + ALLOWANCE_S:
        return True
    return now - total > work[0] and time.thread_time() > work[1]  # (the CPU clock last: a system call)


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
