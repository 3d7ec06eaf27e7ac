"""The person's settled answers in the host: its allow / ask / deny rules count as their preference.

A host that keeps permission rules (Claude Code's ``permissions`` in its settings files, where
"Yes, don't ask again" lands too; Codex's ``prefix_rule`` files in ``~/.codex/rules/``, where
its "always allow" lands; Gemini CLI's ``tools.allowed`` / ``tools.exclude`` and policy files)
names the files through ``Host.rule_files``; this module
reads them with the static layer's own matcher (:mod:`guard.static.userrules`: Claude Code's
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

import json
import os
import re
import sys
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import attrs

from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM, DecisionRecord, Reason, Risk, Verdict
from guard.static import userrules

if TYPE_CHECKING:
    from guard.core import Guard
    from integrations.hosts.base import Event, Host

LAYER = "host_rules"
_MAX_FILES = 256


@attrs.frozen
class RuleFile:
    """One host settings file: ``label`` for people (``Claude Code project settings``), ``base``
    the directory ``/path`` rules are relative to, ``project``: may change mid-session."""

    label: str
    path: str
    base: str | None
    project: bool = False
    dialect: str = "claude"  # claude: a settings.json ``permissions`` object; codex: ``prefix_rule(...)``


@attrs.frozen
class Loaded:
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
        rules = _READERS[f.dialect](data, f, home)
    except (OSError, ValueError, SyntaxError, RecursionError, AttributeError, TypeError) as exc:
        return Loaded(userrules.RuleSet(), f"{f.path} is unreadable ({exc}); its permission rules are ignored")
    return Loaded(userrules.RuleSet(tuple(rules)))


def claude_rules(data: bytes, f: RuleFile, home: str) -> list[userrules.Permission]:
    """The rules of a Claude Code settings file's ``permissions`` object, as the static layer reads them."""
    doc = json.loads(data.decode("utf-8"))
    if not isinstance(doc, dict):
        raise ValueError("the file is not a JSON object")
    section = doc.get("permissions", {})
    if not isinstance(section, dict):
        raise ValueError("'permissions' is not an object")
    origin = f"{f.label} {f.path}"
    rules: list[userrules.Permission] = []
    for action in userrules.ACTIONS:
        entries = section.get(action)
        for text in entries if isinstance(entries, list) else []:
            rule = userrules.parse(_host_form(text), action, origin, f.base, home) if isinstance(text, str) else None
            if rule is not None:
                rules.append(attrs.evolve(rule, text=text))
    return rules


_CODEX_DECISIONS = {"allow": "allow", "prompt": "ask", "forbidden": "deny"}
_MAX_ALTERNATIVES = 64


def codex_rules(data: bytes, f: RuleFile, home: str) -> list[userrules.Permission]:
    """Codex's ``prefix_rule(pattern=[...], decision=...)`` calls (Starlark, read as literals only).

    A pattern is a token prefix (an element may be a list of alternatives); ``decision``
    defaults to allow; ``prompt`` is guard's ask and ``forbidden`` its deny. The prefix matches
    whole tokens: ``["gh", "pr", "view"]`` covers ``gh pr view 7`` but not ``gh pr viewer``.
    """
    import ast
    import itertools

    tree = ast.parse(data.decode("utf-8"), f.path)
    origin = f"{f.label} {f.path}"
    rules: list[userrules.Permission] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "prefix_rule"):
            continue
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        pattern = ast.literal_eval(kw["pattern"]) if "pattern" in kw else None
        decision = ast.literal_eval(kw["decision"]) if "decision" in kw else "allow"
        if not isinstance(pattern, list) or not pattern or decision not in _CODEX_DECISIONS:
            raise ValueError(f"line {node.lineno}: prefix_rule needs a pattern list and a known decision")
        choices = [p if isinstance(p, list) else [p] for p in pattern]
        if not all(isinstance(t, str) and t for c in choices for t in c):
            raise ValueError(f"line {node.lineno}: prefix_rule pattern tokens must be strings")
        text = f"prefix_rule(pattern={json.dumps(pattern)}, decision={json.dumps(decision)})"
        for tokens in itertools.islice(itertools.product(*choices), _MAX_ALTERNATIVES):
            regex = re.compile(re.escape(" ".join(tokens)) + r"(?:\s.*)?", re.S)
            rules.append(
                userrules.Permission(text, _CODEX_DECISIONS[decision], "bash", "*", pattern=regex, origin=origin)
            )
    return rules


_GEMINI_DECISIONS = {"allow": "allow", "ask_user": "ask", "deny": "deny"}
_GEMINI_SHELL = ("run_shell_command", "shelltool")


def gemini_policy(data: bytes, f: RuleFile, home: str) -> list[userrules.Permission]:
    """Gemini CLI policy files (``[[rule]]`` with ``toolName``, ``commandPrefix``, ``decision``).

    ``priority`` is not read: guard applies deny over ask over allow, which is never more
    permissive than a priority order. ``commandPrefix`` is a plain string prefix for deny and
    ask (as Gemini reads it); an allow covers the prefix at a word boundary only. Rules guard
    cannot read exactly (``argsPattern``, ``commandRegex``, ``mcpName``, ``modes``) count when
    they deny or ask with a tool name alone and are skipped when they allow.
    """
    import tomllib

    doc = tomllib.loads(data.decode("utf-8"))
    entries = doc.get("rule", [])
    if not isinstance(entries, list):
        raise ValueError("'rule' is not an array of tables")
    origin = f"{f.label} {f.path}"
    rules: list[userrules.Permission] = []
    for n, entry in enumerate(entries, 1):
        decision = entry.get("decision") if isinstance(entry, dict) else None
        if decision not in _GEMINI_DECISIONS:
            raise ValueError(f"rule {n}: decision must be allow, ask_user or deny")
        action = _GEMINI_DECISIONS[decision]
        inexact = any(k in entry for k in ("argsPattern", "commandRegex", "mcpName", "modes"))
        if inexact and action == "allow":
            continue
        tools = _strings(entry.get("toolName", "run_shell_command" if "commandPrefix" in entry else None))
        prefixes = _strings(entry.get("commandPrefix"))
        text = f"[[rule]] {n}: " + ", ".join(
            f"{k} = {json.dumps(entry[k])}" for k in ("toolName", "commandPrefix", "decision") if k in entry
        )
        for tool in tools:
            if tool.lower() in _GEMINI_SHELL and prefixes:
                for prefix in prefixes:
                    tail = r".*" if action != "allow" or prefix.endswith(" ") else r"(?:\s.*)?"
                    regex = re.compile(re.escape(prefix) + tail, re.S)
                    rules.append(userrules.Permission(text, action, "bash", "*", pattern=regex, origin=origin))
            elif tool != "*" or action != "allow":
                rule = userrules.parse(tool, action, origin, f.base, home)
                if rule is not None:
                    rules.append(attrs.evolve(rule, text=text))
    return rules


def gemini_settings(data: bytes, f: RuleFile, home: str) -> list[userrules.Permission]:
    """Gemini CLI ``settings.json``: ``tools.allowed`` (run without asking) and ``tools.exclude``
    (never offered), entries like ``run_shell_command(git status)``: a command prefix at a word boundary."""
    doc = json.loads(data.decode("utf-8"))
    if not isinstance(doc, dict):
        raise ValueError("the file is not a JSON object")
    tools = doc.get("tools", {})
    tools = tools if isinstance(tools, dict) else {}
    origin = f"{f.label} {f.path}"
    rules: list[userrules.Permission] = []
    for key, action in (("allowed", "allow"), ("exclude", "deny")):
        for text in _strings(tools.get(key)):
            m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*(?:\((.*)\))?\s*", text, re.S)
            if m is None:
                continue
            name, spec = m.group(1), m.group(2)
            if name.lower() in _GEMINI_SHELL:
                form = f"Bash({spec.strip()}:*)" if spec and spec.strip() else "Bash"
            else:
                form = name if spec is None else f"{name}({spec})"
            rule = userrules.parse(form, action, origin, f.base, home)
            if rule is not None:
                rules.append(attrs.evolve(rule, text=f"tools.{key}: {text}"))
    return rules


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


_READERS: dict[str, Callable[[bytes, RuleFile, str], list[userrules.Permission]]] = {
    "claude": claude_rules,
    "codex": codex_rules,
    "gemini-policy": gemini_policy,
    "gemini-settings": gemini_settings,
}


def _host_form(text: str) -> str:
    """Claude Code spellings the static matcher reads differently: ``Bash(npm *)`` (one trailing
    `` *``: ``npm`` alone too, at a word boundary) is ``Bash(npm:*)``; a server name
    ``mcp__github`` covers every tool of that server."""
    t = text.strip()
    if t.startswith("mcp__") and "(" not in t and t.count("__") == 1:
        return t + "__*"
    if t.endswith(" *)") and t.count("*") == 1 and "(" in t:
        return t[:-3].rstrip() + ":*)"
    return t


# -- applying them to a decision ---------------------------------------------------------------------
def preference(host: Host, event: Event, guard: Guard) -> Callable[[DecisionRecord], DecisionRecord] | None:
    """What ``Guard.decide`` applies to its record for this event (None: the host keeps no rules)."""
    static = guard.chain.layers[0] if guard.chain.layers else None
    if static is None or getattr(static, "name", "") != "static" or not hasattr(static, "analyser"):
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
    from guard.layers.static import user_rule_matches
    from guard.static.budget import Budget

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
