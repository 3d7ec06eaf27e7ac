"""What a rule covers, as the static layer reads it.

Learned rules act only through the static layer's ``[permissions]`` matcher
(:mod:`guard.static.rules.userrules`), so "does this rule cover that call" is asked of that matcher
and not re-implemented here. ``guard report`` counts the calls a rule really covered, and
``guard rules suggest`` drops a pattern whose rule would not cover the calls it was learned from.

    coverage = Coverage()
    coverage.covers("Bash(npm run test:*)", ToolCall("Bash", {"command": "npm run test -x"}))  # True
    coverage.covers("Bash(npm run test:*)", ToolCall("Bash", {"command": "npm run testing"}))  # False

What the static layer reads into a rule (``docs/static-rules.md``): ``Bash(p:*)`` covers ``p``
followed by nothing, a space or ``:`` in every top-level command (``npm run test:unit``,
``FOO=1 npm run test``, ``npm run test && npm run test -x``); ``Write(...)`` and ``Edit(...)``
cover every file-editing tool; ``Read(...)`` also covers Glob and Grep; ``dir/**`` is relative
to the call's working directory; ``WebFetch(domain:d)`` covers ``d`` and its subdomains.
"""

from __future__ import annotations

import os

from guard.layers.static import Analyser
from guard.model import ToolCall
from guard.static.analysis import DEFAULT_LIMITS
from guard.static.rules import userrules
from guard.static.rules.userrules import user_rule_matches

ORIGIN = "guard rules"


class Coverage:
    """The static layer's matcher for single rules; analyses are cached per call."""

    def __init__(self, home: str | None = None, cache_size: int = 4096) -> None:
        self.home = os.path.normpath(home or os.path.expanduser("~"))
        self._analyser = Analyser(cache_size)
        self._rules: dict[tuple[str, str], userrules.RuleSet] = {}

    def covers(self, rule: str, call: ToolCall, action: str = "allow") -> bool:
        """Whether ``rule``, written in ``[permissions]`` under ``action``, applies to ``call``.

        An allow rule must cover every part of the call (the static layer's ``covers``); a deny
        or ask rule applies when it matches any part (``matches``). A text the static layer does
        not read as a rule covers nothing.
        """
        rules = self._ruleset(rule, action)
        if not rules.rules:
            return False
        analysis, _ = self._analyser(call, self.home, None, DEFAULT_LIMITS)
        return any(m.action == action for m in user_rule_matches(call, analysis, rules))

    def _ruleset(self, rule: str, action: str) -> userrules.RuleSet:
        key = (action, rule)
        cached = self._rules.get(key)
        if cached is None:
            cached = self._rules[key] = userrules.load({action: [rule]}, ORIGIN, None, self.home)
        return cached


_DEFAULT: dict[str, Coverage] = {}


def rule_covers(rule: str, call: ToolCall, action: str = "allow") -> bool:
    """:meth:`Coverage.covers` with a shared instance for the current home directory."""
    home = os.path.normpath(os.path.expanduser("~"))
    coverage = _DEFAULT.get(home)
    if coverage is None:
        coverage = _DEFAULT[home] = Coverage(home)
    return coverage.covers(rule, call, action)
