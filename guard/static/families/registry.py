"""One table ``command name -> handler``, filled by the families, that refuses a name claimed twice.

Each family module declares its own ``HANDLERS`` table; :meth:`Registry.register` adds it under the
family's name. A command has exactly one home: a second family claiming a name is rejected at
import with both families named (pluggy's ``_verify_hook``), never silently merged so that the
order of registration decides which handler runs::

    registry.register("development", {"groovy": build_tool})
    registry.register("interpreters", {"groovy": interpreter})
    # DuplicateCommand: family 'interpreters' claims 'groovy', already registered by family 'development'
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from guard.errors import DuplicateCommand
from guard.static.families.base import Handler


class Registry:
    """Command handlers by name, and which family registered each."""

    __slots__ = ("_families", "_owner", "handlers")

    def __init__(self) -> None:
        self.handlers: dict[str, Handler] = {}
        self._owner: dict[str, str] = {}
        self._families: dict[str, Mapping[str, Handler]] = {}

    def register(self, family: str, table: Mapping[str, Handler]) -> None:
        """Add ``table`` as ``family``'s commands; raise :class:`DuplicateCommand` on a name taken."""
        if family in self._families:
            raise DuplicateCommand(f"family {family!r} is already registered")
        clashes = sorted(name for name in table if name in self._owner)
        if clashes:
            shown = ", ".join(f"{name!r}, already registered by family {self._owner[name]!r}" for name in clashes[:5])
            more = f" (and {len(clashes) - 5} more)" if len(clashes) > 5 else ""
            raise DuplicateCommand(f"family {family!r} claims {shown}{more}")
        self._families[family] = MappingProxyType(dict(table))
        self._owner.update(dict.fromkeys(table, family))
        self.handlers.update(table)

    def owner(self, name: str) -> str | None:
        """The family that handles command ``name`` (``None``: no family does)."""
        return self._owner.get(name)

    @property
    def families(self) -> Mapping[str, Mapping[str, Handler]]:
        """Each registered family's table, in registration order."""
        return MappingProxyType(self._families)
