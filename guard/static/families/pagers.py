"""Pagers and ``man``: readers that can run a command or write a file when told to.

``less +!cmd``, ``less '+|cmd'`` run a shell command at start; ``less -o FILE`` logs what it shows
to a file; ``man -P cmd`` and ``man --html=cmd`` run the program they name. Everything else a
pager does is read (:mod:`guard.static.families.readonly` reads its operands).
"""

from __future__ import annotations

from guard.static.families import effects
from guard.static.families.base import parse_opts
from guard.static.reading.text import wordset
from guard.static.scan import EMPTY, Cmd, Flow, Scan

PAGERS = "less more most zless zmore"
_PAGER_LOG = ("-o", "-O", "--log-file", "--LOG-FILE")
_PAGER_LOG_EQ = tuple(o + "=" for o in _PAGER_LOG[2:])  # ``--log-file=x``


def without_escapes(cmd: Cmd, scan: Scan) -> Cmd:
    """``less``/``more``: ``+!cmd`` (a shell command at start) judged as a script, ``-o FILE`` (a log)
    as a write; what is left is the pager as a plain reader."""
    rest: list[str] = []
    args = iter(cmd.args)
    for a in args:
        if a.startswith("+") and ("!" in a or "|" in a):
            shell = a.lstrip("+").split("!", 1)[-1] if "!" in a else a.split("|", 1)[1]
            scan.engine.script(shell)
        elif a in _PAGER_LOG or a.startswith(_PAGER_LOG_EQ) or a[:2] in ("-o", "-O"):
            target = a.split("=", 1)[1] if "=" in a else a[2:] if len(a) > 2 and a[:2] in ("-o", "-O") else None
            effects.write(scan, target if target is not None else next(args, ""))
        elif not a.startswith("+"):
            rest.append(a)
    return Cmd((cmd.argv[0], *rest), cmd.name, cmd.stdin, cmd.privileged, cmd.via)


def man(cmd: Cmd, scan: Scan) -> Flow:
    """``man``: read-only, except a pager or browser it is told to run (``-P cmd``, ``--html=cmd``)."""
    opts = parse_opts(cmd.args, wordset("-P --pager -H --html -M -m -L -S -s -C"))
    for program in opts.all("-P", "--pager", "-H", "--html"):
        if program:
            scan.engine.script(program)
    scan.hit("G180", cmd.name)
    return EMPTY
