"""Commands that run other commands over a list of inputs: find, fd, xargs, parallel.

The inner command is unwrapped and judged like any other, with its ``{}`` placeholders (or
appended inputs) replaced by what we know of the inputs: the start directory of ``find``, the
words of a here-string or ``echo``, or a runtime value when nothing is known. ``find -delete``
without name filters is a recursive delete of the start directory.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable

from guard.static.facts import paths as P
from guard.static.families import effects
from guard.static.families.base import Handler, parse_opts
from guard.static.reading.text import decode_ansi_c, wordset
from guard.static.scan import EMPTY, Cmd, Flow, Scan, display

_FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FIND_FILTERS = wordset(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -newer -newermt -anewer "
    "-cnewer -mtime -mmin -atime -amin -ctime -cmin -size -user -group -perm -empty -inum -samefile -links -uid "
    "-gid -nouser -nogroup -used"
)
_FIND_TAKES = _FIND_FILTERS - {"-empty", "-nouser", "-nogroup"} | {
    "-type",
    "-xtype",
    "-maxdepth",
    "-mindepth",
    "-printf",
    "-fstype",
    "-context",
    "-D",
    "-O",
}
_WRITES = frozenset({"-fprint", "-fprint0", "-fls", "-fprintf"})
_DELETERS = wordset("rm unlink shred srm wipe rmdir")


def _find(cmd: Cmd, scan: Scan) -> Flow:
    args = list(cmd.args)
    starts: list[str] = []
    i = 0
    while i < len(args) and args[i] in ("-H", "-L", "-P"):
        i += 1
    while i < len(args) and not args[i].startswith(("-", "(", "!", ",")) and args[i] not in ("(", "!", ")"):
        starts.append(args[i])
        i += 1
    starts = starts or ["."]
    filtered, pattern, actions, delete = False, "", [], False
    picks: list[tuple[str, str]] = []  # the name and path tests a file must pass (not negated ones)
    while i < len(args):
        a = args[i]
        if a in _PICKS and i + 1 < len(args) and args[i - 1] not in ("!", "-not"):
            picks.append((a, args[i + 1]))
        if a in _FIND_ACTIONS:
            end = i + 1
            while end < len(args) and args[end] not in (";", "+", "\\;"):
                end += 1
            actions.append(args[i + 1 : end])
            i = end + 1
            continue
        if a == "-delete":
            delete = True
        elif a in _WRITES and i + 1 < len(args):
            effects.write(scan, args[i + 1], EMPTY)
        if a in _FIND_FILTERS and not (i + 1 < len(args) and _matches_all(a, args[i + 1])):
            filtered = True
            if a in ("-name", "-iname") and i + 1 < len(args) and pattern != "empty":
                pattern = args[i + 1]
            if a == "-empty":
                pattern = "empty"  # only empty files and folders: nothing is lost
        i += 2 if a in _FIND_TAKES or a in _WRITES else 1
    picked = [_picked(start, picks, _find_test) for start in starts]
    # what find lists: guard's file when its tests pick one (``find . -name settings.local.json | xargs rm``)
    targets = [_below(s, rel) if rel else _target(s, filtered, pattern) for s, rel in zip(starts, picked, strict=True)]
    for start in starts:
        effects.read(scan, start, content=False)
    # ``-exec rm {} +`` over every file find walks is ``-delete``: a recursive delete of the start
    delete = delete or any(a and a[0].rsplit("/", 1)[-1] in _DELETERS for a in actions)
    if delete:
        for start, target, rel in zip(starts, targets, picked, strict=True):
            if rel:
                scan.tag("delete", "protected_path")
                scan.hit("G156", f"find {display(scan, start)} … -delete: {rel}")
            else:
                _find_delete(scan, start, target, filtered)
    for action in actions:
        _run_each(scan, action, targets, append=False)  # ``-exec sh \;`` runs ``sh``: find passes no file
    if not delete and not actions:
        scan.hit("G180", "find")
    return Flow(0, None, tuple(targets))


_MATCH_ALL = {"-name": {"*"}, "-iname": {"*"}, "-path": {"*"}, "-ipath": {"*"}, "-wholename": {"*"}}
_MATCH_ALL |= {"-regex": {".*", ".+", "^.*$", ".*$", "^.*"}, "-iregex": {".*", ".+", "^.*$", ".*$", "^.*"}}


def _matches_all(test: str, value: str) -> bool:
    """``-name '*'`` or ``-regex '.*'``: a filter every file passes is no filter (``find ~ -name '*' -delete``)."""
    return value in _MATCH_ALL.get(test, ())


def _target(start: str, filtered: bool, pattern: str) -> str:
    """What find lists: ``DIR/PATTERN`` for a name filter; any file of ``DIR`` (``DIR/*``) otherwise, as a
    time, size or path filter (``-not -path './.git/*'``) does not say which files are spared."""
    base = start.rstrip("/") or "/"
    tail = pattern or "*"
    return f"{base}/{tail}" if base != "/" else f"/{tail}"


_PICKS = wordset("-name -iname -path -ipath -wholename -iwholename")
# Files any tree has: a filter that also picks one of these is a broad delete, not one aimed at guard.
_ORDINARY_BELOW = tuple(
    wordset(
        "package.json tsconfig.json pyproject.toml Cargo.toml setup.cfg main.py index.js notes.txt data.csv app.log "
        "x.pyc x.o .DS_Store build dist node_modules .venv .git .cache src/app.py src/config.toml .vscode/launch.json"
    )
)


def _picked(start: str, picks: list[tuple[str, str]], test: Callable[[str, str, str], bool]) -> str:
    """``find ~ -name guard.toml``, ``find . -path '*/.claude/*'``, ``fd -H settings.local.json``: the
    file of guard's or a host's hook settings below ``start`` that the tests pick, when they pick no
    file an ordinary tree holds (``find . -name '*.json'`` is a broad search, judged as before), or ""."""
    if not picks:
        return ""
    base = start.rstrip("/") or "/"

    def passes(rel: str) -> bool:
        path = f"{base}/{rel}" if base != "/" else f"/{rel}"
        return all(test(kind, value, path) for kind, value in picks)

    if any(passes(rel) for rel in _ORDINARY_BELOW):
        return ""
    return next((rel for rel in P.PROTECTED_BELOW if passes(rel)), "")


def _find_test(kind: str, value: str, path: str) -> bool:
    text = path if "path" in kind else path.rsplit("/", 1)[-1]
    if kind.startswith("-i"):
        text, value = text.lower(), value.lower()
    return fnmatch.fnmatchcase(text, value)


def _fd_test(kind: str, value: str, path: str) -> bool:
    """fd's pattern: a regular expression searched in the name (``-p``: the path), or a glob (``-g``)."""
    text = path if "p" in kind else path.rsplit("/", 1)[-1]
    if "g" in kind:
        return fnmatch.fnmatchcase(text, value)
    try:
        return re.search(value, text) is not None
    except re.error:  # fd refuses it: nothing is found
        return False


def _below(start: str, rel: str) -> str:
    base = start.rstrip("/") or "/"
    return f"{base}/{rel}" if base != "/" else f"/{rel}"


def _find_delete(scan: Scan, start: str, target: str, filtered: bool) -> None:
    if not filtered:
        effects.delete(scan, target, True, f"find {start} -delete")
        return
    place = scan.place(start)
    if place.tier in (P.ROOT, P.HOME) or (place.tier in (P.SYSTEM, P.CREDENTIAL) and place.critical):
        scan.tag("delete")
        scan.hit("G104", f"find {place.path} … -delete")
    else:
        effects.delete(scan, target, False, f"find {start} … -delete")


def _run_each(scan: Scan, template: list[str], inputs: list[str], append: bool = True) -> None:
    """Run ``template`` on ``inputs``: at ``{}``, or (fd, parallel; ``append``) after its words."""
    if not template:
        return
    if not any("{}" in t for t in template):
        scan.engine.run([*template, *inputs] if append else template)
        return
    argv = [t.replace("{}", inputs[0]) for t in template]
    if "{}" in template and len(inputs) > 1:
        argv += inputs[1:]
    scan.engine.run(argv)


def _fd(cmd: Cmd, scan: Scan) -> Flow:
    args = list(cmd.args)
    exec_at = next((i for i, a in enumerate(args) if a in ("-x", "--exec", "-X", "--exec-batch")), None)
    template = args[exec_at + 1 :] if exec_at is not None else []
    opts = parse_opts(
        args[:exec_at] if exec_at is not None else args,
        wordset(
            "-e --extension -t --type -d --max-depth -E --exclude -j --threads -S --size --changed-within "
            "--changed-before -o --owner --search-path --base-directory -c --color"
        ),
    )
    operands = list(opts.operands)
    pattern = operands.pop(0) if operands else ""
    starts = operands + opts.all("--search-path") or ["."]
    filtered = bool(pattern) or opts.has("-e", "--extension")
    kind = ("g" if opts.has("-g", "--glob") else "") + ("p" if opts.has("-p", "--full-path") else "")
    simple = pattern and len(pattern) <= 80 and not any(c in pattern for c in "(){}|+")  # (never a slow expression)
    picks = [(kind, pattern)] if simple else []
    picked = [_picked(s, picks, _fd_test) for s in starts]
    targets = [_below(s, rel) if rel else _target(s, filtered, pattern) for s, rel in zip(starts, picked, strict=True)]
    if template:
        _run_each(scan, template, targets)
    else:
        scan.hit("G180", "fd")
    return Flow(0, None, tuple(targets))


_XARGS_TAKES = wordset(
    "-I -L -l -n -P -d -E -e -s -a --arg-file --delimiter --max-args --max-procs --replace --max-lines --eof "
    "--max-chars --process-slot-var"
)


def inputs_of(scan: Scan, flow: Flow, sep: str | None = None) -> list[str]:
    """What a command reading its stdin as arguments gets: known words (or items split on ``sep``:
    ``xargs -0``, ``-d``, lines for ``-I``), listed paths, or a runtime value."""
    if flow.text is not None:
        text = flow.text.rstrip("\n")  # (with -0 too: a trailing newline is how the text was made, not data)
        words = [w for w in text.split(sep) if w] if sep else flow.text.replace("\0", " ").split()
        if words:
            return words[:16]
    if flow.paths:
        return list(flow.paths[:16])
    return [scan.dynamic("<stdin>", flow)]


def _xargs(cmd: Cmd, scan: Scan) -> Flow:
    args = list(cmd.args)
    i, replace, sep = 0, None, None
    while i < len(args) and args[i].startswith("-") and args[i] != "--":
        a = args[i]
        key = a.split("=", 1)[0]
        if a in ("-0", "--null"):
            sep = "\0"
        elif key in ("-d", "--delimiter") and (len(a) > 2 or "=" in a or i + 1 < len(args)):
            value = a.split("=", 1)[1] if "=" in a else a[2:] if len(a) > 2 and key == "-d" else args[i + 1]
            sep = decode_ansi_c(value) if value.startswith("\\") else value
        if key in ("-I", "--replace") or a.startswith("-I"):
            glued = len(a) > 2 and not a.startswith("--")
            if glued or "=" in a:
                replace = a[2:] if glued else a.split("=", 1)[1]
                i += 1
            else:
                replace = args[i + 1] if i + 1 < len(args) else "{}"
                i += 2
            continue
        if a.startswith("-i"):
            replace = a[2:] or "{}"
        if key in _XARGS_TAKES and "=" not in a and len(a) == 2:
            i += 2
            continue
        i += 1
    if i < len(args) and args[i] == "--":
        i += 1
    template = args[i:] or ["echo"]
    file_input = next(
        (args[j + 1] for j, a in enumerate(args[:i]) if a in ("-a", "--arg-file") and j + 1 < len(args)), None
    )
    flow = effects.read_flow(scan, file_input) if file_input else cmd.stdin
    items = inputs_of(scan, flow, sep or ("\n" if replace else None))
    if flow.text is None and template[0].rsplit("/", 1)[-1] in _DELETERS:
        for path in flow.paths:  # ``find DIR | xargs rm``: every file find walked, so DIR recursively
            if path.endswith("/*"):
                effects.delete(scan, path, True, f"find … | xargs {template[0]} ({path})")
    if replace:
        argv = [t.replace(replace, items[0]) for t in template]
        return scan.engine.run(argv + (items[1:] if any(t == replace for t in template) else []))
    return scan.engine.run([*template, *items])  # what the inner command prints is what xargs prints


def _parallel(cmd: Cmd, scan: Scan) -> Flow:
    args = list(cmd.args)
    sep = next((i for i, a in enumerate(args) if a in (":::", "::::", ":::+", "::::+")), None)
    head = args[:sep] if sep is not None else args
    items = [a for a in args[sep + 1 :] if a not in (":::", "::::", ":::+", "::::+")] if sep is not None else []
    i = 0
    while i < len(head) and head[i].startswith("-"):
        i += 2 if head[i] in ("-j", "--jobs", "-S", "--sshlogin", "--joblog", "-N", "--max-args", "--delay") else 1
    template = head[i:]
    items = items or inputs_of(scan, cmd.stdin, "\n")  # one argument per input line
    if len(template) == 1 and " " in template[0]:
        tail = "" if "{}" in template[0] else " " + " ".join(items)
        return scan.engine.script(template[0].replace("{}", items[0]) + tail)
    if template:
        _run_each(scan, template, items)
        return None  # type: ignore[return-value]
    return scan.engine.script(" ".join(items))


_TMUX_RUNS = wordset(
    "new new-session new-window neww split-window splitw respawn-pane respawn-window run-shell run send-keys "
    "send if-shell display-popup popup pipe-pane pipep"
)


def _tmux(cmd: Cmd, scan: Scan) -> Flow | None:
    """tmux and screen start commands in the background: the command is still a command."""
    args = list(cmd.args)
    if cmd.name == "screen" and "-X" in args[:-1]:  # ``screen -X stuff 'rm -rf ~\n'`` types into a shell
        at = args.index("-X")
        command, rest = args[at + 1], args[at + 2 :]
        if command == "stuff" and rest:
            return scan.engine.script(decode_ansi_c(rest[0].replace("^M", "\n")))
        if command in ("exec", "screen") and rest:
            return scan.engine.run([a for a in rest if a not in ("!", "!!", ".|", "|")] or rest)
    if cmd.name == "screen":
        i = 0
        while i < len(args) and args[i].startswith("-"):
            a = args[i]
            takes = a in ("-S", "-c", "-Logfile", "-p", "-t", "-T", "-X", "-e", "-h") or (
                a[-1] in "ScpTtXeh" and len(a) > 2
            )
            i += 2 if takes else 1
        if i < len(args):
            return scan.engine.run(args[i:])
    elif _TMUX_RUNS & set(args):
        words = [a for a in args if not a.startswith("-")]
        last = words[-1] if words and words[-1] not in _TMUX_RUNS else ""
        if last and last not in ("Enter", "C-m", "C-c"):
            return scan.engine.script(last)
        keys = [w for w in words if w not in _TMUX_RUNS and w not in ("Enter", "C-m")]
        if "send-keys" in args or "send" in args:
            return scan.engine.script(" ".join(keys[-1:]))
    scan.hit("G181", " ".join(cmd.argv))
    return None


_HYPERFINE_SCRIPTS = wordset("-p --prepare -s --setup -c --cleanup --conclude")
_HYPERFINE_TAKES = _HYPERFINE_SCRIPTS | wordset(
    "-w --warmup -m --min-runs -M --max-runs -r --runs -D --parameter-step-size -S --shell --style --sort -u "
    "--time-unit --export-asciidoc --export-csv --export-json --export-markdown --export-orgmode --output "
    "-n --command-name --input"
)


def _hyperfine(cmd: Cmd, scan: Scan) -> Flow | None:
    """hyperfine runs each benchmarked command, and its prepare/setup/cleanup commands, in a shell."""
    args = list(cmd.args)
    scripts: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        key = a.split("=", 1)[0]
        if key in ("-P", "--parameter-scan", "-L", "--parameter-list"):
            i += 4 if key in ("-P", "--parameter-scan") else 3
            continue
        if key in _HYPERFINE_TAKES:
            value = a.split("=", 1)[1] if "=" in a else args[i + 1] if i + 1 < len(args) else ""
            if key in _HYPERFINE_SCRIPTS:
                scripts.append(value)
            i += 1 if "=" in a else 2
            continue
        if not a.startswith("-"):
            scripts.append(a)
        i += 1
    for script in scripts:
        scan.engine.script(script)
    scan.hit("G181", " ".join(cmd.argv))
    return None


HANDLERS: dict[str, Handler] = {
    "hyperfine": _hyperfine,
    "tmux": _tmux,
    "screen": _tmux,
    "find": _find,
    "gfind": _find,
    "fd": _fd,
    "fdfind": _fd,
    "xargs": _xargs,
    "gxargs": _xargs,
    "parallel": _parallel,
}
