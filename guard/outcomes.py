"""What a history line says: its outcome (a run's status, a person's answer) and its time.

The readers are lenient: other programs write these files too, so a line that does not
carry a readable outcome is skipped (None), never an error.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

# What other programs may write for an outcome, beside the seed's own words.
SUCCESS, FAILED = "success", frozenset({"failure", "failed", "error"})
APPROVED, DENIED = "approved", frozenset({"denied", "rejected"})


def execution_ok(rec: Mapping[str, Any]) -> bool | None:
    """True/False for a readable execution line (``status``), None for one to skip."""
    status = rec.get("status")
    if not isinstance(rec.get("tool"), str) or not isinstance(status, str):
        return None
    return True if status == SUCCESS else False if status in FAILED else None


def interaction_ok(rec: Mapping[str, Any]) -> bool | None:
    """True/False for a readable interaction line (``action``), None for one to skip."""
    action = rec.get("action")
    if not isinstance(rec.get("tool"), str) or not isinstance(action, str):
        return None
    return True if action == APPROVED else False if action in DENIED else None


def parse_ts(value: Any, default: float) -> float:
    """Epoch seconds from an ISO timestamp or a number; ``default`` when unusable."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return default
    return default
