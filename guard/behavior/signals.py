"""Session signals and the health they add up to (penalties plus caps, research §2.3).

``assess(state, probe, now, settings, card)`` reads the session's counters and, when a
call is being decided, that call (``probe``: a loop is "this call would be the third
identical one"). Each signal that fires has a rule id, a penalty and a sentence; hard
detectors also carry an effect (``confirm`` or ``block``). Health is
``clip(100 - Σ penalties)``, capped at 74 when a hard detector fired.

| id   | signal                                             | penalty   | effect  |
|------|----------------------------------------------------|-----------|---------|
| G201 | failures: decayed failure rate against a prior,    | ≤ 50      |         |
|      | plus the streak beyond 2                            |           |         |
| G202 | the same call ``loop_repeats`` (3) times in a row  | 15-30     | confirm |
| G203 | a cycle (A-B-A-B…, period 2-10) three times over   | 20        | confirm |
| G204 | rising static risk (EWMA ≥ session mean + 1 level) | ≤ 15      |         |
| G205 | a burst: ≥ 20 calls in 10 s and ≥ 4× the usual rate| 5-15      |         |
| G206 | guard refused the session's calls 3 times in a row | 5 each, ≤ 20 | confirm at 3 |
| G210 | this task's circuit breaker is open                | -         | block   |
| G211 | this call is the half-open breaker's trial         | -         |         |
| G220 | the session read untrusted content                 | 5         |         |
| G221 | egress after untrusted content                     | -         | confirm |
| G222 | egress after untrusted content and a secret        | -         | block   |
| G223 | untrusted content and a secret read: egress armed  | 10        |         |
| G230 | the user refused this call before (below the limit) | ≤ 30      |         |
| G231 | denial limit: 3 in a row, 10 of 50, or 20 in total | 30        | confirm |
| G240 | write larger than the tier allows (once per task)  | -         | confirm |
| G241 | more files per task than the tier allows (once)    | -         | confirm |
| G242 | risky path below Sapling                           | -         | confirm |
| G243 | sub-agent where the tier forbids it                | -         | confirm |
| G250 | health below ``confirm_below`` (60)                | -         | confirm |
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from guard.behavior.breaker import HALF_OPEN, OPEN, TRIAL
from guard.behavior.facts import RISKY_PATH, SECRET, SUBAGENT, UNTRUSTED, Probe
from guard.behavior.session import BURST_SECONDS, RISK_ALPHA, TASK_IDLE_S, SessionState
from guard.behavior.settings import BehaviorSettings
from guard.behavior.tiers import Scorecard, Tier
from guard.behavior.timefmt import iso, span
from guard.model import BLOCK, REQUEST_CONFIRM, Decision, Reason, Risk
from guard.namedtuple import NamedTuple

CONFIRM = "confirm"
HARD_CAP = 74.0
FAILURE_PRIOR_RATE = 0.1
MAX_PERIOD = 10
LOCAL_SCALE = 10.0  # ordinary in-project edits: limits this many times larger
_TIER_FACTS = frozenset({RISKY_PATH, SUBAGENT})
_MEDIUM = int(Risk.MEDIUM)

RULES: dict[str, str] = {
    "G201": "failures",
    "G202": "repeat",
    "G203": "cycle",
    "G204": "rising_risk",
    "G205": "burst",
    "G206": "refusals",
    "G210": "breaker_open",
    "G211": "breaker_trial",
    "G220": "tainted",
    "G221": "tainted_egress",
    "G222": "lethal_trifecta",
    "G223": "trifecta_armed",
    "G230": "denials",
    "G231": "denial_limit",
    "G240": "tier_lines",
    "G241": "tier_files",
    "G242": "tier_risky_path",
    "G243": "tier_subagent",
    "G250": "low_health",
}


@attrs.frozen(cache_hash=True)  # a remembered signal keys the behavior layer's reasons: hashed once
class Signal:
    id: str
    penalty: float
    message: str
    effect: str | None = None  # None, "confirm" or "block"
    alternative: str | None = None

    @property
    def name(self) -> str:
        return RULES.get(self.id, self.id)

    # the Reason, made once: a remembered signal (see ``_remembered``) hands the log line's
    # caches the same object on every call
    _reason: Reason | None = attrs.field(default=None, init=False, eq=False, repr=False)

    def reason(self) -> Reason:
        r = self._reason
        if r is None:
            r = Reason(self.id, self.message, self.alternative)
            object.__setattr__(self, "_reason", r)
        return r

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "name": self.name, "penalty": round(self.penalty, 1)}
        out["message"] = self.message
        if self.effect:
            out["effect"] = self.effect
        return out


class Assessment(NamedTuple):
    """What the session's signals add up to (a named tuple: one is made per decision)."""

    health: float
    signals: tuple[Signal, ...]
    decision: Decision | None = None
    ceiling: Decision | None = None
    breaker: dict[str, Any] | None = None
    # the signals' reasons, deciding ones first: a block (messages show the first few reasons),
    # then an ask, then penalties; otherwise in the order they fired
    reasons: tuple[Reason, ...] = ()

    @property
    def ids(self) -> list[str]:
        return [s.id for s in self.signals]


HEALTHY = Assessment(100.0, ())

# Signals that say only numbers recur call after call while a session loops or bursts: each
# is made once per distinct message, so its text is formatted, and redacted in the log, once.
_SIGNALS: dict[tuple[Any, ...], Signal] = {}


def _remembered(key: tuple[Any, ...], make: Callable[[], Signal]) -> Signal:
    signal = _SIGNALS.get(key)
    if signal is None:
        if len(_SIGNALS) >= 1024:
            _SIGNALS.clear()
        signal = _SIGNALS[key] = make()
    return signal


def _kept(key: tuple[Any, ...], signal: Signal) -> Signal:
    """``_remembered`` of a signal already made (the caller looked ``key`` up and missed): no closure
    on the hot path."""
    if len(_SIGNALS) >= 1024:
        _SIGNALS.clear()
    _SIGNALS[key] = signal
    return signal


def assess(
    state: SessionState | None,
    probe: Probe | None,
    now: float,
    settings: BehaviorSettings,
    card: Scorecard | None = None,
    session_id: str | None = None,
) -> Assessment:
    """Each check is guarded by a cheap test of the counters, so a healthy session costs little."""
    sig: list[Signal] = []
    breaker: dict[str, Any] | None = None
    s = settings
    if state is not None:
        if state.fail_n:
            _failures(state, now, s, sig)
        if probe is None or probe.task in state.ring:
            _loops(state, probe, s, sig)
        if state.risk_n >= 4 and (probe is None or probe.risk >= _MEDIUM):
            _rising_risk(state, probe, sig)
        if len(state.recent) + 1 >= s.burst_calls:
            _burst(state, probe, now, s, sig)
        if state.refusal_streak:
            _refusals(state, sig)
        if state.taint is not None:
            _taint(state, probe, sig)
        if state.denied_recent or state.denial_streak or state.denials >= s.denial_total:
            _denials(state, probe, s, sig)
        if probe is not None and state.breakers and probe.task in state.breakers:
            breaker = _breaker(state, probe, now, s, sig, session_id)
    if (
        probe is not None
        and card is not None
        and s.tiers
        and (probe.lines is not None or probe.path is not None or not probe.facts.isdisjoint(_TIER_FACTS))
    ):
        _tier(state if state is None or now - state.updated < TASK_IDLE_S else None, probe, card, sig)
    if not sig and breaker is None:
        return HEALTHY
    if breaker is None:
        # the rest depends on the signals alone: remembered by them (the loop and burst signals
        # recur as the same objects, see ``_remembered``)
        key = (s.confirm_below, *sig)
        done = _ADDED_UP.get(key)
        if done is None:
            if len(_ADDED_UP) >= 1024:
                _ADDED_UP.clear()
            done = _ADDED_UP[key] = _added_up(sig, s, None)
        return done
    return _added_up(sig, s, breaker)


# assessments without a breaker, by (confirm_below, *signals)
_ADDED_UP: dict[tuple[Any, ...], Assessment] = {}


def _added_up(sig: list[Signal], s: BehaviorSettings, breaker: dict[str, Any] | None) -> Assessment:
    """Health from the signals' penalties, the low-health signal, and the decision they impose."""
    health = max(0.0, 100.0 - sum([x.penalty for x in sig]))
    if any([x.effect for x in sig if x.penalty > 0]):
        health = min(health, HARD_CAP)
    if health < s.confirm_below:
        below = s.confirm_below
        sig.append(
            _remembered(
                ("G250", f"{health:.0f}", below),
                lambda: Signal(
                    "G250",
                    0.0,
                    f"session health {health:.0f} is below {below:.0f}: a person confirms every call",
                    CONFIRM,
                ),
            )
        )
    effects = {x.effect for x in sig}
    decision = BLOCK if BLOCK in effects else None
    ceiling = REQUEST_CONFIRM if CONFIRM in effects else None
    reasons = tuple([x.reason() for x in sorted(sig, key=_weight)])  # (a stable sort)
    return Assessment(round(health, 1), tuple(sig), decision, ceiling, breaker, reasons)


_ORDER: dict[str | None, int] = {BLOCK: 0, CONFIRM: 1}


def _weight(signal: Signal) -> int:
    return _ORDER.get(signal.effect, 2)


def _failures(state: SessionState, now: float, s: BehaviorSettings, out: list[Signal]) -> None:
    n, f = state.decayed_failures(now, s.half_life_s)
    if f <= 0.01:
        return
    m, p0 = s.failure_prior, FAILURE_PRIOR_RATE
    rate = (f + m * p0) / (n + m) if n + m > 0 else 0.0
    fade = f / state.fail_s if state.fail_s else 0.0  # the streak fades as the failures do
    streak_penalty = 5.0 * max(0, state.fail_streak - 2) * fade
    penalty = min(50.0, 50.0 * max(0.0, rate - p0) / (1 - p0) + streak_penalty)
    if penalty < 1.0:
        return
    streak = f", {state.fail_streak} in a row" if state.fail_streak > 1 else ""
    out.append(
        Signal(
            "G201",
            penalty,
            f"{state.failures} failed result(s) in this session{streak}; recent failure rate {rate:.0%}",
        )
    )


def _loops(state: SessionState, probe: Probe | None, s: BehaviorSettings, out: list[Signal]) -> None:
    ring = state.ring
    if probe is None:
        _loops_so_far(state, s, out)
        return
    task = probe.task
    run = state.run_len + 1 if task == state.run_task else 1
    # (only called when this call's task is among the recent ones)
    if run >= s.loop_repeats:
        out.append(_repeat(run, s.loop_repeats))
        return
    top = (len(ring) + 1) // 3
    if top < 2:
        return  # fewer than 5 calls before this one: no three blocks of two
    if top > MAX_PERIOD:
        top = MAX_PERIOD
    # the last 3p calls of ring + [task] are three blocks of p alike (each of the last 2p-1 of ring
    # is the one p before it), read off the ring without making that list: this call is ring[-p],
    # and the block (ring[-p:], with this call) holds more than one call (one not this call's)
    last = ring[-1]
    if ring[-2] == task:  # p = 2 (A B A B A + B), the commonest cycle, element by element
        third = ring[-3]
        if last == third and ring[-4] == task and ring[-5] == third and last != task:
            out.append(_CYCLE_OF_2)
            return
    if top < 3 or task not in ring[-top:-2]:
        return  # no period p in 3..top has this call p calls back (ring[-p]): no longer cycle
    for p in range(3, top + 1):
        # (the last call against the one p before it first, the cheapest part of the comparison)
        if (
            ring[-p] == task
            and last == ring[-1 - p]
            and ring[1 - 2 * p :] == ring[1 - 3 * p : -p]
            and ring[-p:].count(task) < p
        ):
            out.append(_CYCLES[p])
            return


def _loops_so_far(state: SessionState, s: BehaviorSettings, out: list[Signal]) -> None:
    """``_loops`` of the session as it stands (no call being decided: the analyzer)."""
    ring = state.ring
    run = state.run_len
    if run >= s.loop_repeats:
        out.append(_repeat(run, s.loop_repeats))
        return
    for p in range(2, min(MAX_PERIOD, len(ring) // 3) + 1):
        if ring[-1] != ring[-1 - p]:
            continue
        if ring[-2 * p :] == ring[-3 * p : -p] and len(set(ring[-p:])) > 1:
            out.append(_CYCLES[p])
            return


def _repeat(run: int, repeats: int) -> Signal:
    key = ("G202", run, repeats)
    signal = _SIGNALS.get(key)
    if signal is None:
        signal = _kept(
            key,
            Signal(
                "G202",
                min(30.0, 15.0 + 5.0 * (run - repeats)),
                f"the same call {run} times in a row (a loop)",
                CONFIRM,
                "change the approach instead of repeating the call",
            ),
        )
    return signal


_CYCLES = {
    p: Signal(
        "G203",
        20.0,
        f"a cycle of {p} calls repeated 3 times in a row (a loop)",
        CONFIRM,
        "change the approach instead of repeating the same steps",
    )
    for p in range(2, MAX_PERIOD + 1)
}
_CYCLE_OF_2 = _CYCLES[2]


def _rising_risk(state: SessionState, probe: Probe | None, out: list[Signal]) -> None:
    ewma, total, n = state.risk_ewma, state.risk_sum, state.risk_n
    if probe is not None:
        ewma = probe.risk if n == 0 else RISK_ALPHA * probe.risk + (1 - RISK_ALPHA) * ewma
        total, n = total + probe.risk, n + 1
        if probe.risk < Risk.MEDIUM:
            return
    if n < 5:
        return
    rise = ewma - total / n
    if rise >= 1.0 and ewma >= Risk.MEDIUM:
        out.append(
            Signal(
                "G204",
                min(15.0, 10.0 * rise),
                f"risk is rising: recent level {ewma:.1f} against the session's {total / n:.1f} (0 safe … 4 critical)",
            )
        )


def _burst(state: SessionState, probe: Probe | None, now: float, s: BehaviorSettings, out: list[Signal]) -> None:
    recent = state.recent
    n = len(recent)
    calls = s.burst_calls
    if n + 1 < calls:
        return
    since = now - BURST_SECONDS
    stale = 0  # the deque is pruned at each dispatch: only its head can be older than the window
    if n and not recent[0] >= since:  # (a NaN read from a damaged file counts as stale, as it always did)
        for t in recent:
            if t >= since:
                break
            stale += 1
    this = probe is not None
    count = n - stale + this
    if count < calls:
        return
    before = state.dispatches - count + this
    # (none before the burst: a usual rate of 0, nothing to divide or format; ``a if a > b else b``
    # is ``max(b, a)``, a NaN included, without the call)
    usual = 0.0
    if before and state.started:
        span = since - state.started
        usual = before / (span if span > 60.0 else 60.0) * BURST_SECONDS
    if count >= s.burst_factor * (1.0 if usual < 1.0 else usual):
        shown = f"{usual:.1f}" if before else "0.0"
        key = ("G205", count, shown, calls)
        signal = _SIGNALS.get(key)
        if signal is None:
            signal = _kept(
                key,
                Signal(
                    "G205",
                    min(15.0, 5.0 + (count - calls) / 2),
                    f"{count} calls in the last {BURST_SECONDS:.0f} s, far above the session's usual {shown} (a burst)",
                ),
            )
        out.append(signal)


def _refusals(state: SessionState, out: list[Signal]) -> None:
    k = state.refusal_streak
    if k:
        out.append(
            Signal(
                "G206",
                min(20.0, 5.0 * k),
                f"guard refused the session's last {k} call(s)",
                CONFIRM if k >= 3 else None,
            )
        )


def _asked(state: SessionState, fact: str) -> dict[str, Any] | None:
    """A fact from a call the person was asked about and whose outcome guard never heard.

    Unknown is not safe: until an answer or a result settles it, such a call may have run.
    """
    for task, facts in state.pending.items():
        if fact in facts:
            return {"call": f"{task} (asked about; outcome unknown)"}
    return None


def _taint(state: SessionState, probe: Probe | None, out: list[Signal]) -> None:
    taint = state.taint or _asked(state, UNTRUSTED)
    secret = state.secret or _asked(state, SECRET)
    if taint is None:
        return
    source = f"'{taint.get('call', '?')}'"
    if probe is not None and probe.egress:
        if secret is not None:
            out.append(
                Signal(
                    "G222",
                    0.0,
                    f"this call sends data out after the session read untrusted content ({source}) and a secret "
                    f"('{secret.get('call', '?')}'): possible exfiltration (lethal trifecta)",
                    BLOCK,
                    "let the person send it themselves, or start a clean session",
                )
            )
        else:
            out.append(
                Signal(
                    "G221",
                    0.0,
                    f"this call sends data out after the session read untrusted content ({source})",
                    CONFIRM,
                )
            )
    if secret is not None:
        out.append(Signal("G223", 10.0, "the session read untrusted content and a secret: sending data out is blocked"))
    else:
        out.append(
            Signal("G220", 5.0, f"the session read untrusted content ({source}): sending data out needs a person")
        )


def _denials(state: SessionState, probe: Probe | None, s: BehaviorSettings, out: list[Signal]) -> None:
    recent = state.denied_recent
    if not recent and not state.denial_streak and state.denials < s.denial_total:
        return
    what = (
        f"the user refused {state.denial_streak} call(s) in a row, "
        f"{recent} of the last {len(state.answers)} answers, {state.denials} in total"
    )
    if state.denial_streak >= s.denial_streak or recent >= s.denial_recent or state.denials >= s.denial_total:
        out.append(Signal("G231", 30.0, what + ": no more automatic decisions", CONFIRM))
    elif probe is None or probe.task in state.refused:
        # below the limit a refusal weighs on the call refused, not on unrelated ones: one
        # "no" to reading .env is no reason to ask before the next test run
        out.append(Signal("G230", min(30.0, 10.0 * state.denial_streak + 2.0 * recent), what))


def _breaker(
    state: SessionState, probe: Probe, now: float, s: BehaviorSettings, out: list[Signal], session_id: str | None
) -> dict[str, Any] | None:
    b = state.breakers.get(probe.task)
    if b is None:
        return None
    status = b.status(now, s)
    if status == OPEN:
        if b.require_human:
            when = f"it opened {b.openings} times, so only a person can close it"
        else:
            assert b.next_retry_at is not None
            when = f"until {iso(b.next_retry_at)} (in {span(b.next_retry_at - now)})"
        out.append(
            Signal(
                "G210",
                0.0,
                # the agent reads this: it says who can close the breaker, never the command that does
                f"'{b.text}' failed {b.fail_count} times in a row: circuit breaker open {when}; "
                "the person can close it from their terminal",
                BLOCK,
                "find out why it fails before running it again, and tell the person if it must run now",
            )
        )
    elif status == TRIAL:
        out.append(
            Signal("G210", 0.0, f"'{b.text}': the breaker's trial run has not reported back yet; waiting", BLOCK)
        )
    elif status == HALF_OPEN:
        wait = min(s.breaker_max_s, s.breaker_base_s * 2.0**b.openings)
        out.append(
            Signal(
                "G211",
                0.0,
                f"'{b.text}' circuit breaker half-open: this run is the trial; success closes it, "
                f"failure reopens it for {span(wait)}",
            )
        )
    return b.public(now, s) | {"close_with": f"guard reset --session {session_id or '-'} --task {b.task}"}


def _tier(state: SessionState | None, probe: Probe, card: Scorecard, out: list[Signal]) -> None:
    """The tier's limits, per task and once per task; ordinary edits in the project count less.

    A write inside the project (no protected path, at most medium risk) may be LOCAL_SCALE
    times larger, and counts as 1/LOCAL_SCALE of a file: a refactor across a dozen modules
    is a normal day, not a reason to stop. Once the person has said yes to a limit (or the
    call they were asked about ran), the task goes on without asking again.
    """
    tier = card.tier
    asked = state is not None and state.limit_asked
    scale = LOCAL_SCALE if probe.local else 1.0
    if not asked and probe.lines is not None and probe.lines > tier.max_lines * scale:
        where = "inside the project " if probe.local else ""
        out.append(
            Signal(
                "G240",
                0.0,
                f"this write puts {probe.lines} lines into a file at once; an agent at trust tier {_named(tier, card.points)} "
                f"writes up to {tier.max_lines * scale:.0f} {where}before a person looks (asked once per task)",
                CONFIRM,
            )
        )
    if not asked and probe.path is not None and state is not None:
        new = probe.path not in state.files and probe.path not in state.local_files
        if new:
            outside = len(state.files) + (0 if probe.local else 1)
            inside = len(state.local_files) + (1 if probe.local else 0)
            weight = outside + inside / LOCAL_SCALE
            if weight > tier.max_files:
                out.append(
                    Signal(
                        "G241",
                        0.0,
                        f"this task has now changed {outside + inside} files ({outside} outside the project or on "
                        f"protected paths); an agent at trust tier {_named(tier, card.points)} changes up to {tier.max_files:.0f} "
                        f"(or {tier.max_files * LOCAL_SCALE:.0f} ordinary project files) per task before a person "
                        "looks (asked once per task; a commit starts a new task)",
                        CONFIRM,
                    )
                )
    if RISKY_PATH in probe.facts and not tier.risky_paths:
        out.append(
            Signal(
                "G242", 0.0, f"tier {_named(tier, card.points)} may not touch protected paths without a person", CONFIRM
            )
        )
    if SUBAGENT in probe.facts and not tier.subagents:
        out.append(
            Signal("G243", 0.0, f"tier {_named(tier, card.points)} may not start sub-agents without a person", CONFIRM)
        )


def _named(tier: Tier, points: float) -> str:
    """``Seed (12 points)``: formatted only when a limit is hit."""
    return f"{tier.name} ({points:g} points)"
