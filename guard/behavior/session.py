"""A session's counters, updated one event at a time: what the signals read.

Three kinds of event, each a small JSON object (they are also what gets persisted):

    {"e": "d", "t": ts, "task": id, "kind": "bash", "dec": "auto_allow",
     "risk": 2, "facts": [...], "path": id | null, "agent": "default"}        a dispatch
    {"e": "r", "t": ts, "task": id, "call": text, "ok": false, "facts": [...]}  a result
    {"e": "i", "t": ts, "task": id, "ok": true}                                 an answer

``apply`` folds one event into the counters in O(1), so a decision never rescans
history. The events themselves go to the session's journal (``tracker.py``), kept to the
last ``behavior.window`` for display; the counters are what a decision needs.
A blocked dispatch counts as an attempt only: it is not a call the session made.
Dispatches are stored by task id only (redacting every call's text would cost more than
the whole decision); one that may become a taint source also carries its raw signature
in memory (``raw``), redacted into ``call`` once, when it is used or stored.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from typing import Any

import attrs

from guard.behavior.breaker import Breaker
from guard.behavior.facts import SECRET, UNTRUSTED, display
from guard.behavior.settings import BehaviorSettings
from guard.model import AUTO_ALLOW, BLOCK

VERSION = 1
RING = 30  # three blocks of the longest cycle looked for (10)
ANSWERS = 50  # denials are also counted among the last 50 answers
BURST_SECONDS = 10.0
MAX_RECENT = 256
MAX_BREAKERS = 128
MAX_FILES = 256  # more than any limited tier allows per task (Tree: 20)
MAX_PENDING = 32
REFUSED = 16  # the person's recent refusals, by task: they weigh on those calls only
MAX_TASK_RISK = 128
RISK_ALPHA = 0.5
TASK_IDLE_S = 1800.0  # half an hour without a call ends a task
_RISK_KEEP = 1 - RISK_ALPHA
_ABSENT = object()


@attrs.define
class SessionState:
    session_id: str
    started: float = 0.0
    updated: float = 0.0
    journal_lines: int = 0  # events in the journal file (maintained when saving)
    dispatches: int = 0
    blocked: int = 0
    results: int = 0
    failures: int = 0
    approvals: int = 0
    denials: int = 0
    # failures, exponentially decayed: n results, s failures, as of fail_t
    fail_n: float = 0.0
    fail_s: float = 0.0
    fail_t: float = 0.0
    fail_streak: int = 0
    denial_streak: int = 0  # denials since the last run of `denial_streak` approvals in a row
    approval_run: int = 0
    answers: deque[int] = attrs.field(factory=lambda: deque(maxlen=ANSWERS))  # 1 denied, 0 approved
    denied_recent: int = 0  # sum(answers), kept as answers come and go
    refusal_streak: int = 0  # dispatches guard blocked, in a row
    refused: deque[str] = attrs.field(factory=lambda: deque(maxlen=REFUSED))  # tasks the person refused, newest last
    ring: list[str] = attrs.field(factory=list)  # tasks of the last RING calls made, newest last (a list: sliced)
    run_task: str = ""
    run_len: int = 0
    risk_ewma: float = 0.0
    risk_sum: float = 0.0
    risk_n: int = 0
    recent: deque[float] = attrs.field(factory=lambda: deque(maxlen=MAX_RECENT))  # dispatch times within BURST_SECONDS
    taint: dict[str, Any] | None = None  # {"t": ts, "source": text}
    secret: dict[str, Any] | None = None
    pending: OrderedDict[str, list[str]] = attrs.field(factory=OrderedDict)  # facts awaiting a yes or a success
    # this task's writes (path ids), oldest first: a task runs from the session's start, a
    # commit or an idle gap of TASK_IDLE_S to the next one
    files: dict[str, None] = attrs.field(factory=dict)  # outside the project, or risky
    local_files: dict[str, None] = attrs.field(factory=dict)  # ordinary edits inside the project
    limit_task: str = ""  # the call guard asked about for the tier's limit; its yes or success ends the asking
    limit_asked: bool = False  # the person saw this task's tier limit: it is not asked again in the task
    breakers: dict[str, Breaker] = attrs.field(factory=dict)
    task_risk: dict[str, int] = attrs.field(factory=dict)  # risk of each task's last run (for tier points)
    agent: str = "default"

    # -- folding events -----------------------------------------------------------------
    def apply(self, ev: dict[str, Any], settings: BehaviorSettings) -> None:
        t = float(ev.get("t", 0.0))
        kind = ev.get("e")
        if kind == "d":
            self.dispatched(
                ev,
                t,
                settings,
                ev["task"],
                ev.get("dec"),
                ev.get("risk", 2),
                ev.get("agent"),
                ev.get("facts", ()),
                ev.get("path"),
                ev.get("local"),
                ev.get("limit"),
            )
            return
        if not self.started:
            self.started = t
        self.updated = max(self.updated, t)
        if kind == "r":
            self._result(ev, t, settings)
        elif kind == "i":
            self._answer(ev, settings)

    def dispatched(
        self,
        ev: dict[str, Any],
        t: float,
        settings: BehaviorSettings,
        task: str,
        dec: Any,
        risk: Any,
        agent: Any,
        named: Any,
        path: Any,
        local: Any,
        limit: Any,
    ) -> None:
        """``apply`` of a dispatch event ``ev``, its values read off it by the caller (the tracker
        hands over those it has just put in; ``apply`` reads them from a saved event)."""
        if not self.started:
            self.started = t
        updated = self.updated
        if updated and t - updated >= TASK_IDLE_S:
            self.new_task()
        if t > updated:  # ``max(updated, t)``: a tie or a NaN keeps the time it had
            self.updated = t
        self.dispatches += 1
        recent = self.recent
        recent.append(t)
        since = t - BURST_SECONDS
        while recent[0] < since:
            recent.popleft()
        if dec == BLOCK:
            self.blocked += 1
            self.refusal_streak += 1
            return
        self.refusal_streak = 0
        if agent:
            self.agent = agent
        ring = self.ring
        ring.append(task)
        if len(ring) > RING:
            del ring[0]
        if task == self.run_task:
            self.run_len += 1
        else:
            self.run_task, self.run_len = task, 1
        self.risk_ewma = risk if not self.risk_n else RISK_ALPHA * risk + _RISK_KEEP * self.risk_ewma
        self.risk_sum += risk
        self.risk_n += 1
        task_risk = self.task_risk  # the task moves to the end (newest); the oldest goes beyond the bound
        if task_risk.pop(task, _ABSENT) is _ABSENT and len(task_risk) >= MAX_TASK_RISK:
            del task_risk[next(iter(task_risk))]
        task_risk[task] = risk
        if named:
            facts = [f for f in named if f in (UNTRUSTED, SECRET)]
            if facts:
                if dec == AUTO_ALLOW:
                    self._take(facts, ev, t)
                else:  # asked: it happens only if approved or it succeeded
                    _bounded_put(self.pending, task, facts, MAX_PENDING)
        if path is not None:
            written = self.local_files if local else self.files
            if path not in written:
                if len(written) >= MAX_FILES:
                    del written[next(iter(written))]
                written[path] = None
        if limit and dec != AUTO_ALLOW:
            self.limit_task = task
        if named and "task_end" in named:
            self.new_task()
        if self.breakers:
            b = self.breakers.get(task)
            if b is not None:
                b.on_dispatch(t, settings)

    def _result(self, ev: dict[str, Any], t: float, settings: BehaviorSettings) -> None:
        ok = bool(ev.get("ok"))
        task = str(ev.get("task", ""))
        self.results += 1
        h = settings.half_life_s
        if self.fail_n and h > 0 and t > self.fail_t:
            f = 2.0 ** (-(t - self.fail_t) / h)
            self.fail_n *= f
            self.fail_s *= f
        self.fail_t = max(self.fail_t, t)
        self.fail_n += 1.0
        if ok:
            self.fail_streak = 0
            if task == self.limit_task:
                self.limit_asked, self.limit_task = True, ""
            facts = self.pending.pop(task, None) or [f for f in ev.get("facts", ()) if f in (UNTRUSTED, SECRET)]
            self._take(facts, ev, t)
        else:
            self.failures += 1
            self.fail_s += 1.0
            self.fail_streak += 1
            self.pending.pop(task, None)
        b = self.breakers.get(task)
        if b is None and not ok:
            b = self.breakers[task] = Breaker(task, str(ev.get("call", "")))
            if len(self.breakers) > MAX_BREAKERS:
                self._forget_breakers()
        if b is not None:
            b.on_result(ok, t, settings)
            if b.idle:
                del self.breakers[task]

    def _answer(self, ev: dict[str, Any], settings: BehaviorSettings) -> None:
        task = str(ev.get("task", ""))
        answers = self.answers
        if len(answers) == answers.maxlen:
            self.denied_recent -= answers[0]
        if ev.get("ok"):
            self.approvals += 1
            answers.append(0)
            self.approval_run += 1
            if self.approval_run >= settings.denial_streak:  # one "yes" does not end a streak of "no"
                self.denial_streak = 0
            facts = self.pending.pop(task, None)
            if facts:
                self._take(facts, ev, float(ev.get("t", 0.0)))
            if task == self.limit_task:
                self.limit_asked, self.limit_task = True, ""
        else:
            self.denials += 1
            self.denied_recent += 1
            answers.append(1)
            self.approval_run = 0
            self.denial_streak += 1
            self.pending.pop(task, None)
            if task not in self.refused:
                self.refused.append(task)

    def _take(self, facts: list[str], ev: dict[str, Any], t: float) -> None:
        source = {"t": t, "call": call_text(ev)}
        if UNTRUSTED in facts and self.taint is None:
            self.taint = source
        if SECRET in facts and self.secret is None:
            self.secret = source

    def new_task(self) -> None:
        """A task ended (a commit, an idle gap): the tier's per-task counts start again."""
        self.files.clear()
        self.local_files.clear()
        self.limit_task, self.limit_asked = "", False

    def _forget_breakers(self) -> None:
        for task in [k for k, b in self.breakers.items() if not b.is_open][: len(self.breakers) - MAX_BREAKERS]:
            del self.breakers[task]

    def clamp(self, limit: float) -> None:
        """Times later than ``limit`` (a saved file from a clock that ran ahead) become ``limit``:
        a future ``fail_t`` would stop failures from decaying, a future ``updated`` keep a session alive."""
        self.started = min(self.started, limit)
        self.updated = min(self.updated, limit)
        self.fail_t = min(self.fail_t, limit)
        self.recent = deque((min(t, limit) for t in self.recent), maxlen=MAX_RECENT)
        for source in (self.taint, self.secret):
            if isinstance(source, dict) and isinstance(source.get("t"), (int, float)):
                source["t"] = min(float(source["t"]), limit)
        for b in self.breakers.values():
            if b.opened_at is not None:
                b.opened_at = min(b.opened_at, limit)
            if b.trial_at is not None:
                b.trial_at = min(b.trial_at, limit)

    # -- reading --------------------------------------------------------------------------
    def expired(self, now: float, ttl_s: float) -> bool:
        return ttl_s > 0 and self.updated > 0 and now - self.updated > ttl_s

    def decayed_failures(self, now: float, half_life_s: float) -> tuple[float, float]:
        if not self.fail_n:
            return 0.0, 0.0
        f = 2.0 ** (-max(0.0, now - self.fail_t) / half_life_s) if half_life_s > 0 else 1.0
        return self.fail_n * f, self.fail_s * f

    # -- persistence ----------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "session_id": self.session_id,
            "started": self.started,
            "updated": self.updated,
            "counts": [self.dispatches, self.blocked, self.results, self.failures, self.approvals, self.denials],
            "fail": [self.fail_n, self.fail_s, self.fail_t, self.fail_streak],
            "denial": [self.denial_streak, self.approval_run, list(self.answers)],
            "refusal_streak": self.refusal_streak,
            "refused": list(self.refused),
            "ring": list(self.ring),
            "run": [self.run_task, self.run_len],
            "risk": [self.risk_ewma, self.risk_sum, self.risk_n],
            "recent": [t for t in self.recent if t >= self.updated - BURST_SECONDS],
            "taint": self.taint,
            "secret": self.secret,
            "pending": self.pending,
            "files": list(self.files),
            "local_files": list(self.local_files),
            "limit": [self.limit_task, self.limit_asked],
            "breakers": [b.to_json() for b in self.breakers.values()],
            "task_risk": self.task_risk,
            "agent": self.agent,
            "journal_lines": self.journal_lines,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any], settings: BehaviorSettings) -> SessionState:
        """The persisted state; raises ValueError/KeyError/TypeError on a foreign shape."""
        if raw.get("version") != VERSION:
            raise ValueError(f"version {raw.get('version')!r} is not {VERSION}")
        s = cls(str(raw["session_id"]), float(raw["started"]), float(raw["updated"]))
        s.journal_lines = int(raw.get("journal_lines", 0))
        (s.dispatches, s.blocked, s.results, s.failures, s.approvals, s.denials) = (int(x) for x in raw["counts"])
        n, sf, ft, streak = raw["fail"]
        s.fail_n, s.fail_s, s.fail_t, s.fail_streak = float(n), float(sf), float(ft), int(streak)
        ds, ar, answers = raw["denial"]
        s.denial_streak, s.approval_run = int(ds), int(ar)
        s.answers = deque((int(a) for a in answers), maxlen=ANSWERS)
        s.denied_recent = sum(s.answers)
        s.refusal_streak = int(raw["refusal_streak"])
        s.refused = deque((str(x) for x in raw.get("refused", ())), maxlen=REFUSED)
        s.ring = [str(x) for x in raw["ring"]][-RING:]
        s.run_task, s.run_len = str(raw["run"][0]), int(raw["run"][1])
        s.risk_ewma, s.risk_sum, s.risk_n = float(raw["risk"][0]), float(raw["risk"][1]), int(raw["risk"][2])
        s.recent = deque((float(x) for x in raw["recent"]), maxlen=MAX_RECENT)
        s.taint = raw.get("taint")
        s.secret = raw.get("secret")
        s.pending = OrderedDict((str(k), list(v)) for k, v in raw["pending"].items())
        s.files = dict.fromkeys(str(k) for k in raw["files"])
        s.local_files = dict.fromkeys(str(k) for k in raw.get("local_files", ()))
        s.limit_task, s.limit_asked = str(raw.get("limit", ("", False))[0]), bool(raw.get("limit", ("", False))[1])
        s.breakers = {b.task: b for b in (Breaker.from_json(x) for x in raw["breakers"])}
        s.task_risk = {str(k): int(v) for k, v in raw["task_risk"].items()}
        s.agent = str(raw.get("agent") or "default")
        return s


def call_text(ev: dict[str, Any]) -> str:
    """The event's redacted call text; a raw signature is redacted now, once, in place."""
    raw = ev.pop("raw", None)
    if raw is not None:
        ev["call"] = display(raw)
    return str(ev.get("call", ""))


def stored(ev: dict[str, Any]) -> dict[str, Any]:
    """The event as written to the journal: a raw signature redacted first."""
    if "raw" in ev:
        call_text(ev)
    return ev


def _bounded_put(d: OrderedDict[str, Any], key: str, value: Any, limit: int) -> None:
    d[key] = value
    d.move_to_end(key)
    if len(d) > limit:
        d.popitem(last=False)
