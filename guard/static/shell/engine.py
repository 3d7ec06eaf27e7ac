"""Run a shell script through guard's knowledge: parse, unwrap, dispatch each command to its family.

The engine is what the walker calls for every simple command. It resolves the command name
(``/usr/bin/rm``, ``\\rm``, ``"rm"`` are ``rm``), unwraps what executes its arguments (wrappers,
shells with ``-c``, ``eval``, ``source``, scripts written or downloaded earlier in the same call,
functions), bounds the nesting, and hands everything else to the handler table of
:mod:`guard.static.families`. Runtime values keep their taint, so ``bash -c "$(curl …)"``,
``eval "$(echo … | base64 -d)"`` and ``source <(wget -O- …)`` are seen for what they run.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from guard import lazyre
from guard.model import Risk
from guard.static.families import HANDLERS, guardfiles
from guard.static.reading import lexer
from guard.static.reading.parser import parse
from guard.static.reading.text import (
    _MARKER_RE,
    DYN_OPEN,
    IFS,
    decode_ansi_c,
    join_continued,
    marker_ids,
    prefilter,
    strip_markers,
    wordset,
)
from guard.static.reading.unwrap import WRAPPERS, Unwrapped, unwrap
from guard.static.reading.winsyntax import looks_windows
from guard.static.scan import DECODED, EMPTY, OPAQUE_FLOW, REMOTE, SECRET, Cmd, Flow, Hit, Scan, display, piped
from guard.static.shell import envvars, shells
from guard.static.shell.walker import Walker

SOCKET, SHELL = 16, 32  # flow bits: raw socket output; an interactive shell's output
SHELLS = wordset("sh bash zsh dash ksh mksh ash fish csh tcsh yash posh rbash pdksh oksh busybox-sh")
_NO_ENV: Mapping[str, str] = {}
_BIN_DIRS = ("/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin", "/opt/homebrew/bin")
_ELEVATE = frozenset({"sudo", "doas", "pkexec", "run0"})  # administrator rights: never auto-allowed (G430)
# Written as a bare word, these run their command in the shell itself (``builtin cd ~/.claude`` moves it;
# bash's ``time`` keyword too); ``/usr/bin/time`` and every other wrapper is a program of its own.
_SAME_SHELL = frozenset({"builtin", "command", "time"})
_FORK_BOMB = r"(^|[^\w-]){n}\s*(\|\s*{n}|&(?!&))"
# A brace word where a command starts: ``{`` glued to what follows (a group's ``{`` needs a blank).
# bash's ``time`` keyword before a group or subshell (``time (npm run build)``, ``time { make; }``):
# the grammar reads ``time`` as a command and the ``{`` as its word, so the keyword is blanked and the
# group is read as what runs (timing it changes nothing else)
_TIME_KEYWORD = lazyre.compile(r"(?:^|(?<=[;&|\n(]))[ \t]*time(?:[ \t]+-p)?(?=[ \t]+[({])")
_BRACE_WORD = lazyre.compile(rb"(^|[;&|(\n]|[{(;&|][ \t]+|\n[ \t]+)\{(?=[^\s}])")
_LINE_BACKSLASH = lazyre.compile(rb"(?<!\\)\n[ \t]*\\(?!\n)")
_QUOTING = lazyre.compile(r"['\"\\]")
_ANSI_C = lazyre.compile(r"\$'((?:[^'\\]|\\.)*)'")


def command_name(word: str) -> str:
    """``/usr/bin/RM.exe`` -> ``rm``."""
    base = word.rsplit("/", 1)[-1] if "/" in word else word
    base = base.lower()
    return base[:-4] if base.endswith(".exe") else base


class Engine:
    """The shell interpreter of one scan: implements :class:`guard.static.scan.Interpreter`."""

    __slots__ = ("aliases", "called", "calling", "functions", "scan")

    def __init__(self, scan: Scan) -> None:
        self.scan = scan
        scan.engine = self
        scan.subscan = self._subscan
        scan.subcode = self._subcode
        self.functions: dict[str, tuple[Walker, Any]] = {}
        self.called: set[str] = set()
        self.calling: list[tuple[int, int, int]] = []
        self.aliases: dict[str, str] = {}

    # -- scripts
    def top(self, text: str, stdin: Flow = EMPTY) -> Flow:
        out = self._text(text, stdin, None)
        if not self.functions and not self.aliases:
            return out
        scan = self.scan
        end = scan.cwd, dict(scan.vars), set(scan.unset)
        for name, (walker, body) in list(self.functions.items()):
            if name not in self.called:  # defined but not called here: its body may still run later
                self.called.add(name)
                self._later(end, functools.partial(self._uncalled, walker, body))
        for name, value in list(self.aliases.items()):
            if name not in self.called:  # ``alias ls='rm -rf ~'`` in a startup file runs when ls is typed
                self.called.add(name)
                self._later(end, functools.partial(self.script, value))
        return out

    def _later(self, end: tuple[str | None, dict[str, str], set[str]], body: Callable[[], object]) -> None:
        """A body defined but not called (a function, an alias) runs later, from where the script ended
        (``end``) or after other such bodies. They are walked one after another, so what one changes
        (``f() { cd ~/.claude; }; g() { rm settings.json; }``) is there for the next: one order they may
        be called in, and the stricter reading. When the bodies before it changed the shell, the body is
        also walked alone from ``end`` (``cd ~; f() { cd /tmp; }; g() { rm -rf .claude; }``: ``g`` alone
        deletes ``~/.claude``), and what that walk changes ends with it."""
        scan = self.scan
        if (scan.cwd, scan.vars, scan.unset) != end:
            with scan.child():
                scan.cwd, scan.vars, scan.unset = end[0], dict(end[1]), set(end[2])
                body()
        body()

    def _uncalled(self, walker: Walker, body: Any) -> None:
        with self.scan.call():
            walker.stmt(body, EMPTY)

    def script(
        self, text: str, stdin: Flow = EMPTY, positional: tuple[str, ...] | None = None, inline: bool = False
    ) -> Flow:
        """A nested script (``bash -c``, ``eval``, ``watch``…). A child process (``bash -c``, a program
        running it) has its own variables and working directory and takes what it unset with it;
        ``inline`` (``eval``, ``source``, an alias) is the same shell, as if its text were written in
        place: ``eval 'cd ~/.claude'; rm settings.json`` deletes the host's settings, and after
        ``eval 'export GUARD_HOME=/tmp/x'`` or ``eval 'unset GUARD_HOME'`` a ``claude`` runs without guard's."""
        scan = self.scan
        if scan.depth >= scan.max_depth:
            scan.hit("G197", text[:80])
            return OPAQUE_FLOW
        scan.depth += 1
        try:
            if inline:
                return self._text(self._demarker(text), stdin, positional)
            with scan.child():
                return self._text(self._demarker(text), stdin, positional)
        finally:
            scan.depth -= 1

    def _text(self, text: str, stdin: Flow, positional: tuple[str, ...] | None) -> Flow:
        scan = self.scan
        if DYN_OPEN in text:
            text = self._demarker(text)
        text, hidden = prefilter(text)
        if "\\\n" in text and "<<" not in text:  # (a heredoc body is not shell: its quotes would mislead the join)
            text = join_continued(text)
        if hidden:
            scan.hit("G199")
        if "time" in text:
            text = _TIME_KEYWORD.sub(lambda m: " " * len(m.group(0)), text)
        if (len(text) - len(text.rstrip("\\"))) % 2:  # ``ls 0$\``: a last backslash escapes nothing; the
            # grammar reads some such texts without an error, but what bash makes of them is not sure
            scan.hit("G195", "a backslash ends the command")
        if positional is not None:
            scan.vars["@"] = scan.vars["*"] = IFS.join(positional[1:])
            for i, value in enumerate(positional[:10]):
                scan.vars[str(i)] = value
        windows_ok = False
        if looks_windows(text):  # ``rmdir /s /q C:\``: the Windows family, loaded only for such a script
            from guard.static.families import windows

            windows_ok = windows.run(scan, text, "any", stdin)
        flat = lexer.split(text, scan.resolver.home, scan.cwd) if len(text) < 4096 else None
        if flat is not None:
            return self._flat(flat, stdin)
        src = text.encode("utf-8", "replace")
        root = parse(src).root_node
        if root.has_error and b"$((" in src:  # bash reads ``$((cmd))`` that is not arithmetic as ``$( (cmd) )``
            alternative = src.replace(b"$((", b"$( (")
            retry = parse(alternative).root_node
            if not retry.has_error:
                src, root = alternative, retry
        if root.has_error and b"{" in src:  # ``{rm,-rf,/} 2>x``: a brace word, not a group (the grammar
            # takes the ``{`` for ``{ …; }``); an empty quoted preamble expands to the same words
            alternative = _BRACE_WORD.sub(rb"\1''{", src)
            if alternative != src:
                retry = parse(alternative).root_node
                if not retry.has_error:
                    src, root = alternative, retry
        if b"\\" in src and b"\n" in src:
            glued = _glued_lines(src, root)
            if glued:  # ``ls`` + newline + ``\\rm -rf ~``: the grammar reads ``\\rm`` as an argument of ``ls``
                for at in reversed(glued):
                    src = src[:at] + b";" + src[at:]
                root = parse(src).root_node
        if root.has_error and not windows_ok:
            scan.hit("G195")
        return Walker(self, src, exact=not root.has_error).block(root.children, stdin)

    def _flat(self, segments: list[tuple[str, list[str]]], stdin: Flow) -> Flow:
        """Run what :mod:`guard.static.reading.lexer` split, as the walker would run the same tree."""
        out = EMPTY
        for i, (sep, words) in enumerate(segments):
            given = piped(out) if sep == "|" else stdin  # (a pipe always carries something)
            if i + 1 < len(segments) and segments[i + 1][0] == "|":  # a stage before a pipe: a subshell
                with self.scan.child():
                    out = self.simple(words, given, {})
            else:
                out = self.simple(words, given, {})
        return out

    def _demarker(self, text: str) -> str:
        """Runtime values inside a nested script become variables bound to the same values."""
        if DYN_OPEN not in text:
            return text
        for i in marker_ids(text):
            self.scan.vars[f"__guard{i}"] = f"\ue000{i}\ue001"
        return _MARKER_RE.sub(lambda m: "${__guard" + m.group(1) + "}", text)

    def _subscan(self, text: str) -> Risk:
        """The risk of ``text`` as a script, judged apart (content written to a startup file …)."""
        sub = Scan(self.scan.resolver, self.scan.cwd, self.scan.max_depth, self.scan.budget)
        sub.depth = self.scan.depth + 1
        Engine(sub).top(text[:65536])
        return sub.risk

    def isolated(self, text: str) -> list[Hit]:
        """The hits of ``text`` judged as a script of its own (fresh shell state, the same budget)."""
        sub = Scan(self.scan.resolver, self.scan.cwd, self.scan.max_depth, self.scan.budget)
        Engine(sub).top(text)
        return sub.hits

    def _subcode(self, code: str, lang: str) -> Risk:
        """The risk of interpreter source ``code``, judged apart (a script being written)."""
        from guard.static.families.interp import analyse_code

        sub = Scan(self.scan.resolver, self.scan.cwd, self.scan.max_depth, self.scan.budget)
        sub.depth = self.scan.depth + 1
        Engine(sub)
        analyse_code(sub, code, lang)
        return sub.risk

    # -- commands
    def run(self, argv: tuple[str, ...] | list[str], stdin: Flow = EMPTY) -> Flow:
        """A command that another command runs (wrappers, xargs, find -exec …)."""
        scan = self.scan
        if not argv:
            return EMPTY
        if scan.depth >= scan.max_depth:
            scan.hit("G197", " ".join(argv)[:80])
            return OPAQUE_FLOW
        scan.depth += 1
        try:
            return self.simple(list(argv), stdin, {})
        finally:
            scan.depth -= 1

    def simple(self, argv: list[str], stdin: Flow, env: dict[str, str]) -> Flow:
        scan = self.scan
        scan.budget.tick(1 + len(argv) // 64)
        for key, value in env.items():
            self.env_var(key, value, env)
        head = argv[0]
        if head in envvars.AGENT_HOSTS or "/" in head:  # (the hook settings guard wrote run ``guard`` there)
            envvars.starts_host(scan, argv, env)
        shown = display(scan, " ".join(argv))
        if len(scan.commands) < 64:
            scan.commands.append(shown[:200])
        if scan.depth == 0:
            scan.segments.append(shown)
        if DYN_OPEN in head and (found := _looked_up(scan, head)):  # ``$(which rm) -rf /`` runs rm
            scan.hit("G196", shown)  # (still a name found at runtime: it asks at least)
            head = argv[0] = found
        if DYN_OPEN in head:
            flow = scan.flow_of(head)
            if head.startswith(DYN_OPEN) or "/" not in strip_markers(head, ""):
                scan.hit("G112" if flow.bits & REMOTE else "G111" if flow.bits & DECODED else "G196", shown)
                return OPAQUE_FLOW
        scan.cmd_secret = False
        name = command_name(head)
        before = len(scan.hits)
        outer, scan.argv = scan.argv, (words := tuple(argv))
        if env:  # ``CDPATH=/ cd etc``: the command sees its prefix assignments (its words are already expanded)
            saved = dict(scan.vars)
            scan.vars.update(env)
            try:
                out = self.dispatch(name, words, stdin)
            finally:
                scan.vars = saved | {k: v for k, v in scan.vars.items() if k not in env and saved.get(k) != v}
        else:
            out = self.dispatch(name, words, stdin)
        if len(scan.hits) == before:
            scan.hit("G180" if _about_itself(words) else "G182", shown)
        scan.argv = outer
        bits = out.bits | (SECRET if scan.cmd_secret else 0)
        return out if bits == out.bits else Flow(bits, out.text, out.paths)

    def dispatch(self, name: str, argv: tuple[str, ...], stdin: Flow) -> Flow:
        scan = self.scan
        if name == "alias":
            return self.alias(argv)
        if argv[0] in self.aliases:  # defined earlier in this script: what it stands for runs
            self.called.add(argv[0])
            value = self.aliases.pop(argv[0])  # (popped: an alias does not expand inside itself)
            import shlex  # (loaded for an alias the script defined)

            try:
                return self.script(" ".join([value, *(shlex.quote(a) for a in argv[1:])]), stdin, inline=True)
            finally:
                self.aliases[argv[0]] = value
        if name in self.functions and name not in HANDLERS:
            return self.call_function(name, argv, stdin)
        if name in WRAPPERS:
            u = unwrap(name, argv)
            if not u.not_a_wrapper:
                return self.wrapper(name, argv, stdin, u)
        if name in SHELLS:
            return self.shell(argv, stdin)
        if name in ("eval", "iex", "invoke-expression"):
            if name != "eval" and len(argv) == 1:
                return self.consume(stdin, "shell")  # ``… | iex``: PowerShell runs its input
            return self.eval(argv, stdin)
        if name in ("source", "."):
            return self.source(argv, stdin)
        handler = HANDLERS.get(name)
        if handler is not None and "/" in argv[0] and scan.written and scan.place(argv[0]).path in scan.written:
            return self.exec_file(argv[0], stdin, argv[1:])  # ``curl -o /tmp/r … && /tmp/r``: that file, not R
        if handler is None and ("*" in name or "?" in name or "[" in name) and name not in ("[", "[["):
            folder = argv[0].rpartition("/")[0]
            if not folder or any(fnmatch.fnmatchcase(d, folder) for d in _BIN_DIRS):
                return self.globbed(name, argv, stdin)
        if handler is None and "/" in argv[0]:
            return self.exec_file(argv[0], stdin, argv[1:])
        if handler is None:
            return OPAQUE_FLOW
        out = handler(Cmd(argv, name, stdin, scan.privileged), scan)
        return OPAQUE_FLOW if out is None else out

    def globbed(self, name: str, argv: tuple[str, ...], stdin: Flow) -> Flow:
        """``/???/r? -rf /``: a glob in command position runs whatever file it matches, so each command
        guard knows that it could match is judged (the worst wins); too many, or none, and it asks."""
        matches = [n for n in _known_names() if fnmatch.fnmatchcase(n, name)]
        if not matches or len(matches) > 64:
            self.scan.hit("G196", display(self.scan, " ".join(argv)))
            return OPAQUE_FLOW
        out = EMPTY
        for candidate in matches:
            out = out | self.dispatch(candidate, (candidate, *argv[1:]), stdin)
        return out

    def wrapper(self, name: str, argv: tuple[str, ...], stdin: Flow, u: Unwrapped) -> Flow:
        scan = self.scan
        before = len(scan.hits)
        if u.query:
            if name == "env":
                return self.dispatch("printenv", ("env", *argv[1:]), stdin)  # a dump of the environment
            if u.privileged and not any(a in ("-l", "--list", "-v", "-k", "-K", "-V", "--version") for a in argv[1:]):
                scan.hit("G177", display(scan, " ".join(argv)))  # an interactive root shell
            elif name in _ELEVATE and not any(a in ("-k", "-K", "-V", "--version", "-h", "--help") for a in argv[1:]):
                scan.hit("G430", display(scan, " ".join(argv)))  # ``sudo -v``, ``sudo -l``: the password cache
            else:
                scan.hit("G180", " ".join(argv))
            return guardfiles.located(argv) if name == "command" else EMPTY
        saved = scan.privileged, scan.cwd
        scan.privileged = saved[0] or u.privileged
        if u.chdir:
            scan.chdir(u.chdir)
        try:
            env = dict(u.env)
            for key, value in u.env:
                self.env_var(key, value, env)
            if u.unset:  # ``env -u GUARD_HOME …``: taken away for that command
                envvars.unset(scan, u.unset, scoped=True)
            gone = (*u.unset, "GUARD_HOME") if u.clean else u.unset  # (``env -i``: guard's workspace too)
            if (env or gone) and u.argv:  # ``env GUARD_HOME=/tmp/x claude …``, ``env -u GUARD_HOME codex …``
                envvars.starts_host(scan, u.argv, env, gone)
            out = self.script(u.script, stdin) if u.script is not None else self.run(u.argv, stdin)
        finally:
            scan.privileged = saved[0]
            if argv[0] not in _SAME_SHELL:
                scan.cwd = saved[1]
        if u.privileged:
            new = scan.hits[before:]
            if new and max(r.risk for r in _rules(new)) < Risk.MEDIUM:
                reads = all(h.rule_id == "G180" for h in new)
                rule = ("G430" if name in _ELEVATE else "G181") if reads else "G177"
                scan.hit(rule, display(scan, " ".join(argv)))  # ``sudo ls``: administrator rights always ask
            elif not new and name in _ELEVATE:
                scan.hit("G430", display(scan, " ".join(argv)))
        return out

    # -- what runs scripts (see guard.static.shell.shells)
    def shell(self, argv: tuple[str, ...], stdin: Flow) -> Flow:
        return shells.shell(self, argv, stdin)

    def handles(self, name: str) -> bool:
        return name in HANDLERS

    def consume(self, stdin: Flow, kind: str, interactive: bool = False, inline: bool = False) -> Flow:
        return shells.consume(self, stdin, kind, interactive, inline)

    def exec_file(
        self, word: str, stdin: Flow = EMPTY, args: tuple[str, ...] = (), lang: str = "shell", inline: bool = False
    ) -> Flow:
        return shells.exec_file(self, word, stdin, args, lang, inline)

    def eval(self, argv: tuple[str, ...], stdin: Flow) -> Flow:
        return shells.eval_(self, argv, stdin)

    def source(self, argv: tuple[str, ...], stdin: Flow) -> Flow:
        return shells.source(self, argv, stdin)

    def env_var(self, key: str, value: str, env: Mapping[str, str] = _NO_ENV) -> None:
        """A variable set as a prefix, an assignment or by ``export``: see :mod:`guard.static.shell.envvars`."""
        envvars.assigned(self, key, value, env)

    def env_unset(self, names: Sequence[str]) -> None:
        envvars.unset(self.scan, names)

    def declare(self, keyword: str, flags: Sequence[str], entries: Sequence[tuple[str, str | None]]) -> None:
        envvars.declared(self, keyword, flags, entries)

    def alias(self, argv: tuple[str, ...]) -> Flow:
        for arg in argv[1:]:
            key, eq, value = arg.partition("=")
            if eq and key and not key.startswith("-"):
                self.aliases[key] = value
        self.scan.hit("G180", "alias")
        return EMPTY

    def define_function(self, walker: Walker, node: Any) -> None:
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name_node is None or body is None:
            return
        name = walker.text(name_node)
        # quotes and backslashes do not change which function a word calls: ``f|'f'&`` is ``f|f&``
        text = walker.text(body)
        # (``|`` or ``&`` first: compiling a pattern per function made 2,000 definitions cost a second)
        if ("|" in text or "&" in text) and re.search(_FORK_BOMB.format(n=re.escape(name)), _unquoted(text)):
            self.scan.hit("G175", walker.text(node)[:80])
        self.functions[name] = (walker, body)

    def call_function(self, name: str, argv: tuple[str, ...], stdin: Flow) -> Flow:
        scan = self.scan
        self.called.add(name)
        walker, body = self.functions[name]
        key = (id(walker), body.start_byte, body.end_byte)  # a redefinition inside the body is another function
        if key in self.calling or scan.depth >= scan.max_depth:
            scan.hit("G181", f"recursive call of {name}")
            return OPAQUE_FLOW
        self.calling.append(key)
        scan.depth += 1
        try:
            # the same shell: what the body changes stays changed, but for its arguments and its locals
            # (a body written ``f() ( … )`` is a subshell, which the walker scopes as any other)
            with scan.call():
                for i in range(1, 10):
                    scan.vars.pop(str(i), None)
                scan.vars["@"] = scan.vars["*"] = IFS.join(argv[1:])
                scan.vars["#"] = str(len(argv) - 1)
                for i, value in enumerate(argv[1:10], start=1):
                    scan.vars[str(i)] = value
                out = walker.stmt(body, stdin)
        finally:
            scan.depth -= 1
            self.calling.pop()
        scan.hit("G181", f"function {name}")
        return out


_LOOKUP = lazyre.compile(r"(?:\$\(|`)\s*(?:which|command\s+-[vV]|type\s+-[pP]|whereis\s+-b)\s+([\w.+-]+)\s*(?:\)|`)")


def _looked_up(scan: Scan, head: str) -> str | None:
    """The program a command name found at runtime by ``which NAME`` / ``command -v NAME`` runs."""
    ids = marker_ids(head)
    if len(ids) != 1 or strip_markers(head, "").strip() or ids[0] >= len(scan.substs):
        return None
    m = _LOOKUP.fullmatch(scan.substs[ids[0]].display.strip())
    return m.group(1) if m else None


def _unquoted(text: str) -> str:
    """``text`` with ``$'…'`` decoded and quotes and backslashes dropped (near enough to match a name)."""
    text = _ANSI_C.sub(lambda m: decode_ansi_c(m.group(1)), text)
    return _QUOTING.sub("", text)


def _about_itself(argv: tuple[str, ...]) -> bool:
    """``fzf --version``, ``ansible-lint --help``: a program found on the PATH that no family knows,
    asked only its version or usage (a program of the project, ``./x --help``, is still unknown)."""
    return len(argv) == 2 and argv[1] in ("--version", "--help") and "/" not in argv[0] and DYN_OPEN not in argv[0]


def _glued_lines(src: bytes, root: Any) -> list[int]:
    """Newlines tree-sitter-bash skipped: a line that starts with ``\\`` (``\\rm``) parsed as more
    words of the command on the line before. Each is a command separator in bash."""
    out = []
    for m in _LINE_BACKSLASH.finditer(src):
        slash = m.end() - 1
        node = root.descendant_for_byte_range(slash, slash + 1)
        parent = node.parent if node is not None and node.type == "word" else None
        if parent is not None and parent.type == "command_name":
            parent = parent.parent
        if parent is not None and parent.type == "command" and parent.start_byte < m.start():
            out.append(m.start())
    return out


@functools.cache
def _known_names() -> tuple[str, ...]:
    """Every command name guard judges by name, for matching a globbed command name."""
    names = {*HANDLERS, *SHELLS, *WRAPPERS, "eval", "source"}
    return tuple(sorted(n for n in names if n.isascii() and n[:1].isalnum()))


def _rules(hits: list[Any]) -> list[Any]:
    from guard.static.rules.catalog import CATALOG

    return [CATALOG[h.rule_id] for h in hits]
