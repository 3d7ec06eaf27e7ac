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

Families may import :mod:`guard.static.reading`, :mod:`guard.static.facts`,
:mod:`guard.static.rules.catalog` and :mod:`guard.static.scan`; never :mod:`guard.static.shell`
(they reach the interpreter through ``scan.engine``, the protocol).
"""

from __future__ import annotations

from collections.abc import Mapping

from guard.static.families import (
    cloud,
    clusters,
    containers,
    db,
    dev,
    fs,
    git,
    net,
    perms,
    readonly,
    remote,
    runners,
    secrets,
    selfguard,
    system,
    windows,
)
from guard.static.families.base import Handler
from guard.static.families.registry import Registry

_TABLES = {
    "readonly": readonly.HANDLERS,
    "secrets": secrets.HANDLERS,
    "filesystem": fs.HANDLERS,
    "runners": runners.HANDLERS,
    "permissions": perms.HANDLERS,
    "git": git.HANDLERS,
    "network": net.HANDLERS,
    "remote": remote.HANDLERS,
    "database": db.HANDLERS,
    "clusters": clusters.HANDLERS,
    "containers": containers.HANDLERS,
    "cloud": cloud.HANDLERS,
    "system": system.HANDLERS,
    "development": dev.HANDLERS,
    "windows": windows.HANDLERS,
    "self_protection": selfguard.HANDLERS,
}


def _register() -> Registry:
    from guard.static.families import interp  # (interp reads the families' helpers: imported once they exist)

    registry = Registry()
    for family, table in _TABLES.items():
        registry.register(family, table)
    registry.register("interpreters", interp.HANDLERS)
    return registry


REGISTRY = _register()
FAMILIES: Mapping[str, Mapping[str, Handler]] = REGISTRY.families
HANDLERS: dict[str, Handler] = REGISTRY.handlers
