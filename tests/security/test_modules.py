"""Module boundaries: the history files, the counters and the aggregates are separate concepts."""

from __future__ import annotations

from benchmarks.import_graph import components, graph

HISTORY_MODULES = {"guard.jsonl", "guard.outcomes", "guard.counters", "guard.aggregates", "guard.atomic"}


def test_memory_and_the_aggregates_are_in_no_import_cycle() -> None:
    """guard.memory.base types its counts against a protocol, so it and the aggregates form no cycle."""
    tied = {name for cycle in components(graph()) for name in cycle}
    assert not tied & (HISTORY_MODULES | {"guard.memory.base"}), tied
