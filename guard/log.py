"""guard's logger: loguru, imported only when something is actually logged.

Importing loguru costs ~50 ms (it pulls in asyncio); a per-call hook process that logs
nothing should not pay that. ``logger`` forwards to loguru's logger on first use and at
that moment disables the ``guard`` namespace (library etiquette: the application decides),
unless the CLI asked for warnings on stderr with :func:`to_stderr`.
"""

from __future__ import annotations

from typing import Any

_state: dict[str, Any] = {"real": None, "stderr_level": None}


def _load() -> Any:
    real: Any = _state["real"]
    if real is None:
        from loguru import logger as loguru_logger

        real = loguru_logger

        level = _state["stderr_level"]
        if level is None:
            real.disable("guard")
        else:
            import sys

            real.remove()
            real.add(sys.stderr, level=level, format="guard: {level}: {message}")
            real.enable("guard")
        _state["real"] = real
    return real


class _LazyLogger:
    def __getattr__(self, name: str) -> Any:
        return getattr(_load(), name)


logger: Any = _LazyLogger()


def to_stderr(level: str = "WARNING") -> None:
    """Send guard's warnings to stderr (the CLI does this); takes effect now or at first use."""
    _state["stderr_level"] = level.upper()
    real = _state["real"]
    if real is not None:
        _state["real"] = None
        _load()


def enable() -> None:
    """Let guard's log records through to loguru's sinks (for applications using loguru)."""
    _load().enable("guard")
