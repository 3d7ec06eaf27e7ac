"""Spotting cmd.exe and PowerShell syntax in a shell command, cheaply, before bash reads it.

The shell engine asks this of every script; only a script that looks like Windows loads the
Windows family (:mod:`guard.static.families.windows`, with its PowerShell reader and cmdlet
tables), so a POSIX command costs a few substring tests and no import.
"""

from __future__ import annotations

from guard import lazyre
from guard.static.reading.text import wordset

_WINDOWS_PATH = lazyre.compile(r"(?i)(?:^|[\s\"'=(:,])(?:[a-z]:\\|%[a-z_]\w*%|\$env:)")
_CMD_WORDS = wordset("rmdir rd del erase format cmd cmd.exe robocopy xcopy icacls takeown schtasks taskkill cipher")
_SWITCH = lazyre.compile(
    r"(?i)(?:^|[;&|]\s*)(?:rmdir|rd|del|erase|format|cmd(?:\.exe)?|robocopy|xcopy|icacls|takeown|schtasks|taskkill"
    r"|cipher)\s+(?:\S+\s+){0,12}?/[a-z]{1,3}(?::\S*)?(?:\s|$)"
)
_ANY_SWITCH = lazyre.compile(r" /[A-Za-z]{1,3}(?::\S*)?(?:\s|$)")


def looks_windows(text: str) -> bool:
    """Whether ``text`` holds cmd.exe or PowerShell syntax bash would misread (``C:\\``, ``%VAR%``, ``/s``).

    Substring tests first: ordinary POSIX commands never reach a regular expression.
    """
    if "\\" in text or "$env:" in text or text.count("%") >= 2:
        if _WINDOWS_PATH.search(text) is not None:
            return True
    if " /" not in text or _ANY_SWITCH.search(text) is None:
        return False
    first = text.lstrip()[:10].split(" ", 1)[0].lower()
    if first not in _CMD_WORDS and "&" not in text and ";" not in text and "|" not in text:
        return False
    return _SWITCH.search(text) is not None
