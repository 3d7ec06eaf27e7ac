"""The knowledge families, each a table ``command name -> handler``, merged into one lookup.

The order below only matters for names two families claim; a test keeps that set empty, so each
command has exactly one home and the file list reads as the list of families.
"""

from __future__ import annotations

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

FAMILIES = {
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


def _merge() -> dict[str, Handler]:
    from guard.static import interp

    merged: dict[str, Handler] = {}
    for table in (*FAMILIES.values(), interp.HANDLERS):
        merged.update(table)
    return merged


HANDLERS: dict[str, Handler] = _merge()
