"""``typing.NamedTuple``'s class syntax, built without evaluating the annotations.

``typing.NamedTuple`` turns each annotation into a ``ForwardRef`` (a ``compile()`` each, the
annotations being strings under ``from __future__ import annotations``) and then builds the
``collections.namedtuple`` class anyway: the eight such records a hook process defines to decide
one call cost it ~1.5 ms. Here the class body is read as typing reads it — the fields are the
annotated names in order, a default is a value in the body (and a field without one may not follow
one with), the body's methods, properties and docstring go onto the ``collections.namedtuple``
class, its own attributes may not be overwritten — and the annotations stay as written. Type
checkers see ``typing.NamedTuple`` itself (this module hands it to them)::

    from guard.namedtuple import NamedTuple

    class Level(NamedTuple):
        n: float
        hits: int = 0
"""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING, Any

# typing's own lists (3.11-3.13): kept from the body / refused in it.
_SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})
_PROHIBITED = frozenset(
    {"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults", "_make", "_replace"}
    | {"_asdict", "_source"}
)


_namedtuple: Any = collections.namedtuple  # (called with computed arguments: typed loosely)


class _Builder(type):
    def __new__(mcs, typename: str, bases: tuple[type, ...], ns: dict[str, Any]) -> Any:
        if not bases:  # ``NamedTuple`` itself
            return super().__new__(mcs, typename, bases, ns)
        if bases != (NamedTuple,):
            raise TypeError("a guard NamedTuple inherits from NamedTuple alone")
        annotations: dict[str, Any] = ns.get("__annotations__", {})
        defaults: list[Any] = []
        for name in annotations:
            if name in ns:
                defaults.append(ns[name])
            elif defaults:
                raise TypeError(f"Non-default namedtuple field {name} cannot follow default field(s)")
        record = _namedtuple(typename, list(annotations), defaults=defaults, module=ns["__module__"])
        record.__annotations__ = record.__new__.__annotations__ = dict(annotations)
        for key, value in ns.items():
            if key in _PROHIBITED:
                raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
            if key not in _SPECIAL and key not in record._fields:
                setattr(record, key, value)
        return record


if TYPE_CHECKING:  # type checkers see typing's own
    from typing import NamedTuple as NamedTuple
else:

    class NamedTuple(metaclass=_Builder):
        """The base of a record written ``class Name(NamedTuple): field: type = default`` (see above)."""

        __slots__ = ()
