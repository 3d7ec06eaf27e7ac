"""Windows: PowerShell and cmd.exe, as agents on Windows hosts send them through the shell tool.

``powershell -Command …``, ``pwsh -EncodedCommand …`` (decoded and judged), ``cmd /c …`` and bare
cmdlets or cmd builtins are split by :mod:`guard.static.reading.pwsh` and each statement is judged by
the same families as POSIX commands, after mapping aliases (``rm``/``rd``/``del`` in PowerShell
are ``Remove-Item``). Paths go through the same tiers (:func:`guard.static.facts.paths.windows_parts`),
so ``Remove-Item -Recurse C:\\Users`` and ``rm -rf /home`` meet the same rule (G101). What only
Windows has: disk and backup tools (``Format-Volume``, ``diskpart``, ``vssadmin delete shadows``),
the registry, execution policy, and the download-cradle idiom ``iex (New-Object Net.WebClient)…``.
"""

from __future__ import annotations

import binascii
import re

from guard import lazyre
from guard.static.facts.paths import WIN_ENV
from guard.static.families import effects
from guard.static.families.base import Handler, table
from guard.static.families.cmdlets import CMDLETS, SECRET_RULES, param, shown, win_path
from guard.static.reading import pwsh
from guard.static.reading.text import DYN_OPEN, strip_markers, wordset
from guard.static.reading.unwrap import WRAPPERS
from guard.static.scan import EMPTY, OPAQUE_FLOW, Cmd, Flow, Scan, display, piped

_IEX = lazyre.compile(r"(?i)\b(iex|invoke-expression|invoke-command|icm)\b|\[scriptblock\]::create|\.invoke\(")
_WEB = lazyre.compile(
    r"(?i)download(string|file|data)|\b(iwr|irm|invoke-webrequest|invoke-restmethod|wget|curl|start-bitstransfer"
    r"|send-mailmessage)\b|net\.webclient|net\.http|xmlhttp|upload(string|file|data|values)"
)
_METHOD = lazyre.compile(
    r"(?i)(\.|::)(download|upload|delete|remove|move|copy|write|create|start|kill|invoke|exec|run|send|open)"
)
_PS_PARAMS = {  # powershell.exe / pwsh parameters that take a value
    "command": True,
    "encodedcommand": True,
    "file": True,
    "executionpolicy": True,
    "windowstyle": True,
    "version": True,
    "inputformat": True,
    "outputformat": True,
    "configurationname": True,
    "workingdirectory": True,
    "psconsolefile": True,
    "settingsfile": True,
    "custompipename": True,
    "noprofile": False,
    "noninteractive": False,
    "nologo": False,
    "noexit": False,
    "sta": False,
    "mta": False,
    "login": False,
    "interactive": False,
}
_PS_SHORT = {"c": "command", "e": "encodedcommand", "ec": "encodedcommand", "f": "file", "ep": "executionpolicy"}

# What a name means inside PowerShell or cmd.exe where it differs from the POSIX command of that name.
_ALIASES = {
    **dict.fromkeys(("rm", "rmdir", "del", "erase", "rd", "ri"), "remove-item"),
    **dict.fromkeys(("dir", "ls", "gci"), "get-childitem"),
    **dict.fromkeys(("type", "cat", "gc"), "get-content"),
    **dict.fromkeys(("echo", "write"), "write-output"),
    **dict.fromkeys(("cd", "chdir", "sl", "push-location", "pushd"), "set-location"),
    **dict.fromkeys(("copy", "cpi", "copy-item"), "copy-item"),
    **dict.fromkeys(("move", "mi", "move-item"), "move-item"),
    **dict.fromkeys(("kill", "spps"), "stop-process"),
}
_POSIX_RUNNERS = wordset("sh bash zsh dash ksh fish eval source . exec xargs parallel ssh watch su")
_PS_ONLY = {"curl": "invoke-webrequest", "wget": "invoke-webrequest", "cp": "copy-item", "mv": "move-item"}


# -- scripts
def run(scan: Scan, text: str, mode: str, stdin: Flow = EMPTY) -> bool:
    """Judge ``text`` as a PowerShell (``ps``), cmd.exe (``cmd``) or unknown-Windows (``any``) script.

    Returns whether every part was understood.
    """
    if scan.depth >= scan.max_depth:
        scan.hit("G197", text[:80])
        return False
    split = pwsh.split(text, cmd=mode == "cmd", var=lambda name: _variable(scan, name), tick=scan.budget.tick)
    before = len(scan.hits)
    saved, literal = scan.cwd, scan.literal_tildes
    scan.literal_tildes = frozenset()  # PowerShell's ``~`` is the home, quoted or not, whatever bash quoted
    scan.depth += 1
    try:
        out = EMPTY
        for sep, words in split.statements:
            out = _statement(scan, words, piped(out) if sep == "|" else stdin, mode)
        for target in split.redirects:
            effects.write(scan, win_path(target), out)
        for inner in split.inner:
            run(scan, inner, mode)
    finally:
        scan.depth -= 1
        scan.cwd, scan.literal_tildes = saved, literal
    if split.opaque:
        scan.hit("G114", text[:80])
    web = _WEB.search(text) if mode != "cmd" else None
    if web is not None:
        scan.tag("network")
        scan.hit("G112" if _IEX.search(text) else "G146", text[:100])
    if web is not None and (scan.cmd_secret or any(h.rule_id in SECRET_RULES for h in scan.hits[before:])):
        scan.hit("G143", text[:100])
    return not split.opaque


def _variable(scan: Scan, name: str) -> str:
    lower = name.lower()
    if lower.startswith("env:") and lower[4:] in WIN_ENV:
        return "$env:" + name[4:]
    if lower == "home":
        return "~"
    if lower in ("true", "false", "null"):
        return "$" + lower
    if lower == "pwd":
        return "."
    return scan.dynamic("$" + name)


def _statement(scan: Scan, words: list[str], stdin: Flow, mode: str) -> Flow:
    head = words[0]
    if head.startswith(DYN_OPEN) or head[:1] in "[.0123456789'\"-" or head in ("=", "+="):
        return _expression(scan, words, stdin, mode)
    if head[1:2] == ":" or head.startswith((".\\", "./", "..\\", "~\\")):
        return scan.engine.exec_file(win_path(head), stdin, tuple(words[1:]))  # ``.\build.ps1``, ``C:\x\tool.exe``
    name = head.rsplit("\\", 1)[-1].lower()
    name = name[:-4] if name.endswith(".exe") else name
    if mode == "any" and (name in _POSIX_RUNNERS or name in WRAPPERS):
        scan.hit("G180", name)  # bash's reading runs it, and reads its script the Windows way too: once per level
        return OPAQUE_FLOW
    canon = _ALIASES.get(name) or (_PS_ONLY.get(name) if mode == "ps" else None)
    argv = [canon or name, *words[1:]]
    return scan.engine.simple(argv, stdin, {})


def _expression(scan: Scan, words: list[str], stdin: Flow, mode: str) -> Flow:
    """``$x = cmd``, ``$_.Name -like "*.log"``, ``[IO.File]::Delete(…)``, ``. .\\script.ps1``."""
    if len(words) >= 3 and words[1] in ("=", "+="):
        return _statement(scan, words[2:], stdin, mode)
    head = words[0]
    if head == "." and len(words) > 1:
        return scan.engine.exec_file(win_path(words[1]), stdin, tuple(words[2:]))
    shown = display(scan, " ".join(words))
    method = _METHOD.search(strip_markers(head, ""))
    if method or ("::" in head and head.startswith("[")):
        scan.hit("G114", shown)  # a .NET method guard does not model
        target = re.search(r"\(\s*['\"]([^'\"]+)['\"]", head)
        if method and method.group(2).lower() == "upload":  # ``.UploadFile('https://…', 'C:\\key')``
            for arg in re.findall(r"['\"]([^'\"]+)['\"]", head):
                if "://" not in arg:
                    effects.read(scan, win_path(arg))
        if method and method.group(2).lower() == "delete" and target:  # ``[IO.Directory]::Delete('C:\\x', $true)``
            effects.delete(scan, win_path(target.group(1)), "$true" in head.lower() or "recurs" in head.lower(), shown)
        return OPAQUE_FLOW
    scan.hit("G180", shown)
    return OPAQUE_FLOW if DYN_OPEN in head else EMPTY


# -- powershell.exe / pwsh and cmd.exe
def _powershell(cmd: Cmd, scan: Scan) -> Flow | None:
    args = cmd.args
    i = 0
    while i < len(args):
        a = args[i]
        key = a[1:].lower() if a[:1] in "-/" else ""
        name = _PS_SHORT.get(key) or param("-" + key, _PS_PARAMS) if key else None
        if name is None:
            if a.startswith("-") and a != "-":
                i += 1
                continue
            name = "command"  # the first operand starts the command (or names a script: ``pwsh x.ps1``)
            if a.lower().endswith(".ps1"):
                return scan.engine.exec_file(win_path(a), cmd.stdin, args[i + 1 :])
            return _ps_command(scan, " ".join(args[i:]), cmd)
        value = args[i + 1] if _PS_PARAMS[name] and i + 1 < len(args) else ""
        if name == "command":
            if value == "-":
                return scan.engine.consume(cmd.stdin, "shell")
            return _ps_command(scan, " ".join(args[i + 1 :]), cmd)
        if name == "encodedcommand":
            decoded = _decode(value)
            if decoded is None:
                scan.hit("G111", shown(scan, cmd))
                return None
            scan.hit("G111" if _IEX.search(decoded) else "G402", decoded[:100])  # encoded *and* evaluating code
            return _ps_command(scan, decoded, cmd)
        if name == "file":
            return scan.engine.exec_file(win_path(value), cmd.stdin, args[i + 2 :])
        i += 2 if _PS_PARAMS[name] else 1
    return scan.engine.consume(cmd.stdin, "shell", interactive=True)


def _ps_command(scan: Scan, code: str, cmd: Cmd) -> Flow:
    scan.tag("execute")
    if DYN_OPEN in code and code.strip().startswith(DYN_OPEN):
        flow = scan.flow_of(code)
        scan.hit("G112" if flow.bits & 1 else "G111" if flow.bits & 2 else "G194", shown(scan, cmd))
        return OPAQUE_FLOW
    before = len(scan.hits)
    run(scan, code, "ps", cmd.stdin)
    if len(scan.hits) == before:
        scan.hit("G180", "an empty PowerShell command")
    return OPAQUE_FLOW


def _decode(value: str) -> str | None:
    import base64  # (with struct: not at every hook's import, for the rare -EncodedCommand)

    try:
        raw = base64.b64decode(value.strip() + "=" * (-len(value.strip()) % 4), validate=True)
        return raw.decode("utf-16-le")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


def _cmd(cmd: Cmd, scan: Scan) -> Flow | None:
    args = cmd.args
    for i, a in enumerate(args):
        low = a.lower()
        if low in ("/c", "/k", "/r"):
            scan.tag("execute")
            run(scan, " ".join(args[i + 1 :]), "cmd", cmd.stdin)
            return OPAQUE_FLOW
        if not low.startswith("/"):
            break
    return scan.engine.consume(cmd.stdin, "shell", interactive=True)


HANDLERS: dict[str, Handler] = {
    **table("powershell pwsh powershell_ise", _powershell),
    "cmd": _cmd,
    **CMDLETS,
}
