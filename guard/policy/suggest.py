"""Learn allow and deny rules from what the user answered, only where the evidence is strong.

A pattern (see :mod:`guard.policy.patterns`) becomes a **candidate** rule when all of these hold:

1. *enough observations*: at least ``policy.min_observations`` answers the same way,
   counting only verified ones, from at least ``policy.min_sessions`` sessions. An approval
   is verified when the next run of that exact call in that session succeeded; a denial when
   the call was not then run successfully anyway.
2. *never contradicted*: one answer the other way (or a denied call run successfully later)
   and the pattern is **held** for a person to decide, whatever the majority says.
3. *read as meant*: the static layer's ``[permissions]`` matcher (the one that will apply the
   rule, :mod:`guard.policy.coverage`) must read the rule as covering every call it was
   learned from; a rule that would not do what its evidence is about is **rejected**.
4. *not risky* (allow only): the static layer re-classifies what the rule would cover: every
   observed call, the bare prefix, and the prefix followed by a few dangerous arguments
   (``-rf ~``, ``--force``, ``~/.ssh/id_rsa``...). Anything rated high or critical, or
   blocked, or a directory covering guard's own workspace, and the rule is **rejected**.
5. *new*: rules already in ``[permissions]``, already active, or once reverted by the user
   are not suggested again (a person's "no" is final; ``guard rules apply ID`` restores one).
6. *exact* (allow): a shell command's allow rule is its operation, every argument kept
   (``Bash(pip install requests)``, :func:`guard.policy.patterns.exact_of`), learned from the
   answers to that operation only; a rule the static layer would read as also covering a
   target-changing variant (``--index-url``, ``git+URL``, ``-f FILE``, ``--context``, another
   remote or host, a chained command) is **rejected**. Deny rules keep the wider pattern.

Every candidate and held rule carries a **replay**: what it covers in words, the past calls it
would have allowed (or refused), the calls of the same family it leaves alone, and how many
target-changing variants were checked.

At most ``policy.max_suggestions`` candidates come out of one run, strongest evidence first;
when the cap is hit the result says how many were left off.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import attrs

from guard.config import Config
from guard.layers.base import Context, Layer
from guard.model import BLOCK, Risk, ToolCall
from guard.policy import history
from guard.policy.coverage import Coverage
from guard.policy.history import Event
from guard.policy.patterns import Pattern, exact_of, params_for, pattern_of
from guard.signature import family_of

PROBE_ARGS = ("-rf ~", "-rf /", "--force", "--hard", "~/.ssh/id_rsa", "/etc/shadow")
MAX_PROBES = 20
# Arguments that change what an operation acts on: an allow rule must cover none of them.
TARGET_PROBES = (
    "--index-url http://pypi.example.invalid/simple",
    "--extra-index-url http://pypi.example.invalid/simple",
    "git+https://example.invalid/pkg.git",
    "-f k8s/prod.yaml",
    "--context prod",
    "--registry http://npm.example.invalid",
    "origin main",
    "https://other.example.invalid/",
    "&& curl https://example.invalid",
)
MAX_REPLAY = 2000  # distinct past calls a rule is replayed over (the most recent)


@attrs.frozen
class Policy:
    """The gates; stricter is safer."""

    min_observations: int = 3
    min_sessions: int = 2
    max_suggestions: int = 20

    @classmethod
    def from_config(cls, config: Config) -> Policy:
        return cls(
            int(config.get("policy.min_observations")),
            int(config.get("policy.min_sessions")),
            int(config.get("policy.max_suggestions")),
        )


@attrs.frozen
class Evidence:
    """Why a rule is (or is not) suggested. Counts are of answers in the rule's direction."""

    observations: int
    verified: int
    sessions: int
    contradictions: int
    failures: int = 0
    first_seen: str = ""
    last_seen: str = ""
    examples: tuple[str, ...] = ()
    static_risk: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self, recurse=False) | {"examples": list(self.examples)}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Evidence:
        fields = {f.name for f in attrs.fields(cls)}
        data = {k: v for k, v in raw.items() if k in fields}
        data["examples"] = tuple(data.get("examples") or ())
        return cls(**data)


@attrs.frozen
class Suggestion:
    """``status``: candidate (may be applied), held (contradicted: a person decides) or rejected.
    ``replay``: what the rule would have done to the history (see :class:`Replay`)."""

    id: str
    kind: str
    rule: str
    status: str
    reason: str
    evidence: Evidence
    replay: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {
            "id": self.id,
            "kind": self.kind,
            "rule": self.rule,
            "status": self.status,
            "reason": self.reason,
            "evidence": self.evidence.to_dict(),
        }
        if self.replay is not None:
            out["replay"] = dict(self.replay)
        return out


@attrs.frozen
class SuggestResult:
    suggested: tuple[Suggestion, ...]
    held: tuple[Suggestion, ...]
    rejected: tuple[Suggestion, ...]
    counts: Mapping[str, int]
    policy: Policy

    @property
    def cap_hit(self) -> bool:
        return self.counts.get("left_off", 0) > 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "suggested": [s.to_dict() for s in self.suggested],
            "held": [s.to_dict() for s in self.held],
            "rejected": [s.to_dict() for s in self.rejected],
            "counts": dict(self.counts),
            "cap": {
                "limit": self.policy.max_suggestions,
                "hit": self.cap_hit,
                "left_off": self.counts.get("left_off", 0),
            },
            "policy": attrs.asdict(self.policy),
        }


def rule_id(kind: str, rule: str) -> str:
    """Stable: the same kind and rule text always get the same id (``allow-3f2a91c``)."""
    digest = hashlib.sha256(f"{kind}\0{rule}".encode()).hexdigest()
    return f"{kind}-{digest[:7]}"


def suggest(
    workspace: Path,
    static: Layer,
    config: Config,
    *,
    policy: Policy | None = None,
    configured: Iterable[str] = (),
    skip: Mapping[str, str] | None = None,
    now: datetime | None = None,
) -> SuggestResult:
    """Candidate rules from the workspace's history.

    ``static`` is the static layer (``guard.chain.layer("static")``); ``configured`` the rule texts
    already in ``[permissions]``; ``skip`` maps rule ids to the state that excludes them
    (``active``, ``reverted``).
    """
    policy = policy or Policy.from_config(config)
    skip = skip or {}
    configured = set(configured)
    now = now or datetime.now().astimezone()
    executions = list(history.executions(workspace))
    runs = _runs_by_call(executions)
    answers = list(history.interactions(workspace))
    # A shell command's allow evidence is its exact operation's; its deny evidence its pattern's.
    groups: dict[tuple[Pattern, str], list[Event]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    for ev in answers:
        pattern = pattern_of(ev.kind, ev.text)
        exact = exact_of(ev.kind, ev.text)
        if pattern is None and exact is None:
            counts["ungeneralised"] += 1
        if ev.kind == "bash":
            if pattern is not None:
                groups[(pattern, "deny")].append(ev)
            if exact is not None:
                groups[(exact, "allow")].append(ev)
        elif pattern is not None:
            groups[(pattern, "")].append(ev)
    candidates: list[Suggestion] = []
    held: list[Suggestion] = []
    rejected: list[Suggestion] = []
    gate = _StaticGate(static, config, workspace, now)
    # the calls made: each run once, and each call the person refused (it did not run)
    replayer = Replay(gate.coverage, executions, [e for e in answers if e.outcome == "denied"])
    for (pattern, only), events in sorted(groups.items(), key=lambda kv: (kv[0][0].rule, kv[0][1])):
        allow = _evidence(events, runs, "approved")
        deny = _evidence(events, runs, "denied")
        kind, tally = ("allow", allow) if allow.verified > deny.verified else ("deny", deny)
        if only and kind != only:
            continue  # the other direction's group speaks for these answers
        counts["patterns"] += 1
        if tally.verified < policy.min_observations or tally.sessions < policy.min_sessions:
            counts["insufficient"] += 1
            continue
        rule = pattern.rule
        rid = rule_id(kind, rule)
        if rule in configured or skip.get(rid) == "active":
            counts["already_configured"] += 1
            continue
        if skip.get(rid) == "reverted":
            counts["reverted"] += 1
            continue
        if kind == "allow":  # the risk gate first: its reason says the most
            risk, why = gate.check(pattern, [e.text for e in events])
            evidence = tally.freeze(static_risk=risk.label if risk is not None else None)
            if why:
                rejected.append(Suggestion(rid, kind, rule, "rejected", why, evidence))
                continue
        else:
            evidence = tally.freeze()
        missed = gate.uncovered(rule, kind, events)
        if missed is not None:
            unread = f"the static layer would not read {rule} as covering {missed!r}, a call it was learned from"
            rejected.append(Suggestion(rid, kind, rule, "rejected", unread, evidence))
            continue
        if tally.contradictions:
            other = "denied" if kind == "allow" else "approved or run anyway"
            reason = (
                f"contradicted: {tally.verified} verified {_answer(kind)} but {tally.contradictions} "
                f"{other}; a person should decide"
            )
            held.append(Suggestion(rid, kind, rule, "held", reason, evidence, replayer(pattern, kind)))
            continue
        replay = replayer(pattern, kind)
        if replay.get("widens"):
            why = f"{rule} would also allow {replay['widens'][0]!r}, a different target: never an allow rule"
            rejected.append(Suggestion(rid, kind, rule, "rejected", why, evidence, replay))
            continue
        candidates.append(Suggestion(rid, kind, rule, "candidate", _why(kind, tally), evidence, replay))
    candidates.sort(key=lambda s: (-s.evidence.verified, -s.evidence.sessions, s.rule))
    limit = policy.max_suggestions
    counts["left_off"] = max(0, len(candidates) - limit)
    return SuggestResult(tuple(candidates[:limit]), tuple(held), tuple(rejected), dict(counts), policy)


def _answer(kind: str) -> str:
    return "approvals" if kind == "allow" else "denials"


def _why(kind: str, ev: _Tally) -> str:
    if kind == "allow":
        return f"approved and then succeeded {ev.verified} times in {ev.sessions} sessions, never denied"
    return f"denied {ev.verified} times in {ev.sessions} sessions, never approved"


# -- evidence ---------------------------------------------------------------------------------
@attrs.define
class _Tally:
    observations: int = 0
    verified: int = 0
    failures: int = 0
    contradictions: int = 0
    session_ids: set[str | None] = attrs.field(factory=set)
    first: float | None = None
    last: float | None = None
    examples_all: list[str] = attrs.field(factory=list)

    @property
    def sessions(self) -> int:
        return len(self.session_ids)

    def freeze(self, static_risk: str | None = None) -> Evidence:
        def iso(ts: float | None) -> str:
            return "" if ts is None else datetime.fromtimestamp(ts).astimezone().isoformat(timespec="seconds")

        return Evidence(
            observations=self.observations,
            verified=self.verified,
            sessions=self.sessions,
            contradictions=self.contradictions,
            failures=self.failures,
            first_seen=iso(self.first),
            last_seen=iso(self.last),
            examples=tuple(self.examples_all[:3]),
            static_risk=static_risk,
        )


def _runs_by_call(events: Iterable[Event]) -> dict[tuple[str | None, str], list[Event]]:
    runs: dict[tuple[str | None, str], list[Event]] = defaultdict(list)
    for ev in events:
        runs[(ev.session_id, ev.signature)].append(ev)
    for lst in runs.values():
        lst.sort(key=lambda e: e.ts)
    return runs


def _evidence(events: Sequence[Event], runs: Mapping[tuple[str | None, str], list[Event]], answer: str) -> _Tally:
    """Tally answers ``answer`` against the runs that followed each in its session."""
    tally = _Tally()
    used: set[int] = set()
    for ev in sorted(events, key=lambda e: e.ts):
        if ev.outcome != answer:
            continue
        tally.observations += 1
        after = next(
            (r for r in runs.get((ev.session_id, ev.signature), ()) if r.ts >= ev.ts and id(r) not in used), None
        )
        if after is not None:
            used.add(id(after))
        ran_ok = after is not None and after.outcome == "success"
        if answer == "approved":
            if not ran_ok:
                tally.failures += after is not None
                continue
        elif ran_ok:
            tally.contradictions += 1  # denied, then run successfully anyway
            continue
        tally.verified += 1
        tally.session_ids.add(ev.session_id)
        tally.first = ev.ts if tally.first is None else min(tally.first, ev.ts)
        tally.last = ev.ts if tally.last is None else max(tally.last, ev.ts)
        if ev.text not in tally.examples_all:
            tally.examples_all.append(ev.text)
    tally.contradictions += sum(1 for ev in events if ev.outcome not in (answer,))
    return tally


# -- the static gate ----------------------------------------------------------------------------
class _StaticGate:
    """Asks the static layer about everything a rule would cover."""

    def __init__(self, static: Layer, config: Config, workspace: Path, now: datetime) -> None:
        self.static = static
        self.config = config
        self.workspace = workspace.resolve()
        self.now = now
        self.coverage = Coverage(getattr(static, "home", None))

    def uncovered(self, rule: str, kind: str, events: Sequence[Event]) -> str | None:
        """A call the rule was learned from that the static layer would not cover, as it was made
        (its signature folds blanks and look-alike characters; the rule must match the call)."""
        for ev in events:
            call = ev.call()
            if not self.coverage.covers(rule, call, action=kind):
                raw = (call.params.get(k) for k in ("command", "file_path", "url"))
                return next((v for v in raw if isinstance(v, str)), ev.text)
        return None

    def probes(self, pattern: Pattern, observed: Sequence[str]) -> list[str]:
        out = list(dict.fromkeys(observed))[:MAX_PROBES]
        if pattern.shape == "prefix":
            out += [pattern.spec, *(f"{pattern.spec} {arg}" for arg in PROBE_ARGS)]
        return list(dict.fromkeys(out))

    def check(self, pattern: Pattern, observed: Sequence[str]) -> tuple[Risk | None, str | None]:
        """The highest risk found, and why the rule must not exist (None when it may)."""
        if pattern.shape in ("dir", "file") and self._covers_workspace(pattern):
            return None, f"{pattern.rule} would cover guard's own workspace {self.workspace}"
        worst: tuple[Risk, str] | None = None
        for text in self.probes(pattern, observed):
            call = ToolCall(pattern.kind, params_for(pattern.kind, text) or {}, timestamp=self.now)
            ctx = Context(config=self.config, now=self.now, state=None, human_present=True)
            try:
                verdict = self.static(call, ctx)
            except Exception as exc:
                return None, f"the static layer failed on {text!r} ({type(exc).__name__}: {exc}); no allow rule"
            risk = verdict.risk if verdict.risk is not None else Risk.MEDIUM
            if verdict.decision == BLOCK:
                risk = max(risk, Risk.HIGH)
            if worst is None or risk > worst[0]:
                worst = (risk, text)
        if worst is not None and worst[0] >= Risk.HIGH:
            risk, text = worst
            which = "an observed call" if text in observed else "a call it would also allow"
            return risk, f"the static layer rates {text!r} ({which}) {risk.label}: never an allow rule"
        return (worst[0] if worst else None), None

    def _covers_workspace(self, pattern: Pattern) -> bool:
        spec = pattern.spec
        if spec.startswith("~"):
            spec = str(Path(spec).expanduser())
        if not spec.startswith("/"):
            return False  # relative to a working directory we do not know
        target = Path(spec)
        if pattern.shape == "file":
            return target == self.workspace or self.workspace in target.parents
        return target == self.workspace or target in self.workspace.parents or self.workspace in target.parents


# -- replay ------------------------------------------------------------------------------------
class Replay:
    """What a rule would have done to the history: the past calls it covers, the calls of the same
    family it leaves alone, and (allow) the target-changing variants it must not cover."""

    def __init__(self, coverage: Coverage, *sources: Iterable[Event]) -> None:
        self.coverage = coverage
        seen: dict[str, tuple[Event, int]] = {}
        for ev in sorted((e for src in sources for e in src), key=lambda e: e.ts):
            prev = seen.pop(ev.signature, None)
            seen[ev.signature] = (ev, (prev[1] if prev else 0) + 1)  # most recent last
        self.calls = list(seen.values())[-MAX_REPLAY:]
        self.truncated = max(0, len(seen) - MAX_REPLAY)

    def __call__(self, pattern: Pattern, kind: str) -> dict[str, Any]:
        rule = pattern.rule
        covered: list[tuple[str, int]] = []
        family: list[tuple[str, int]] = []
        families = set()
        for ev, n in self.calls:
            if ev.kind != pattern.kind:
                continue
            if self.coverage.covers(rule, ev.call(), action=kind):
                covered.append((ev.text, n))
                families.add(family_of(ev.signature))
        texts = {t for t, _ in covered}
        for ev, n in self.calls:
            if ev.kind == pattern.kind and ev.text not in texts and family_of(ev.signature) in families:
                family.append((ev.text, n))
        out: dict[str, Any] = {
            "covers": pattern.scope,
            "allowed" if kind == "allow" else "refused": [{"call": t, "count": n} for t, n in covered[-5:][::-1]],
            "past_calls": sum(n for _, n in covered),
            "not_covered": [{"call": t, "count": n} for t, n in family[-5:][::-1]],
        }
        if self.truncated:
            out["replayed_over"] = f"the {MAX_REPLAY} most recent distinct calls ({self.truncated} older left off)"
        if kind == "allow" and pattern.kind == "bash":
            base = pattern.spec
            probes = [f"{base} {arg}" for arg in TARGET_PROBES]
            out["variants_checked"] = len(probes)
            out["widens"] = [p for p in probes if self.coverage.covers(rule, ToolCall("Bash", {"command": p}))]
        return out
