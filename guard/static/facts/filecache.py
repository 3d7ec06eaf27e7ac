"""What a file on disk holds, read once per version of it: a small cache keyed by ``(path, size,
mtime_ns)``, shared by the readers of archives and patches (:mod:`guard.static.facts.archives`,
:mod:`guard.static.facts.patches`). A changed file is read again; a file that is not there is None.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Unremembered(Exception):
    """Raised by a reader whose answer must not be kept (it ran out of time: next time may not)."""


class FileCache(Generic[T]):
    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, int, int], T | None] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: str, read: Callable[[os.stat_result], T | None]) -> T | None:
        """``read(stat)``'s answer for ``path`` as it is now, remembered; None when it is not there or
        ``read`` raised :class:`Unremembered`."""
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return None
        key = (path, st.st_size, st.st_mtime_ns)
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        try:
            value = read(st)
        except Unremembered:
            return None
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value
