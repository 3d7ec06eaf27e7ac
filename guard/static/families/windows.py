"""Windows: PowerShell and cmd.exe, as agents on Windows hosts send them through the shell tool.

``powershell -Command …``, ``pwsh -EncodedCommand …`` (decoded and judged), ``cmd /c …`` and bare
cmdlets or cmd builtins are split by :mod:`guard.static.pwsh` and each statement is judged by
the same families as POSIX commands, after mapping aliases (``rm``/``rd``/``del`` in PowerShell
are ``Remove-Item``). Paths go through the same tiers (:func:`guard.static.paths.windows_parts`),
so ``Remove-Item -Recurse C:\\Users`` and ``rm -rf /home`` meet the same rule (G101). What only
Windows has: disk and backup tools (``Format-Volume``, ``diskpart``, ``vssadmin delete shadows``),
the registry, execution policy, and the download-cradle idiom ``iex (New-Object Net.WebClient)…``.
"""

from __future__ import annotations

import base64
import binascii
import re

from guard.static import effects, pwsh
from guard.static.families.base import Handler, table
from guard.static.paths import WIN_ENV, windows_parts
from guard.static.scan import EMPTY, OPAQUE_FLOW, Cmd, Flow, Scan, display
from guard.static.text import DYN_OPEN, strip_markers, wordset

_SECRET_RULES = frozenset({"G140", "G141", "G142"})
_IEX = re.compile(r"(?i)\b(iex|invoke-expression|invoke-command|icm)\b|\[scriptblock\]::create|\.invoke\(")
_WEB = re.compile(
    r"(?i)download(string|file|data)|\b(iwr|irm|invoke-webrequest|invoke-restmethod|wget|curl|start-bitstransfer"
    r"|send-mailmessage)\b|net\.webclient|net\.http|xmlhttp|upload(string|file|data|values)"
)
_METHOD = re.compile(
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
_PS_ONLY = {"curl": "invoke-webrequest", "wget": "invoke-webrequest", "cp": "copy-item", "mv": "move-item"}


# -- reading PowerShell's parameters
def param(word: str, names: dict[str, bool]) -> str | None:
    """The parameter ``word`` names (case-insensitive, any unambiguous prefix): ``param("-rec", …) == "recurse"``."""
    if len(word) < 2 or word[0] != "-":
        return None
    key = word[1:].lower().split(":", 1)[0]
    if key in names:
        return key
    found = [n for n in names if n.startswith(key)]
    return found[0] if len(found) == 1 else None


def ps_args(args: tuple[str, ...], names: dict[str, bool]) -> tuple[dict[str, str], list[str], set[str]]:
    """``(parameters with values, operands, cmd.exe switches)``; a switch parameter's value is ``""``."""
    values: dict[str, str] = {}
    operands: list[str] = []
    switches: set[str] = set()
    i = 0
    while i < len(args):
        a = args[i]
        name = param(a, names)
        if name is not None:
            takes = names[name] and ":" not in a
            values[name] = args[i + 1] if takes and i + 1 < len(args) else a.partition(":")[2]
            i += 2 if takes else 1
            continue
        if re.fullmatch(r"/[A-Za-z?](:\S*)?", a):
            switches.add(a[:2].lower())
        elif a.startswith("-") and len(a) > 1:
            switches.update("-" + ch for ch in a[1:].lower() if ch.isalpha())  # POSIX flags in Git Bash: -rf
        else:
            operands.extend(p for p in a.split(",") if p)
        i += 1
    return values, operands, switches


def _path(word: str) -> str:
    """A relative Windows path with POSIX slashes (``.\\build`` -> ``./build``); others unchanged."""
    if "\\" in word and word[1:2] != ":" and not word.startswith(("%", "$", "~", "\\\\")):
        return word.replace("\\", "/")
    return word


def _shown(scan: Scan, cmd: Cmd) -> str:
    return display(scan, " ".join(cmd.argv))


# -- spotting Windows syntax in a shell command, cheaply
_WINDOWS_PATH = re.compile(r"(?i)(?:^|[\s\"'=(:,])(?:[a-z]:\\|%[a-z_]\w*%|\$env:)")
_CMD_WORDS = wordset("rmdir rd del erase format cmd cmd.exe robocopy xcopy icacls takeown schtasks taskkill cipher")
_SWITCH = re.compile(
    r"(?i)(?:^|[;&|]\s*)(?:rmdir|rd|del|erase|format|cmd(?:\.exe)?|robocopy|xcopy|icacls|takeown|schtasks|taskkill"
    r"|cipher)\s+(?:\S+\s+){0,12}?/[a-z]{1,3}(?::\S*)?(?:\s|$)"
)
_ANY_SWITCH = re.compile(r" /[A-Za-z]{1,3}(?::\S*)?(?:\s|$)")


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


# -- scripts
def run(scan: Scan, text: str, mode: str, stdin: Flow = EMPTY) -> bool:
    """Judge ``text`` as a PowerShell (``ps``), cmd.exe (``cmd``) or unknown-Windows (``any``) script.

    Returns whether every part was understood.
    """
    if scan.depth >= scan.max_depth:
        scan.hit("G197", text[:80])
        return False
    split = pwsh.split(text, cmd=mode == "cmd", var=lambda name: _variable(scan, name))
    before = len(scan.hits)
    saved = scan.cwd
    scan.depth += 1
    try:
        out = EMPTY
        for sep, words in split.statements:
            piped = out if out != EMPTY else OPAQUE_FLOW
            out = _statement(scan, words, piped if sep == "|" else stdin, mode)
        for target in split.redirects:
            effects.write(scan, _path(target), out)
        for inner in split.inner:
            run(scan, inner, mode)
    finally:
        scan.depth -= 1
        scan.cwd = saved
    if split.opaque:
        scan.hit("G114", text[:80])
    web = _WEB.search(text) if mode != "cmd" else None
    if web is not None:
        scan.tag("network")
        scan.hit("G112" if _IEX.search(text) else "G146", text[:100])
    if web is not None and (scan.cmd_secret or any(h.rule_id in _SECRET_RULES for h in scan.hits[before:])):
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
        return scan.engine.exec_file(_path(head), stdin, tuple(words[1:]))  # ``.\build.ps1``, ``C:\x\tool.exe``
    name = head.rsplit("\\", 1)[-1].lower()
    name = name[:-4] if name.endswith(".exe") else name
    canon = _ALIASES.get(name) or (_PS_ONLY.get(name) if mode == "ps" else None)
    argv = [canon or name, *words[1:]]
    return scan.engine.simple(argv, stdin, {})


def _expression(scan: Scan, words: list[str], stdin: Flow, mode: str) -> Flow:
    """``$x = cmd``, ``$_.Name -like "*.log"``, ``[IO.File]::Delete(…)``, ``. .\\script.ps1``."""
    if len(words) >= 3 and words[1] in ("=", "+="):
        return _statement(scan, words[2:], stdin, mode)
    head = words[0]
    if head == "." and len(words) > 1:
        return scan.engine.exec_file(_path(words[1]), stdin, tuple(words[2:]))
    shown = display(scan, " ".join(words))
    method = _METHOD.search(strip_markers(head, ""))
    if method or ("::" in head and head.startswith("[")):
        scan.hit("G114", shown)  # a .NET method guard does not model
        target = re.search(r"\(\s*['\"]([^'\"]+)['\"]", head)
        if method and method.group(2).lower() == "upload":  # ``.UploadFile('https://…', 'C:\\key')``
            for arg in re.findall(r"['\"]([^'\"]+)['\"]", head):
                if "://" not in arg:
                    effects.read(scan, _path(arg))
        if method and method.group(2).lower() == "delete" and target:  # ``[IO.Directory]::Delete('C:\\x', $true)``
            effects.delete(scan, _path(target.group(1)), "$true" in head.lower() or "recurs" in head.lower(), shown)
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
                return scan.engine.exec_file(_path(a), cmd.stdin, args[i + 1 :])
            return _ps_command(scan, " ".join(args[i:]), cmd)
        value = args[i + 1] if _PS_PARAMS[name] and i + 1 < len(args) else ""
        if name == "command":
            if value == "-":
                return scan.engine.consume(cmd.stdin, "shell")
            return _ps_command(scan, " ".join(args[i + 1 :]), cmd)
        if name == "encodedcommand":
            decoded = _decode(value)
            if decoded is None:
                scan.hit("G111", _shown(scan, cmd))
                return None
            scan.hit("G111" if _IEX.search(decoded) else "G158", decoded[:100])  # encoded *and* evaluating code
            return _ps_command(scan, decoded, cmd)
        if name == "file":
            return scan.engine.exec_file(_path(value), cmd.stdin, args[i + 2 :])
        i += 2 if _PS_PARAMS[name] else 1
    return scan.engine.consume(cmd.stdin, "shell", interactive=True)


def _ps_command(scan: Scan, code: str, cmd: Cmd) -> Flow:
    scan.tag("execute")
    if DYN_OPEN in code and code.strip().startswith(DYN_OPEN):
        flow = scan.flow_of(code)
        scan.hit("G112" if flow.bits & 1 else "G111" if flow.bits & 2 else "G194", _shown(scan, cmd))
        return OPAQUE_FLOW
    before = len(scan.hits)
    run(scan, code, "ps", cmd.stdin)
    if len(scan.hits) == before:
        scan.hit("G180", "an empty PowerShell command")
    return OPAQUE_FLOW


def _decode(value: str) -> str | None:
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


# -- cmdlets and cmd.exe builtins
_REMOVE = dict.fromkeys(("path", "literalpath", "filter", "include", "exclude", "stream", "credential"), True) | {
    "recurse": False,
    "force": False,
    "whatif": False,
    "confirm": False,
}
_REGISTRY = re.compile(r"(?i)^(registry::)?(hk(lm|cu|cr|u|cc)|hkey_\w+)(:|\\|/|$)")
_MACHINE_KEY = re.compile(r"(?i)^(registry::)?(hklm|hkcr|hku|hkcc|hkey_local_machine|hkey_classes_root|hkey_users)")
_RUN_KEY = re.compile(r"(?i)\\(run|runonce|runservices|winlogon|image file execution options)(\\|$)")


def _remove(cmd: Cmd, scan: Scan) -> Flow:
    values, operands, switches = ps_args(cmd.args, _REMOVE)
    targets = [*operands, *(p for k in ("path", "literalpath") if values.get(k) for p in values[k].split(","))]
    if "whatif" in values:
        scan.hit("G180", _shown(scan, cmd))
        return EMPTY
    recursive = "recurse" in values or bool(switches & {"/s", "-r"})
    if not targets:
        if cmd.stdin == EMPTY:
            scan.hit("G184", _shown(scan, cmd))
            return EMPTY
        listed = [f"{p.rstrip(chr(92) + '/')}/*" for p in cmd.stdin.paths]  # ``Get-ChildItem C:\\x | Remove-Item``
        targets = listed or [scan.dynamic("(pipeline input)")]
    for target in targets:
        if _REGISTRY.match(target):
            _registry(scan, target, "delete", _shown(scan, cmd))
        else:
            effects.delete(scan, _path(target), recursive, _shown(scan, cmd))
    return EMPTY


def _registry(scan: Scan, key: str, action: str, shown: str) -> None:
    scan.tag("write")
    if action == "add" and _RUN_KEY.search(key.replace("/", "\\")):
        scan.hit("G153", shown)  # a Run key: a program started at every logon
    elif _MACHINE_KEY.match(key) or action == "save":
        scan.hit("G140" if action == "save" else "G159", shown)
    else:
        scan.hit("G177", shown)


_READ = dict.fromkeys(
    ("path", "literalpath", "tail", "totalcount", "head", "encoding", "delimiter", "stream"), True
) | {
    "raw": False,
    "wait": False,
    "force": False,
}


def _get_content(cmd: Cmd, scan: Scan) -> Flow:
    values, operands, _ = ps_args(cmd.args, _READ)
    targets = [*operands, *(values[k] for k in ("path", "literalpath") if values.get(k))]
    flow = EMPTY
    for target in targets:
        flow = flow | effects.read_flow(scan, _path(target))
    if not scan.hits or scan.hits[-1].rule_id not in _SECRET_RULES:
        scan.hit("G180", _shown(scan, cmd))
    return flow if flow != EMPTY else Flow(0)


_SELECT = dict.fromkeys(("path", "literalpath", "pattern", "include", "exclude", "encoding", "context"), True)


def _select_string(cmd: Cmd, scan: Scan) -> Flow:
    values, operands, _ = ps_args(cmd.args, _SELECT)
    files = operands if "pattern" in values else operands[1:]
    files += [values[k] for k in ("path", "literalpath") if values.get(k)]
    if cmd.name == "findstr":
        files = [f for f in operands[1:] if not f.startswith("/")]
    for f in files:
        effects.read(scan, _path(f))
    scan.hit("G180", _shown(scan, cmd))
    return Flow(cmd.stdin.bits)


def _write_output(cmd: Cmd, scan: Scan) -> Flow:
    scan.hit("G180", _shown(scan, cmd))
    return Flow(0, " ".join(a for a in cmd.args if param(a, {"nonewline": False}) is None))


_WRITE = dict.fromkeys(("path", "literalpath", "value", "encoding", "itemtype", "name", "filepath", "target"), True)


def _write(cmd: Cmd, scan: Scan) -> Flow:
    values, operands, _ = ps_args(cmd.args, _WRITE | {"force": False, "append": False, "nonewline": False})
    target = values.get("path") or values.get("literalpath") or values.get("filepath") or next(iter(operands), None)
    if target is None:
        scan.hit("G184", _shown(scan, cmd))
        return EMPTY
    if values.get("name"):
        target = f"{target.rstrip(chr(92) + '/')}/{values['name']}"
    if _REGISTRY.match(target):
        _registry(scan, target, "add", _shown(scan, cmd))
        return EMPTY
    value = values.get("value") or (operands[1] if len(operands) > 1 else None)
    flow = Flow(0, value) if value is not None else cmd.stdin
    how = "append" if cmd.name in ("add-content", "ac") or "append" in values else "write"
    effects.write(scan, _path(target), flow, "create" if cmd.name in ("new-item", "ni", "md", "mkdir") else how)
    return EMPTY


_COPY = dict.fromkeys(("path", "literalpath", "destination", "filter", "include", "exclude"), True)


def _copy_move(cmd: Cmd, scan: Scan) -> Flow:
    values, operands, _ = ps_args(cmd.args, _COPY | {"recurse": False, "force": False})
    sources = [values[k] for k in ("path", "literalpath") if values.get(k)] + operands
    dest = values.get("destination") or (sources.pop() if len(sources) >= 2 else None)
    flow = EMPTY
    for src in sources:
        if cmd.name == "move-item":
            effects.move_away(scan, _path(src), dest and _path(dest))
        else:
            flow = flow | effects.read_flow(scan, _path(src))
    if dest:
        effects.write(scan, _path(dest), flow)
    if not sources:
        scan.hit("G184", _shown(scan, cmd))
    return EMPTY


def _robocopy(cmd: Cmd, scan: Scan) -> Flow:
    paths = [a for a in cmd.args if not a.startswith("/")]
    switches = {a.lower() for a in cmd.args if a.startswith("/")}
    if cmd.name == "robocopy" and len(paths) >= 2 and switches & {"/mir", "/purge"}:
        effects.delete(scan, _path(paths[1]) + "/*", True, _shown(scan, cmd))  # mirroring deletes what the source lacks
    elif len(paths) >= 2:
        effects.read(scan, _path(paths[0]))
        effects.write(scan, _path(paths[1]))
    else:
        scan.hit("G184", _shown(scan, cmd))
    return EMPTY


def _disk(cmd: Cmd, scan: Scan) -> Flow:
    """Format-Volume, Clear-Disk, diskpart, ``format C:``, ``cipher /w``: destroy a volume's data."""
    args = [a.lower() for a in cmd.args]
    if "/?" in args or "-whatif" in args or (cmd.name == "cipher" and not any(a.startswith("/w") for a in args)):
        scan.hit("G180" if "/?" in args or "-whatif" in args else "G177", _shown(scan, cmd))
    elif cmd.name == "format" and not any(re.fullmatch(r"[a-z]:\\?", a) for a in args):
        scan.hit("G182", _shown(scan, cmd))  # another program called format
    else:
        scan.hit("G121", _shown(scan, cmd))
    scan.tag("write")
    return EMPTY


def _backups(cmd: Cmd, scan: Scan) -> Flow:
    """vssadmin, wbadmin, bcdedit, wmic: deleting shadow copies or boot settings is ransomware's first step."""
    args = " ".join(cmd.args).lower()
    if cmd.name == "bcdedit":
        destructive = re.search(r"/(set|delete|deletevalue|import|create|default|bootsequence|displayorder)\b", args)
    elif cmd.name == "wmic":
        destructive = re.search(r"shadowcopy.*delete|delete.*shadowcopy", args)
        if not destructive and re.search(r"\b(delete|call|create|set)\b", args):
            scan.hit("G177", _shown(scan, cmd))
            return EMPTY
    else:
        destructive = re.search(r"\b(delete|resize)\b", args)
    scan.hit("G129" if destructive else "G180", _shown(scan, cmd))
    return EMPTY


def _power(cmd: Cmd, scan: Scan) -> Flow:
    scan.hit("G180" if "-whatif" in (a.lower() for a in cmd.args) else "G171", _shown(scan, cmd))
    return EMPTY


def _execution_policy(cmd: Cmd, scan: Scan) -> Flow:
    values, operands, _ = ps_args(cmd.args, {"executionpolicy": True, "scope": True, "force": False})
    policy = (values.get("executionpolicy") or next(iter(operands), "")).lower()
    process = values.get("scope", "").lower() == "process"
    scan.hit("G176" if policy in ("unrestricted", "bypass") and not process else "G177", _shown(scan, cmd))
    return EMPTY


def _reg(cmd: Cmd, scan: Scan) -> Flow:
    sub = cmd.args[0].lower() if cmd.args else ""
    key = cmd.args[1] if len(cmd.args) > 1 else ""
    if sub in ("query", "export", "compare", "/?", ""):
        scan.hit("G180", _shown(scan, cmd))
    elif sub in ("delete", "add", "import", "restore", "load", "unload", "copy", "save"):
        _registry(scan, key if sub != "import" else "HKLM", sub, _shown(scan, cmd))
    else:
        scan.hit("G182", _shown(scan, cmd))
    return EMPTY


def _services(cmd: Cmd, scan: Scan) -> Flow:
    args = " ".join(cmd.args).lower()
    name = cmd.name
    if name in ("schtasks", "register-scheduledtask", "new-scheduledtask"):
        rule = "G153" if "/create" in args or name != "schtasks" else "G177" if "/delete" in args else "G180"
    elif name == "net":
        rule = (
            "G176"
            if re.search(r"\b(user|localgroup)\b.*(/add|/delete|/active)", args)
            else ("G174" if re.search(r"\b(stop|pause)\b", args) else "G180" if not args or "view" in args else "G177")
        )
    elif name == "sc":
        rule = "G174" if re.search(r"\b(stop|delete|config|pause)\b", args) else "G177" if "create" in args else "G180"
    elif name in ("stop-service", "spsv", "remove-service"):
        rule = "G174"
    elif name == "set-service":
        rule = "G174" if re.search(r"disabled|stopped", args) else "G177"
    elif name == "setx":
        rule = "G151"  # a variable every new shell inherits
    else:
        rule = "G178"  # stop-process, taskkill
    scan.hit(rule, _shown(scan, cmd))
    return EMPTY


def _acl(cmd: Cmd, scan: Scan) -> Flow:
    args = [a for a in cmd.args if not a.startswith("/")]
    recursive = any(a.lower() in ("/t", "/r") for a in cmd.args)
    worst = "G128"
    for a in args[:1]:
        place = scan.place(_path(a))
        if place.tier in ("root", "home", "system") and recursive:
            worst = "G130"
        elif place.tier in ("system", "credential"):
            worst = "G133"
    if worst == "G128" and any("everyone" in a.lower() and ":f" in a.lower() for a in cmd.args):
        worst = "G131"
    scan.hit(worst, _shown(scan, cmd))
    return EMPTY


def _start_process(cmd: Cmd, scan: Scan) -> Flow | None:
    values, operands, _ = ps_args(
        cmd.args, dict.fromkeys(("filepath", "argumentlist", "verb", "workingdirectory", "credential"), True)
    )
    target = values.get("filepath") or next(iter(operands), None)
    if target is None:
        scan.hit("G182", _shown(scan, cmd))
        return None
    extra = values.get("argumentlist") or " ".join(operands[1:])
    words = [w for _, ws in pwsh.split(extra).statements for w in ws]
    if values.get("verb", "").lower() == "runas":
        scan.hit("G177", _shown(scan, cmd))
    scan.engine.run((_path(target), *words))
    return None


def _set_location(cmd: Cmd, scan: Scan) -> Flow:
    """``cd C:\\`` then ``Remove-Item .``: a drive path becomes ``/c/…``, which the resolver reads as Windows."""
    target = next((a for a in cmd.args if not a.startswith(("/", "-")) or a.startswith("/mnt/")), None)
    comps = windows_parts(target) if target else None
    if comps is not None and comps[0] != "\\\\" and comps[0].isalpha():
        scan.cwd = "/" + "/".join(comps)
    else:
        scan.chdir(_path(target) if target else None)
    scan.hit("G180", _shown(scan, cmd))
    return EMPTY


def _get_childitem(cmd: Cmd, scan: Scan) -> Flow:
    values, operands, _ = ps_args(
        cmd.args, dict.fromkeys(("path", "literalpath", "filter", "include", "exclude", "depth"), True)
    )
    scan.hit("G180", _shown(scan, cmd))
    if values.keys() & {"filter", "include", "exclude"} or any("*" in o or "?" in o for o in operands):
        return OPAQUE_FLOW  # a selection: which files is only known at runtime
    listed = [values[k] for k in ("path", "literalpath") if values.get(k)] + operands
    return Flow(OPAQUE_FLOW.bits, None, tuple(_path(p) for p in listed or ["."]))


_READ_ONLY = (
    "get-location gl test-path write-host get-process gps get-item gi get-command gcm get-help "
    "resolve-path measure-object select-object where-object sort-object format-table format-list out-string "
    "get-date get-service gsv get-hotfix get-itemproperty gp get-member group-object foreach-object out-host "
    "get-filehash convertto-json convertfrom-json get-volume get-disk get-partition get-psdrive get-executionpolicy "
    "get-computerinfo systeminfo tasklist ver cls clear-host get-alias get-variable get-module get-acl "
    "get-netipaddress get-netadapter ipconfig get-culture get-host out-null get-wmiobject "
    "get-ciminstance get-eventlog get-winevent"
)

HANDLERS: dict[str, Handler] = {
    **table("powershell pwsh powershell_ise", _powershell),
    "cmd": _cmd,
    **table("get-childitem gci", _get_childitem),
    **table("set-location", _set_location),
    **table("remove-item ri rd del erase remove-itemproperty", _remove),
    **table("get-content gc", _get_content),
    **table("select-string sls findstr", _select_string),
    **table("write-output", _write_output),
    **table("set-content add-content ac out-file new-item ni md set-itemproperty new-itemproperty sp", _write),
    **table("copy-item move-item", _copy_move),
    **table("robocopy xcopy", _robocopy),
    **table("format-volume clear-disk initialize-disk remove-partition format diskpart cipher", _disk),
    **table("vssadmin wbadmin bcdedit wmic", _backups),
    **table("stop-computer restart-computer", _power),
    **table("set-executionpolicy", _execution_policy),
    "reg": _reg,
    **table(
        "schtasks register-scheduledtask new-scheduledtask net sc stop-service spsv remove-service set-service setx "
        "stop-process taskkill",
        _services,
    ),
    **table("icacls takeown cacls", _acl),
    **table("start-process saps start invoke-item ii", _start_process),
    **table(_READ_ONLY, lambda cmd, scan: _read_only(cmd, scan)),
}


def _read_only(cmd: Cmd, scan: Scan) -> Flow:
    scan.hit("G180", _shown(scan, cmd))
    return Flow(cmd.stdin.bits) if cmd.name in ("where-object", "select-object", "sort-object") else OPAQUE_FLOW
