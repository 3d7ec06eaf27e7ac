"""The seed's ``behavior_analyzer`` integration shape, backed by guard's session behavior layer.

    from guard.integrations.behavior_analyzer import SessionBehaviorAnalyzer, lower_weights_if_unhealthy

    analyzer = SessionBehaviorAnalyzer()                 # workspace=None → $GUARD_HOME or ~/.guard
    metrics = analyzer.analyze_session(session_id)
    if metrics.health_score < 40:                        # the seed's rule, as a helper:
        lower_weights_if_unhealthy(engine, metrics)      # user_pref 0.1, memory 0.2

A ``Guard`` already applies this weight change inside its fusion layer (rule G301); the
helper is for code that drives a ``MultiSourceFusionEngine`` the way the seed shows.
"""

from __future__ import annotations

from typing import Any

from guard.behavior.analyzer import SessionBehaviorAnalyzer, SessionMetrics

__all__ = [
    "LOW_HEALTH",
    "LOW_HEALTH_WEIGHTS",
    "SessionBehaviorAnalyzer",
    "SessionMetrics",
    "lower_weights_if_unhealthy",
]

LOW_HEALTH = 40.0
LOW_HEALTH_WEIGHTS = {"user_pref": 0.1, "memory": 0.2}


def lower_weights_if_unhealthy(engine: Any, metrics: SessionMetrics | float, threshold: float = LOW_HEALTH) -> bool:
    """Seed: health < 40 → ``engine.weights["user_pref"] = 0.1; engine.weights["memory"] = 0.2``.

    Weights are not renormalised (as in the seed). Returns whether it changed anything.
    """
    health = metrics if isinstance(metrics, (int, float)) else metrics.health_score
    if health >= threshold:
        return False
    for key, value in LOW_HEALTH_WEIGHTS.items():
        engine.weights[key] = value
    return True
