"""What a layer is: a callable ``(call, ctx) -> Verdict``.

``Context`` carries what a layer may consult besides the call itself: the verdicts of the
layers before it, the effective configuration, the shared state (stores, session
tracker, memory), the clock, and whether a human can answer a prompt. Layers never write
to it; the chain appends verdicts.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Protocol

import attrs

from guard.model import Risk, ToolCall, Verdict

if TYPE_CHECKING:
    from guard.config import Config
    from guard.pauses import Work
    from guard.state import State


@attrs.define
class Context:
    config: Config
    now: datetime
    state: State | None = None  # stores, sessions, memory (None in pure use: the layers then stay neutral)
    human_present: bool = True
    verdicts: list[Verdict] = attrs.field(factory=list)
    deadline: float | None = None  # ``time.perf_counter()`` by which the decision must be made (the chain sets it)
    work_deadline: Work | None = None  # and by which guard must have done half a budget's work (guard.pauses)
    # (number of verdicts, the last one, their highest risk): fusion and its evaluators ask
    # five times a call, and the chain only ever appends
    _risk: tuple[int, Verdict | None, Risk] = attrs.field(
        default=(0, None, Risk.MEDIUM), init=False, repr=False, eq=False
    )

    # (``now``, its POSIX seconds): the behavior layer and the fusion evaluators ask five times a call
    _ts: tuple[datetime | None, float] = attrs.field(default=(None, 0.0), init=False, repr=False, eq=False)

    @property
    def timestamp(self) -> float:
        """``now`` as POSIX seconds (``now.timestamp()``, worked out once per ``now``)."""
        now, ts = self._ts
        if now is not self.now:
            now = self.now
            ts = now.timestamp()
            self._ts = (now, ts)
        return ts

    def verdict(self, layer: str) -> Verdict | None:
        for v in self.verdicts:
            if v.layer == layer:
                return v
        return None

    @property
    def static_risk(self) -> Risk:
        """The highest risk any earlier layer reported; MEDIUM when none did (unknown is not safe)."""
        verdicts = self.verdicts
        n, last, risk = self._risk
        if n == len(verdicts) and (last is verdicts[-1] if n else True):
            return risk
        risks = [v.risk for v in verdicts if v.risk is not None]
        risk = max(risks) if risks else Risk.MEDIUM
        self._risk = (len(verdicts), verdicts[-1] if verdicts else None, risk)
        return risk

    @property
    def tags(self) -> frozenset[str]:
        out: set[str] = set()
        for v in self.verdicts:
            out |= v.tags
        return frozenset(out)


class Layer(Protocol):
    """A chain layer. ``name`` is how the chain finds it (unique in a chain: ``static``,
    ``behavior`` and ``fusion`` are the built-ins, see ``guard.chain.DEFAULT_ORDER``)."""

    name: str

    def __call__(self, call: ToolCall, ctx: Context) -> Verdict: ...
