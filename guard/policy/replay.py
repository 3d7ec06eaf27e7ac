"""Replay the decision log under another configuration and count what would change.

The three history files are merged by time and played forward into two scratch
workspaces, one per configuration (the current one and the candidate). Each logged
dispatch is re-decided in both (``save=False``) when it comes up, so every call sees the
history, session state and learned counters it saw originally, and the only difference
between the two answers is the configuration. ``transitions`` counts the calls whose
decision changes (``auto_allow->request_confirm``) with up to three examples each;
``fidelity`` says how often the current-configuration replay reproduced the logged decision.

What a replay cannot reproduce, and how it approximates:

- parameters in the decision log are redacted, so a call is re-decided on its redacted form;
- system health is taken from each logged decision's ``system`` component, not sampled
  (unless the configuration pins ``system.health``);
- memory relevance comes from the history files, not LanceDB;
- guard's workspace is the scratch copy, so protected-path rules see a different path;
- timestamps have one-second resolution: within a second, an answer or result is placed
  right after the dispatch of the same call and before later dispatches (see ``timeline``).
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
import tomllib
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import attrs

from guard import workspace as ws
from guard.config import _LIST_SECTIONS, Config
from guard.core import Guard
from guard.errors import ConfigError, InputError
from guard.model import DECISIONS, REQUEST_CONFIRM, DecisionRecord, ToolCall
from guard.policy import history
from guard.policy.history import Event
from guard.system import SystemHealth, SystemSample

GuardFactory = Callable[[Path, Config], Guard]
Progress = Callable[[int, int], None]
MAX_EXAMPLES = 3
_ORDER = {"decision": 0, "interaction": 1, "execution": 2}


def default_guard(scratch: Path, config: Config) -> Guard:
    """The default replay Guard: default layers, memory from the history files."""
    return Guard(scratch, config, memory_backend="history")


def load_candidate(workspace: Path, file: Path | None = None, base: Config | None = None) -> Config:
    """The current configuration with ``file``'s values over it (``--config FILE``).

    Settings override key by key; tables without settings (``[permissions]``) replace the
    current table's lists key by key.
    """
    base = base or Config.load(workspace if workspace.is_dir() else None)
    if file is None:
        return base
    try:
        raw = tomllib.loads(Path(file).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read {file}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file} is not valid TOML: {exc}") from None
    merged = dict(base.raw_file)
    settings: dict[str, Any] = {}
    for key, value in raw.items():
        if key in _LIST_SECTIONS and isinstance(value, Mapping):
            current = merged.get(key)
            merged[key] = {**(dict(current) if isinstance(current, Mapping) else {}), **value}
        else:
            settings[key] = value
    config = attrs.evolve(base, raw_file=merged)
    return config.with_overrides(settings) if settings else config


@attrs.frozen
class Example:
    timestamp: str
    tool: str
    session_id: str | None
    call: str
    logged: str
    before: str
    after: str
    score_before: float
    score_after: float
    reasons_after: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self, recurse=False) | {"reasons_after": list(self.reasons_after)}


@attrs.frozen
class ReplayResult:
    total: int  # dispatches in the log
    replayed: int  # re-decided (those at or after ``since``)
    events: int  # history lines played forward
    since: str | None
    before: Mapping[str, int]  # decisions under the current configuration
    after: Mapping[str, int]  # decisions under the candidate
    logged: Mapping[str, int]
    transitions: Mapping[str, int]
    examples: Mapping[str, tuple[Example, ...]]
    fidelity: int  # replays under the current configuration that equal the logged decision

    @property
    def unchanged(self) -> int:
        return self.replayed - sum(self.transitions.values())

    def rate(self, which: str, decision: str = REQUEST_CONFIRM) -> float:
        counts = self.before if which == "before" else self.after
        return counts.get(decision, 0) / self.replayed if self.replayed else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "replayed": self.replayed,
            "history_events": self.events,
            "since": self.since,
            "before": dict(self.before),
            "after": dict(self.after),
            "logged": dict(self.logged),
            "transitions": dict(self.transitions),
            "unchanged": self.unchanged,
            "examples": {k: [e.to_dict() for e in v] for k, v in self.examples.items()},
            "prompt_rate": {
                "before": round(self.rate("before"), 4),
                "after": round(self.rate("after"), 4),
                "change": round(self.rate("after") - self.rate("before"), 4),
            },
            "block_rate": {
                "before": round(self.rate("before", "block"), 4),
                "after": round(self.rate("after", "block"), 4),
            },
            "fidelity": {"agree": self.fidelity, "of": self.replayed},
            "note": "parameters in the decision log are redacted; calls are re-decided on their redacted form",
        }


class Replayer:
    """A scratch workspace and a Guard on it, fed history lines in order."""

    def __init__(self, config: Config, make_guard: GuardFactory | None = None, *, copy_from: Path | None = None):
        self._dir = tempfile.TemporaryDirectory(prefix="guard-replay-")
        scratch = Path(self._dir.name)
        if copy_from is not None:
            for name in (ws.EXECUTIONS, ws.INTERACTIONS):
                if (copy_from / name).is_file():
                    shutil.copyfile(copy_from / name, scratch / name)
        self.guard = (make_guard or default_guard)(scratch, config)
        self._logged_system = _LoggedSystem()
        if config.get("system.health") is None:
            # Duck-typed stand-in: the fusion layer only calls ``sample()``.
            self.guard.state.system = cast("SystemHealth", self._logged_system)

    def feed(self, ev: Event) -> None:
        """Play one execution or interaction line into the scratch history."""
        raw, g = ev.raw, self.guard
        try:
            if ev.source == "execution":
                duration = raw.get("duration_ms")
                g.record_result(
                    ev.tool,
                    ev.params,
                    session_id=ev.session_id,
                    success=ev.outcome == "success",
                    duration_ms=duration if isinstance(duration, (int, float)) else None,
                    error=raw.get("error") if isinstance(raw.get("error"), str) else None,
                    risk=raw.get("risk") if raw.get("risk") in _RISKS else None,
                    timestamp=ev.when,
                )
            elif ev.source == "interaction":
                sat = raw.get("satisfaction")
                g.record_interaction(
                    ev.tool,
                    ev.params,
                    session_id=ev.session_id,
                    approved=ev.outcome == "approved",
                    satisfaction=sat if isinstance(sat, int) and not isinstance(sat, bool) and 1 <= sat <= 5 else None,
                    timestamp=ev.when,
                )
        except (InputError, ValueError):
            pass  # a line the live Guard would not have accepted either

    def decide(self, ev: Event) -> DecisionRecord:
        components = ev.raw.get("components")
        system = components.get("system") if isinstance(components, Mapping) else None
        self._logged_system.value = float(system) if isinstance(system, (int, float)) else None
        call = ToolCall(ev.tool, ev.params, ev.session_id, None, None, ev.when)
        return self.guard.decide_call(call, save=False, track=True)

    def close(self) -> None:
        try:
            self.guard.close()
        finally:
            self._dir.cleanup()

    def __enter__(self) -> Replayer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_RISKS = ("safe", "low", "medium", "high", "critical")


class _LoggedSystem:
    """Stands in for ``SystemHealth``: the value logged with the decision being replayed."""

    value: float | None = None

    def sample(self) -> SystemSample:
        if self.value is None or not 0.0 <= self.value <= 100.0:
            return SystemSample(50.0, available=False, detail="system: not in the decision log")
        return SystemSample(self.value, detail="system health as logged")


def timeline(workspace: Path) -> list[Event]:
    """Every history line in the order it happened, as far as the logs can tell.

    Lines sort by time. Timestamps have one-second resolution, so within one second an
    answer or result goes right after the dispatch of the same call (same session and
    signature) and before later dispatches; one with no such dispatch in that second
    belongs to an earlier call and goes first.
    """
    events = [*history.decisions(workspace), *history.interactions(workspace), *history.executions(workspace)]
    events.sort(key=lambda e: e.ts)  # stable: each file keeps its order within a second
    out: list[Event] = []
    for _, group in itertools.groupby(events, key=lambda e: e.ts):
        out += _causal(list(group))
    return out


def _causal(group: list[Event]) -> list[Event]:
    dispatches = [e for e in group if e.source == "decision"]
    if not dispatches or len(dispatches) == len(group):
        return sorted(group, key=lambda e: _ORDER[e.source])
    after: dict[int, list[Event]] = defaultdict(list)
    first: list[Event] = []
    taken: Counter[tuple[str, int]] = Counter()  # (source, dispatch index) already given a line
    for e in sorted((e for e in group if e.source != "decision"), key=lambda e: _ORDER[e.source]):
        key = (e.session_id, e.signature)
        slot = next(
            (i for i, d in enumerate(dispatches) if (d.session_id, d.signature) == key and not taken[(e.source, i)]),
            None,
        )
        if slot is None:
            first.append(e)
        else:
            taken[(e.source, slot)] += 1
            after[slot].append(e)
    out = first
    for i, d in enumerate(dispatches):
        out += [d, *after[i]]
    return out


def replay(
    workspace: Path,
    candidate: Config,
    *,
    baseline: Config | None = None,
    since: float | None = None,
    progress: Progress | None = None,
    make_guard: GuardFactory | None = None,
) -> ReplayResult:
    """Re-decide the logged dispatches under ``baseline`` (default: current) and ``candidate``."""
    baseline = baseline or Config.load(workspace if workspace.is_dir() else None)
    events = timeline(workspace)
    before: Counter[str] = Counter()
    after: Counter[str] = Counter()
    logged: Counter[str] = Counter()
    transitions: Counter[str] = Counter()
    examples: dict[str, list[Example]] = {}
    total = replayed = fed = agree = 0
    with Replayer(baseline, make_guard) as base, Replayer(candidate, make_guard) as cand:
        for done, ev in enumerate(events, 1):
            if ev.source != "decision":
                base.feed(ev)
                cand.feed(ev)
                fed += 1
            else:
                total += 1
                # Earlier dispatches are still decided: the session layer must see them.
                a, b = base.decide(ev), cand.decide(ev)
                if since is None or ev.ts >= since:
                    replayed += 1
                    before[a.decision] += 1
                    after[b.decision] += 1
                    logged[ev.outcome] += 1
                    agree += a.decision == ev.outcome
                    if a.decision != b.decision:
                        key = f"{a.decision}->{b.decision}"
                        transitions[key] += 1
                        shown = examples.setdefault(key, [])
                        if len(shown) < MAX_EXAMPLES:
                            shown.append(_example(ev, a, b))
            if progress is not None:
                progress(done, len(events))
    order = {d: i for i, d in enumerate(DECISIONS)}
    ordered = dict(sorted(transitions.items(), key=lambda kv: (-kv[1], kv[0])))
    return ReplayResult(
        total=total,
        replayed=replayed,
        events=fed,
        since=None if since is None else datetime.fromtimestamp(since).astimezone().isoformat(timespec="seconds"),
        before=dict(sorted(before.items(), key=lambda kv: order[kv[0]])),
        after=dict(sorted(after.items(), key=lambda kv: order[kv[0]])),
        logged=dict(sorted(logged.items(), key=lambda kv: order[kv[0]])),
        transitions=ordered,
        examples={k: tuple(examples[k]) for k in ordered},
        fidelity=agree,
    )


def _example(ev: Event, a: DecisionRecord, b: DecisionRecord) -> Example:
    return Example(
        timestamp=ev.when.isoformat(timespec="seconds"),
        tool=ev.tool,
        session_id=ev.session_id,
        call=ev.text[:160],
        logged=ev.outcome,
        before=a.decision,
        after=b.decision,
        score_before=round(a.final_score, 2),
        score_after=round(b.final_score, 2),
        reasons_after=tuple(r.rule_id for r in b.reasons),
    )
