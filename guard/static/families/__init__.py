"""The knowledge families, each a table ``command name -> handler``, registered into one lookup.

Each command has exactly one home: :class:`~guard.static.families.registry.Registry` raises on a
name two families claim, so the order below decides nothing and the file list reads as the list
of families. ``groovy`` belongs to the interpreters (``groovy -e CODE`` is inline code), not to
the development tools.

Beside the tables, the knowledge they share: ``effects`` (one policy for what touching a path
means, every command and tool ends there), ``guardfiles`` (guard's own program as files), ``tools``
(the tools that are not the shell: write, edit, read, fetch, unknown tools), ``interp`` (interpreter
one-liners, registered as the ``interpreters`` family), ``embedded`` (shell commands development
tools run from their options), ``base`` (the handler type, option parsing), ``registry``.

``HANDLERS`` imports a family's module the first time one of its commands is looked up
(``commands.COMMANDS``, generated from the tables, names each command's family; a test holds the
two equal), so a per-call hook pays only for the families its command needs. ``REGISTRY`` and
``FAMILIES`` load every family.

Families may import :mod:`guard.static.reading`, :mod:`guard.static.facts`,
:mod:`guard.static.rules.catalog` and :mod:`guard.static.scan`; never :mod:`guard.static.shell`
(they reach the interpreter through ``scan.engine``, the protocol).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

from guard.static.families.base import Handler
from guard.static.families.commands import COMMANDS
from guard.static.families.registry import Registry

# Each family and the module that declares its ``HANDLERS`` table, in the order the families are
# listed (the order decides nothing: a command has one home). ``interpreters`` comes last: interp
# reads the other families' helpers.
MODULES = {
    "readonly": "readonly",
    "secrets": "secrets",
    "filesystem": "fs",
    "runners": "runners",
    "permissions": "perms",
    "git": "git",
    "network": "net",
    "remote": "remote",
    "database": "db",
    "clusters": "clusters",
    "containers": "containers",
    "cloud": "cloud",
    "system": "system",
    "development": "dev",
    "windows": "windows",
    "self_protection": "selfguard",
    "interpreters": "interp",
}


def _table(family: str) -> Mapping[str, Handler]:
    module = importlib.import_module(f"{__name__}.{MODULES[family]}")
    table: Mapping[str, Handler] = module.HANDLERS
    return table


class Handlers(Mapping[str, Handler]):
    """Command name -> handler. A family's module is imported the first time one of its commands is
    looked up (``commands.COMMANDS``, generated, says which family that is), so a hook deciding
    ``ls`` does not import the cloud, database and cluster families: about a tenth of the decision
    code. Membership and iteration read the command list alone; a family whose table no longer
    matches the list (the list was not regenerated) loads every family and says so."""

    def __init__(self) -> None:
        self.registry = Registry()
        self._handlers = self.registry.handlers
        self._lock = threading.Lock()
        self._complete = False

    def get(self, name: str, default: Any = None) -> Any:
        handler = self._handlers.get(name)
        if handler is not None:
            return handler
        family = COMMANDS.get(name)
        if family is None or family in self.registry.families:
            return default
        self._load(family)
        return self._handlers.get(name, default)

    def __getitem__(self, name: str) -> Handler:
        handler = self.get(name)
        if handler is None:
            raise KeyError(name)
        return handler  # type: ignore[no-any-return]

    def __contains__(self, name: object) -> bool:
        return name in (self._handlers if self._complete else COMMANDS)

    def __iter__(self) -> Iterator[str]:
        return iter(self._handlers if self._complete else COMMANDS)

    def __len__(self) -> int:
        return len(self._handlers if self._complete else COMMANDS)

    def _load(self, family: str) -> None:
        with self._lock:
            if family in self.registry.families:
                return
            table = _table(family)
            if set(table) != {n for n, f in COMMANDS.items() if f == family}:
                self._everything(f"the command list disagrees with family {family!r}")
                return
            self.registry.register(family, table)

    def everything(self) -> Registry:
        """The registry with every family registered, in ``MODULES`` order."""
        if not self._complete:
            with self._lock:
                self._everything(None)
        return self.registry

    def _everything(self, problem: str | None) -> None:
        if self._complete:
            return
        registry = Registry()
        for family in MODULES:
            registry.register(family, _table(family))
        if problem is not None:
            from guard.log import logger

            logger.warning(f"{problem}: every family loaded (regenerate guard/static/families/commands.py)")
        self.registry, self._handlers, self._complete = registry, registry.handlers, True


HANDLERS = Handlers()


def __getattr__(name: str) -> Any:
    """``REGISTRY`` and ``FAMILIES``: every family, registered in order (tests, docs, listings)."""
    if name == "REGISTRY":
        return HANDLERS.everything()
    if name == "FAMILIES":
        return MappingProxyType(dict(HANDLERS.everything().families))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
