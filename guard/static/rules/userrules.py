"""User rules in the style people know from Claude Code: ``allow``/``ask``/``deny`` lists of ``Tool(specifier)``.

::

    [permissions]
    allow = ["Bash(npm run test:*)", "Read(./docs/**)"]
    ask   = ["Bash(git push:*)", "WebFetch(domain:example.com)"]
    deny  = ["Write(~/.ssh/**)", "Read(./secrets/**)", "mcp__github__delete_*"]

Deny wins over ask, ask over allow. ``Bash`` specifiers match every command guard unwrapped
(``sudo rm …`` is also ``rm …``); path specifiers match what the call touches, tools and shell
alike, so ``Read(.env)`` also covers ``cat .env`` and ``Edit(~/.ssh/**)`` also covers
``echo … >> ~/.ssh/authorized_keys``. An allow only lowers a call whose built-in judgement is
medium or below and that guard could fully see; it never overrides a high or critical finding.

A project may add ``.guard.toml`` (in the call's working directory or its git root) with ``deny``
and ``ask`` entries; its ``allow`` entries are ignored, because a repository must not be able to
loosen the guard that protects its reader. Files are re-read only when their mtime changes.
"""

from __future__ import annotations

import fnmatch
import os
import re
import threading
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

import attrs

from guard import lazyre
from guard.model import ToolCall
from guard.namedtuple import NamedTuple
from guard.static.facts.hosts import host_of
from guard.toolnames import canonical_tool

_RULE_RE = lazyre.compile(r"^\s*([A-Za-z0-9_.*\-]+)\s*(?:\((.*)\))?\s*$", re.S)
_PATH_TOOLS = {
    "read": "read",
    "edit": "write",
    "write": "write",
    "glob": "read",
    "grep": "read",
    "notebookedit": "write",
    "multiedit": "write",
}
ACTIONS = ("deny", "ask", "allow")


@attrs.frozen
class Permission:
    """One user rule: where it came from, what it matches."""

    text: str
    action: str
    kind: str  # bash | read | write | web_fetch | tool
    tool_glob: str
    pattern: re.Pattern[str] | None = None
    alt_pattern: re.Pattern[str] | None = None  # deny/ask: ``/x`` is also tried as an absolute path
    relative: str | None = None  # a glob relative to the call's working directory (``./src/**``)
    domain: str | None = None
    origin: str = "guard.toml"


def parse(text: str, action: str, origin: str, base: str | None, home: str) -> Permission | None:
    """``parse("Bash(npm run test:*)", "allow", …)``; ``None`` for text that is not a rule."""
    m = _RULE_RE.match(text or "")
    if not m:
        return None
    name, spec = m.group(1), m.group(2)
    lowered = name.lower()
    canonical = canonical_tool(lowered)
    if lowered in _PATH_TOOLS or canonical in ("read", "write", "edit", "glob", "grep"):
        kind = _PATH_TOOLS.get(lowered, "write" if canonical in ("write", "edit") else "read")
    elif canonical == "bash":
        kind = "bash"
    elif canonical == "web_fetch":
        kind = "web_fetch"
    else:
        kind = "tool"
    if spec is None or spec.strip() in ("", "*"):
        return Permission(text, action, kind, lowered if kind == "tool" else "*", origin=origin)
    spec = spec.strip()
    if kind == "bash":
        return Permission(text, action, kind, "*", pattern=_command_regex(spec), origin=origin)
    if kind == "web_fetch":
        domain = spec.split(":", 1)[1].strip().lower() if spec.startswith("domain:") else spec.lower()
        return Permission(text, action, kind, "*", domain=domain, origin=origin)
    if kind == "tool":
        return Permission(text, action, kind, lowered, pattern=re.compile(fnmatch.translate(spec)), origin=origin)
    primary, relative, alternative = _path_regexes(spec, base, home)
    return Permission(
        text,
        action,
        kind,
        "*",
        pattern=primary,
        relative=relative,
        alt_pattern=alternative if action != "allow" else None,
        origin=origin,
    )


def _command_regex(spec: str) -> re.Pattern[str]:
    spec = " ".join(spec.split())
    if spec.endswith(":*"):
        return re.compile(re.escape(spec[:-2]) + r"(?:[\s:].*)?", re.S)
    return re.compile(".*".join(re.escape(part) for part in spec.split("*")), re.S)


def _glob_regex(glob: str) -> str:
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("(?:/.*)?")
            i += 3
        elif glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)


def _path_regexes(
    spec: str, base: str | None, home: str
) -> tuple[re.Pattern[str] | None, str | None, re.Pattern[str] | None]:
    """Gitignore-style paths as Claude Code reads them: ``//abs``, ``~/…``, ``/…`` (config dir), ``./…``, ``name``.

    Returns (absolute pattern, glob relative to the working directory, absolute reading of ``/…``).
    """
    if spec.startswith("//"):
        return re.compile(_glob_regex(spec[1:])), None, None
    if spec.startswith("~/") or spec == "~":
        return re.compile(_glob_regex(home + spec[1:])), None, None
    if spec.startswith("/"):
        absolute = re.compile(_glob_regex(spec))
        if base:
            return re.compile(_glob_regex(base.rstrip("/") + spec)), None, absolute
        return None, spec[1:], absolute
    rel = spec[2:] if spec.startswith("./") else spec
    if "/" not in rel.rstrip("/"):
        return re.compile("(?:.*/)?" + _glob_regex(rel) + "(?:/.*)?"), None, None  # a bare name matches at any depth
    return None, rel, None


@lru_cache(maxsize=512)
def _compiled(glob: str) -> re.Pattern[str]:
    return re.compile(_glob_regex(glob))


class Match(NamedTuple):
    action: str
    rule: Permission


def _tool_matches(rule: Permission, tool: str) -> bool:
    return fnmatch.fnmatchcase(tool.lower(), rule.tool_glob)


def _path_matches(rule: Permission, path: str, cwd: str | None) -> bool:
    for pattern in (rule.pattern, rule.alt_pattern):
        if pattern is not None and pattern.fullmatch(path):
            return True
    if rule.relative is None:
        return False
    if path.startswith("/"):
        return bool(cwd and cwd.startswith("/") and _compiled(cwd.rstrip("/") + "/" + rule.relative).fullmatch(path))
    return bool(_compiled(rule.relative).fullmatch(path[2:] if path.startswith("./") else path))


def matches(
    rule: Permission, kind: str, tool: str, analysis: Any, paths: Iterable[tuple[str, str]], cwd: str | None
) -> bool:
    """Does ``rule`` apply to any part of the call (deny and ask)?"""
    if rule.kind == "tool":
        return (
            kind not in ("bash", "read", "write", "edit", "glob", "grep", "web_fetch")
            and _tool_matches(rule, tool)
            and (rule.pattern is None or any(rule.pattern.match(str(v)) for v in paths))
        )
    if rule.kind == "bash":
        if rule.pattern is None:
            return kind == "bash"
        return any(rule.pattern.fullmatch(c) for c in (*analysis.segments, *analysis.commands))
    if rule.kind == "web_fetch":
        return _domain_hit(rule, kind, analysis.urls)
    if rule.pattern is None and rule.relative is None:
        return kind in (("read", "glob", "grep") if rule.kind == "read" else ("write", "edit"))
    wanted = "read" if rule.kind == "read" else "write"
    return any(effect == wanted and _path_matches(rule, path, cwd) for effect, path in paths)


def covers(
    rules: list[Permission], kind: str, tool: str, analysis: Any, paths: list[tuple[str, str]], cwd: str | None
) -> Permission | None:
    """An allow rule set covers a call only when *every* part of it is allowed."""
    if not rules:
        return None
    if kind == "bash":
        bare = next((r for r in rules if r.kind == "bash" and r.pattern is None), None)
        if bare is not None:
            return bare
        if not _plain_for_allow(analysis, cwd):
            return None
        segments = analysis.segments or ()
        hit = None
        for segment in segments:
            hit = next(
                (r for r in rules if r.kind == "bash" and r.pattern is not None and r.pattern.fullmatch(segment)), None
            )
            if hit is None:
                return None
        return hit
    if kind == "web_fetch":
        return next(
            (r for r in rules if r.kind == "web_fetch" and _domain_hit(r, kind, analysis.urls, every=True)), None
        )
    if kind in ("read", "glob", "grep", "write", "edit"):
        wanted = "read" if kind in ("read", "glob", "grep") else "write"
        own = [r for r in rules if r.kind == wanted]
        touched = [p for e, p in paths if e == wanted] or ["."]
        for r in own:
            if (r.pattern is None and r.relative is None) or all(_path_matches(r, p, cwd) for p in touched):
                return r
        return None
    return next((r for r in rules if r.kind == "tool" and _tool_matches(r, tool)), None)


_ASSIGNMENT = lazyre.compile(r"(?:^|[;&|(`]|\$\()\s*(?:export\s+|env\s+)?[A-Za-z_][A-Za-z0-9_]*=")


def user_rule_matches(call: ToolCall, analysis: Any, rules: RuleSet) -> list[Match]:
    """The user rules that decide ``call`` (its static ``analysis``): deny and ask first, else the allow."""
    if not rules.rules:
        return []
    kind, tool, cwd = analysis.kind, call.tool, call.cwd
    effects = list(analysis.effects)
    out = [
        Match(r.action, r)
        for r in rules.rules
        if r.action != "allow" and matches(r, kind, tool, analysis, effects, cwd)
    ]
    if not out:
        allowed = covers(rules.by_action("allow"), kind, tool, analysis, effects, cwd)
        if allowed is not None:
            out.append(Match("allow", allowed))
    out.sort(key=lambda m: ACTIONS.index(m.action))
    return out


def _plain_for_allow(analysis: Any, cwd: str | None) -> bool:
    """An allow rule names a command, not what surrounds it.

    ``Bash(npm run test:*)`` must not cover ``npm run test > ../x.txt`` (a write outside the
    project) nor ``NODE_OPTIONS=--require=/tmp/e.js npm run test`` (an environment that
    changes what runs): such calls are judged on their own, as if no rule matched.
    """
    text = getattr(analysis, "text", None) or ""
    if _ASSIGNMENT.search(text):
        return False
    base = os.path.realpath(cwd or os.getcwd())
    for effect, path in getattr(analysis, "effects", ()):
        if effect != "write" or path.startswith("/dev/"):
            continue
        full = os.path.normpath(path if os.path.isabs(path) else os.path.join(base, path))
        if not (full == base or full.startswith(base + os.sep)):
            return False
    return True


def _domain_hit(rule: Permission, kind: str, urls: Iterable[str], every: bool = False) -> bool:
    if rule.domain is None:
        return kind == "web_fetch"
    hosts = [host_of(u if "://" in u else "https://" + u) for u in urls]
    ok = [h == rule.domain or h.endswith("." + rule.domain) for h in hosts]
    return bool(ok) and (all(ok) if every else any(ok))


@attrs.frozen
class RuleSet:
    rules: tuple[Permission, ...] = ()
    ignored: tuple[str, ...] = ()  # project-local allow entries that were not applied
    invalid: tuple[str, ...] = ()
    broken: tuple[str, ...] = ()  # ``path:line:col: message`` of rule files that do not parse

    def by_action(self, action: str) -> list[Permission]:
        return [r for r in self.rules if r.action == action]

    def __add__(self, other: RuleSet) -> RuleSet:
        return RuleSet(
            self.rules + other.rules,
            self.ignored + other.ignored,
            self.invalid + other.invalid,
            self.broken + other.broken,
        )


def load(section: Mapping[str, Any], origin: str, base: str | None, home: str, tighten_only: bool = False) -> RuleSet:
    rules, ignored, invalid = [], [], []
    for action in ACTIONS:
        entries = section.get(action, ())
        if isinstance(entries, str):
            entries = [entries]
        if not isinstance(entries, (list, tuple)):
            invalid.append(f"{origin}: permissions.{action} is not a list")
            continue
        for text in entries:
            if tighten_only and action == "allow":
                ignored.append(str(text))
                continue
            rule = parse(str(text), action, origin, base, home) if isinstance(text, str) else None
            if rule is None:
                invalid.append(f"{origin}: {text!r} is not a rule like Bash(npm test:*) or Read(./secrets/**)")
            else:
                rules.append(rule)
    return RuleSet(tuple(rules), tuple(ignored), tuple(invalid))


PROJECT_FILE = ".guard.toml"


class ProjectRules:
    """Finds and caches ``.guard.toml`` next to the call's working directory or at its git root."""

    def __init__(self, home: str, max_entries: int = 256) -> None:
        self.home = home
        self._roots: dict[str, tuple[str, ...]] = {}
        self._files: dict[str, tuple[int, RuleSet]] = {}
        self._lock = threading.Lock()
        self._max = max_entries

    def for_cwd(self, cwd: str | None) -> RuleSet:
        if not cwd or not cwd.startswith("/"):
            return RuleSet()
        out = RuleSet()
        for directory in self._candidates(cwd):
            out = out + self._file(os.path.join(directory, PROJECT_FILE), directory)
        return out

    def _candidates(self, cwd: str) -> tuple[str, ...]:
        cached = self._roots.get(cwd)
        if cached is not None:
            return cached
        found = [cwd]
        probe = cwd
        for _ in range(32):
            if os.path.exists(os.path.join(probe, ".git")):
                if probe != cwd:
                    found.append(probe)
                break
            parent = os.path.dirname(probe)
            if parent == probe:
                break
            probe = parent
        with self._lock:
            if len(self._roots) >= self._max:
                self._roots.clear()
            self._roots[cwd] = tuple(found)
        return tuple(found)

    def _file(self, path: str, directory: str) -> RuleSet:
        try:
            mtime = os.stat(path).st_mtime_ns
        except OSError:
            return RuleSet()
        cached = self._files.get(path)
        if cached is not None and cached[0] == mtime:
            return cached[1]
        from pathlib import Path

        from guard.configfile import parse as parse_toml  # only when a project file exists

        data, problem, _ = parse_toml(Path(path))
        if problem is not None:  # its deny and ask rules are unknown: the static layer confirms instead
            where = f"{problem.path}:{problem.line}:{problem.col}: {problem.message}"
            rules = RuleSet(invalid=(f"{path}: cannot read ({problem.message})",), broken=(where,))
        else:
            section = data.get("permissions", {})
            rules = load(section if isinstance(section, Mapping) else {}, path, directory, self.home, tighten_only=True)
        with self._lock:
            if len(self._files) >= self._max:
                self._files.clear()
            self._files[path] = (mtime, rules)
        return rules
