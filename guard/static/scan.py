"""What one analysis accumulates: the rules that fired, tags, effects, and the shell state it tracks.

A :class:`Scan` lives for one call and is never shared: the walker and the command handlers
append to it, and :mod:`guard.static.analysis` folds it into a verdict. It also carries the
state a shell would have at that point (working directory, variables, files written so far,
directories moved), which is what lets ``cd / && rm -rf .`` or ``curl -o x.sh … && sh x.sh``
be judged as one thing.

Data flowing through pipes is a :class:`Flow`: taint bits (downloaded, decoded, secret, opaque),
the literal text when it is known (``echo "…" | sh``), and listed paths (``find / | xargs rm``).

What a handler asks of the shell interpreter running the scan (run this command, judge this
script, read this file as a program) goes through :class:`Interpreter`, declared here beside
``Scan`` (httpx's transport pattern): the families depend on this protocol, never on
:mod:`guard.static.shell.engine`, which implements it and imports them.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping, Sequence
from types import CodeType, FrameType
from typing import Any, Protocol, TypeGuard

import attrs

from guard import lazyre
from guard.model import Risk
from guard.namedtuple import NamedTuple
from guard.static.budget import Budget
from guard.static.facts import ondisk
from guard.static.facts.paths import UNKNOWN_CWD, Place, Resolver
from guard.static.reading.text import _MARKER_RE, DYN_OPEN, marker, marker_ids, strip_markers
from guard.static.rules.catalog import CATALOG

REMOTE, DECODED, SECRET, OPAQUE = 1, 2, 4, 8
BUILT = 64  # flow bit: a program compiled in this call from the project's own sources
SPELLED = 128  # text spelled backwards or letter-shifted (``rev``, ``tr``): decoded, but hidden on purpose
PACKED = 256  # known text compressed (``gzip -c``): only a decompressor gives the text back
ENDLESS = 512  # output without end (``yes``, ``/dev/zero``): written to a file, it fills the disk
GUARD_PIDS = 1024  # process ids picked by a search that matches guard's daemon (``pgrep guard``, ``ps | grep guard``)
PROCS = 2048  # a list of running processes (``ps aux``): a search over it picks processes by pattern
GUARD_CODE = 4096  # the bytes of guard's own program or package (``cat $(which guard)``): a copy runs guard unseen
GUARD_PATH = 8192  # the path of guard's own program as ``which guard`` prints it: what is done to it is done to guard


class Flow(NamedTuple):  # (named tuples, like Subst: made for every command a scan meets)
    """What a command writes to its stdout (or what a word's substitution produced)."""

    bits: int = 0
    text: str | None = None
    paths: tuple[str, ...] = ()
    # the file on disk this is the content of (``< x.tar``, ``cat x.tar |``, ``zcat x.tgz |``), as
    # spelled: an unpacker reading stdin reads that archive's members (a union is no one file's)
    file: str = ""

    def __or__(self, other: Flow) -> Flow:
        return Flow(
            self.bits | other.bits, other.text if other.text is not None else self.text, self.paths + other.paths
        )

    @property
    def from_file(self) -> bool:
        """Redirected from a file, with nothing known of what it holds (``bash < x.sh``): not a
        terminal a shell or a client waits on."""
        return bool(self.file) and not self.bits and self.text is None and not self.paths


EMPTY = Flow()
OPAQUE_FLOW = Flow(OPAQUE)


def piped(flow: Flow) -> Flow:
    """What the next stage of a pipe reads from ``flow``: a pipe always carries something (opaque
    when nothing is known of it), and still the file it came from."""
    if flow.bits or flow.text is not None or flow.paths:
        return flow
    return Flow(OPAQUE, file=flow.file) if flow.file else OPAQUE_FLOW


class Cmd(NamedTuple):
    """One simple command after normalisation and unwrapping, as a handler sees it."""

    argv: tuple[str, ...]
    name: str
    stdin: Flow = EMPTY
    privileged: bool = False
    via: tuple[str, ...] = ()

    @property
    def args(self) -> tuple[str, ...]:
        return self.argv[1:]


@attrs.frozen
class Hit:
    """A rule that fired: its id, what matched, and the code that fired it (``module:function``,
    e.g. ``guard.static.families.fs:rm``; not part of equality, so the same finding from two
    paths is still one)."""

    rule_id: str
    detail: str = ""
    handler: str = attrs.field(default="", eq=False)
    # the words of the command that raised it (for rules that look again at its arguments, such as
    # production markers); not part of a hit's identity
    words: tuple[str, ...] = attrs.field(default=(), eq=False, repr=False)


class Subst(NamedTuple):
    """A value only known at runtime: ``$X``, ``$(cmd)``, ``<(cmd)``."""

    display: str
    flow: Flow = OPAQUE_FLOW
    guarded: bool = False  # ``${X:?}``: the shell refuses to run with it empty


_NO_ENV: Mapping[str, str] = {}


class Interpreter(Protocol):
    """What handlers call on ``scan.engine``: the shell interpreter running this scan.

    :class:`guard.static.shell.engine.Engine` is the implementation; every method judges what would
    run, it never runs anything. Nested work shares the scan's budget and depth bound.
    """

    scan: Scan

    def top(self, text: str, stdin: Flow = EMPTY) -> Flow:
        """``text`` as a whole script: functions and aliases it defines are judged even if not called."""
        ...

    def script(
        self, text: str, stdin: Flow = EMPTY, positional: tuple[str, ...] | None = None, inline: bool = False
    ) -> Flow:
        """A nested script (``bash -c``, ``eval``, ``watch``…): a child process, whose directory, variables
        and what it takes out of the environment end with it, unless ``inline`` (``eval``, ``source``,
        an alias: the same shell, read as if its text were written in place)."""
        ...

    def run(self, argv: tuple[str, ...] | list[str], stdin: Flow = EMPTY) -> Flow:
        """A command another command runs (wrappers, ``xargs``, ``find -exec``…)."""
        ...

    def simple(self, argv: list[str], stdin: Flow, env: dict[str, str]) -> Flow:
        """One simple command with its prefix assignments, as the walker hands it over."""
        ...

    def handles(self, name: str) -> bool:
        """Whether a family registered a handler for command ``name``."""
        ...

    def consume(self, stdin: Flow, kind: str, interactive: bool = False, inline: bool = False) -> Flow:
        """A shell or interpreter reading its program from ``stdin`` (``inline``: ``source /dev/stdin``)."""
        ...

    def exec_file(
        self, word: str, stdin: Flow = EMPTY, args: tuple[str, ...] = (), lang: str = "shell", inline: bool = False
    ) -> Flow:
        """The file ``word`` run as a program (a script written or downloaded earlier in the call);
        ``inline``: read by ``source`` into the same shell."""
        ...

    def isolated(self, text: str) -> list[Hit]:
        """The hits of ``text`` judged as a script of its own (fresh shell state, the same budget)."""
        ...

    def env_var(self, key: str, value: str, env: Mapping[str, str] = _NO_ENV) -> None:
        """A variable set as a prefix, an assignment or by ``export``."""
        ...

    def env_unset(self, names: Sequence[str]) -> None:
        """Variables taken out of the environment (``unset X``): see :mod:`guard.static.shell.envvars`."""
        ...

    def declare(self, keyword: str, flags: Sequence[str], entries: Sequence[tuple[str, str | None]]) -> None:
        """``export``/``declare``/``typeset``/``local``/``readonly`` with its options and its names (each
        with its value or ``None``): see :func:`guard.static.shell.envvars.declared`."""
        ...

    def define_function(self, walker: Any, node: Any) -> None:
        """A shell function definition (``walker`` is the walker whose source holds ``node``)."""
        ...


_NO_WORDS: frozenset[str] = frozenset()


class Child:
    """See :meth:`Scan.child` (a class, not a generator: it runs for every subshell and substitution)."""

    __slots__ = ("environment", "saved", "scan")

    def __init__(self, scan: Scan, environment: bool) -> None:
        self.scan, self.environment = scan, environment

    def __enter__(self) -> None:
        scan = self.scan
        self.saved = scan.cwd, dict(scan.vars), set(scan.unset), scan.frames, dict(scan.refs) if scan.refs else None
        if scan.frames:  # a subshell of a function: ``local`` still works there, but what it declares ends
            scan.frames = [{}]  # with the child, not with the function (the function's frame must not keep it)

    def __exit__(self, *exc: object) -> None:
        scan = self.scan
        scan.cwd, scan.vars, unset, scan.frames, refs = self.saved
        scan.refs = refs if refs is not None else {}
        if self.environment:
            scan.unset = unset


# A function's positional parameters are its own: ``$1`` … and ``$@`` come back when it returns.
_POSITIONAL = ("@", "*", "#", *map(str, range(1, 10)))


class Call:
    """See :meth:`Scan.call`."""

    __slots__ = ("frame", "scan")

    def __init__(self, scan: Scan) -> None:
        self.scan = scan

    def __enter__(self) -> None:
        scan = self.scan
        vars_, unset = scan.vars, scan.unset
        self.frame = {k: (vars_.get(k), k in unset) for k in _POSITIONAL}
        scan.frames.append(self.frame)

    def __exit__(self, *exc: object) -> None:
        scan = self.scan
        scan.frames.pop()
        for name, (value, gone) in self.frame.items():
            if value is None:
                scan.vars.pop(name, None)
            else:
                scan.vars[name] = value
            if gone:
                scan.unset.add(name)
            else:
                scan.unset.discard(name)


class Scan:
    """Mutable state of one analysis (never shared between calls or threads)."""

    __slots__ = (
        "argv",
        "budget",
        "cmd_secret",
        "commands",
        "cwd",
        "depth",
        "docs_hosts",
        "effects",
        "engine",
        "fds",
        "frames",
        "functions",
        "hits",
        "installs",
        "links",
        "literal_tildes",
        "max_depth",
        "moved",
        "netdev",
        "places",
        "privileged",
        "refs",
        "resolver",
        "segments",
        "shell_stdin",
        "shown",
        "subcode",
        "subscan",
        "substs",
        "tags",
        "targets",
        "tty",
        "unset",
        "urls",
        "vars",
        "written",
    )

    def __init__(self, resolver: Resolver, cwd: str | None, max_depth: int = 10, budget: Budget | None = None) -> None:
        self.resolver = resolver
        self.budget = budget if budget is not None else Budget()  # shared with the scans judged inside it
        self.cwd: str | None = cwd
        self.max_depth = max_depth
        self.docs_hosts: frozenset[str] | None = None  # documentation hosts (None: guard.docsites' defaults)
        self.depth = 0
        self.hits: list[Hit] = []
        self.argv: tuple[str, ...] = ()  # the simple command being judged (its hits keep its words)
        self.tags: set[str] = set()
        self.commands: list[str] = []
        self.segments: list[str] = []
        self.effects: list[tuple[str, str]] = []
        self.vars: dict[str, str] = {}
        self.unset: set[str] = set()  # variables taken out of the environment (``unset X``): gone for what follows
        # one per shell function running (innermost last): each name it declared ``local`` -> (the value,
        # whether it was unset) before, put back when the function returns
        self.frames: list[dict[str, tuple[str | None, bool]]] = []
        self.refs: dict[str, str] = {}  # namerefs (``declare -n r=GUARD_HOME``): name -> the variable it stands for
        self.functions: set[str] = set()
        self.substs: list[Subst] = []
        self.shown: dict[str, str] = {}  # display() memo: text -> shown
        self.places: dict[tuple[str, str | None], Place] = {}  # place() memo for words without runtime values
        self.written: dict[str, Flow] = {}
        self.moved: dict[str, Place] = {}
        self.fds: dict[str, tuple[str, str]] = {}  # ``exec 3>~/.bashrc``: descriptor -> (how, file word)
        self.links: dict[str, Place] = {}  # ``ln -s ~ x``: what a symbolic link made here points at
        # words a POSIX shell left starting with a literal ``~`` (``'~'``, ``"~/x"``, ``\\~``): a folder
        # named ``~`` here, not the home (an unquoted tilde was expanded already); see :meth:`literal`
        self.literal_tildes: frozenset[str] | set[str] = _NO_WORDS
        self.targets: list[tuple[str, str]] = []  # (operation, path as spelled) for the check on disk
        self.urls: list[str] = []
        self.installs: list[tuple[str, tuple[str, ...]]] = []  # named installs: (ecosystem, names)
        self.privileged = False
        self.cmd_secret = False
        self.shell_stdin = False  # a shell ran on its stdin (with a /dev/tcp redirect: a reverse shell)
        self.netdev = False
        self.tty = False  # the host runs the command on a terminal it can type into later (Codex ``tty``)
        self.engine: Interpreter = None  # type: ignore[assignment]  # set by the interpreter that runs this scan
        self.subscan: Callable[[str], Risk] = _no_risk
        self.subcode: Callable[[str, str], Risk] = _no_risk

    # -- the shell's own state
    def child(self, environment: bool = True) -> Child:
        """``with scan.child(): …``: what runs inside is a child process (a subshell, a pipeline stage, a
        background job, a command substitution, ``bash -c``): the working directory, the variables and
        what it took out of the environment (``unset GUARD_HOME``) end with it, as in the shell.
        ``environment=False`` keeps what it took away (a tree guard could not read whole, where what
        looks like a subshell may be none: the stricter reading)."""
        return Child(self, environment)

    def call(self) -> Call:
        """``with scan.call(): …``: a shell function's body runs in the same shell, so its working
        directory, variables and unset names stay changed after it (``f() { export GUARD_HOME=/tmp/x; }; f``),
        except its positional parameters and what it declared ``local`` (see :meth:`local`)."""
        return Call(self)

    def local(self, name: str) -> None:
        """``local NAME`` (``declare``/``typeset`` in a function): ``NAME`` is the function's own from
        here on, and what it was before comes back when the function returns (outside one: nothing to
        keep)."""
        if self.frames:
            frame = self.frames[-1]
            if name not in frame:  # (a second ``local NAME`` in the same function keeps the first)
                frame[name] = self.vars.get(name), name in self.unset

    def referent(self, name: str) -> str:
        """The variable ``name`` stands for: itself, or what the nameref ``declare -n name=TARGET`` points
        at, through a chain of them (a loop, which bash refuses, and a ref with no target yet: the name)."""
        refs = self.refs
        if not refs or name not in refs:
            return name
        target, seen = name, {name}
        while refs.get(target):
            target = refs[target]
            if target in seen or len(seen) > _REF_CHAIN:
                return name
            seen.add(target)
        return target

    def assign(self, name: str, value: str) -> None:
        """``name=value`` in the shell itself (an assignment, ``read``, ``printf -v``, ``mapfile`` …),
        judged as any assignment (:meth:`Interpreter.env_var`); through a nameref, its target is set."""
        if self.refs.get(name) == "":  # ``declare -n r; r=GUARD_HOME``: the first value names the target
            if _IDENTIFIER.fullmatch(value):
                self.refs[name] = value
            return
        name = self.referent(name)
        self.vars[name] = value
        self.engine.env_var(name, value)  # ``export LD_PRELOAD=…`` loads code into what runs next

    # -- findings
    def hit(self, rule_id: str, detail: str = "") -> None:
        if rule_id not in CATALOG:  # a typo in a detector must fail loudly in tests, not silently pass
            raise KeyError(f"unknown rule id {rule_id}")
        if DYN_OPEN in detail:
            detail = display(self, detail)
        frame = _getframe(1)
        self.hits.append(Hit(rule_id, detail[:160], _EMITTERS.get(frame.f_code) or emitter(frame), self.argv))

    def tag(self, *tags: str) -> None:
        self.tags.update(tags)

    def effect(self, kind: str, path: str) -> None:
        self.effects.append((kind, path))

    @property
    def risk(self) -> Risk:
        return max((CATALOG[h.rule_id].risk for h in self.hits), default=Risk.SAFE)

    # -- runtime values
    def dynamic(self, display_text: str, flow: Flow = OPAQUE_FLOW, guarded: bool = False) -> str:
        self.substs.append(Subst(display_text, flow, guarded))
        return marker(len(self.substs) - 1)

    def flow_of(self, word: str) -> Flow:
        """The union of what the runtime values inside ``word`` carry (``a | b | …`` in one pass:
        a word of 20,000 values built 20,000 flows and copied their paths each time)."""
        ids = marker_ids(word)
        if not ids:
            return EMPTY
        substs, tick = self.substs, self.budget.tick
        bits, text = 0, None
        paths: list[str] = []
        for i in ids:
            if i < len(substs):
                tick()
                flow = substs[i].flow
                bits |= flow.bits
                if flow.text is not None:
                    text = flow.text
                paths.extend(flow.paths)
        return Flow(bits, text, tuple(paths))

    def guarded(self, word: str) -> bool:
        ids = marker_ids(word)
        return bool(ids) and all(i < len(self.substs) and self.substs[i].guarded for i in ids)

    # -- paths
    def literal(self, word: str) -> None:
        """``word`` came out of a POSIX shell's expansion with a quoted or escaped leading ``~``: a name.

        The resolver reads a leading ``~`` as a home (PowerShell's ``~``, a tool's ``~/x``); a POSIX
        shell expands every unquoted one before a command sees it, so the ``~`` still leading a word
        it handed on is the folder ``./~`` (``mkdir '~'``, ``rm -r "~/build"``).
        """
        self.literal_tildes = {*self.literal_tildes, word}  # (rare: a copy each time costs nothing)

    def place(self, word: str, cwd: str | Any | None = attrs.NOTHING) -> Place:
        self.budget.tick()  # (a glob resolved against guard's known places costs tens of microseconds)
        base = self.cwd if cwd is attrs.NOTHING else cwd
        if word[:1] == "~" and word in self.literal_tildes:
            word = "./" + word
        if DYN_OPEN in word:
            if self.guarded(word):
                word = strip_markers(word, "guarded")
            return self.resolver.place(word, base)
        # the same word from the same folder is the same place for the whole call (a handler and
        # the effect it records often resolve one word twice)
        key = (word, base)
        place = self.places.get(key)
        if place is None:
            place = self.resolver.place(word, base)
            if len(self.places) < _MEMO_SIZE:
                self.places[key] = place
        return place

    def target(self, op: str, word: str) -> None:
        """Record a path this call writes, deletes, moves or links to, for :mod:`guard.static.facts.ondisk`."""
        if word[:1] == "~" and word in self.literal_tildes:
            word = "./" + word  # (``rm -rf '~/'`` through a link ``./~`` to guard's files is looked at too)
        raw = ondisk.spelled(self.resolver, word, self.cwd)
        if raw is not None:
            self.targets.append((op, raw))

    def chdir(self, word: str | None) -> None:
        before, back = self.cwd, self.vars.get("OLDPWD")  # bash's $OLDPWD after a cd (``~-``, ``cd -``)
        if _known_folder(before):
            self.vars["OLDPWD"] = before
        else:
            self.vars.pop("OLDPWD", None)
        if word is None or (word == "~" and word not in self.literal_tildes):
            self.cwd = self.resolver.home
            return
        if word == "-" and _known_folder(back):
            self.cwd = back
            return
        if word == "-" or (DYN_OPEN in word and word.startswith(DYN_OPEN)):
            self.cwd = UNKNOWN_CWD
            return
        path = self.resolver.absolute(word, self.cwd)
        self.cwd = path if path is not None else UNKNOWN_CWD
        if self.cwd is not None and not self.cwd.startswith("/") and self.cwd in (".", ""):
            self.cwd = None


def _known_folder(path: str | None) -> TypeGuard[str]:
    """An absolute folder with nothing left to runtime (not ``UNKNOWN_CWD``, not ``$X/y``)."""
    return path is not None and path.startswith("/") and DYN_OPEN not in path


def _no_risk(*_text: str) -> Risk:
    return Risk.SAFE


def display(scan: Scan, text: str) -> str:
    """``text`` with runtime values shown as they were written (``$HOME_DIR``, ``$(curl …)``).

    One pass over ``text`` (a handler may show a 3,000-word command once per word: a replace per
    runtime value made that cubic), and the same text is shown from a per-scan memo.
    """
    if DYN_OPEN not in text:
        return text
    memo = scan.shown
    out = memo.get(text)
    if out is not None:
        return out
    substs = scan.substs
    known = len(substs)
    unknown = False

    tick = scan.budget.tick

    def shown(m: re.Match[str]) -> str:
        nonlocal unknown
        tick()
        i = int(m.group(1))
        if i < known:
            return substs[i].display
        unknown = True  # (not memoised: a later value may take this index)
        return "$…"

    out = _MARKER_RE.sub(shown, text)
    if not unknown and len(memo) < _MEMO_SIZE:
        memo[text] = out
    return out


def interactive_shell(scan: Scan, detail: str) -> None:
    """A shell, REPL or console opened with no command or script: what it runs arrives later."""
    if scan.tty:
        detail += ", with a terminal"
    scan.hit("G425", detail)


_REF_CHAIN = 8  # namerefs followed from one name (bash allows more; a longer chain is read as the name)
_IDENTIFIER = lazyre.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_MEMO_SIZE = 256  # the costly pattern is one long text shown again and again, not many texts

_getframe = sys._getframe
_EMITTERS: dict[CodeType, str] = {}  # code object -> "module:function", filled once per detector


def emitter(frame: FrameType) -> str:
    """``module:function`` of the detector running in ``frame`` (the caller of :meth:`Scan.hit`).

    One frame up, and a dictionary hit after the first time per detector: cheaper than threading
    a handler name through 400 call sites. A helper in this module (``interactive_shell``) is
    skipped for the detector that called it.
    """
    code = frame.f_code
    name = _EMITTERS.get(code)
    if name is not None:
        return name
    module = frame.f_globals.get("__name__", "?")
    if module == __name__ and frame.f_back is not None:
        return emitter(frame.f_back)
    name = _EMITTERS[code] = f"{module}:{code.co_qualname}"
    return name
