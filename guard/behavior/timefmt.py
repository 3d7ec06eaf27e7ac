"""Epoch seconds ↔ what a person reads."""

from __future__ import annotations

from datetime import datetime


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts).astimezone().isoformat(timespec="seconds")


def span(seconds: float) -> str:
    """``span(330) == "5m 30s"``."""
    seconds = max(0, round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"{h}h {m:02d}m"
    if m:
        return f"{m}m {s:02d}s"
    return f"{s}s"
