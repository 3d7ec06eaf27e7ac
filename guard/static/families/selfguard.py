"""guard's own control commands belong to the person: an agent running them blocks, in any spelling.

``guard approve``, ``reset``, ``install``, ``uninstall``, ``feed``, ``hook``, ``serve``, ``tidy``,
``rules apply``/``revert``, ``check --save`` and anything under ``config`` that is not a read
would let the agent approve its own calls, forget its own misbehaviour, switch guard off or feed
it a history of its choosing. Three hook points see every spelling, because the engine has already
unwrapped wrappers (``sudo``, ``env``, ``xargs``, ``sh -c`` …) and read interpreter code by then:

- the handler for the command name ``guard`` (any path: ``./.venv/bin/guard`` is ``guard``);
- :func:`module` for ``python -m guard`` / ``-m guard.cli`` / ``-m guard.cli.reset``;
- :func:`python_code` for Python source that imports guard (``-c``, a here-document, a script
  written earlier in the same call), :func:`folded_import` for an import whose name the
  interpreter folder worked out (``__import__("gu" + "ard")``), and :func:`kills_daemon` for
  ``pkill``/``kill`` aimed at guard's daemon, by pattern or by the ids a search for it printed
  (:func:`listed`, :func:`picked`: ``pgrep guard | xargs kill``).

Copies of guard's own program are judged where every copy, link and move ends
(:mod:`guard.static.families.guardfiles`, G414).

Read-only verbs (``check``, ``explain``, ``log``, ``stats``, ``report``, ``config``, ``rules
list``/``suggest``/``builtin``, ``replay``, ``serve --status``, ``--help``) stay read-only; a verb or option
guard does not know asks (G413).
"""

from __future__ import annotations

import re

from guard import lazyre
from guard.static.families import effects
from guard.static.families.base import Handler
from guard.static.reading.text import DYN_OPEN, wordset
from guard.static.scan import EMPTY, GUARD_PIDS, PROCS, Cmd, Flow, Scan, display

CONTROL = wordset("approve reset install uninstall feed hook tidy mcp-proxy")
READ_ONLY = wordset("check explain log stats replay report")
_CONFIG_READS = wordset("show get list path check")
_CONFIG_FLAGS = wordset("--json --check --workspace")
_HELP = wordset("-h --help")
_DRY = "--dry-run"
_CLI_MODULES = wordset("guard guard.cli guard.__main__")
_CONTROL_MODULES = wordset("serve rules config_cmd daemon server pending integrations mcp_proxy mcp proxy")


def _verb(argv: tuple[str, ...]) -> tuple[str | None, tuple[str, ...]]:
    """The subcommand and its arguments: ``guard reset --all`` -> ``("reset", ("--all",))``."""
    for i, a in enumerate(argv[1:], start=1):
        if a in ("--version", *_HELP):  # argparse answers it and stops before the subcommand
            return None, ()
        return a, argv[i + 1 :]  # (``guard --workspace x reset``: no such global option, G413)
    return None, ()


def _flag(args: tuple[str, ...], name: str, shortest: int) -> bool:
    """``--save`` given, or a prefix argparse expands to it (``--sav``), before ``--``."""
    for a in args:
        if a == "--":
            return False
        key = a.split("=", 1)[0]
        if key.startswith("--") and len(key) >= shortest and name.startswith(key):
            return True
    return False


def _help(args: tuple[str, ...]) -> bool:
    """argparse answers ``-h``/``--help`` anywhere before ``--`` and stops: nothing runs."""
    for a in args:
        if a == "--":
            return False
        if a in _HELP:
            return True
    return False


def judge(argv: tuple[str, ...]) -> tuple[str, str]:
    """The rule and a short reason for one ``guard`` command line (argv[0] is the program).

    ``judge(("guard", "reset", "--all"))[0] == "G410"``; ``judge(("guard", "log"))[0] == "G180"``.
    """
    verb, args = _verb(argv)
    if verb is None or _help(args) or verb in ("--version", *_HELP):
        return "G180", "help"
    if DYN_OPEN in verb:
        return "G410", "a subcommand only known at runtime"
    rule_id, what = _judge_verb(verb, args)
    if rule_id == "G180" and any(DYN_OPEN in a for a in args):  # ``check bash $(cat x)`` could split into --save
        return "G413", f"{what} with arguments only known at runtime"
    return rule_id, what


def _judge_verb(verb: str, args: tuple[str, ...]) -> tuple[str, str]:
    if verb in CONTROL:
        return "G410", verb
    if verb == "check":
        return ("G410", "check --save") if _flag(args, "--save", 4) else ("G180", verb)
    if verb in READ_ONLY:
        return "G180", verb
    if verb == "serve":  # (``--st`` is ambiguous: argparse refuses it)
        status = "--status" in args and not _flag(args, "--stop", 4)
        return ("G180", "serve --status") if status else ("G410", "serve")
    if verb == "rules":
        action = next((a for a in args if not a.startswith("-")), None)
        if action in ("list", "suggest", "builtin"):
            return "G180", f"rules {action}"
        if action in ("apply", "revert"):
            return ("G180", f"rules {action} --dry-run") if _DRY in args else ("G410", f"rules {action}")
        return "G413", f"rules {action or ''}".strip()
    if verb == "config":
        rest = [a for a in args if not a.startswith("-")]
        workspace = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--workspace"]
        flags_ok = all(a in _CONFIG_FLAGS or a.startswith("--workspace=") for a in args if a.startswith("-"))
        words_ok = all(w in _CONFIG_READS or w in workspace for w in rest)
        return ("G180", "config") if flags_ok and words_ok else ("G410", "config " + " ".join(args))
    return "G413", verb


def _guard(cmd: Cmd, scan: Scan) -> Flow | None:
    rule_id, what = judge(cmd.argv)
    shown = display(scan, " ".join(cmd.argv))
    scan.hit(rule_id, shown if rule_id == "G180" else f"{what}: {shown}")
    verb, args = _verb(cmd.argv)
    if verb == "report":
        for i, a in enumerate(args):
            key, eq, value = a.partition("=")
            if len(key) >= 4 and "--html".startswith(key) and (eq or i + 1 < len(args)):
                effects.write(scan, value if eq else args[i + 1])  # an ordinary file the person asked for
    if rule_id == "G410":
        scan.tag("protected_path")
    return EMPTY if rule_id == "G180" else None


def module(cmd: Cmd, scan: Scan, name: str, rest: list[str]) -> Flow | None:
    """``python -m guard …``: the console script under another name; ``-m guard.cli.reset`` by module."""
    if name in _CLI_MODULES:
        return scan.engine.run(("guard", *rest))
    leaf = name.split(".")[-1]
    if leaf in CONTROL or leaf in _CONTROL_MODULES:
        scan.hit("G410", f"{leaf}: {display(scan, ' '.join(cmd.argv))}")
        return None
    scan.hit("G413", f"python -m {name}")
    return None


def is_guard_module(name: str) -> bool:
    return name.split(".")[0] in ("guard", "integrations")


# --- Python source that imports guard
_PKG = r"(?:guard|integrations)\b"  # the two packages guard installs (``integrations`` holds hooks and the daemon)
_IMPORTS = lazyre.compile(
    rf"(?<![\w.])(?:import\s+(?:[\w.]+(?:\s+as\s+\w+)?\s*,\s*)*{_PKG}(?!\s*=)|from\s+{_PKG})"
    rf"|(?:__import__|import_module|run_module|find_spec|spec_from_file_location)\s*\(\s*(?:name\s*=\s*)?['\"]{_PKG}"
    r"|run_path\s*\(\s*['\"][^'\"]*\bguard\b"
)
_MAIN_CALL = lazyre.compile(r"(?<![\w.])(?:\w+\.)*main\s*\(\s*(?:argv\s*=\s*)?[\[(]([^\])]*)[\])]\s*\)")
_STRINGS = lazyre.compile(r"['\"]([^'\"]*)['\"]")
_MUTATES = lazyre.compile(
    r"\b(?:approve|reset|install|uninstall|feed|tidy|hook|serve|apply|revert|stop|kill|record\w*|save\w*"
    r"|append\w*|write\w*|remember|on_dispatch|on_interaction|on_result|catch_up|add|put|extend|update|delete"
    r"|remove|optimi[sz]e|compact|unlink|rmtree|truncate)\b"
)  # guard's own API that writes (stores, memory, behaviour state) and its verbs
_HIDDEN = lazyre.compile(
    r"getattr|setattr|(?<![\w.])(?:exec|eval|compile|globals|vars|chr)\s*\(|__dict__|sys\.modules|b64decode|codecs"
    r"|bytes\.fromhex|\\x[0-9a-fA-F]{2}|\[::-1\]"
)
_MAIN_LEFT = lazyre.compile(r"(?<![\w.])(?:\w+\.)*main\s*\(")  # ``main(sys.argv[1:])``, ``main()``
_LIST = lazyre.compile(r"\[([^\]]*)\]")


def python_code(scan: Scan, code: str) -> None:
    """Python that imports guard runs guard's own code: its CLI with literal arguments is judged as
    the command line; anything that changes state, or that guard cannot read, blocks (G412)."""
    shown = code.strip().replace("\n", "; ")[:100]
    if _SOCKET_PATH.search(code):
        scan.hit("G411", f"talks to guard's daemon socket: {shown}")
    for m in _LIST.finditer(code):  # ``subprocess.run([sys.executable, "-m", "guard", "reset"])``
        words = _STRINGS.findall(m.group(1))
        for i, w in enumerate(words[:-1]):
            if w == "-m" and words[i + 1] in _CLI_MODULES:
                scan.engine.run(("guard", *words[i + 2 :]))
    if not _IMPORTS.search(code):
        return
    rest = code
    for m in _MAIN_CALL.finditer(code):  # ``main(["reset", "--all"])``: the command line it runs
        scan.engine.run(("guard", *_STRINGS.findall(m.group(1))))
        rest = rest.replace(m.group(0), " ")
    if _MAIN_LEFT.search(rest):
        scan.hit("G412", f"imports guard and runs its command line with arguments known only at runtime: {shown}")
    elif _HIDDEN.search(rest):
        scan.hit("G412", f"imports guard and names what it calls at runtime: {shown}")
    elif found := _MUTATES.search(rest):
        scan.hit("G412", f"imports guard and calls {found.group(0)}: {shown}")


def folded_import(scan: Scan, code: str, name: str | None) -> None:
    """``__import__("gu" + "ard")``, ``importlib.import_module("".join(["g", "uard"]))``: the module
    name folded from the code's expressions (:mod:`guard.static.reading.fold`). guard's own packages imported
    under a name built so the text does not show it is hiding on purpose: G412, whatever follows. A
    name guard cannot fold, in code that also decodes or renames at run time, may be guard: it asks
    (G431)."""
    shown = code.strip().replace("\n", "; ")[:100]
    if name is None:
        if _HIDDEN.search(code):
            scan.hit("G431", f"imports a module named at run time: {shown}")
        return
    if is_guard_module(name) and not _IMPORTS.search(code):  # (a literal import: :func:`python_code` judged it)
        scan.hit("G412", f"imports guard under a name built at run time ({name}): {shown}")


# --- stopping the daemon
_NAMES_GUARD = lazyre.compile(r"(?<![a-z])guard(?![a-z])", re.I)
_DAEMON_LINES = (
    "/home/u/.venv/bin/python3 /home/u/.venv/bin/guard serve --on-demand --workspace /home/u/.guard",
    "python3 -m guard serve --on-demand",
)
_DAEMON_NAMES = ("guard",)
_OTHER_LINES = (
    "python3 -m http.server 8000",
    "node server.js",
    "npm run serve",
    "python3 manage.py runserver",
    "/usr/bin/bash",
    "vim notes.txt",
    "/usr/sbin/sshd -D",
)
_OTHER_NAMES = ("python3", "python", "node", "bash", "sshd", "vim", "npm")


_SOCKET_PATH = lazyre.compile(r"guard\.sock\b|guard-\d+/[0-9a-f]{16}\.sock\b")


def daemon_socket(scan: Scan, cmd: Cmd) -> bool:
    """``nc -U ~/.guard/guard.sock``, ``socat - UNIX-CONNECT:…/guard.sock``, ``fuser -k …/guard.sock``:
    a client of guard's daemon socket can stop the daemon or answer hooks in its place (G411)."""
    if any(_SOCKET_PATH.search(display(scan, a)) for a in cmd.args):
        scan.hit("G411", display(scan, " ".join(cmd.argv)))
        return True
    return False


def _aimed(pattern: str, full: bool, exact: bool) -> bool:
    """Does pkill's ``pattern`` match guard's daemon and no ordinary program? An expression that could
    backtrack for long (groups, alternation, repeats, more than two quantifiers) is never run: it is
    aimed at guard when it names guard."""
    mine, others = (_DAEMON_LINES, _OTHER_LINES) if full and not exact else (_DAEMON_NAMES, _OTHER_NAMES)
    if exact:
        return pattern in mine and pattern not in others
    if len(pattern) > 80 or any(c in pattern for c in "(){}|") or sum(pattern.count(q) for q in "*+?") > 2:
        return bool(_NAMES_GUARD.search(pattern))
    try:
        rx = re.compile(pattern)
    except re.error:  # pkill refuses it: nothing is killed
        return False
    return any(rx.search(t) for t in mine) and not any(rx.search(t) for t in others)


def _patterns(cmd: Cmd) -> tuple[list[str], bool, bool]:
    """pkill/pgrep/killall's patterns, and whether they match the full command line or exact names."""
    args = list(cmd.args)
    full = any(a in ("-f", "--full") or (a.startswith("-") and not a.startswith("--") and "f" in a) for a in args)
    exact = (cmd.name == "killall" and not any(a in ("-r", "--regexp") for a in args)) or (
        cmd.name in ("pgrep", "pkill") and any(a in ("-x", "--exact") for a in args)
    )
    skip = {"-u", "-U", "-g", "-G", "-P", "-s", "-t", "--signal", "-o", "-y", "-n", "-d", "--delimiter", "-F"}
    patterns, i = [], 0
    while i < len(args):
        if args[i] in skip:
            i += 2
            continue
        if not args[i].startswith("-"):
            patterns.append(args[i])
        i += 1
    return patterns, full and not exact, exact


def _picks_guard(scan: Scan, word: str) -> bool:
    """A kill target that is guard's process: ``$(pgrep -f guard)``, or ids a search for guard printed."""
    if DYN_OPEN not in word:
        return False
    return bool(_NAMES_GUARD.search(display(scan, word))) or bool(scan.flow_of(word).bits & GUARD_PIDS)


def kills_daemon(scan: Scan, cmd: Cmd) -> bool:
    """``pkill -f 'guard serve'``, ``killall guard``, ``kill $(pgrep -f guard)``, ``pgrep guard | xargs
    kill``, ``ps aux | grep guard | awk '{print $2}' | xargs kill``: aimed at guard's daemon.

    A pattern is aimed at guard when it matches the daemon's command line (or process name) and no
    ordinary program's: ``pkill -f python`` is a broad kill, not an attack on guard. Process ids
    reach ``kill`` as runtime values; a search for guard marks what it prints (:data:`GUARD_PIDS`),
    and the mark survives pipes, filters, ``xargs``, variables and files written in the same call."""
    if cmd.name == "kill":
        targets = [a for a in cmd.args if not (a.startswith("-") and a[1:].isalnum() and not a[1:].isdigit())]
        hit = any(_picks_guard(scan, t) for t in targets)
    else:
        patterns, full, exact = _patterns(cmd)
        hit = any(DYN_OPEN not in p and _aimed(p, full, exact) for p in patterns)
    if hit:
        scan.hit("G411", display(scan, " ".join(cmd.argv)))
    return hit


# --- searching for guard's processes (what ``kill`` then gets)
_PS_NAMES = wordset("-C")


def listed(cmd: Cmd) -> Flow:
    """What ``ps``, ``pgrep`` and ``pidof`` print: a process list, marked when it picks guard's daemon."""
    if cmd.name == "pidof":
        names = [a for a in cmd.args if not a.startswith("-")]
        return Flow(GUARD_PIDS if any(_aimed(n, False, True) for n in names) else PROCS)
    if cmd.name == "ps":
        args = list(cmd.args)
        names = [v for i, a in enumerate(args[:-1]) if a in _PS_NAMES for v in args[i + 1].split(",")]
        return Flow(GUARD_PIDS if any(_aimed(n, False, True) for n in names) else PROCS)
    patterns, full, exact = _patterns(cmd)
    aimed = any(DYN_OPEN not in p and _aimed(p, full, exact) for p in patterns)
    return Flow(GUARD_PIDS if aimed else PROCS)


def _has(cmd: Cmd, letter: str, long: str) -> bool:
    """``-v``, ``-iv`` or ``--invert-match`` among the options."""
    return any(a == long or (a[:1] == "-" and a[1:2] != "-" and letter in a[1:]) for a in cmd.args)


def picked(cmd: Cmd, patterns: list[str], stdin: Flow) -> int:
    """``ps aux | grep guard``, ``… | awk '/guard/ {print $2}'``: a search of a process list for guard's
    daemon marks its output as guard's processes (an inverted ``grep -v`` picks everything else)."""
    if not stdin.bits & PROCS or _has(cmd, "v", "--invert-match"):
        return 0
    if cmd.name in ("awk", "gawk", "mawk", "nawk"):
        program = " ".join(patterns)
        return GUARD_PIDS if _NAMES_GUARD.search(program) and "!~" not in program and "!/" not in program else 0
    fixed = cmd.name == "fgrep" or _has(cmd, "F", "--fixed-strings")
    folded = _has(cmd, "i", "--ignore-case")
    for p in patterns:
        rx = re.escape(p) if fixed else p
        if DYN_OPEN not in p and _aimed(rx.lower() if folded else rx, True, False):
            return GUARD_PIDS
    return 0


HANDLERS: dict[str, Handler] = {"guard": _guard}


# --- uninstalling or replacing guard itself (G418)
_DIST = lazyre.compile(r"^guard[-_.]preflight(?:\[[\w,.\s-]*\])?(?:\s*[=<>!~@].*)?$", re.I)  # PEP 503 spellings
_DIST_IN = lazyre.compile(r"guard[-_.]preflight", re.I)  # in a URL, a wheel or a path
# guard's import name taken for its distribution's (``pip uninstall guard``): an agent under guard
# that removes "guard" means guard (another project owns the name on PyPI; its files would be
# guard's own ``guard`` folder), so only the person may, from their terminal; installing that other
# project (``pip install guard``) writes its files over guard's folder, or its ``guard`` program
# over guard's on the PATH (``pipx``, ``uv tool``), just as surely
_IMPORT_NAME = lazyre.compile(r"^guard(?:\[[\w,.\s-]*\])?(?:\s*[=<>!~@].*)?$", re.I)
_REPLACING = wordset(
    "--force-reinstall -U --upgrade -I --ignore-installed --reinstall --reinstall-package --force --no-deps -e "
    "--editable -i --index-url --extra-index-url --index --default-index -f --find-links"
)
# (manager, subcommand) pairs that take guard away; ``install`` pairs only when they replace it
_REMOVES = {
    "pip": wordset("uninstall"),
    "uv": wordset("remove"),
    "uv tool": wordset("uninstall"),
    "pipx": wordset("uninstall reinstall uninject"),
    "poetry": wordset("remove"),
    "pdm": wordset("remove"),
    "pipenv": wordset("uninstall"),
    **dict.fromkeys(("conda", "mamba", "micromamba"), wordset("remove uninstall")),
}
_INSTALLS = {
    "pip": wordset("install"),
    "uv tool": wordset("install upgrade"),
    "pipx": wordset("install upgrade"),
    **dict.fromkeys(("conda", "mamba", "micromamba"), wordset("install update upgrade")),
}


def _names_guard(word: str) -> bool:
    """``guard-preflight``, ``Guard_Preflight==0.1``, ``git+https://x/guard-preflight``, ``./guard_preflight-1.whl``."""
    return bool(_DIST.match(word)) or (("/" in word or word.endswith(".whl")) and bool(_DIST_IN.search(word)))


def replaces_guard(cmd: Cmd, scan: Scan) -> bool:
    """``pip uninstall guard-preflight``, ``pipx uninstall …``, ``uv tool uninstall …``, ``pip install
    --force-reinstall git+https://…/guard-preflight``: taking guard's own distribution away, or putting
    another build in its place, switches guard off (G418); so does removing ``guard``, its import name
    spelled as a distribution (``pip uninstall -y guard``), and installing the other project of that
    name (``pip install guard``). ``pip show``/``list`` and uninstalling any other package are judged as
    before; a plain ``pip install guard-preflight`` (a no-op once installed) stays an ordinary install."""
    joined = " ".join(cmd.args).lower()  # (every spelling of guard names ``guard``; runtime values
    if joined.isascii() and "guard" not in joined:  # are not ASCII: they go on)
        return False
    name = "pip" if re.fullmatch(r"pip[\d.]*", cmd.name) else cmd.name
    words = [display(scan, a) for a in cmd.args]
    if name == "uv" and words[:1] == ["tool"]:
        name, words = "uv tool", words[1:]
    sub = next((w for w in words if not w.startswith("-")), "")
    rest = words[words.index(sub) + 1 :] if sub else []
    removes, installs = sub in _REMOVES.get(name, ()), sub in _INSTALLS.get(name, ())
    named = [
        w
        for w in rest
        if not w.startswith("-") and (_names_guard(w) or ((removes or installs) and _IMPORT_NAME.match(w)))
    ]
    if not named:
        return False
    if removes:
        hit = True
    elif installs:
        replaces = any(w.split("=", 1)[0] in _REPLACING for w in words)
        hit = replaces or any(not _DIST.match(w) or any(c in w for c in "=<>~@") for w in named)
    else:
        hit = False
    if hit:
        scan.hit("G418", display(scan, " ".join(cmd.argv)))
        scan.tag("protected_path")
    return hit
