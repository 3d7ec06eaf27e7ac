"""The behavior layer's settings, read once from the configuration into plain numbers."""

from __future__ import annotations

import attrs

from guard import docsites
from guard.config import Config


@attrs.frozen
class BehaviorSettings:
    window: int = 200
    ttl_s: float = 86_400.0
    flush_s: float = 300.0
    half_life_s: float = 600.0
    failure_prior: float = 4.0
    loop_repeats: int = 3
    denial_streak: int = 3
    denial_recent: int = 10
    denial_total: int = 20
    burst_calls: int = 20
    burst_factor: float = 4.0
    confirm_below: float = 60.0
    breaker_failures: int = 5
    breaker_base_s: float = 300.0
    breaker_max_s: float = 3600.0
    breaker_human_after: int = 3
    tiers: bool = True
    double_cooldown_s: float = 3600.0
    docs_hosts: frozenset[str] | None = None  # None: guard.docsites' defaults

    @classmethod
    def from_config(cls, config: Config | None) -> BehaviorSettings:
        if config is None:
            return cls()
        g = config.get
        return cls(
            window=int(g("behavior.window")),
            ttl_s=float(g("behavior.session_ttl_hours")) * 3600.0,
            flush_s=float(g("behavior.flush_seconds")),
            half_life_s=float(g("behavior.half_life_minutes")) * 60.0,
            failure_prior=float(g("behavior.failure_prior")),
            loop_repeats=int(g("behavior.loop_repeats")),
            denial_streak=int(g("behavior.denial_streak")),
            denial_recent=int(g("behavior.denial_recent")),
            denial_total=int(g("behavior.denial_total")),
            burst_calls=int(g("behavior.burst_calls")),
            burst_factor=float(g("behavior.burst_factor")),
            confirm_below=float(g("behavior.confirm_below")),
            breaker_failures=int(g("behavior.breaker_failures")),
            breaker_base_s=float(g("behavior.breaker_base_seconds")),
            breaker_max_s=float(g("behavior.breaker_max_seconds")),
            breaker_human_after=int(g("behavior.breaker_human_after")),
            tiers=bool(g("behavior.tiers")),
            double_cooldown_s=float(g("behavior.double_reward_cooldown_minutes")) * 60.0,
            docs_hosts=docsites.hosts_of(config),
        )
