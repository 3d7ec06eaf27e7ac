"""guard: decide, before an AI agent's tool call runs, whether to allow, confirm or block it.

    from guard import Guard, guarded

    @guarded
    def bash(command: str) -> str: ...

``import guard`` stays lean: no LanceDB, no event loop, no logging handlers (loguru is
loaded on first use with the ``guard`` namespace disabled; see ``guard.log``).
"""

from __future__ import annotations

import sys
import types

TYPE_CHECKING = False  # not imported from typing: ``python -m guard hook`` would pay ~2 ms for it
if TYPE_CHECKING:
    from typing import Any

__version__ = "0.1.0"

__all__ = [
    "AUTO_ALLOW",
    "BLOCK",
    "REQUEST_CONFIRM",
    "ConfirmationRequired",
    "DecisionRecord",
    "Guard",
    "GuardError",
    "MultiSourceFusionEngine",
    "Reason",
    "Risk",
    "ToolBlocked",
    "ToolCall",
    "Verdict",
    "guarded",
]

# Resolved on first access, so a hook's thin client (``guard hook`` talking to ``guard serve``)
# does not pay for attrs and the records it never builds.
_LAZY = {
    "AUTO_ALLOW": "guard.model",
    "BLOCK": "guard.model",
    "REQUEST_CONFIRM": "guard.model",
    "DecisionRecord": "guard.model",
    "Reason": "guard.model",
    "Risk": "guard.model",
    "ToolCall": "guard.model",
    "Verdict": "guard.model",
    "Guard": "guard.core",
    "guarded": "guard.guarded",
    "MultiSourceFusionEngine": "guard.engine",
    "GuardError": "guard.errors",
    "ToolBlocked": "guard.errors",
    "ConfirmationRequired": "guard.errors",
}

if TYPE_CHECKING:
    from guard.core import Guard
    from guard.engine import MultiSourceFusionEngine
    from guard.errors import ConfirmationRequired, GuardError, ToolBlocked
    from guard.guarded import guarded
    from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM, DecisionRecord, Reason, Risk, ToolCall, Verdict


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'guard' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    """Keeps ``guard.guarded`` the decorator.

    Importing the submodule of the same name (``from guard.guarded import ...``) registers
    the module object on the package, and a module attribute is never looked up through
    ``__getattr__``: ``from guard import guarded`` then returned the module.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _LAZY.get(name) == value.__name__:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
