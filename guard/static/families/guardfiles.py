"""guard's own program as files: its console script and its packages (G414).

A copy, a link or a new name for ``guard`` (``cp $(which guard) /tmp/g``, ``ln -s ~/.venv/bin/guard
x``, ``install -m755 …/bin/guard …``, ``cp -r …/site-packages/guard /tmp/``) runs guard's control
commands under a name the self-protection rules do not know, and has no ordinary use for an agent.
Reading them is fine (``cat $(which guard)``, ``grep -r def site-packages/guard``): what is read
carries :data:`~guard.static.scan.GUARD_CODE`, and writing that anywhere is the copy.

What ``which guard`` prints carries :data:`~guard.static.scan.GUARD_PATH` (:func:`located`), so
``which guard | xargs -I{} cp {} /tmp/g`` or ``p=$(command -v guard); rm "$p"`` is judged as the
same copy or deletion of ``$(which guard)``. Deleting or overwriting them switches guard off (G418).

Known by spelling, not on disk: ``which guard`` / ``command -v guard`` / ``type -p guard`` in the
word, a ``bin/guard`` (``Scripts/guard.exe``) path, or a ``site-packages/guard`` (or
``integrations``, guard's other package) path. An unrelated ``guard.py`` or ``bin/guardian`` is not.
"""

from __future__ import annotations

import re

from guard import lazyre
from guard.static.facts.paths import Place
from guard.static.reading.text import DYN_OPEN
from guard.static.scan import EMPTY, GUARD_PATH, Flow, Scan, display

_FOUND_BY_NAME = lazyre.compile(r"(?:\bwhich|\bcommand\s+-[vV]|\btype\s+-[pPa]|\bwhereis)\s+(?:-\S+\s+)*guard\b")
_PROGRAM_PATH = lazyre.compile(
    r"(?:^|/)(?:bin|Scripts)/guard(?:\.exe)?$|(?:^|/)(?:site|dist)-packages/(?:guard|integrations)(?:/|$)"
)


def is_guard_program(scan: Scan, word: str, place: Place) -> bool:
    """``word`` (resolved to ``place``) names guard's console script or one of its packages."""
    if DYN_OPEN in word and (_FOUND_BY_NAME.search(display(scan, word)) or scan.flow_of(word).bits & GUARD_PATH):
        return True
    path = place.path  # (every spelling of guard's program has one of these in it: no pattern otherwise)
    return ("/guard" in path or "-packages/" in path) and bool(_PROGRAM_PATH.search(path))


# What pip wrote beside the packages: the distribution's record and the editable install's path hook and
# finder (``guard_preflight-0.1.dist-info/``, ``__editable__.guard_preflight-0.1.pth``,
# ``__editable___guard_preflight_0_1_finder.py``): without them ``import guard`` fails, or finds another.
_INSTALL_PATH = lazyre.compile(
    r"(?:^|/)(?:site|dist)-packages/(?:__editable__[._]+)?_?guard[-_.]preflight[^/]*(?:/|$)", re.I
)


def is_guard_install(place: Place) -> bool:
    """``place`` is one of the files that install guard's distribution (its dist-info, ``.pth`` or finder):
    deleting, moving or overwriting one uninstalls guard without pip (G418)."""
    path = place.path
    return "-packages/" in path and "preflight" in path.lower() and bool(_INSTALL_PATH.search(path))


_LOCATORS = frozenset({"which", "whereis", "type", "command", "where"})


def located(argv: tuple[str, ...]) -> Flow:
    """``which guard``, ``command -v guard``, ``type -p guard``: the path printed is guard's program."""
    names = [a for a in argv[1:] if not a.startswith("-")]
    return Flow(GUARD_PATH) if argv[0].rsplit("/", 1)[-1] in _LOCATORS and "guard" in names else EMPTY
