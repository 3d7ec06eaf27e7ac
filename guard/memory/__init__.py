"""Memory of past operations: how did calls like this one go before?

``base`` holds the provider protocol and the history-file provider that needs no
LanceDB; the LanceDB store lives in ``guard.memory.lance`` (``LanceMemory``) and imports LanceDB only in
its background loader thread, so processes that never use it never pay for it.
"""

from guard.memory.base import HistoryMemory, MemoryEvent, MemoryProvider, MemoryResult, importance_of

__all__ = ["HistoryMemory", "MemoryEvent", "MemoryProvider", "MemoryResult", "importance_of"]
