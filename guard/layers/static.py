"""The static risk layer: judge a call from the call alone, and say why.

    layer = StaticLayer(config, workspace=Path("~/.guard"))
    verdict = layer(call, ctx)          # in the chain
    verdict = classify(call)            # without a Context
    layer.explain(call)                 # the parse, the unwrapped commands, the rules that fired

Contract with the chain: ``critical`` -> ``decision=block``; ``high`` -> ``ceiling=request_confirm``;
anything guard cannot see (unparseable, dynamic command names, too deep, too large) -> at least
``medium`` with ``ceiling=request_confirm``; read-only allowlisted calls -> ``safe`` with
``floor=auto_allow`` and the ``read_only`` tag. The heavy lifting is in :mod:`guard.static`;
this module adds the cache, user rules and the verdict shape.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from guard import docsites, pauses
from guard.config import Config
from guard.layers.base import Context
from guard.layers.data import StaticData
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM, Reason, Risk, ToolCall, Verdict
from guard.namedtuple import NamedTuple
from guard.static.analysis import DEFAULT_LIMITS, Analysis, Limits, analyse, cache_key, declared_installs, on_disk
from guard.static.budget import Budget
from guard.static.families.tools import command_text
from guard.static.rules import userrules
from guard.static.rules.catalog import CATALOG
from guard.static.rules.userrules import user_rule_matches
from guard.toolnames import canonical_tool

NAME = "static"
_MAX_REASONS = 5


class Analyser:
    """Built-in analysis with an LRU cache keyed on (tool kind, canonical params, cwd, home,
    workspace, limits). An analysis cut short by its budget is not kept: it says how busy the
    machine was, not what the call does."""

    def __init__(self, cache_size: int = 4096) -> None:
        self.cache_size = cache_size
        # least recently used first; a hit is one lookup of a plain tuple (the analysis of a
        # repeated call is most of what a warm static layer does)
        self._cache: OrderedDict[tuple[Any, ...], tuple[Analysis, Verdict]] = OrderedDict()
        # (the limits last seen, their fields): the key holds the fields, which hash in C, not
        # the attrs record, whose hash is a Python call (two a hit: the look-up and the move)
        self._limits: tuple[Limits | None, tuple[Any, ...]] = (None, ())

    def __call__(
        self,
        call: ToolCall,
        home: str,
        workspace: str | None,
        limits: Limits,
        budget: Budget | Callable[[], Budget] | None = None,
    ) -> tuple[Analysis, Verdict]:
        """The analysis and its verdict (no user rules). ``budget`` may be a function that makes
        one: it is called only when the call is analysed (not on a hit)."""
        kind = call.declared or canonical_tool(call.tool)  # (``call.kind``, without its property call)
        if kind == "bash":
            # (command_text, for the common shape first: a non-empty "command" string)
            text = call.params.get("command")
            if type(text) is not str or not text:
                text = command_text(call.params)
        else:
            text = None
        seen = self._limits
        key = (
            kind if kind in _KNOWN else call.tool.lower(),
            call.tool.lower() if call.declared else None,  # a declared tool is judged by its name too
            text if text is not None else cache_key(kind, call.params),
            call.cwd,
            home,
            workspace,
            seen[1] if seen[0] is limits else self._limits_key(limits),
        )
        cache = self._cache
        result = cache.get(key)
        if result is not None:
            try:
                cache.move_to_end(key)
            except KeyError:  # another thread's call dropped it meanwhile
                pass
        else:
            if callable(budget):
                budget = budget()
            analysis = analyse(key[0], call.tool, call.params, call.cwd, home, workspace, limits, text, budget)
            result = analysis, verdict_for(None, analysis, _NO_RULES)  # the verdict when no user rule applies
            if not analysis.over_budget and self.cache_size > 0:
                cache[key] = result
                if len(cache) > self.cache_size:
                    try:
                        cache.popitem(last=False)
                    except KeyError:  # emptied by another thread meanwhile
                        pass
        analysis, verdict = result
        if analysis.installs:  # the project's manifest is read every time: the agent edits it
            declared = declared_installs(analysis, call.cwd)
            if declared is not analysis:
                analysis, verdict = declared, verdict_for(None, declared, _NO_RULES)
        if analysis.targets:  # the disk is looked at every time: a link can appear between two calls
            checked = on_disk(analysis, home, call.cwd, workspace)
            if checked is not analysis:
                return checked, verdict_for(None, checked, _NO_RULES)
        return analysis, verdict

    def _limits_key(self, limits: Limits) -> tuple[Any, ...]:
        """The class and fields of ``limits``: equal exactly when the records are (attrs compares
        them so)."""
        fields = (type(limits), *attrs.astuple(limits, recurse=False))
        self._limits = (limits, fields)
        return fields

    def cache_clear(self) -> None:
        self._cache.clear()


class _Deadlines(NamedTuple):
    """The two deadlines ``StaticLayer.judge`` hands the layer in place of a Context."""

    deadline: float | None
    work_deadline: pauses.Work | None


_KNOWN = frozenset({"bash", "write", "edit", "read", "glob", "grep", "web_fetch"})
_NO_RULES = userrules.RuleSet()
_DEFAULT = Analyser()


def classify(
    call: ToolCall,
    home: str | None = None,
    workspace: str | Path | None = None,
    permissions: Mapping[str, Any] | None = None,
    limits: Limits = DEFAULT_LIMITS,
    budget_ms: float | None = None,
) -> Verdict:
    """The static verdict for ``call``, without a chain or a Context (``budget_ms``: a deadline;
    the step limit of ``limits`` applies either way).

    >>> classify(ToolCall("Bash", {"command": "rm -rf ~"})).decision
    'block'
    """
    home = home or os.path.expanduser("~")
    ws = _workspace(workspace)
    rules = userrules.load(permissions or {}, "permissions", None, home)
    analysis, base = _DEFAULT(call, home, ws, limits, Budget.start(budget_ms, limits.max_steps))
    return base if not rules.rules and not rules.ignored else verdict_for(call, analysis, rules)


def _workspace(workspace: str | Path | None) -> str | None:
    if workspace is None:
        return None
    return os.path.normpath(os.path.abspath(os.path.expanduser(str(workspace))))


class StaticLayer:
    """Chain layer ``static``. ``workspace`` and ``~/.guard`` are protected paths."""

    name = NAME

    def __init__(self, config: Config, workspace: Path | None = None, home: str | None = None) -> None:
        self.config = config
        self.home = os.path.normpath(home or os.path.expanduser("~"))
        self.workspace = _workspace(workspace)
        self.limits = Limits(
            int(config.get("static.max_command_bytes")),
            int(config.get("static.max_depth")),
            int(config.get("static.max_steps")),
            docsites.hosts_of(config),
        )
        self.budget_ms = float(config.get("decision.budget_ms"))
        # the analysis stops a little before the decision's deadline: the verdict and the later
        # layers still have to run (10% of the budget, at most 20 ms)
        self.reserve_s = min(0.02, self.budget_ms / 10_000)
        self.analyser = Analyser(int(config.get("static.cache_size")))
        origin = str(config.file) if config.file else "guard.toml"
        self.rules = userrules.load(config.section("permissions"), origin, None, self.home)
        self.project = userrules.ProjectRules(self.home) if config.get("static.project_rules") else None

    def __call__(self, call: ToolCall, ctx: Context | _Deadlines) -> Verdict:
        deadline, work_deadline = ctx.deadline, ctx.work_deadline
        try:
            analysis, verdict = self.analyser(
                call, self.home, self.workspace, self.limits, lambda: self._budget(deadline, work_deadline)
            )
            rules = self.rules if self.project is None else self._rules_for(call)
            if rules.rules or rules.ignored or rules.broken:
                verdict = verdict_for(call, analysis, rules)
        except Exception as exc:  # the process never crashes on input: degrade towards caution
            verdict = Verdict(
                layer=NAME,
                risk=Risk.MEDIUM,
                ceiling=REQUEST_CONFIRM,
                reasons=(
                    Reason("G195", f"The static check failed ({type(exc).__name__}); asking instead."),
                ),  # attrs converter
                error=f"{type(exc).__name__}: {exc}",
            )
        return verdict

    def judge(self, call: ToolCall, deadline: float | None = None, work_deadline: pauses.Work | None = None) -> Verdict:
        """The verdict without a Context (what the layer answers in the chain). ``deadline``
        (``time.perf_counter()`` seconds) and ``work_deadline`` (:data:`guard.pauses.Work`)
        are the chain's; without a deadline, ``decision.budget_ms`` from now."""
        return self(call, _Deadlines(deadline, work_deadline))

    def _budget(self, deadline: float | None, work: pauses.Work | None) -> Budget:
        if deadline is None:
            fresh = Budget.start(self.budget_ms)
            deadline, work = fresh.deadline, fresh.work_deadline
        if deadline is None:
            return Budget(None, self.limits.max_steps)
        reserve = self.reserve_s
        return Budget(deadline - reserve, self.limits.max_steps, pauses.sooner(work, reserve))

    def _rules_for(self, call: ToolCall) -> userrules.RuleSet:
        if self.project is None or not call.cwd:
            return self.rules
        extra = self.project.for_cwd(call.cwd)
        if not (extra.rules or extra.ignored or extra.invalid or extra.broken):
            return self.rules  # no project rule file (most folders): what adding nothing makes, not made again
        return self.rules + extra

    def explain(self, call: ToolCall) -> dict[str, Any]:
        """Everything behind the verdict: parse, unwrapped commands, effects, rules that fired."""
        from guard.static.explain import explain

        analysis, _ = self.analyser(call, self.home, self.workspace, self.limits, self._budget(None, None))
        rules = self._rules_for(call)
        return explain(call, analysis, rules, verdict_for(call, analysis, rules))


def verdict_for(call: ToolCall | None, analysis: Analysis, rules: userrules.RuleSet) -> Verdict:
    """Fold a built-in analysis and the user's rules into the layer's verdict."""
    risk, ceiling = analysis.risk, analysis.ceiling
    reasons = _reasons(analysis)
    tags = analysis.tags
    applied = user_rule_matches(call, analysis, rules) if call is not None and rules.rules else []
    if applied:
        deny = [m for m in applied if m.action == "deny"]
        ask = [m for m in applied if m.action == "ask"]
        allow = next((m for m in applied if m.action == "allow"), None)
        if deny:
            risk = Risk.CRITICAL
            reasons = [
                Reason("G190", f"{CATALOG['G190'].message} ({deny[0].rule.text} in {deny[0].rule.origin})"),
                *reasons,
            ]
        elif ask:
            risk, ceiling = max(risk, Risk.MEDIUM), True
            rule = ask[0].rule
            reasons = [Reason("G191", f"{CATALOG['G191'].message} ({rule.text} in {rule.origin})"), *reasons]
        elif allow is not None and risk <= Risk.MEDIUM and not ceiling:
            risk = Risk.SAFE
            reasons = [Reason("G192", f"{CATALOG['G192'].message} ({allow.rule.text})")]
    if rules.broken and risk is not Risk.SAFE:  # a project's deny/ask rules that cannot be read are not dropped
        risk, ceiling = max(risk, Risk.MEDIUM), True
        message = f"{rules.broken[0]} (a project's rule file): its deny and ask rules cannot be read, so this call is confirmed"
        reasons = [Reason("G005", message), *reasons]
    if risk is not Risk.SAFE and "read_only" in tags:
        tags = tags - {"read_only"}
    if rules.ignored:
        reasons.append(Reason("G193", f"{CATALOG['G193'].message} ({', '.join(rules.ignored[:3])})"))
    data = StaticData(
        tuple(c[:120] for c in analysis.commands[:8]),
        tuple(sorted({h.rule_id for h in analysis.hits})),
        analysis.lines_written,
        tuple(f"{m.action}: {m.rule.text}" for m in applied),
    )
    return Verdict(
        layer=NAME,
        risk=risk,
        decision=BLOCK if risk is Risk.CRITICAL else None,
        ceiling=REQUEST_CONFIRM if risk is Risk.HIGH or (risk is Risk.MEDIUM and ceiling) else None,
        floor=AUTO_ALLOW if risk is Risk.SAFE else None,
        reasons=tuple(reasons),  # attrs converters: mypy cannot solve them
        tags=tags,
        data=data,
    )


def _reasons(analysis: Analysis) -> list[Reason]:
    hits = analysis.hits
    if len(hits) == 1:  # the common case: one finding
        h = hits[0]
        rule = CATALOG[h.rule_id]
        return [Reason(h.rule_id, f"{rule.message} ({h.detail})" if h.detail else rule.message, rule.alternative)]
    ranked = sorted(hits, key=lambda h: -CATALOG[h.rule_id].risk)
    top = CATALOG[ranked[0].rule_id].risk if ranked else Risk.SAFE
    floor = Risk.MEDIUM if top >= Risk.MEDIUM else top
    out: list[Reason] = []
    seen: set[str] = set()
    for h in ranked:
        rule = CATALOG[h.rule_id]
        if rule.risk < floor or h.rule_id in seen:
            continue
        seen.add(h.rule_id)
        message = f"{rule.message} ({h.detail})" if h.detail else rule.message
        out.append(Reason(h.rule_id, message, rule.alternative))
        if len(out) >= _MAX_REASONS:
            break
    return out
