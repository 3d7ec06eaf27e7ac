"""What runs scripts: shells (``-c``, a file, stdin), ``eval``, ``source``, and executing a file.

A shell fed from a socket is a remote shell, from a download is remote code, from decoded data is a
hidden payload; with known text it is parsed like any script. A file written or downloaded earlier
in the same call is judged by what was put in it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from guard.static.facts import paths as P
from guard.static.reading.text import DYN_OPEN, strip_markers
from guard.static.scan import (
    BUILT,
    DECODED,
    EMPTY,
    OPAQUE,
    OPAQUE_FLOW,
    PACKED,
    REMOTE,
    SPELLED,
    Flow,
    display,
    interactive_shell,
)

if TYPE_CHECKING:
    from guard.static.scan import Interpreter

SOCKET, SHELL = 16, 32  # flow bits: raw socket output; an interactive shell's output


def shell(engine: Interpreter, argv: tuple[str, ...], stdin: Flow) -> Flow:
    scan = engine.scan
    args, i, c_flag, interactive, from_stdin = argv[1:], 0, False, False, False
    while i < len(args):
        a = args[i]
        if a == "--" or a == "-":
            i += 1
            break
        if len(a) > 1 and a[0] in "-+":
            if a in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                i += 2
                continue
            if not a.startswith("--"):
                c_flag = c_flag or "c" in a
                interactive = interactive or "i" in a
                from_stdin = from_stdin or "s" in a
            i += 1
            continue
        break
    rest = args[i:]
    if c_flag:
        if not rest:
            scan.hit("G195", " ".join(argv))
            return EMPTY
        return engine.script(rest[0], stdin, tuple(rest[1:]))
    if rest and not from_stdin and rest[0] not in ("/dev/stdin", "/proc/self/fd/0", "/dev/fd/0"):
        return exec_file(engine, rest[0], stdin)
    if stdin == EMPTY and argv[1:] and all(a in _INFO for a in argv[1:]):
        scan.hit("G180", " ".join(argv))  # ``bash --version``: prints and exits
        return EMPTY
    return consume(engine, stdin, "shell", interactive)


_INFO = frozenset({"--version", "--help", "-h", "--usage"})


def consume(engine: Interpreter, stdin: Flow, kind: str, interactive: bool = False, inline: bool = False) -> Flow:
    """A shell or interpreter runs whatever arrives on stdin (``inline``: ``source /dev/stdin``, the same shell)."""
    scan = engine.scan
    if stdin.bits & SOCKET:
        scan.hit("G144", f"{kind} fed from a network socket")
    elif stdin.bits & REMOTE:
        scan.hit("G110", f"download piped into a {kind}")
    elif stdin.bits & DECODED:
        scan.hit("G111", f"decoded data piped into a {kind}")
    elif stdin.text is not None and not stdin.bits & PACKED:
        if stdin.bits & SPELLED:
            scan.hit("G406", f"{kind} runs decoded text: {stdin.text[:60].strip()}")
        if kind == "shell":
            engine.script(stdin.text, inline=inline)
        else:
            from guard.static.families.interp import analyse_code

            analyse_code(scan, stdin.text, kind)
    elif stdin.bits:  # with a /dev/tcp descriptor open, what the shell reads may come from the socket
        scan.hit("G144" if scan.netdev else "G194", f"{kind} reads a script from a pipe")
    elif stdin.from_file:  # ``bash < x.sh``: a script from a file, as before
        scan.shell_stdin = True
        scan.hit("G181", f"{kind} reads a script from a file")
        return Flow(SHELL)
    else:  # nothing on stdin: it waits for input the agent sends later (Codex write_stdin), unseen
        scan.shell_stdin = True
        interactive_shell(scan, f"interactive {kind}")
        return Flow(SHELL)
    scan.tag("execute")
    return Flow(SHELL if interactive else OPAQUE)


def exec_file(
    engine: Interpreter,
    word: str,
    stdin: Flow = EMPTY,
    args: tuple[str, ...] = (),
    lang: str = "shell",
    inline: bool = False,
) -> Flow:
    """Running a file: a script written or downloaded earlier in this call is judged by its content.

    ``lang`` is the language an interpreter reads it as (``python x.py``): its source, not shell;
    ``inline``: ``source x.sh``, read into the same shell (what it unsets stays unset after it).
    """
    scan = engine.scan
    scan.tag("execute")
    entry = word.rsplit("/", 1)[-1]
    if entry in ("manage.py", "artisan"):  # (the database family, loaded for these two only)
        from guard.static.families.db import database_rule

        rule = database_rule(entry, args)
        if rule is not None:
            scan.hit(rule, display(scan, " ".join((word, *args))))
    if DYN_OPEN in word:
        flow = scan.flow_of(word)
        if flow.text is not None and not flow.bits and not strip_markers(word, "").strip() and lang == "shell":
            engine.script(flow.text, stdin, inline=inline)  # ``source <(echo 'rm -rf ~')``: the text it reads is known
            return OPAQUE_FLOW
        if flow.bits & (REMOTE | DECODED) or word.startswith(DYN_OPEN):
            scan.hit("G112" if flow.bits & REMOTE else "G111" if flow.bits & DECODED else "G194", display(scan, word))
            return OPAQUE_FLOW
    place = scan.place(word)
    earlier = scan.written.get(place.path)
    if earlier is not None:
        if earlier.bits & REMOTE:
            scan.hit("G113", place.path)
            return OPAQUE_FLOW
        if earlier.bits & DECODED:
            scan.hit("G111", place.path)
            return OPAQUE_FLOW
        if earlier.text is not None and lang != "shell":
            from guard.static.families.interp import analyse_code

            analyse_code(scan, earlier.text, lang)
        elif earlier.text is not None:
            engine.script(earlier.text, stdin, inline=inline)
    if place.tier in (P.PROJECT, P.PROJECT_ROOT, P.GITDIR, P.PERSIST) or (earlier is not None and earlier.bits & BUILT):
        # ``go build -o /tmp/app ./cmd/app && /tmp/app``: the project's code, like ``go run ./cmd/app``
        scan.hit("G115", place.path)
    elif place.tier == P.SYSTEM:
        scan.hit("G182", place.path)
    else:
        scan.hit("G116", place.path)
    return OPAQUE_FLOW


def eval_(engine: Interpreter, argv: tuple[str, ...], stdin: Flow) -> Flow:
    scan = engine.scan
    text = " ".join(argv[1:])
    if not text.strip():
        scan.hit("G180", "eval")
        return EMPTY
    flow = scan.flow_of(text)
    if flow.bits & REMOTE:
        scan.hit("G112", display(scan, " ".join(argv)))
        return OPAQUE_FLOW
    if flow.bits & DECODED:
        scan.hit("G111", display(scan, " ".join(argv)))
        return OPAQUE_FLOW
    if DYN_OPEN in text and not strip_markers(text, "").strip():
        scan.hit("G194", display(scan, " ".join(argv)))
        return OPAQUE_FLOW
    return engine.script(text, stdin, inline=True)  # the same shell


def source(engine: Interpreter, argv: tuple[str, ...], stdin: Flow) -> Flow:
    scan = engine.scan
    if len(argv) < 2:
        scan.hit("G195", "source without a file")
        return EMPTY
    target = argv[1]
    if target in ("/dev/stdin", "-", "/proc/self/fd/0"):
        return consume(engine, stdin, "shell", inline=True)
    return exec_file(engine, target, stdin, inline=True)
