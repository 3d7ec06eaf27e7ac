"""Regular expressions compiled on first use, not at import.

A hook runs in a fresh process for every tool call, and compiling guard's ~130 patterns took
about 40% of such a process's time, though one call uses a handful of them. ``lazyre.compile``
returns a stand-in that compiles on its first method call and then hands out the compiled
pattern's own bound methods (set on the instance, so later calls cost what a compiled pattern
costs).

    _WORD = lazyre.compile(r"\\w+")
    _WORD.findall("a b")          # compiles here, once
"""

from __future__ import annotations

import re
import weakref
from typing import Any, cast, overload

_CREATED: weakref.WeakSet[LazyPattern] = weakref.WeakSet()
_METHODS = ("search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer", "scanner")


class LazyPattern:
    """Duck-types ``re.Pattern``: the methods and ``pattern``/``flags``/``groups``/``groupindex``."""

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[Any] | None = None

    def _load(self) -> re.Pattern[Any]:
        compiled = self._compiled
        if compiled is None:
            compiled = re.compile(self.pattern, self._flags)
            for name in _METHODS:  # instance attributes shadow the class's compiling methods
                setattr(self, name, getattr(compiled, name))
            self._compiled = compiled
        return compiled

    def search(self, *args: Any, **kwargs: Any) -> Any:
        return self._load().search(*args, **kwargs)

    def match(self, *args: Any, **kwargs: Any) -> Any:
        return self._load().match(*args, **kwargs)

    def fullmatch(self, *args: Any, **kwargs: Any) -> Any:
        return self._load().fullmatch(*args, **kwargs)

    def sub(self, *args: Any, **kwargs: Any) -> Any:
        return self._load().sub(*args, **kwargs)

    def subn(self, *args: Any, **kwargs: Any) -> Any:
        return self._load().subn(*args, **kwargs)

    def split(self, *args: Any, **kwargs: Any) -> Any:
        return self._load().split(*args, **kwargs)

    def findall(self, *args: Any, **kwargs: Any) -> Any:
        return self._load().findall(*args, **kwargs)

    def finditer(self, *args: Any, **kwargs: Any) -> Any:
        return self._load().finditer(*args, **kwargs)

    def scanner(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._load(), "scanner")(*args, **kwargs)  # noqa: B009 (not in typeshed)

    @property
    def flags(self) -> int:
        return self._load().flags

    @property
    def groups(self) -> int:
        return self._load().groups

    @property
    def groupindex(self) -> Any:
        return self._load().groupindex

    def __repr__(self) -> str:
        return f"lazyre.compile({self.pattern!r})"


@overload
def compile(pattern: str, flags: int = 0) -> re.Pattern[str]: ...
@overload
def compile(pattern: bytes, flags: int = 0) -> re.Pattern[bytes]: ...


def compile(pattern: str | bytes, flags: int = 0) -> re.Pattern[Any]:
    """``re.compile`` deferred to the pattern's first use (a text or a bytes pattern); a bad pattern
    raises there, so every module's patterns are compiled once by the test suite
    (``tests/spine/test_lazyre.py``)."""
    lazy = LazyPattern(pattern, flags)
    _CREATED.add(lazy)
    return cast("re.Pattern[Any]", lazy)


def compile_all() -> int:
    """Compile every lazy pattern created so far (by the modules imported so far); how many."""
    patterns = list(_CREATED)
    for pattern in patterns:
        pattern._load()
    return len(patterns)
