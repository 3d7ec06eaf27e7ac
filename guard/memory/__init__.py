"""Memory of past operations: how did calls like this one go before?

``base`` holds the provider protocol and the history-file provider that needs no
LanceDB; the LanceDB store lives in its own module and is imported only by processes
that use it.
"""

from guard.memory.base import HistoryMemory, MemoryEvent, MemoryProvider, MemoryResult, importance_of

__all__ = ["HistoryMemory", "MemoryEvent", "MemoryProvider", "MemoryResult", "importance_of"]
