"""What guard accepts from its callers: params it can write down, and times it can trust.

``check_params`` refuses (``InputError``) what could be judged but never recorded;
``clamp_time`` brings a timestamp from the future back to now + a small skew.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from guard.errors import InputError


def clamp_time(ts: datetime, max_skew_s: float) -> datetime:
    """``ts``, or now + ``max_skew_s`` when it lies beyond that: one event dated 9999 must not
    freeze the decayed history (everything after it would count as old). Past times stand."""
    if ts.tzinfo is None:
        ts = ts.astimezone()
    now = datetime.now(UTC).astimezone()  # (``guard.core._now``)
    limit = now + timedelta(seconds=max_skew_s)
    return limit if ts > limit else ts


# Python refuses to turn an int of more digits into text (``sys.get_int_max_str_digits``):
# such a number could be judged but never written down.
_MAX_INT_BITS = 4300 * 3.3219


def check_params(params: Mapping[str, Any]) -> None:
    """InputError for what guard could judge but not record: keys that are not text, numbers
    too long to print, objects whose ``str`` raises. Iterative, so any depth is fine."""
    if all([type(k) is str and type(v) is str for k, v in params.items()]):
        return  # the usual call: {"command": "..."}
    stack: list[Any] = [params]
    while stack:
        value = stack.pop()
        if isinstance(value, (str, float, bool)) or value is None:
            continue
        if isinstance(value, int):
            if value.bit_length() > _MAX_INT_BITS:
                raise InputError(f"params hold an integer of about {int(value.bit_length() / 3.3219)} digits")
        elif isinstance(value, Mapping):
            for key in value:
                if not isinstance(key, (str, int, float, bool)) and key is not None:
                    raise InputError(f"params keys must be strings, got {type(key).__name__}")
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
        else:
            try:
                str(value)
            except Exception as exc:
                raise InputError(f"params hold a {type(value).__name__} that cannot be shown ({exc})") from None
