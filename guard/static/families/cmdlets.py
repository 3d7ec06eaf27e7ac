"""Windows cmdlets and cmd.exe builtins, and how to read PowerShell's parameters.

Each handler judges one statement the way its POSIX peer would: ``Remove-Item -Recurse`` and
``rd /s`` delete through :mod:`guard.static.families.effects`, ``Get-Content`` reads, ``Set-Content`` writes,
so tiers and rule ids are shared. What has no POSIX peer lives here too: volumes and disks
(G121), backups and boot settings (G129), the registry (G403, G153 for Run keys), execution policy,
services, scheduled tasks and ACLs. :mod:`guard.static.families.windows` routes scripts to them.
"""

from __future__ import annotations

import re

from guard import lazyre
from guard.static.facts.paths import windows_parts
from guard.static.families import effects
from guard.static.families.base import Handler, table
from guard.static.reading import pwsh
from guard.static.scan import EMPTY, OPAQUE_FLOW, Cmd, Flow, Scan, display

SECRET_RULES = frozenset({"G140", "G141", "G142"})


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


def win_path(word: str) -> str:
    """A relative Windows path with POSIX slashes (``.\\build`` -> ``./build``); others unchanged."""
    if "\\" in word and word[1:2] != ":" and not word.startswith(("%", "$", "~", "\\\\")):
        return word.replace("\\", "/")
    return word


def shown(scan: Scan, cmd: Cmd) -> str:
    return display(scan, " ".join(cmd.argv))


# -- cmdlets and cmd.exe builtins
_REMOVE = dict.fromkeys(("path", "literalpath", "filter", "include", "exclude", "stream", "credential"), True) | {
    "recurse": False,
    "force": False,
    "whatif": False,
    "confirm": False,
}
_REGISTRY = lazyre.compile(r"(?i)^(registry::)?(hk(lm|cu|cr|u|cc)|hkey_\w+)(:|\\|/|$)")
_MACHINE_KEY = lazyre.compile(r"(?i)^(registry::)?(hklm|hkcr|hku|hkcc|hkey_local_machine|hkey_classes_root|hkey_users)")
_RUN_KEY = lazyre.compile(r"(?i)\\(run|runonce|runservices|winlogon|image file execution options)(\\|$)")


def _remove(cmd: Cmd, scan: Scan) -> Flow:
    values, operands, switches = ps_args(cmd.args, _REMOVE)
    targets = [*operands, *(p for k in ("path", "literalpath") if values.get(k) for p in values[k].split(","))]
    if "whatif" in values:
        scan.hit("G180", shown(scan, cmd))
        return EMPTY
    recursive = "recurse" in values or bool(switches & {"/s", "-r"})
    if not targets:
        if cmd.stdin == EMPTY:
            scan.hit("G184", shown(scan, cmd))
            return EMPTY
        listed = [f"{p.rstrip(chr(92) + '/')}/*" for p in cmd.stdin.paths]  # ``Get-ChildItem C:\\x | Remove-Item``
        targets = listed or [scan.dynamic("(pipeline input)")]
    for target in targets:
        if _REGISTRY.match(target):
            _registry(scan, target, "delete", shown(scan, cmd))
        else:
            effects.delete(scan, win_path(target), recursive, shown(scan, cmd))
    return EMPTY


def _registry(scan: Scan, key: str, action: str, shown: str) -> None:
    scan.tag("write")
    if action == "add" and _RUN_KEY.search(key.replace("/", "\\")):
        scan.hit("G153", shown)  # a Run key: a program started at every logon
    elif _MACHINE_KEY.match(key) or action == "save":
        scan.hit("G140" if action == "save" else "G403", shown)
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
        flow = flow | effects.read_flow(scan, win_path(target))
    if not scan.hits or scan.hits[-1].rule_id not in SECRET_RULES:
        scan.hit("G180", shown(scan, cmd))
    return flow if flow != EMPTY else Flow(0)


_SELECT = dict.fromkeys(("path", "literalpath", "pattern", "include", "exclude", "encoding", "context"), True)


def _select_string(cmd: Cmd, scan: Scan) -> Flow:
    values, operands, _ = ps_args(cmd.args, _SELECT)
    files = operands if "pattern" in values else operands[1:]
    files += [values[k] for k in ("path", "literalpath") if values.get(k)]
    if cmd.name == "findstr":
        files = [f for f in operands[1:] if not f.startswith("/")]
    for f in files:
        effects.read(scan, win_path(f))
    scan.hit("G180", shown(scan, cmd))
    return Flow(cmd.stdin.bits)


def _write_output(cmd: Cmd, scan: Scan) -> Flow:
    scan.hit("G180", shown(scan, cmd))
    return Flow(0, " ".join(a for a in cmd.args if param(a, {"nonewline": False}) is None))


_WRITE = dict.fromkeys(("path", "literalpath", "value", "encoding", "itemtype", "name", "filepath", "target"), True)


def _write(cmd: Cmd, scan: Scan) -> Flow:
    values, operands, _ = ps_args(cmd.args, _WRITE | {"force": False, "append": False, "nonewline": False})
    target = values.get("path") or values.get("literalpath") or values.get("filepath") or next(iter(operands), None)
    if target is None:
        scan.hit("G184", shown(scan, cmd))
        return EMPTY
    if values.get("name"):
        target = f"{target.rstrip(chr(92) + '/')}/{values['name']}"
    if _REGISTRY.match(target):
        _registry(scan, target, "add", shown(scan, cmd))
        return EMPTY
    value = values.get("value") or (operands[1] if len(operands) > 1 else None)
    flow = Flow(0, value) if value is not None else cmd.stdin
    how = "append" if cmd.name in ("add-content", "ac") or "append" in values else "write"
    effects.write(scan, win_path(target), flow, "create" if cmd.name in ("new-item", "ni", "md", "mkdir") else how)
    return EMPTY


_COPY = dict.fromkeys(("path", "literalpath", "destination", "filter", "include", "exclude"), True)


def _copy_move(cmd: Cmd, scan: Scan) -> Flow:
    values, operands, _ = ps_args(cmd.args, _COPY | {"recurse": False, "force": False})
    sources = [values[k] for k in ("path", "literalpath") if values.get(k)] + operands
    dest = values.get("destination") or (sources.pop() if len(sources) >= 2 else None)
    flow = EMPTY
    for src in sources:
        if cmd.name == "move-item":
            effects.move_away(scan, win_path(src), dest and win_path(dest))
        else:
            flow = flow | effects.read_flow(scan, win_path(src))
    if dest:
        effects.write(scan, win_path(dest), flow)
    if not sources:
        scan.hit("G184", shown(scan, cmd))
    return EMPTY


def _robocopy(cmd: Cmd, scan: Scan) -> Flow:
    paths = [a for a in cmd.args if not a.startswith("/")]
    switches = {a.lower() for a in cmd.args if a.startswith("/")}
    if cmd.name == "robocopy" and len(paths) >= 2 and switches & {"/mir", "/purge"}:
        effects.delete(
            scan, win_path(paths[1]) + "/*", True, shown(scan, cmd)
        )  # mirroring deletes what the source lacks
    elif len(paths) >= 2:
        effects.read(scan, win_path(paths[0]))
        effects.write(scan, win_path(paths[1]))
    else:
        scan.hit("G184", shown(scan, cmd))
    return EMPTY


def _disk(cmd: Cmd, scan: Scan) -> Flow:
    """Format-Volume, Clear-Disk, diskpart, ``format C:``, ``cipher /w``: destroy a volume's data."""
    args = [a.lower() for a in cmd.args]
    if "/?" in args or "-whatif" in args or (cmd.name == "cipher" and not any(a.startswith("/w") for a in args)):
        scan.hit("G180" if "/?" in args or "-whatif" in args else "G177", shown(scan, cmd))
    elif cmd.name == "format" and not any(re.fullmatch(r"[a-z]:\\?", a) for a in args):
        scan.hit("G182", shown(scan, cmd))  # another program called format
    else:
        scan.hit("G121", shown(scan, cmd))
    scan.tag("write")
    return EMPTY


def _in_order(text: str, first: str, then: str) -> bool:
    """``re.search(first + ".*" + then, text)`` (across lines too) in linear time: that pattern rescans
    to the end from every ``first`` (``net user user user …`` took seconds)."""
    m = re.search(first, text)
    return m is not None and re.search(then, text[m.end() :]) is not None


def _backups(cmd: Cmd, scan: Scan) -> Flow:
    """vssadmin, wbadmin, bcdedit, wmic: deleting shadow copies or boot settings is ransomware's first step."""
    args = " ".join(cmd.args).lower()
    if cmd.name == "bcdedit":
        destructive = bool(
            re.search(r"/(set|delete|deletevalue|import|create|default|bootsequence|displayorder)\b", args)
        )
    elif cmd.name == "wmic":
        destructive = _in_order(args, "shadowcopy", "delete") or _in_order(args, "delete", "shadowcopy")
        if not destructive and re.search(r"\b(delete|call|create|set)\b", args):
            scan.hit("G177", shown(scan, cmd))
            return EMPTY
    else:
        destructive = bool(re.search(r"\b(delete|resize)\b", args))
    scan.hit("G129" if destructive else "G180", shown(scan, cmd))
    return EMPTY


def _power(cmd: Cmd, scan: Scan) -> Flow:
    scan.hit("G180" if "-whatif" in (a.lower() for a in cmd.args) else "G171", shown(scan, cmd))
    return EMPTY


def _execution_policy(cmd: Cmd, scan: Scan) -> Flow:
    values, operands, _ = ps_args(cmd.args, {"executionpolicy": True, "scope": True, "force": False})
    policy = (values.get("executionpolicy") or next(iter(operands), "")).lower()
    process = values.get("scope", "").lower() == "process"
    scan.hit("G176" if policy in ("unrestricted", "bypass") and not process else "G177", shown(scan, cmd))
    return EMPTY


def _reg(cmd: Cmd, scan: Scan) -> Flow:
    sub = cmd.args[0].lower() if cmd.args else ""
    key = cmd.args[1] if len(cmd.args) > 1 else ""
    if sub in ("query", "export", "compare", "/?", ""):
        scan.hit("G180", shown(scan, cmd))
    elif sub in ("delete", "add", "import", "restore", "load", "unload", "copy", "save"):
        _registry(scan, key if sub != "import" else "HKLM", sub, shown(scan, cmd))
    else:
        scan.hit("G182", shown(scan, cmd))
    return EMPTY


def _services(cmd: Cmd, scan: Scan) -> Flow:
    args = " ".join(cmd.args).lower()
    name = cmd.name
    if name in ("schtasks", "register-scheduledtask", "new-scheduledtask"):
        rule = "G153" if "/create" in args or name != "schtasks" else "G177" if "/delete" in args else "G180"
    elif name == "net":
        rule = (
            "G176"
            if _in_order(args, r"\b(user|localgroup)\b", "/add|/delete|/active")
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
    scan.hit(rule, shown(scan, cmd))
    return EMPTY


def _acl(cmd: Cmd, scan: Scan) -> Flow:
    args = [a for a in cmd.args if not a.startswith("/")]
    recursive = any(a.lower() in ("/t", "/r") for a in cmd.args)
    worst = "G128"
    for a in args[:1]:
        place = scan.place(win_path(a))
        if place.tier in ("root", "home", "system") and recursive:
            worst = "G130"
        elif place.tier in ("system", "credential"):
            worst = "G133"
    if worst == "G128" and any("everyone" in a.lower() and ":f" in a.lower() for a in cmd.args):
        worst = "G131"
    scan.hit(worst, shown(scan, cmd))
    return EMPTY


def _start_process(cmd: Cmd, scan: Scan) -> Flow | None:
    values, operands, _ = ps_args(
        cmd.args, dict.fromkeys(("filepath", "argumentlist", "verb", "workingdirectory", "credential"), True)
    )
    target = values.get("filepath") or next(iter(operands), None)
    if target is None:
        scan.hit("G182", shown(scan, cmd))
        return None
    extra = values.get("argumentlist") or " ".join(operands[1:])
    words = [w for _, ws in pwsh.split(extra).statements for w in ws]
    if values.get("verb", "").lower() == "runas":
        scan.hit("G177", shown(scan, cmd))
    scan.engine.run((win_path(target), *words))
    return None


def _set_location(cmd: Cmd, scan: Scan) -> Flow:
    """``cd C:\\`` then ``Remove-Item .``: a drive path becomes ``/c/…``, which the resolver reads as Windows."""
    target = next((a for a in cmd.args if not a.startswith(("/", "-")) or a.startswith("/mnt/")), None)
    comps = windows_parts(target) if target else None
    if comps is not None and comps[0] != "\\\\" and comps[0].isalpha():
        scan.cwd = "/" + "/".join(comps)
    else:
        scan.chdir(win_path(target) if target else None)
    scan.hit("G180", shown(scan, cmd))
    return EMPTY


def _get_childitem(cmd: Cmd, scan: Scan) -> Flow:
    values, operands, _ = ps_args(
        cmd.args, dict.fromkeys(("path", "literalpath", "filter", "include", "exclude", "depth"), True)
    )
    scan.hit("G180", shown(scan, cmd))
    if values.keys() & {"filter", "include", "exclude"} or any("*" in o or "?" in o for o in operands):
        return OPAQUE_FLOW  # a selection: which files is only known at runtime
    listed = [values[k] for k in ("path", "literalpath") if values.get(k)] + operands
    return Flow(OPAQUE_FLOW.bits, None, tuple(win_path(p) for p in listed or ["."]))


_READ_ONLY = (
    "get-location gl test-path write-host get-process gps get-item gi get-command gcm get-help "
    "resolve-path measure-object select-object where-object sort-object format-table format-list out-string "
    "get-date get-service gsv get-hotfix get-itemproperty gp get-member group-object foreach-object out-host "
    "get-filehash convertto-json convertfrom-json get-volume get-disk get-partition get-psdrive get-executionpolicy "
    "get-computerinfo systeminfo tasklist ver cls clear-host get-alias get-variable get-module get-acl "
    "get-netipaddress get-netadapter ipconfig get-culture get-host out-null get-wmiobject "
    "get-ciminstance get-eventlog get-winevent"
)

CMDLETS: dict[str, Handler] = {
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
    scan.hit("G180", shown(scan, cmd))
    return Flow(cmd.stdin.bits) if cmd.name in ("where-object", "select-object", "sort-object") else OPAQUE_FLOW
