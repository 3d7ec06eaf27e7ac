"""The person's settled answers in the host: its allow / ask / deny rules count as their preference.

A host that keeps permission rules (Claude Code's ``permissions`` in its settings files, where
"Yes, don't ask again" lands too; Codex's ``prefix_rule`` files in ``~/.codex/rules/``, where
its "always allow" lands; Gemini CLI's ``tools.allowed`` / ``tools.exclude`` and policy files)
names the files through ``Host.rule_files``; this module
reads them with the static layer's own matcher (:mod:`guard.static.rules.userrules`: Claude Code's
rule syntax, compound commands split, every part must be covered by an allow) and folds them
into guard's decision before it is logged:

- a **deny** rule that matches any part of the call blocks it (G307);
- an **ask** rule keeps it at least ``request_confirm`` (G308; with nobody to ask, a block);
- an **allow** rule that covers every part lifts a ``request_confirm`` to ``auto_allow``
  (G306), only where guard's own judgement leaves room: no layer blocked (guard's
  self-protection, critical findings, a tripped breaker), the static layer rated the call
  medium or below, and no part of guard failed or ran out of time. A host allow never lifts
  a block and never makes a high-risk call run unasked.

Rules in a project's files (``.claude/settings.json``, ``.claude/settings.local.json``) whose
file changed after the session started are not used to allow (G309): guard blocks the agent's
writes to those files, and a change it did not see mid-session could be the agent's. A file
that cannot be read is skipped with one warning on stderr and a G309 note; if the rules cannot
be checked at all, what guard would have allowed is asked instead (G309). Files are re-read
only when their mtime or size changes.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import attrs

from guard.chain import STATIC
from guard.integrations.hosts.host_rule_files import READERS, RuleFile
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM, DecisionRecord, Reason, Risk, Verdict
from guard.namedtuple import NamedTuple
from guard.static.rules import userrules

__all__ = ["LAYER", "RuleFile", "apply", "preference"]

if TYPE_CHECKING:
    from guard.core import Guard
    from guard.integrations.hosts.base import Event, Host

LAYER = "host_rules"
_MAX_FILES = 256


class Loaded(NamedTuple):
    rules: userrules.RuleSet
    problem: str | None = None


class _Cache:
    """Parsed files by path, valid while (mtime_ns, size) stays the same; shared by a daemon's threads."""

    def __init__(self) -> None:
        self._files: dict[tuple[str, str, str | None], tuple[tuple[int, int], Loaded]] = {}
        self._warned: set[tuple[str, tuple[int, int]]] = set()
        self._lock = threading.Lock()

    def load(self, f: RuleFile, home: str) -> tuple[Loaded, float] | None:
        try:
            st = os.stat(f.path)
        except OSError:
            return None
        stamp = (st.st_mtime_ns, st.st_size)
        key = (f.path, home, f.base)
        cached = self._files.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1], st.st_mtime
        loaded = _parse(f, home)
        with self._lock:
            if len(self._files) >= _MAX_FILES:
                self._files.clear()
            self._files[key] = (stamp, loaded)
            first = (f.path, stamp) not in self._warned
            self._warned.add((f.path, stamp))
        if loaded.problem and first:
            print(f"guard: {loaded.problem}", file=sys.stderr)
        return loaded, st.st_mtime


_CACHE = _Cache()


def _parse(f: RuleFile, home: str) -> Loaded:
    try:
        with open(f.path, "rb") as fh:
            data = fh.read(1 << 20)
        rules = READERS[f.dialect](data, f, home)
    except (OSError, ValueError, SyntaxError, RecursionError, AttributeError, TypeError) as exc:
        return Loaded(userrules.RuleSet(), f"{f.path} is unreadable ({exc}); its permission rules are ignored")
    return Loaded(userrules.RuleSet(tuple(rules)))


# -- applying them to a decision ---------------------------------------------------------------------
def preference(host: Host, event: Event, guard: Guard) -> Callable[[DecisionRecord], DecisionRecord] | None:
    """What ``Guard.decide`` applies to its record for this event (None: the host keeps no rules)."""
    static = guard.chain.layer(STATIC)
    if static is None or not hasattr(static, "analyser"):
        return None
    home = str(getattr(static, "home", os.path.expanduser("~")))
    files = host.rule_files(event, home)
    if not files:
        return None

    def prefer(record: DecisionRecord) -> DecisionRecord:
        try:
            started = _session_start(guard, event)
            rules, notes = _collect(files, home, started)
            if not rules.rules:
                return attrs.evolve(record, notes=(*record.notes, *notes)) if notes else record
            return apply(record, rules, static, notes, human=guard.human_present)
        except Exception as exc:  # guard's own decision stands: the host's rules only ever move it by rule
            return attrs.evolve(
                record, notes=(*record.notes, f"G309 host rules not applied ({type(exc).__name__}: {exc})")
            )

    return prefer


def _session_start(guard: Guard, event: Event) -> float:
    try:
        return float(guard.state.sessions.get(event.session_id).started)
    except Exception:  # no session state: every project file counts as changed
        return float("inf")


def _collect(files: Iterable[RuleFile], home: str, started: float) -> tuple[userrules.RuleSet, list[str]]:
    out = userrules.RuleSet()
    notes: list[str] = []
    for f in files:
        got = _CACHE.load(f, home)
        if got is None:
            continue
        loaded, mtime = got
        if loaded.problem:
            notes.append(f"G309 {loaded.problem}")
            continue
        rules = loaded.rules
        if f.project and mtime > started and any(r.action == "allow" for r in rules.rules):
            notes.append(f"G309 {f.path} changed during this session: its allow rules are not used until the next one")
            rules = userrules.RuleSet(tuple(r for r in rules.rules if r.action != "allow"))
        out = out + rules
    return out, notes


def apply(
    record: DecisionRecord, rules: userrules.RuleSet, static: Any, notes: list[str], *, human: bool = True
) -> DecisionRecord:
    """``record`` with the host's rules folded in (see the module docstring)."""
    from guard.static.budget import Budget
    from guard.static.rules.userrules import user_rule_matches

    call = record.call
    budget = Budget.start(float(getattr(static, "budget_ms", 200.0)), static.limits.max_steps)
    analysis, _ = static.analyser(call, static.home, static.workspace, static.limits, budget)
    matched = user_rule_matches(call, analysis, rules)
    if not matched:
        return attrs.evolve(record, notes=(*record.notes, *notes)) if notes else record
    best = matched[0]
    said = f"{best.rule.text} in {best.rule.origin}"
    layer_blocked = any(v.decision == BLOCK for v in record.layers)
    no_human = record.decision == BLOCK and not layer_blocked  # an ask that had nobody to answer it
    if best.action == "deny":
        if layer_blocked:
            verdict = _verdict(Risk.CRITICAL, "G307", f"Your host settings deny this too ({said})", decision=None)
            return _with(record, verdict, record.decision, notes, lead=False)
        verdict = _verdict(Risk.CRITICAL, "G307", f"Your host settings deny this ({said})", decision=BLOCK)
        return _with(record, verdict, BLOCK, [*notes, f"G307 host deny rule: {said}"])
    if best.action == "ask":
        verdict = _verdict(None, "G308", f"Your host settings ask before this ({said})", ceiling=REQUEST_CONFIRM)
        if record.decision != AUTO_ALLOW:
            return _with(record, verdict, record.decision, notes, lead=record.decision == REQUEST_CONFIRM)
        if not human:
            return _with(record, verdict, BLOCK, [*notes, f"G308 host ask rule ({said}); nobody to ask: block"])
        return _with(record, verdict, REQUEST_CONFIRM, [*notes, f"G308 host ask rule: {said}"])
    # allow
    pending = record.decision == REQUEST_CONFIRM or (record.decision == BLOCK and no_human)
    why_not = _why_not_lift(record, analysis)
    if not pending:
        return attrs.evolve(record, notes=(*record.notes, *notes)) if notes else record
    if why_not:
        return attrs.evolve(
            record, notes=(*record.notes, *notes, f"G306 host allow rule {said} not applied: {why_not}")
        )
    verdict = _verdict(None, "G306", f"You allowed this in your host settings ({said})", decision=AUTO_ALLOW)
    return _with(record, verdict, AUTO_ALLOW, [*notes, f"G306 host allow rule lifted {record.decision}: {said}"])


def _why_not_lift(record: DecisionRecord, analysis: Any) -> str | None:
    if any(v.decision == BLOCK for v in record.layers):
        return "a guard layer blocked the call"
    static = record.layer("static")
    if static is None or static.risk is None or static.risk > Risk.MEDIUM:
        return f"the static layer rates it {static.risk.label if static and static.risk else 'unknown'}"
    # a layer that failed or a check cut short by the time budget; a data source still loading
    # (memory in a warming daemon) is not part of judging the call's risk
    if analysis.over_budget or any(v.error or v.layer == "budget" for v in record.layers):
        return "part of guard's check did not complete"
    return None


def _verdict(
    risk: Risk | None, rule_id: str, message: str, *, decision: str | None = None, ceiling: str | None = None
) -> Verdict:
    return Verdict(layer=LAYER, risk=risk, decision=decision, ceiling=ceiling, reasons=(Reason(rule_id, message),))


def _with(
    record: DecisionRecord, verdict: Verdict, decision: str, notes: list[str], *, lead: bool = True
) -> DecisionRecord:
    layers = (verdict, *record.layers) if lead else (*record.layers, verdict)
    risk = max(record.risk, verdict.risk) if verdict.risk is not None else record.risk
    return attrs.evolve(record, decision=decision, layers=layers, risk=risk, notes=(*record.notes, *notes))
