"""The behavior layer's settings, read once from the configuration into plain numbers.

Each field is one ``behavior.*`` setting in the layer's unit (seconds, not hours or minutes).
The defaults are not repeated here: they are ``guard.config.SETTINGS``' own, converted once,
so ``BehaviorSettings()`` and ``BehaviorSettings.from_config(Config.load(None))`` are equal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from guard import docsites
from guard.config import SETTINGS, Config

# field -> (setting, its type, factor to the field's unit)
_FIELDS: dict[str, tuple[str, Callable[[Any], Any], float]] = {
    "window": ("behavior.window", int, 1),
    "ttl_s": ("behavior.session_ttl_hours", float, 3600.0),
    "flush_s": ("behavior.flush_seconds", float, 1),
    "half_life_s": ("behavior.half_life_minutes", float, 60.0),
    "failure_prior": ("behavior.failure_prior", float, 1),
    "loop_repeats": ("behavior.loop_repeats", int, 1),
    "denial_streak": ("behavior.denial_streak", int, 1),
    "denial_recent": ("behavior.denial_recent", int, 1),
    "denial_total": ("behavior.denial_total", int, 1),
    "burst_calls": ("behavior.burst_calls", int, 1),
    "burst_factor": ("behavior.burst_factor", float, 1),
    "confirm_below": ("behavior.confirm_below", float, 1),
    "breaker_failures": ("behavior.breaker_failures", int, 1),
    "breaker_base_s": ("behavior.breaker_base_seconds", float, 1),
    "breaker_max_s": ("behavior.breaker_max_seconds", float, 1),
    "breaker_human_after": ("behavior.breaker_human_after", int, 1),
    "tiers": ("behavior.tiers", bool, 1),
    "double_cooldown_s": ("behavior.double_reward_cooldown_minutes", float, 60.0),
}
_DEFAULTS = {s.key: s.default for s in SETTINGS}


def _value(field: str, get: Callable[[str], Any]) -> Any:
    key, kind, factor = _FIELDS[field]
    return kind(get(key) * factor)


def _default(field: str) -> Any:
    return _value(field, _DEFAULTS.__getitem__)


@attrs.frozen
class BehaviorSettings:
    window: int = _default("window")
    ttl_s: float = _default("ttl_s")
    flush_s: float = _default("flush_s")
    half_life_s: float = _default("half_life_s")
    failure_prior: float = _default("failure_prior")
    loop_repeats: int = _default("loop_repeats")
    denial_streak: int = _default("denial_streak")
    denial_recent: int = _default("denial_recent")
    denial_total: int = _default("denial_total")
    burst_calls: int = _default("burst_calls")
    burst_factor: float = _default("burst_factor")
    confirm_below: float = _default("confirm_below")
    breaker_failures: int = _default("breaker_failures")
    breaker_base_s: float = _default("breaker_base_s")
    breaker_max_s: float = _default("breaker_max_s")
    breaker_human_after: int = _default("breaker_human_after")
    tiers: bool = _default("tiers")
    double_cooldown_s: float = _default("double_cooldown_s")
    docs_hosts: frozenset[str] | None = None  # None: guard.docsites' defaults

    @classmethod
    def from_config(cls, config: Config | None) -> BehaviorSettings:
        if config is None:
            return cls()
        return cls(**{field: _value(field, config.get) for field in _FIELDS}, docs_hosts=docsites.hosts_of(config))
