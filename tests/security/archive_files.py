"""Archives the self-protection tests unpack, built with :mod:`tarfile` and :mod:`zipfile` (never by
running tar or unzip): members of two bytes each, ``{}``."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path


def tar(path: Path, names: list[str], mode: str = "w") -> None:
    """A tar archive of ``names`` (``mode`` ``w:gz``, ``w:bz2``, ``w:xz`` for a compressed one)."""
    with tarfile.open(path, mode) as archive:  # type: ignore[call-overload]
        for name in names:
            info = tarfile.TarInfo(name)
            info.size = 2
            archive.addfile(info, io.BytesIO(b"{}"))


def zip_of(path: Path, names: list[str]) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            archive.writestr(name, "{}")
