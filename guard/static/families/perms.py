"""Permission and ownership changes: broad or recursive targets, world-writable modes, setuid bits.

``chmod 755 bin/tool`` is ordinary; ``chmod -R 777 .`` opens a tree to every user; ``chmod 000
-R /`` or ``chown -R nobody ~`` break the machine or the account; ``chmod u+s`` hands out the
owner's rights. Tightening a credential file (``chmod 600 ~/.ssh/id_ed25519``) is routine.
"""

from __future__ import annotations

import re

from guard import lazyre
from guard.static.facts import ondisk
from guard.static.facts import paths as P
from guard.static.families.base import Handler
from guard.static.reading.text import wordset
from guard.static.scan import EMPTY, Cmd, Flow, Scan

_MODE_FLAGS = lazyre.compile(r"^-[rwxXstugoa]+$")
_KNOWN = wordset(
    "-R --recursive -v --verbose -c --changes -f --silent --quiet -h --no-dereference -H -L -P --preserve-root "
    "--no-preserve-root --dereference"
)


def _split(args: tuple[str, ...], has_mode: bool) -> tuple[bool, str, list[str]]:
    recursive, spec, targets = False, "", []
    for a in args:
        if a in ("-R", "--recursive") or (
            a.startswith("-") and not a.startswith("--") and "R" in a[1:] and not _MODE_FLAGS.match(a)
        ):
            recursive = True
        elif a.startswith("--reference="):
            spec = spec or "reference"
        elif a in _KNOWN or (a.startswith("--") and "=" in a):
            continue
        elif not spec and (not a.startswith("-") or (has_mode and _MODE_FLAGS.match(a))):
            spec = a
        elif not a.startswith("-"):
            targets.append(a)
    return recursive, spec, targets


def _world_writable(mode: str) -> bool:
    if mode.isdigit():
        return len(mode) >= 1 and int(mode[-1]) & 2 == 2
    return bool(re.search(r"(^|,)[ao]*[+=][^,]*w", mode)) and not re.search(r"(^|,)[ug]+[+=]", mode.split(",")[0])


def setuid(mode: str) -> bool:
    """A mode with the setuid or setgid bit: ``4755``, ``2755``, ``u+s``, ``g+s``."""
    if mode.isdigit():
        return len(mode) == 4 and int(mode[0]) & 6 != 0
    return "s" in mode.split("+", 1)[-1] if "+" in mode or "=" in mode else False


_SYMBOLIC = lazyre.compile(r"^([ugoa]*)([-+=])([rwxXst]*)$")


def _locks_owner_out(mode: str) -> bool:
    """``000``, ``a-r``, ``u=``: the owner loses read access (a lockout, not a tightening)."""
    if mode.isdigit():
        return len(mode) < 3 or int(mode[-3]) & 4 == 0
    for clause in mode.split(","):
        m = _SYMBOLIC.match(clause)
        if m and (not m[1] or "u" in m[1] or "a" in m[1]):
            if (m[2] == "-" and "r" in m[3]) or (m[2] == "=" and "r" not in m[3]):
                return True
    return False


def _restrictive(mode: str) -> bool:
    if _locks_owner_out(mode):
        return False
    if mode.isdigit():
        return mode[-2:] in ("00",) or (mode[-1] == "0" and mode[-2] in "0145")
    return bool(re.match(r"^(go|og|g|o|a)?-[rwx]+$", mode)) or bool(re.match(r"^u[=+]", mode))


def _chmod(cmd: Cmd, scan: Scan) -> Flow:
    recursive, mode, targets = _split(cmd.args, cmd.name == "chmod")
    ownership = cmd.name in ("chown", "chgrp")
    for target in targets:
        place = scan.place(target)
        scan.effect("write", place.path)
        scan.target(ondisk.WRITE, target)
        scan.tag("write")
        scan.hit(_rule(place, recursive, mode, ownership, cmd.name), f"{cmd.name} {mode} {place.path}".strip())
    if not targets:
        scan.hit("G184", cmd.name)
    return EMPTY


def _rule(place: P.Place, recursive: bool, mode: str, ownership: bool, name: str) -> str:
    tier = place.tier
    if tier == P.PROTECTED:
        return "G156"
    broad = recursive or place.contents
    gentle = name == "chmod" and _restrictive(mode)
    if broad and (tier in (P.ROOT, P.HOME) or (tier == P.SYSTEM and place.critical)):
        return "G130"
    if broad and tier == P.CREDENTIAL and place.critical and not gentle:
        return "G130"
    if tier == P.ROOT or tier == P.HOME:
        return "G133"
    if name == "chmod" and setuid(mode):
        return "G132"
    if tier in (P.SYSTEM, P.DEVICE) or (tier == P.PERSIST and place.kind == "sudoers"):
        return "G133"
    if tier in (P.CREDENTIAL, P.PERSIST):
        return "G185" if gentle else "G133"
    if name == "chmod" and _world_writable(mode):
        return "G131" if broad else "G128"
    if ownership and broad and tier in (P.HOME_OTHER, P.OTHER, P.OUTSIDE):
        return "G131"
    if tier in (P.HOME_OTHER, P.OTHER, P.OUTSIDE, P.DYNAMIC) or place.dynamic:
        return "G185"
    if ownership and tier in (P.PROJECT, P.PROJECT_ROOT, P.GITDIR):
        return "G128" if not broad else "G184"
    return "G184" if tier != P.TEMP else "G186"


def _chattr(cmd: Cmd, scan: Scan) -> Flow:
    recursive = "-R" in cmd.args
    targets = [a for a in cmd.args if not a.startswith(("-", "+", "=")) or a in ("-", "+")]
    mode = next((a for a in cmd.args if a.startswith(("+", "=")) or (a.startswith("-") and a != "-R")), "")
    for target in targets:
        place = scan.place(target)
        scan.effect("write", place.path)
        scan.target(ondisk.WRITE, target)
        scan.hit(_rule(place, recursive, mode, True, cmd.name), f"{cmd.name} {mode} {place.path}")
    if not targets:
        scan.hit("G184", cmd.name)
    return EMPTY


def _setfacl(cmd: Cmd, scan: Scan) -> Flow:
    recursive = any(a in ("-R", "--recursive") for a in cmd.args)
    skip_next = False
    targets = []
    for a in cmd.args:
        if skip_next:
            skip_next = False
            continue
        if a in ("-m", "-x", "-M", "-X", "--modify", "--remove", "--set", "--set-file"):
            skip_next = True
        elif not a.startswith("-"):
            targets.append(a)
    for target in targets:
        place = scan.place(target)
        scan.hit(_rule(place, recursive, "", True, cmd.name), f"{cmd.name} {place.path}")
    if not targets:
        scan.hit("G180", cmd.name)
    return EMPTY


HANDLERS: dict[str, Handler] = {
    "chmod": _chmod,
    "chown": _chmod,
    "chgrp": _chmod,
    "chattr": _chattr,
    "chflags": _chattr,
    "setfacl": _setfacl,
}
