"""Session behavior: the second layer judges the session, not the call.

    events (tracker.py, session.py) → signals and health (signals.py) → verdict (guard/layers/behavior.py)
                                     ↘ circuit breakers (breaker.py), trust tiers (tiers.py)

``SessionBehaviorAnalyzer`` (analyzer.py) gives the seed's ``analyze_session`` view of the
same state. Rule ids G2xx; see ``signals.py`` for the table and ``docs/behavior.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["BehaviorSettings", "SessionBehaviorAnalyzer", "SessionMetrics", "SessionTracker"]

_LAZY = {
    "BehaviorSettings": "guard.behavior.settings",
    "SessionBehaviorAnalyzer": "guard.behavior.analyzer",
    "SessionMetrics": "guard.behavior.analyzer",
    "SessionTracker": "guard.behavior.tracker",
}

if TYPE_CHECKING:
    from guard.behavior.analyzer import SessionBehaviorAnalyzer, SessionMetrics
    from guard.behavior.settings import BehaviorSettings
    from guard.behavior.tracker import SessionTracker


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'guard.behavior' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
