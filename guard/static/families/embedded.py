"""Shell commands development tools run from their options or their input.

``make -f -`` reads a makefile from stdin and ``make --eval`` from its argument; a debugger runs
``shell …`` and ``!…`` commands (``gdb -ex``, ``lldb -o``); an editor runs ``:!…``, ``system(…)``
(vim ``-c``), ``(shell-command …)`` (emacs ``--eval``) and ``!…`` lines (ed reading a script on
stdin). Each of those is handed back to the shell analysis, so ``gdb -batch -ex '!rm -rf ~'`` is
``rm -rf ~``. A makefile from outside the project runs recipes guard cannot read (G116).
"""

from __future__ import annotations

import re

from guard import lazyre
from guard.static.facts import paths as P
from guard.static.facts.landmines import makefile_commands
from guard.static.families import effects
from guard.static.families.base import parse_opts
from guard.static.scan import DECODED, REMOTE, Cmd, Flow, Scan

VIM = frozenset({"vim", "vi", "nvim", "ex", "view", "gvim", "vimdiff"})  # also read by the development family
_MAKE = frozenset({"make", "gmake"})
# vim: ``:r !cmd``, ``:w !cmd``, ``:silent !cmd`` (``:!cmd`` itself is read by the development family),
# ``system("cmd")``/``systemlist(…)``/``jobstart(…)``/``termopen(…)``, ``:terminal cmd``
_VIM_SHELL = lazyre.compile(
    r"(?:^|[|\s:])(?:r(?:ead)?|w(?:rite)?|sil(?:ent)?!?)\s*!(.+)$|"
    r"(?:system|systemlist|jobstart|termopen)\s*\(\s*(['\"])(.+?)\2|^[:\s]*ter(?:minal)?!?\s+(.+)$"
)
# gdb/lldb: ``shell cmd``, ``!cmd``, ``platform shell cmd``, ``pipe … | cmd``
# vim's own interpreters: ``:py3 code``, ``:python code``, ``:perl code``, ``:ruby code``, ``:lua code``
_VIM_CODE = lazyre.compile(r"^[:\s]*(py3|python3|py|python|pyx|pythonx|perl|pe|ruby|rub|lua)\s+(.+)$", re.S)
_VIM_LANG = {"pe": "perl", "perl": "perl", "ruby": "ruby", "rub": "ruby", "lua": "lua"}
_DEBUGGER_SHELL = lazyre.compile(r"^\s*(?:(?:platform\s+)?shell\s+|!\s*)(.+)$")
# emacs lisp: the string a shell-running function is called with
_ELISP_SHELL = lazyre.compile(
    r"\((?:shell-command(?:-to-string)?|async-shell-command|call-process-shell-command|"
    r"start-process-shell-command|process-lines)\s+(?:\"[^\"]*\"\s+nil\s+)?\"((?:[^\"\\]|\\.)*)\""
)
_ED_SHELL = lazyre.compile(r"(?m)^[ \t]*(?:[0-9,.$]*[wre]\s*)?!(.+)$")


def judge(cmd: Cmd, scan: Scan) -> None:
    """Hand the shell commands ``cmd`` runs from its options (or its stdin) to the shell analysis."""
    name = cmd.name
    if name in _MAKE:
        _make(cmd, scan)
    elif name in VIM:
        for value in _option_values(cmd.args, ("-c", "--cmd"), "+"):
            for found in _VIM_SHELL.finditer(value.strip()):
                scan.engine.script(found.group(1) or found.group(3) or found.group(4))
            code = _VIM_CODE.match(value)
            if code:  # ``vim -c ':py3 import os; os.execl("/bin/sh", …)'``: judged as that language's code
                from guard.static.families.interp import analyse_code

                analyse_code(scan, code.group(2), _VIM_LANG.get(code.group(1), "python"))
    elif name in ("gdb", "lldb"):
        opts = ("-ex", "--ex", "-eval-command", "--eval-command", "-iex", "-o", "--one-line", "-O")
        for value in _option_values(cmd.args, opts):
            m = _DEBUGGER_SHELL.match(value)
            if m:
                scan.engine.script(m.group(1))
    elif name == "emacs":
        for value in _option_values(cmd.args, ("--eval", "-eval")):
            for found in _ELISP_SHELL.finditer(value):
                scan.engine.script(found.group(1).replace('\\"', '"'))
    if name in ("ed", "ex") and cmd.stdin.text:
        for m in _ED_SHELL.finditer(cmd.stdin.text):
            scan.engine.script(m.group(1))
    if name in VIM or name in ("ed", "red"):
        _edits(cmd, scan)


# An editor's commands that save the file: vim/ex ``:w``, ``:wq``, ``:x``, ``:up``, ``:sav``; ed ``w``/``wq``.
_SAVES = lazyre.compile(r"(?:^|[|:\s])(?:w|wq|wqa|wa|x|xa|xit|exi|exit|up|update|sav|saveas)!?(?:$|[\s|])")
_ED_SAVES = lazyre.compile(r"(?m)^[ \t]*[0-9,.$;']*w[qa]?(?:[ \t].*)?$")
_VIM_TAKES = frozenset({"-c", "--cmd", "-S", "-s", "-u", "-U", "-i", "-T", "-w", "-W", "-t", "-q", "-r", "-p"})


def _edits(cmd: Cmd, scan: Scan) -> None:
    """``vim -es -c '%d' -c wq FILE``, ``ex -sc '%d|x' FILE``, ``ed -s FILE <<< $'1d\\nw'``: an editor run
    from a script saves its files, judged as the writes they are (guard's files block, G156; a startup
    file asks). An editor opened for a person to type in, or whose commands only read, is not a write."""
    args = cmd.args
    if cmd.name in ("ed", "red"):
        text = cmd.stdin.text
        saves = text is None or bool(_ED_SAVES.search(text))
    else:
        commands = _option_values(args, ("-c", "--cmd"), "+")
        script = any(a in ("-s", "-S") for a in args) or (cmd.name == "ex" and cmd.stdin.text is None and not commands)
        saves = script or any(_SAVES.search(c.strip()) for c in commands)
    if not saves:
        return
    takes = ("-p", "--prompt") if cmd.name in ("ed", "red") else _VIM_TAKES
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a in takes:
            skip = True
        elif not a.startswith(("-", "+")):
            effects.write(scan, a)


def _option_values(args: tuple[str, ...], names: tuple[str, ...], prefix: str = "") -> list[str]:
    """Values of ``names`` (``-c X``, ``--eval=X``) and of ``+X`` words when ``prefix`` is given."""
    out = []
    for i, a in enumerate(args):
        key, eq, val = a.partition("=")
        if a in names and i + 1 < len(args):
            out.append(args[i + 1])
        elif eq and key in names:
            out.append(val)
        elif prefix and a.startswith(prefix) and len(a) > 1:
            out.append(a[1:])
    return out


def _make(cmd: Cmd, scan: Scan) -> None:
    opts = parse_opts(
        cmd.args,
        frozenset(
            {"-f", "--file", "--makefile", "-E", "--eval", "-C", "--directory", "-I", "--include-dir", "-j", "-o"}
        ),
    )
    for text in opts.all("-E", "--eval"):
        for line in makefile_commands(text):
            scan.engine.script(line)
    for word in opts.all("-f", "--file", "--makefile"):
        if word in ("-", "/dev/stdin"):
            _makefile_flow(scan, cmd.stdin)
            continue
        place = scan.place(word)
        earlier = scan.written.get(place.path)
        if earlier is not None:
            _makefile_flow(scan, earlier)
        elif place.tier not in (P.PROJECT, P.PROJECT_ROOT) or place.dynamic:
            scan.hit("G116", f"make -f {place.path}")


def _makefile_flow(scan: Scan, flow: Flow) -> None:
    if flow.bits & REMOTE:
        scan.hit("G110", "downloaded makefile run by make")
    elif flow.bits & DECODED:
        scan.hit("G111", "decoded makefile run by make")
    elif flow.text is not None:
        for line in makefile_commands(flow.text):
            scan.engine.script(line)
    else:
        scan.hit("G194", "make reads a makefile guard cannot see")
