"""Interpreter one-liners: what ``python -c``, ``node -e``, ``perl -e``, ``ruby -e``… code does.

The code is another language, so it is read for *effects* rather than parsed: shell-outs with a
literal command (``os.system("rm -rf /")``, ``system("…")``, backticks, ``subprocess.run([…])``)
are handed back to the shell analysis; deletes, writes and reads with a resolvable path
(``shutil.rmtree(os.path.expanduser("~"))``, ``open("/etc/passwd", "w")``) go through the same
path policy as ``rm`` and ``>``; network use combined with ``exec``/``eval`` is remote code, with a
secret read it is exfiltration, with a socket and a shell it is a reverse shell.
"""

from __future__ import annotations

import json
import re

import attrs

from guard import lazyre
from guard.static.families import effects
from guard.static.families.base import Handler
from guard.static.families.secrets import is_secret_var
from guard.static.reading import fold
from guard.static.reading.text import DYN_OPEN, wordset
from guard.static.scan import DECODED, EMPTY, GUARD_CODE, REMOTE, Cmd, Flow, Scan, display

_Q = r"(?P<q>['\"])(?P<s>(?:\\.|(?!(?P=q)).)*)(?P=q)"
_SHELL_STR = lazyre.compile(
    r"(?:os\.system|os\.popen|subprocess\.\w+|commands\.getoutput|(?<![\w.])system|execSync|spawnSync|execFile(?:Sync)?"
    r"|child_process\.exec|(?<![\w.])exec(?=\s*+\(?\s*+['\"][^'\"]*\s)|popen|shell_exec|passthru|proc_open|IO\.popen"
    r"|Kernel\.(?:system|exec|spawn)|do shell script|Runtime\.getRuntime\(\)\.exec|qx|os\.execute)\s*+\(?\s*+" + _Q
)
_MORE_ARGS = lazyre.compile(r"(?:\s*,\s*['\"][^'\"]*['\"])+(?=\s*\))")  # more literal words before the ``)``
_EXECV = lazyre.compile(r"os\.exec[lv]p?e?\s*\(\s*['\"][^'\"]*['\"]\s*,\s*\[([^\]]*)\]")  # argv[0] is the name
_BACKTICK = lazyre.compile(r"`([^`]+)`|%x\{([^}]*)\}|qx\{([^}]*)\}")
_SHELL_LIST = lazyre.compile(
    r"(?:subprocess\.\w+|Popen|spawnSync|spawn|execFile(?:Sync)?|execvp?e?|system)\s*\(\s*\[([^\]]*)\]"
)
_SHELL_ANY = lazyre.compile(
    r"os\.system|os\.popen|subprocess|commands\.|(?<![\w.])system\s*\(|child_process|execSync|"
    r"spawn\(|`|%x\{|qx\{|shell_exec|passthru|proc_open|IO\.popen|do shell script|pty\.spawn|"
    r"os\.exec[lv]p?e?\(|Runtime\.getRuntime|os\.execute|io\.popen|Deno\.(?:run|Command)|\$`"
)
# Tcl and expect: ``exec cmd args`` / ``spawn cmd args`` run a program with the words that follow
_TCL_EXEC = lazyre.compile(r"(?m)(?:^|[;\[{])\s*(?:exec|spawn)\s+([^\]\n;}]+)")
# JavaScript: ``Deno.run({cmd: [...]})``, ``new Deno.Command("rm", {args: [...]})``, zx/Bun ``$`cmd` ``
_JS_ARGV = lazyre.compile(
    r"Deno\.run\(\s*\{\s*cmd\s*:\s*\[([^\]]*)\]|Deno\.Command\(\s*(['\"][^'\"]*['\"])\s*,\s*\{\s*args\s*:\s*\[([^\]]*)\]"
)
_JS_TEMPLATE = lazyre.compile(r"(?<![\w])\$`([^`]+)`")
_DELETE = lazyre.compile(
    r"(?P<fn>shutil\.rmtree|\.(?:rmSync|rmdirSync|unlinkSync)|os\.remove|os\.unlink|os\.rmdir|os\.removedirs|rmtree|fs\.rmSync|fs\.rmdirSync|fs\.unlinkSync"
    r"|fs\.promises\.rm|fs\.rm|fs\.rmdir|fs\.unlink|rimraf(?:\.sync)?|FileUtils\.rm_rf|FileUtils\.rm_r|FileUtils\.rm"
    r"|FileUtils\.remove_dir|File\.delete|Dir\.rmdir|remove_tree|(?<![\w.])unlink|os\.RemoveAll|Remove-Item)"
    r"\s*\(?\s*(?P<arg>[^()\n;]*(?:\([^()]*\)[^()\n;]*)*)"
)
_PATH_METHOD = lazyre.compile(
    r"Path\((?P<arg>[^()]*(?:\([^()]*\))?[^()]*)\)(?:\.expanduser\(\))?\.(?P<fn>unlink|rmdir|write_text|"
    r"write_bytes|read_text|read_bytes)\("
)
_OPEN = lazyre.compile(
    r"(?:(?<![\w.])open|File\.open|fopen)\s*\(\s*(?P<arg>[^,()]*(?:\([^()]*\))?[^,()]*)\s*"
    r"(?:,\s*['\"](?P<mode>[^'\"]*)['\"])?"
)
# perl's ``open(F, ">>", PATH)`` / ``open(my $fh, '>', PATH)`` and the two-argument ``open(F, ">>PATH")``
_PERL_OPEN = lazyre.compile(
    r"\bopen\s*\(?\s*(?:my\s+)?[$\w]+\s*,\s*(?:['\"](?P<mode>\+?(?:>>?|<|\+<))['\"]\s*,\s*(?P<arg>[^,();]+)"
    r"|(?P<q>['\"])(?P<mode2>\+?>>?)\s*(?P<arg2>[^'\"]+)(?P=q))"
)
_READ = lazyre.compile(
    r"(?:readFileSync|readFile|File\.read|IO\.read|file_get_contents|File\.readlines|slurp)\s*\(\s*"
    r"(?P<arg>[^,()]*(?:\([^()]*\))?[^,()]*)"
)
_WRITE = lazyre.compile(
    r"(?:writeFileSync|writeFile|appendFileSync|File\.write|IO\.write|file_put_contents)\s*\(\s*"
    r"(?P<arg>[^,()]*(?:\([^()]*\))?[^,()]*)"
)
_ARG = r"[^,()]*(?:\([^()]*\))?[^,()]*"
# ``os.symlink(src, dst)``, ``fs.linkSync(src, dst)``, ``File.symlink``, ``FileUtils.ln_s``, perl ``symlink``
_LINK = lazyre.compile(
    r"(?P<fn>os\.symlink|os\.link|fs\.(?:promises\.)?(?:symlink|link)(?:Sync)?|File\.(?:symlink|link)"
    r"|FileUtils\.ln(?:_sf?)?|(?<![\w.])symlink)\s*\(\s*(?P<src>" + _ARG + r")\s*,\s*(?P<dst>" + _ARG + r")"
)
# ``Path(dst).symlink_to(src)``, ``Path(dst).hardlink_to(src)``
_LINK_TO = lazyre.compile(
    r"Path\((?P<dst>[^()]*(?:\([^()]*\))?[^()]*)\)(?:\.expanduser\(\))?\.(?P<fn>symlink_to|hardlink_to)\(\s*(?P<src>"
    + _ARG
    + r")"
)
_HOME_EXPR = lazyre.compile(
    r"expanduser\(\s*['\"]~['\"]\s*\)|Path\.home\(\)|os\.environ\[['\"]HOME['\"]\]|getenv\(['\"]HOME"
    r"['\"]\)|process\.env\.HOME|\.homedir\(\)|ENV\[['\"]HOME['\"]\]|\$ENV\{HOME\}|Dir\.home|\$HOME"
)
_STRING = lazyre.compile(r"['\"]([^'\"]*)['\"]")
_NET = lazyre.compile(
    r"requests\.|urllib|urlopen|http\.client|httpx|aiohttp|socket|fetch\(|axios|https?\.(?:get|request)\(|"
    r"net\.(?:connect|createConnection|Socket)|Net::HTTP|open-uri|URI\.open|LWP::|IO::Socket|TCPSocket|"
    r"fsockopen|curl_exec|file_get_contents\(\s*['\"]https?:|Invoke-WebRequest|\biwr\b|Invoke-RestMethod|"
    r"\birm\b|WebClient|DownloadString|smtplib|ftplib|paramiko|websocket|/inet/tcp",
    re.I,
)
_EGRESS = lazyre.compile(
    r"requests\.(?:post|put|patch)|\.post\(|\.put\(|method\s*[:=]\s*['\"](?:POST|PUT|PATCH)|sendall|"
    r"\.send\(|urlopen\([^)]*data\s*=|smtplib|storbinary|upload|Net::HTTP::Post|-Method\s+Post|"
    r"UploadString|UploadFile|\.write\(\s*(?:os\.environ|open)",
    re.I,
)
_EXEC = lazyre.compile(
    r"(?<![\w.])(?:eval|exec|compile)\s*\(|(?<![\w.])eval\b|new\s+Function|(?<![\w.])Function\(|instance_eval|class_eval|"
    r"Invoke-Expression|\biex\b|vm\.runIn|\beval\b\s*\$|\beval\s+\w"
)
_DECODE = lazyre.compile(
    r"b64decode|a2b_base64|atob\(|Buffer\.from\([^)]*['\"]base64['\"]|decode\(['\"]base64|unpack\(['\"]m|"
    r"FromBase64String|decode_base64|MIME::Base64|codecs\.decode|unhexlify|bytes\.fromhex|zlib\.decompress|"
    r"marshal\.loads|base64_decode|Base64\.decode",
    re.I,
)
_REVERSE = lazyre.compile(r"dup2|pty\.spawn|/bin/(?:ba)?sh|cmd\.exe|\bsh\s+-i|spawn\(\s*['\"](?:/bin/)?(?:ba)?sh", re.I)
_ENV_NAMES = lazyre.compile(
    r"(?:os\.environ(?:\.get)?[\[(]|getenv\(|process\.env\.|process\.env\[|ENV\[|\$ENV\{|\$env:)"
    r"\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)"
)
_ENV_DUMP = lazyre.compile(
    r"os\.environ(?![\[.]\s*['\"]?\w)|dict\(os\.environ\)|os\.environ\.copy\(\)|process\.env(?![.\[])|"
    r"ENV\.to_h|%ENV|Get-ChildItem\s+env:",
    re.I,
)
_FORK_BOMB = lazyre.compile(
    r"while\s*+\(?\s*+(?:True|1|true)\s*+\)?\s*+[:{]?\s*+(?:os\.)?fork\(\)|fork\s++while\s++fork|"
    r"for\s*+\(\s*+;\s*+;\s*+\)\s*+\{?\s*+fork\(\)|fork\(\)\s*+while\s*+(?:true|1)",
    re.I,
)
_IMPORT_CALL = lazyre.compile(
    r"(?:__import__|importlib\.import_module|require)\(\s*['\"]([\w.]+)['\"]\s*\)"
)  # ``__import__("os").system(…)`` is ``os.system(…)``
_IMPORT_AS = lazyre.compile(r"(?<![\w.])import\s+([\w.]+)\s+as\s+(\w+)")
_FROM_IMPORT = lazyre.compile(r"(?<![\w.])from\s+([\w.]+)\s+import\s+(\w+)(?:\s+as\s+(\w+))?")
_RENAMED = lazyre.compile(
    r"getattr\s*\(\s*(?:os|subprocess|shutil|pty|socket|builtins|__builtins__|importlib|sys\.modules)\b|"
    r"__builtins__|__subclasses__|__globals__|(?<![\w.])ctypes\.|\bcffi\b"
)  # calls named at runtime: guard cannot tell what runs
_BARE_NAMES = frozenset({"*", "open", "exec", "eval", "compile"})  # patterns match these unqualified
_RECURSIVE = ("rmtree", "rm_rf", "rm_r", "remove_dir", "RemoveAll", "remove_tree", "rimraf", "removedirs")


def analyse_code(scan: Scan, code: str, lang: str) -> None:
    """Judge interpreter source ``code`` by its effects (records rule ids on ``scan``)."""
    if lang == "python":
        from guard.static.families import selfguard

        selfguard.python_code(scan, code[:65536])  # before unaliasing: ``__import__("guard")`` names guard
    original = code[:65536]
    code = _unalias(original)
    scan.tag("execute")
    literal_shell = False
    for m in _SHELL_STR.finditer(code):
        literal_shell = True
        first = m.group("s").replace('\\"', '"').replace("\\'", "'")
        more = _MORE_ARGS.match(code, m.end())
        if more and more.group(0).strip():  # ``system("rm", "-rf", "/")``: a list of words, no shell
            scan.engine.run([first, *_STRING.findall(more.group(0))])
        else:
            scan.engine.script(first)
    for m in _TCL_EXEC.finditer(code if lang == "tcl" else ""):
        literal_shell = True
        scan.engine.script(m.group(1))
    for m in _BACKTICK.finditer(code if lang in ("ruby", "perl", "php", "julia") else ""):
        literal_shell = True
        scan.engine.script(next(g for g in m.groups() if g is not None))
    if lang == "js":
        for m in _JS_ARGV.finditer(code):
            argv = _STRING.findall(" ".join(g for g in m.groups() if g))
            if argv:
                literal_shell = True
                scan.engine.run(argv)
        for m in _JS_TEMPLATE.finditer(code):
            literal_shell = True
            scan.engine.script(m.group(1))
    for m in _EXECV.finditer(code):
        argv = _STRING.findall(m.group(1))
        if argv:
            literal_shell = True
            scan.engine.run(argv)
    for m in _SHELL_LIST.finditer(code):
        argv = _STRING.findall(m.group(1))
        if argv and re.match(r"\s*sys\.executable\s*,", m.group(1)):
            argv.insert(0, "python")  # ``[sys.executable, "-m", "pip", …]``: this Python runs the rest
        if argv:
            literal_shell = True
            scan.engine.run(argv)
    unknown = _paths(scan, code)
    computed, read = _folded(scan, original, lang)
    if read:  # the Python was parsed: its calls were judged by their folded values, not the patterns
        unknown, literal_shell = False, True
    if lang == "python":
        for m in re.finditer(r"(?<![\w.])exec\s*\(\s*" + _Q, code):
            analyse_code(scan, m.group("s").replace("\\n", "\n"), "python")
    net, egress = bool(_NET.search(code)), bool(_EGRESS.search(code))
    executes, decodes = bool(_EXEC.search(code)), bool(_DECODE.search(code))
    secret = _secret_env(scan, code)
    shown = code.strip().replace("\n", "; ")[:100]
    if net:
        scan.tag("network")
    if _FORK_BOMB.search(code):
        scan.hit("G175", shown)
    if (
        net
        and re.search(r"socket|fsockopen|TCPSocket|IO::Socket|net\.(connect|Socket)|/inet/tcp", code, re.I)
        and (_REVERSE.search(code))
    ):
        scan.hit("G144", shown)
    elif net and executes:
        scan.hit("G110", shown)
    elif decodes and executes:
        scan.hit("G111", shown)
    if net and (secret or scan.cmd_secret) and (egress or "socket" in code):
        scan.hit("G143", shown)
    elif net:
        scan.hit("G145" if egress else "G146", shown)
    renamed = bool(_RENAMED.search(code))
    if computed:
        scan.hit("G431", computed)
    elif (
        unknown or renamed or (_SHELL_ANY.search(code) and not literal_shell) or (executes and not net and not decodes)
    ):
        scan.hit("G118", shown)
    scan.hit("G119", shown)


def _folded(scan: Scan, code: str, lang: str) -> tuple[str, bool]:
    """Calls whose command, path or process guard folds from the code's expressions (``x = 'rm -rf ';
    os.system(x + '~')``, ``remove_tree($ENV{HOME})``) are judged like the shell command or path they
    work out to. Returns the first call it could not fold (it asks: G431), or ``""``, and whether the
    code was Python that parsed (then the folded calls stand in for the patterns' guesses)."""
    found = fold.effects(code, lang, scan.resolver.home)
    unfolded = ""
    if found is None or (lang == "python" and _RENAMED.search(code)):
        found, parsed = found or [], False
    else:
        parsed = lang == "python"
    saved = dict(scan.vars), set(scan.unset)  # (the code's environment is its own: gone when it ends)
    try:
        for eff in found:
            missed = _effect(scan, code, lang, eff)
            unfolded = unfolded or missed
    finally:
        scan.vars, scan.unset = saved
    return unfolded, parsed


def _effect(scan: Scan, code: str, lang: str, eff: fold.Effect) -> str:
    """Judge one folded call; what it could not fold (for G431), or ``""``."""
    if eff.kind == "environ":
        _environ(scan, eff)
        return ""
    if eff.env or eff.unset:  # ``subprocess.run([...], env={...})``: for that command only
        saved = dict(scan.vars), set(scan.unset)
        _environ(scan, eff)
        try:
            return _effect(scan, code, lang, attrs.evolve(eff, env=(), unset=()))
        finally:
            scan.vars, scan.unset = saved
    value = eff.value
    if eff.kind == "import":
        from guard.static.families import selfguard

        selfguard.folded_import(scan, code, value if isinstance(value, str) else None)
    elif value is None:
        return f"{eff.call}(…): guard could not work out its argument"
    elif eff.kind == "script" and isinstance(value, str):
        scan.engine.script(value)
    elif eff.kind == "argv" and isinstance(value, tuple) and value:
        scan.engine.run(value)
    elif eff.kind == "delete" and isinstance(value, str):
        effects.delete(scan, value, eff.recursive, fold.describe(eff))
    elif eff.kind == "write" and isinstance(value, str):
        effects.write(scan, value, EMPTY, "write")
    elif eff.kind == "extract" and isinstance(value, str):  # (the archive's members read when it folds)
        effects.unpack(scan, value, eff.source or None, absolute=eff.recursive)
    elif eff.kind in ("copy", "move") and isinstance(value, tuple) and len(value) == 2:
        _copied(scan, value[0], value[1], eff.kind == "move")
    elif eff.kind == "kill" and isinstance(value, tuple):
        signal = value[0].upper().removeprefix("SIG")
        scan.engine.run(("kill", f"-{signal}", value[1]))
    elif eff.kind == "code" and isinstance(value, str) and len(value) < len(code):
        analyse_code(scan, value, lang)
    return ""


def _environ(scan: Scan, eff: fold.Effect) -> None:
    """What the code's children inherit: ``os.environ["GUARD_HOME"] = …`` set (to a runtime value when it
    did not fold), ``del os.environ[…]`` gone; an agent host started after is judged with them (G443)."""
    for key, value in eff.env:
        scan.vars[key] = value if value is not None else scan.dynamic(f"${key}")
        scan.unset.discard(key)
    for key in eff.unset:
        scan.vars.pop(key, None)
        scan.unset.add(key)


def _copied(scan: Scan, source: str, dest: str, move: bool) -> None:
    """``shutil.copy(shutil.which("guard"), "/tmp/g")``, ``os.rename(src, dst)``: what is copied goes
    where ``dest`` is; a copy of guard's own program is judged where it ends (G414), known or not."""
    if move:
        effects.move_away(scan, source, dest or None)
    flow = effects.read_flow(scan, source)
    if dest:
        effects.write(scan, dest, flow)
    elif flow.bits & GUARD_CODE:
        scan.hit("G414", f"{source} -> ?")


def _unalias(code: str) -> str:
    """Module and function aliases spelled out, so the effect patterns see through them:
    ``import subprocess as sp; sp.run(…)``, ``from os import system as s; s(…)``, ``__import__("os")``."""
    if "import" not in code and "require" not in code:
        return code
    code = _IMPORT_CALL.sub(lambda m: m.group(1), code)
    for module, alias in _IMPORT_AS.findall(code):
        if alias != module:
            code = re.sub(rf"(?<![\w.]){re.escape(alias)}\.", module + ".", code)
    for module, name, alias in _FROM_IMPORT.findall(code):
        if alias and alias != name:
            code = re.sub(rf"(?<![\w.]){re.escape(alias)}\s*\(", f"{module}.{name}(", code)
        elif name not in _BARE_NAMES:
            code = re.sub(rf"(?<![\w.]){re.escape(name)}\s*\(", f"{module}.{name}(", code)
    return code


def _paths(scan: Scan, code: str) -> bool:
    """Deletes, writes and reads with a path guard can resolve; True when one could not be resolved."""
    unknown = False
    for m in _DELETE.finditer(code):
        if not m.group("arg").strip():
            continue  # ``use File::Path qw(remove_tree)``: the name imported, not called
        target = _path_expr(scan, m.group("arg"))
        recursive = (
            any(r in m.group("fn") for r in _RECURSIVE) or "recursive" in m.group("arg") or "-Recurse" in m.group(0)
        )
        if target is None:
            unknown = True
        else:
            effects.delete(scan, target, recursive, f"{m.group('fn')}({target})")
    for m in _PATH_METHOD.finditer(code):
        target = _path_expr(scan, m.group("arg"))
        fn = m.group("fn")
        if target is None:
            unknown = unknown or fn in ("unlink", "rmdir", "write_text", "write_bytes")
        elif fn in ("unlink", "rmdir"):
            effects.delete(scan, target, False)
        elif fn.startswith("write"):
            effects.write(scan, target)
        else:
            effects.read(scan, target)
    for m in _OPEN.finditer(code):
        target = _path_expr(scan, m.group("arg"))
        if target is not None:
            mode = m.group("mode") or "r"
            if set(mode) & set("wax+"):
                effects.write(scan, target, EMPTY, "append" if "a" in mode else "write")
            else:
                effects.read(scan, target)
    for m in _PERL_OPEN.finditer(code):
        mode = m.group("mode") or m.group("mode2") or "<"
        arg = (m.group("arg") or "").strip()
        if not arg:  # the two-argument form: the path is in the mode's string
            target = _perl_path(scan, m.group("arg2"))
        elif len(arg) > 1 and arg[0] in "'\"" and arg[-1] == arg[0]:
            target = _perl_path(scan, arg[1:-1])
        else:
            target = _path_expr(scan, arg)
        if target is None:
            unknown = unknown or ">" in mode
        elif ">" in mode:
            effects.write(scan, target, EMPTY, "append" if ">>" in mode else "write")
    for regex in (_LINK, _LINK_TO):
        for m in regex.finditer(code):
            source, dest = _path_expr(scan, m.group("src")), _path_expr(scan, m.group("dst"))
            if source is not None:
                effects.link(scan, source, dest, "symlink" in m.group("fn") or "ln_s" in m.group("fn"))
            if dest is not None:
                effects.write(scan, dest, EMPTY, "write")
    for regex, write in ((_READ, False), (_WRITE, True)):
        for m in regex.finditer(code):
            target = _path_expr(scan, m.group("arg"))
            if target is not None:
                effects.write(scan, target) if write else effects.read(scan, target)
    return unknown


def _perl_path(scan: Scan, text: str) -> str | None:
    """The path inside a two-argument ``open`` string: ``$ENV{HOME}/.zshrc``, ``~/x``, ``out.txt``."""
    text = text.strip()
    home = scan.resolver.home
    text = re.sub(r"^\$ENV\{\s*['\"]?HOME['\"]?\s*\}", home, text)
    if text.startswith("~/"):
        return home + text[1:]
    return None if "$" in text or "@" in text else text


def _path_expr(scan: Scan, arg: str) -> str | None:
    """A path from a code expression: literals, ``expanduser("~/x")``, ``Path.home() / "x"``; None if unknown."""
    arg = arg.strip()
    home = scan.resolver.home
    m = re.search(r"expanduser\(\s*['\"]([^'\"]*)['\"]\s*\)", arg)
    if m:
        text = m.group(1)
        return home + text[1:] if text.startswith("~") else text
    found = _HOME_EXPR.search(arg)
    if found:  # ``os.path.join(Path.home(), ".ssh")``: literals after the home expression are path parts
        rest = [s for s in _STRING.findall(arg[found.end() :]) if s and s != "HOME"]
        return "/".join([home, *[s.strip("/") for s in rest]]) if rest else home
    lit = re.match(r"^[rbfu]?['\"]([^'\"]+)['\"]", arg)
    if lit:
        return lit.group(1)
    inner = re.search(r"(?:glob|expand_path|resolve|realpath|abspath|normpath)\(\s*['\"]([^'\"]+)['\"]", arg)
    if inner:  # ``unlink glob("~/.ssh/*")``: path helpers around a literal (they expand ``~`` as the shell would)
        text = inner.group(1)
        return home + text[1:] if text.startswith("~") else text
    return None


def _secret_env(scan: Scan, code: str) -> bool:
    names = [n for n in _ENV_NAMES.findall(code) if is_secret_var(n)]
    dump = bool(_ENV_DUMP.search(code))
    if names or dump:
        scan.cmd_secret = True
        if re.search(r"\bprint|console\.log|puts|echo|say|Write-Output|printf", code):
            scan.hit("G142", ", ".join(names) or "the whole environment")
    return bool(names or dump)


# How each interpreter takes inline code, and its language for the effect patterns.
_INLINE = {
    "python": ("python", ("-c",)),
    "ipython": ("python", ("-c",)),
    "pypy": ("python", ("-c",)),
    "node": ("js", ("-e", "--eval", "-p", "--print")),
    "nodejs": ("js", ("-e", "--eval", "-p", "--print")),
    "perl": ("perl", ("-e", "-E")),
    "ruby": ("ruby", ("-e",)),
    "php": ("php", ("-r",)),
    "lua": ("lua", ("-e",)),
    "luajit": ("lua", ("-e",)),
    "rscript": ("r", ("-e",)),
    "r": ("r", ("-e",)),
    "julia": ("julia", ("-e", "--eval")),
    "osascript": ("applescript", ("-e",)),
    "groovy": ("groovy", ("-e",)),
    "elixir": ("elixir", ("-e",)),
    "tclsh": ("tcl", ()),
    "wish": ("tcl", ()),
    "expect": ("tcl", ("-c",)),
}
_VALUE_OPTS = wordset("-W -X -r --require --import --loader -I -M -m --input-type -C -f -F -d -x -S -E -T")
_PYTHON_VALUE_OPTS = wordset("-W -X --check-hash-based-pycs")  # ``python -I -m x``: -I, -E, -S, -x take none


def _family(name: str) -> str:
    if re.match(r"^python[0-9.]*$", name):
        return "python"
    if re.match(r"^pypy[0-9.]*$", name):
        return "pypy"
    if re.match(r"^(?:lua|tclsh)[0-9.]+$", name):
        return name.rstrip("0123456789.")
    return name


# How inline code reads the words after it, and the index of the first of them.
_ARGV_REF = {
    "python": (r"\bsys\.argv\[(\d+)\]", 1),
    "ruby": (r"\bARGV\[(\d+)\]", 0),
    "perl": (r"\$ARGV\[(\d+)\]", 0),
    "js": (r"\bprocess\.argv\[(\d+)\]", 1),
}


def _bind_argv(code: str, lang: str, extra: list[str]) -> str:
    """``python -c '…shutil.rmtree(sys.argv[1])' ~``: the words given after the code, as literals (only ever
    adds to the verdict of the code as written, which still asks for the runtime value)."""
    ref = _ARGV_REF.get(lang)
    if ref is None or not extra or any(DYN_OPEN in w for w in extra):
        return code

    def literal(m: re.Match[str]) -> str:
        k = int(m.group(1)) - ref[1]
        return json.dumps(extra[k]) if 0 <= k < len(extra) else m.group(0)

    return re.sub(ref[0], literal, code)


def _interpreter(cmd: Cmd, scan: Scan) -> Flow | None:
    family = _family(cmd.name)
    lang, code_flags = _INLINE[family]
    args = list(cmd.args)
    code: list[str] = []
    i, script = 0, None
    while i < len(args):
        a = args[i]
        if lang == "python" and a.startswith("-") and not a.startswith("--") and len(a) > 2:
            a = _python_cluster(a)  # ``-Im guard``, ``-mguard``, ``-Bc 'code'``: one option letter takes a value
        if a == "--":
            script = args[i + 1] if i + 1 < len(args) else None
            break
        if a in code_flags or (
            lang in ("perl", "ruby") and a.startswith("-") and not a.startswith("--") and a[-1] in "eE"
        ):
            code.append(args[i + 1] if i + 1 < len(args) else "")
            i += 2
            continue
        if lang == "python" and a.startswith("-c") and len(a) > 2:
            code.append(a[2:])
            break
        if lang in ("perl", "ruby", "lua") and a[:2] in ("-e", "-E") and len(a) > 2:
            code.append(a[2:])  # ``ruby -e'code'``, ``perl -e'code'``: the code joined to its option
            i += 1
            continue
        if lang == "python" and a.startswith("-m") and len(a) > 2:
            return _module(cmd, scan, a[2:], args[i + 1 :])
        if lang == "python" and a == "-m" and i + 1 < len(args):
            return _module(cmd, scan, args[i + 1], args[i + 2 :])
        if lang in ("perl", "ruby") and a.startswith("-") and "i" in a.lstrip("-") and not a.startswith("--"):
            for f in [x for x in args[i + 1 :] if not x.startswith("-")][1:]:
                effects.write(scan, f, EMPTY, "edit")
        if a.startswith("-") and a != "-":
            takes = _PYTHON_VALUE_OPTS if lang == "python" else _VALUE_OPTS
            i += 2 if a in takes and family != "perl" else 1
            continue
        script = a
        break
    if code and any(DYN_OPEN in c for c in code):
        flow = scan.flow_of(" ".join(code))
        rule = "G112" if flow.bits & REMOTE else "G111" if flow.bits & DECODED else "G114"
        scan.hit(rule, display(scan, " ".join(cmd.argv)))
        return None
    if code and cmd.stdin.bits & (REMOTE | DECODED) and _EXEC.search("\n".join(code)):
        scan.hit("G110" if cmd.stdin.bits & REMOTE else "G111", display(scan, " ".join(cmd.argv)))
    if code:
        text = "\n".join(code)
        analyse_code(scan, text, lang)  # an argv value is a runtime value there (G431 asks) …
        bound = _bind_argv(text, lang, args[args.index(script) :] if script is not None else [])
        if bound != text:  # … and the words given after the code are judged as what it acts on
            analyse_code(scan, bound, lang)
        return None
    if script and script != "-" and lang == "python" and _runs_guard(script):  # ``python .venv/bin/guard reset``
        return scan.engine.run(("guard", *args[args.index(script) + 1 :]))
    if script and script != "-":
        earlier = scan.written.get(scan.place(script).path)
        if earlier is not None and earlier.text is not None and not earlier.bits & (REMOTE | DECODED):
            analyse_code(scan, earlier.text, lang)  # written earlier in this call: read in its own language
            return None
        return scan.engine.exec_file(script, cmd.stdin, tuple(args[args.index(script) + 1 :]), lang)
    if cmd.stdin == EMPTY and not code and script is None and only_version(args):
        scan.hit("G180", cmd.name)
        return EMPTY
    if cmd.stdin is EMPTY and not _opens_repl(args, family):
        scan.hit("G181", f"{cmd.name} {' '.join(args)}"[:120])  # ``node --test``, ``php -m``: no prompt
        return None
    return scan.engine.consume(cmd.stdin, lang)


# Options that leave an interpreter waiting at its prompt; any other (``node --test``, ``php -m``,
# ``ruby -cscript.rb``) is a mode of its own, judged as an ordinary development command, as before.
_REPL_FLAGS = wordset(
    "-i --interactive -q --quiet -u -B -E -s -I -O -OO -b -bb -d -v -w -W --no-warnings --inspect --inspect-brk "
    "--experimental-repl-await -a"
)


def _opens_repl(args: list[str], family: str) -> bool:
    """With no code, no script and nothing on stdin: does the interpreter sit at its prompt?"""
    if family == "php":  # ``php -i``/``-m`` print information; ``-a`` is the interactive shell
        return all(a == "-a" for a in args)
    i = 0
    while i < len(args):
        a = args[i]
        if a in _VALUE_OPTS and family != "perl" and a not in _REPL_FLAGS:
            i += 2  # ``python3 -X dev``: the option and its value
            continue
        if a not in _REPL_FLAGS and not a.startswith(("--inspect=", "--inspect-brk=")):
            return False
        i += 1
    return True


def _runs_guard(script: str) -> bool:
    path = script.rstrip("/")
    return path.rsplit("/", 1)[-1] == "guard" or path.endswith(("guard/__main__.py", "guard/cli/__init__.py"))


def _python_cluster(a: str) -> str:
    """``-Im`` -> ``-m``, ``-Bcprint(1)`` -> ``-cprint(1)``: CPython reads a cluster of short options
    letter by letter until one that takes a value (``-c``, ``-m``, ``-W``, ``-X``)."""
    for j, ch in enumerate(a[1:], start=1):
        if ch in "cm":
            return "-" + a[j:]
        if ch in "WX" or not ch.isalpha():
            return a
    return a


def only_version(args: list[str]) -> bool:
    return bool(args) and all(a in ("--version", "-V", "-v", "--help", "-h", "-VV") for a in args)


_SAFE_MODULES = wordset(
    "json.tool pydoc site sysconfig platform this calendar tabnanny dis tokenize pickletools pip._internal "
    "ensurepip-check sqlite3.dump"
)
_LISTEN_MODULES = frozenset({"http.server", "SimpleHTTPServer", "smtpd", "aiosmtpd", "pyftpdlib", "xmlrpc.server"})


def _loopback_bind(args: list[str]) -> bool:
    """``python -m http.server --bind 127.0.0.1``: only this machine can connect."""
    for i, a in enumerate(args):
        value = a.split("=", 1)[1] if a.startswith("--bind=") else None
        if a in ("-b", "--bind"):
            value = args[i + 1] if i + 1 < len(args) else ""
        if value is not None:
            return value in ("127.0.0.1", "localhost", "::1")
    return False


def _module(cmd: Cmd, scan: Scan, module: str, rest: list[str]) -> Flow | None:
    from guard.static.families import selfguard

    if selfguard.is_guard_module(module):
        return selfguard.module(cmd, scan, module, rest)
    tool = module.replace("_", "-")
    if module in _SAFE_MODULES:
        scan.hit("G180", f"python -m {module}")
        return EMPTY
    if module == "http.server" and _loopback_bind(rest):
        scan.hit("G181", f"python -m {module} on this machine only")
        return None
    if module in _LISTEN_MODULES:
        scan.tag("network")
        scan.hit("G182", f"python -m {module} serves files to the network")
        return None
    if module == "base64":
        scan.hit("G180", "python -m base64")
        return Flow(cmd.stdin.bits | (DECODED if "-d" in rest else 0))
    if module in ("zipfile", "tarfile"):
        return _archive_module(scan, module, rest)
    if tool != "python" and scan.engine.handles(tool):
        return scan.engine.run((tool, *rest))
    scan.hit("G183" if module == "ensurepip" else "G181", f"python -m {module}")
    return None


def _archive_module(scan: Scan, module: str, rest: list[str]) -> Flow | None:
    """``python -m zipfile -e ARCHIVE DIR``, ``python -m tarfile -e ARCHIVE [DIR]``: unpacked as ``unzip
    -d``; ``-c ARCHIVE SOURCES`` writes the archive; ``-l``/``-t`` only read it."""
    action = next((a for a in rest if a in ("-e", "--extract", "-c", "--create")), "")
    operands = [a for a in rest if not a.startswith("-")]
    if action in ("-e", "--extract") and operands:
        effects.read(scan, operands[0])
        # zipfile cuts absolute names and ``..``; tarfile keeps them unless a filter says otherwise
        # (the default one from Python 3.14 on): an absolute member lands where it names
        effects.unpack(scan, operands[1] if len(operands) > 1 else ".", operands[0], absolute=module == "tarfile")
    elif action in ("-c", "--create") and operands:
        effects.write(scan, operands[0], effects.read_flows(scan, operands[1:]))
    else:
        for archive in operands[:1]:
            effects.read(scan, archive, content=False)
        scan.hit("G180", f"python -m {module}")
        return EMPTY
    return None


HANDLERS: dict[str, Handler] = {
    **{name: _interpreter for name in _INLINE if name not in ("python", "pypy")},
    **{f"python{v}": _interpreter for v in ("", "2", "3", "2.7", *(f"3.{m}" for m in range(6, 16)))},
    **{f"pypy{v}": _interpreter for v in ("", "3")},
    **{f"lua{v}": _interpreter for v in ("5.1", "5.2", "5.3", "5.4")},
    **{f"tclsh{v}": _interpreter for v in ("8.5", "8.6", "9.0")},
}
