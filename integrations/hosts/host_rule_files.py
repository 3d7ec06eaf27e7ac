"""The hosts' permission-rule files, read into the static layer's rules (:mod:`guard.static.rules.userrules`).

One reader per file format, chosen by ``RuleFile.dialect``; each returns the rules it found
and raises ``ValueError`` (or a parse error) for a file it cannot read, which
:mod:`guard.integrations.hosts.host_rules` skips with one warning:

- ``claude``: a Claude Code ``settings.json``'s ``permissions`` object;
- ``codex``: Codex's ``prefix_rule(...)`` calls (Starlark, read as literals only);
- ``gemini-policy``: Gemini CLI's policy engine ``[[rule]]`` tables;
- ``gemini-settings``: Gemini CLI's ``tools.allowed`` / ``tools.exclude``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import attrs

from guard.static.rules import userrules


@attrs.frozen
class RuleFile:
    """One host settings file: ``label`` for people (``Claude Code project settings``), ``base``
    the directory ``/path`` rules are relative to, ``project``: may change mid-session."""

    label: str
    path: str
    base: str | None
    project: bool = False
    dialect: str = "claude"  # claude: a settings.json ``permissions`` object; codex: ``prefix_rule(...)``


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


READERS: dict[str, Callable[[bytes, RuleFile, str], list[userrules.Permission]]] = {
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
