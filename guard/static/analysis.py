"""One call in, one :class:`Analysis` out: the built-in judgement, before user rules.

Pure and cached: the same (tool kind, parameters, working directory, home, workspace) always
gives the same analysis, so repeats cost a dictionary lookup. User rules are applied on top by
the layer, uncached, because their files can change between calls.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import attrs

from guard.model import Risk
from guard.static import oversized
from guard.static.budget import DEFAULT_STEPS, Budget, OverBudget
from guard.static.facts import ondisk
from guard.static.facts.paths import Resolver
from guard.static.families import prod, tools
from guard.static.rules.catalog import CATALOG
from guard.static.scan import EMPTY, Hit, Scan
from guard.static.shell.engine import Engine
from guard.toolnames import canonical_tool

MAX_BYTES = 64 * 1024
MAX_DEPTH = 10


@attrs.frozen
class Analysis:
    kind: str
    risk: Risk
    hits: tuple[Hit, ...]
    tags: frozenset[str]
    commands: tuple[str, ...] = ()
    segments: tuple[str, ...] = ()
    effects: tuple[tuple[str, str], ...] = ()
    urls: tuple[str, ...] = ()
    ceiling: bool = False
    lines_written: int | None = None
    text: str | None = None  # the shell command judged, for ``guard explain``
    targets: tuple[tuple[str, str], ...] = ()  # what the call writes, as spelled: checked on disk per decision
    installs: tuple[tuple[str, tuple[str, ...]], ...] = ()  # named installs (G183), checked against the manifest
    over_budget: str = ""  # why the analysis stopped early (G420); such an analysis is never cached


@attrs.frozen(cache_hash=True)  # part of every static cache key: hashed once
class Limits:
    max_bytes: int = MAX_BYTES
    max_depth: int = MAX_DEPTH
    max_steps: int = DEFAULT_STEPS
    docs_hosts: frozenset[str] | None = None  # None: guard.docsites' defaults


DEFAULT_LIMITS = Limits()


@lru_cache(maxsize=256)
def resolver(home: str, project: str | None, workspace: str | None) -> Resolver:
    return Resolver(home, project, workspace)


def analyse(
    kind: str,
    tool: str,
    params: Mapping[str, Any],
    cwd: str | None,
    home: str,
    workspace: str | None,
    limits: Limits = DEFAULT_LIMITS,
    text: str | None = None,
    budget: Budget | None = None,
) -> Analysis:
    """Judge one call; ``kind`` is the canonical tool kind (``bash``, ``write`` …); ``text`` is the
    shell command when the caller already took it out of ``params``; ``budget`` bounds the work
    (see :mod:`guard.static.budget`; default: the step limit, no deadline)."""
    if budget is None:
        budget = Budget(None, limits.max_steps)
    scan = Scan(resolver(home, cwd, workspace), cwd, limits.max_depth, budget)
    scan.docs_hosts = limits.docs_hosts
    engine = Engine(scan)
    lines: int | None = None
    try:
        if kind == "bash":
            scan.tty = params.get("tty") is True
            if text is None:
                text = tools.command_text(params)
            if text is None:
                scan.hit("G195", "no command given")
            else:
                size = len(text) if text.isascii() else len(text.encode("utf-8", "replace"))
                if size > limits.max_bytes:  # not read in full: a cheap look for what is plainly critical
                    scan.hit("G198", f"{size} bytes")
                    oversized.glance(engine, text)
                elif (ops := oversized.operators(text)) > oversized.MAX_OPERATORS:
                    scan.hit("G420", f"{ops} shell operators: more than can be parsed in time")
                    oversized.glance(engine, text)
                else:
                    engine.top(text, EMPTY)
                    prod.raise_on_production(scan, text)  # ``RAILS_ENV=production rails db:drop``: G434
                if not scan.hits:
                    scan.hit("G180", "empty command")
        elif kind in ("write", "edit"):
            lines = tools.judge_write(scan, params)
        elif kind == "read":
            tools.judge_read(scan, params, content=True)
        elif kind in ("glob", "grep"):
            tools.judge_read(scan, params, content=kind == "grep")
        elif kind == "web_fetch":
            tools.judge_fetch(scan, params)
        else:
            lines = tools.judge_unknown(scan, tool, params)
        if kind not in ("bash", canonical_tool(tool)):  # declared (``@guarded(kind="read")``): never lifts a block
            tools.judge_declared(scan, kind, params)
    except OverBudget as exc:  # what was found so far stands (a block stays a block); the rest is unknown
        scan.hit("G420", exc.why)
        return attrs.evolve(finish(scan, kind, lines, text), over_budget=exc.why)
    return finish(scan, kind, lines, text)


def finish(scan: Scan, kind: str, lines: int | None = None, text: str | None = None) -> Analysis:
    if scan.netdev and scan.shell_stdin:
        scan.hit("G144", "a shell wired to a /dev/tcp socket")
    hits = _dedupe(scan.hits) if len(scan.hits) > 1 else tuple(scan.hits)
    risk, ceiling, read_only = Risk.SAFE, False, True
    tags = scan.tags
    for h in hits:
        rule = CATALOG[h.rule_id]
        if rule.risk > risk:
            risk = rule.risk
        if rule.ceiling:
            ceiling = True
        if read_only and h.rule_id != "G180" and h.rule_id != "G193":
            read_only = False
        if rule.tags:
            tags |= rule.tags  # the scan is finished: its own set can take the rule tags
    if risk is Risk.SAFE and read_only:
        tags.add("read_only")
    return Analysis(  # (in field order, not by keyword: the keywords cost a fifth of the record)
        kind,
        risk,
        hits,
        frozenset(tags),
        tuple(scan.commands),
        tuple(scan.segments),
        tuple(dict.fromkeys(scan.effects)) if scan.effects else (),
        tuple(scan.urls),
        ceiling,
        lines,
        text,
        tuple(dict.fromkeys(scan.targets)) if scan.targets else (),
        tuple(scan.installs),
    )


def amend(analysis: Analysis, extra: list[Hit]) -> Analysis:
    """``analysis`` with findings made outside the pure analysis (the check on disk) folded in."""
    risk, ceiling, tags = analysis.risk, analysis.ceiling, set(analysis.tags)
    for h in extra:
        rule = CATALOG[h.rule_id]
        risk, ceiling = max(risk, rule.risk), ceiling or rule.ceiling
        tags |= rule.tags
    if risk is not Risk.SAFE:
        tags.discard("read_only")
    hits = _dedupe([*analysis.hits, *extra])
    return attrs.evolve(analysis, risk=risk, hits=hits, tags=frozenset(tags), ceiling=ceiling)


def on_disk(analysis: Analysis, home: str, cwd: str | None, workspace: str | None) -> Analysis:
    """Where the call's targets really lead, looked at now (never cached: the disk changes)."""
    if not analysis.targets:
        return analysis
    found = ondisk.check(analysis.targets, resolver(home, cwd, workspace), cwd)
    hits = [Hit(rule_id, detail[:160], "guard.static.facts.ondisk:check") for rule_id, detail in found]
    return amend(analysis, hits) if found else analysis


def declared_installs(analysis: Analysis, cwd: str | None) -> Analysis:
    """Named installs of packages the project already declares are low (G451), looked at now.

    The manifest is read when the call is decided (never cached with the analysis: it changes
    as the agent works); one name it does not declare keeps every G183.
    """
    if not analysis.installs:
        return analysis
    from guard.static.families import deps  # (only a call that installs packages reads a manifest)

    if any(deps.undeclared(eco, names, cwd) for eco, names in analysis.installs):
        return analysis
    hits = tuple(Hit("G451", h.detail) if h.rule_id == "G183" else h for h in analysis.hits)
    risk = max((CATALOG[h.rule_id].risk for h in hits), default=Risk.SAFE)
    return attrs.evolve(analysis, risk=risk, hits=hits)


def _dedupe(hits: list[Hit]) -> tuple[Hit, ...]:
    seen: dict[tuple[str, str], Hit] = {}
    for h in hits:
        seen.setdefault((h.rule_id, h.detail), h)
    return tuple(seen.values())


def cache_key(kind: str, params: Mapping[str, Any]) -> str | tuple[tuple[str, str | int], ...]:
    """Canonical parameters: the command for the shell, sorted JSON for everything else.

    A plain dict of text and whole numbers (most tool calls: a path, a body, a title) is its
    sorted items instead: equal exactly when the JSON would be (no bool, no float: ``True == 1``
    and ``1 == 1.0`` would be, their JSON is not), and never equal to a JSON text.
    """
    if kind == "bash":
        text = tools.command_text(params)
        if text is not None:
            return text
    if type(params) is dict:
        for k, v in params.items():
            if type(k) is not str or (type(v) is not str and type(v) is not int):
                break
        else:
            return tuple(sorted(params.items()))
    try:
        return json.dumps(params, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(sorted(params.items(), key=lambda kv: str(kv[0])))
