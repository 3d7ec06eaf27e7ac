"""guard's benchmarks: ``python -m benchmarks [--quick] [--json FILE]``.

Every ``benchmarks/bench_*.py`` module exposes ``run(quick: bool) -> list[dict]`` and returns
rows ``{"name", "value", "unit", "budget", "met"}`` (optionally ``"note"``); the runner
discovers them by name, so a new module joins by existing. Benchmarks report numbers;
tests never assert on wall-clock time. Budgets are DESIGN §5's; see ``docs/benchmarks.md``.
"""
