"""``guard.namedtuple.NamedTuple`` builds the record ``typing.NamedTuple`` builds from the same body."""

from __future__ import annotations

import pickle
import typing
from typing import Any

import pytest

from guard import namedtuple
from guard.behavior.facts import Probe
from guard.behavior.signals import Assessment
from guard.layers.data import Component, Level, Levels
from guard.layers.static import _Deadlines
from guard.secretshapes import Shape

BODY = '''
from __future__ import annotations

class Point(NamedTuple):
    """A point, with a default and a property."""

    x: int
    y: frozenset[str] | None
    label: str = "origin"
    tags: tuple[str, ...] = ()

    @property
    def labelled(self) -> bool:
        return bool(self.label)

    def moved(self, dx: int) -> Point:
        return self._replace(x=self.x + dx)
'''


def _build(base: Any) -> Any:
    scope: dict[str, Any] = {"NamedTuple": base, "__name__": "tests.spine.points"}
    exec(BODY, scope)  # a class body, the same text for both builders
    return scope["Point"]


def test_the_record_behaves_as_typings_does() -> None:
    ours, theirs = _build(namedtuple.NamedTuple), _build(typing.NamedTuple)
    a, b = ours(1, None), theirs(1, None)
    assert ours._fields == theirs._fields == ("x", "y", "label", "tags")
    assert ours._field_defaults == theirs._field_defaults == {"label": "origin", "tags": ()}
    assert (repr(a), a == (1, None, "origin", ()), hash(a)) == (repr(b), True, hash(b))
    assert a == b and tuple(a) == tuple(b) and a._asdict() == b._asdict()
    assert a.labelled and a.moved(2) == (3, None, "origin", ()) and type(a.moved(2)) is ours
    assert (ours.__doc__, ours.__module__, ours.__qualname__) == (theirs.__doc__, theirs.__module__, "Point")
    assert ours.__mro__[1:] == theirs.__mro__[1:] == (tuple, object) and isinstance(a, tuple)
    # (typing's also names its own ``NamedTuple`` function as the original base)
    assert set(vars(ours)) == set(vars(theirs)) - {"__orig_bases__"}
    assert list(ours.__annotations__) == list(theirs.__annotations__)
    assert typing.get_type_hints(ours) == typing.get_type_hints(theirs)
    with pytest.raises(AttributeError):
        a.x = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        ours()  # the fields without a default are required, as before


def test_a_field_without_a_default_after_one_with_is_refused_as_typing_refuses_it() -> None:
    misordered = "class Bad(NamedTuple):\n    a: int = 0\n    b: int\n"
    overwriting = "class Bad(NamedTuple):\n    a: int\n    def _replace(self): ...\n"
    for base in (namedtuple.NamedTuple, typing.NamedTuple):
        with pytest.raises(TypeError, match="Non-default namedtuple field b cannot follow default field"):
            exec(misordered, {"NamedTuple": base, "__name__": "m"})
        with pytest.raises(AttributeError, match="Cannot overwrite NamedTuple attribute _replace"):
            exec(overwriting, {"NamedTuple": base, "__name__": "m"})


@pytest.mark.parametrize("record", [Probe, Assessment, Component, Level, Levels, _Deadlines, Shape])
def test_guards_records_are_plain_named_tuples(record: Any) -> None:
    """The records built with it are ``collections.namedtuple`` classes whose fields are their annotations."""
    assert record.__mro__[1:] == (tuple, object) and record._fields == tuple(record.__annotations__)
    assert all(name in record._fields for name in record._field_defaults)


def test_a_record_round_trips_through_pickle() -> None:
    level = Level(1.5, 80.0, 3, 4)
    assert pickle.loads(pickle.dumps(level)) == level and type(pickle.loads(pickle.dumps(level))) is Level
