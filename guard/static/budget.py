"""How much work one decision may do: a deadline and a count of steps, checked cooperatively.

A host lets a call through when its hook times out, so a crafted command (3,000 variables, a
5,000-stage pipeline, 10,000 globs) must never take longer than the host waits. The walker, the
engine and the word expander call :meth:`Budget.tick` at each statement, command and word part;
when the deadline has passed or the steps run out, ``tick`` raises :class:`OverBudget`, which
unwinds the analysis (every ``finally`` restores its state on the way out), and
:func:`guard.static.analysis.analyse` turns it into rule ``G420`` ("too complex to check in time":
request_confirm, or block when something already found before the budget ran out blocks).

No signals and no threads: a budget is a plain object owned by one analysis, so it works the
same in a hook process, in the daemon's threads and under asyncio. Counting steps as well as
time makes the limit testable without a clock: ``Budget(max_steps=50)`` trips on the same step
on every machine.

    budget = Budget.start(200)            # 200 ms from now, default step limit
    budget.tick()                         # in a loop; raises OverBudget when spent
"""

from __future__ import annotations

import time

from guard import pauses

DEFAULT_STEPS = 100_000  # ≈ 0.5-3 s of walking: a backstop that does not depend on the machine's load
_CLOCK_EVERY = 8  # read the clock every few steps (a step is a statement, a command or a word part)


class OverBudget(BaseException):  # not an error: a signal to stop, like GeneratorExit
    """Raised by :meth:`Budget.tick` when the decision's time or steps are spent.

    A ``BaseException`` so that a handler catching ``Exception`` for bad input inside a family
    never swallows it: only :func:`guard.static.analysis.analyse` catches it.
    """

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class Budget:
    """A deadline (``time.perf_counter`` seconds, or None) and a step limit (0 = no limit).

    ``work_deadline`` (:data:`guard.pauses.Work`) keeps a garbage collection or a thread that is not
    running from using up the time: the budget is spent when both deadlines have passed (see
    :mod:`guard.pauses`).
    """

    __slots__ = ("deadline", "max_steps", "spent", "steps", "work_deadline")

    def __init__(
        self, deadline: float | None = None, max_steps: int = DEFAULT_STEPS, work_deadline: pauses.Work | None = None
    ) -> None:
        self.deadline = deadline
        self.work_deadline = work_deadline
        self.max_steps = max_steps
        self.steps = 0
        self.spent = ""  # why it ran out, once it did

    @classmethod
    def start(cls, ms: float | None, max_steps: int = DEFAULT_STEPS) -> Budget:
        """A budget of ``ms`` milliseconds from now (None or 0: no deadline, steps only)."""
        if not ms:
            return cls(None, max_steps)
        deadline, work = pauses.deadlines(ms)
        return cls(deadline, max_steps, work)

    def tick(self, cost: int = 1) -> None:
        steps = self.steps = self.steps + cost
        if self.max_steps and steps > self.max_steps:
            self._stop(f"more than {self.max_steps} steps of analysis")
        if self.deadline is not None and (cost > 1 or not steps % _CLOCK_EVERY):
            if time.perf_counter() > self.deadline and pauses.late(self.deadline, self.work_deadline):
                self._stop("the decision's time budget ran out")

    def expired(self) -> bool:
        """True when the deadline has passed (for loops that would rather stop than raise)."""
        return bool(self.spent) or (self.deadline is not None and pauses.late(self.deadline, self.work_deadline))

    def _stop(self, why: str) -> None:
        self.spent = self.spent or why
        raise OverBudget(why)
