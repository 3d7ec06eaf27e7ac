"""Module boundaries: the history files, the counters and the aggregates are separate concepts."""

from __future__ import annotations

from benchmarks.import_graph import components, graph

HISTORY_MODULES = {"guard.jsonl", "guard.outcomes", "guard.counters", "guard.aggregates", "guard.atomic"}


def test_memory_and_the_aggregates_are_in_no_import_cycle() -> None:
    """guard.memory.base types its counts against a protocol, so it and the aggregates form no cycle."""
    tied = {name for cycle in components(graph()) for name in cycle}
    assert not tied & (HISTORY_MODULES | {"guard.memory.base"}), tied


def test_behavior_settings_take_their_defaults_from_the_configuration() -> None:
    """``BehaviorSettings()`` is the configuration's defaults in the layer's units, declared once."""
    import attrs

    from guard.behavior.settings import BehaviorSettings
    from guard.config import Config

    defaults = Config.load(None, env={})
    assert attrs.evolve(BehaviorSettings.from_config(defaults), docs_hosts=None) == BehaviorSettings()
    assert BehaviorSettings().ttl_s == defaults.get("behavior.session_ttl_hours") * 3600.0
    changed = BehaviorSettings.from_config(Config.load(None, env={"GUARD_BEHAVIOR_SESSION_TTL_HOURS": "2"}))
    assert changed.ttl_s == 7200.0 and changed.window == BehaviorSettings().window


def test_the_thin_hooks_fallbacks_are_the_configurations_defaults() -> None:
    """``guard.hookclient`` cannot import the configuration (import time), so its copies are pinned here."""
    from guard import hookclient
    from guard.config import Config

    defaults = Config.load(None, env={})
    assert defaults.get("hooks.timeout_seconds") == hookclient.HOOK_TIMEOUT
    assert hookclient.hook_timeout({}) == defaults.get("hooks.timeout_seconds")
    assert hookclient.daemon_mode({}) == defaults.get("hooks.daemon")
