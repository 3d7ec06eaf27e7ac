"""Walk a bash syntax tree the way the shell would run it, handing each simple command to the engine.

Pipes carry a :class:`Flow` from one stage to the next; lists, subshells, loops, conditionals,
function bodies, heredocs, here-strings and redirections are all walked, and command and process
substitutions are run where they appear (their output becomes a runtime value with the flow's
taint). Words are normalised here: quotes spliced, escapes removed, ANSI-C strings decoded,
variables resolved when the script set them, ``~``/``$HOME`` expanded, braces expanded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from guard.static.families import effects
from guard.static.reading.text import (
    IFS,
    wordset,
)
from guard.static.scan import EMPTY, OPAQUE_FLOW, Flow, piped
from guard.static.shell import expand
from guard.static.shell.expand import MAX_NEST

if TYPE_CHECKING:
    from guard.static.scan import Interpreter

_TERMINALS = frozenset({"/dev/tty", "/dev/stdin", "/dev/stderr", "/dev/fd/0", "/dev/fd/2", "/proc/self/fd/0"})
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_BLOCKS = wordset(
    "program compound_statement do_group if_statement elif_clause else_clause while_statement case_statement "
    "case_item negated_command list c_style_for_statement ERROR"
)
_SKIP = frozenset({"comment", "heredoc_body", "heredoc_start", "heredoc_end", "file_descriptor"})


class Walker:
    """Walks one parsed source; nested sources (``bash -c '…'``) get their own walker."""

    __slots__ = ("dropped", "engine", "exact", "nest", "scan", "src", "stdin_of")

    def __init__(self, engine: Interpreter, src: bytes, exact: bool = True) -> None:
        self.engine = engine
        # the tree parsed without an error: what looks like a subshell, a pipe or a ``&`` is one, so what
        # runs there is a child process whose environment changes end with it (else they are kept)
        self.exact = exact
        self.scan = engine.scan
        self.src = src
        self.nest = 0
        self.dropped: dict[int, list[str]] = {}  # command end byte -> words the grammar left out of it
        # command end byte -> the input its own ``<<``/``<<<``/``<`` gives it, when the grammar hung the
        # redirect on a whole list or pipeline (``a | b | c && sh <<EOF`` parses as ``a | (b | c && sh)``)
        self.stdin_of: dict[int, Flow] = {}

    def text(self, node: Any) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "replace")

    # -- statements
    def stmt(self, node: Any, stdin: Flow = EMPTY) -> Flow:
        self.scan.budget.tick()
        self.nest += 1
        try:
            if self.nest > MAX_NEST:
                self.scan.hit("G197", "syntax nested too deeply")
                return OPAQUE_FLOW
            return self._stmt(node, stdin)
        finally:
            self.nest -= 1

    def _stmt(self, node: Any, stdin: Flow) -> Flow:
        t = node.type
        if t == "command":
            return self.command(node, stdin, ())
        if t == "pipeline":
            flow, stages = stdin, node.named_children
            for i, stage in enumerate(stages):
                given = flow if i == 0 else piped(flow)
                # every stage but the last runs in a subshell (zsh, ksh and bash's lastpipe run the last
                # one in the shell itself): ``unset GUARD_HOME | claude`` starts claude with it set
                flow = self.child(stage, given) if i < len(stages) - 1 else self.stmt(stage, given)
            return flow
        if t == "redirected_statement":
            return self.redirected(node, stdin)
        if t in _BLOCKS:
            return self.block(node.children, stdin)
        if t == "subshell":
            with self.scan.child(self.exact):
                return self.block(node.children, stdin)
        if t in ("for_statement", "select_statement"):
            return self.for_loop(node, stdin)
        if t == "variable_assignment":
            self.assign(node)
            return EMPTY
        if t == "variable_assignments":
            for ch in node.named_children:
                self.assign(ch)
            return EMPTY
        if t == "declaration_command":
            return self.declaration(node)
        if t == "unset_command":
            self.engine.env_unset([w for ch in node.named_children for w in self.words(ch)])
            return EMPTY
        if t == "function_definition":
            self.engine.define_function(self, node)
            return EMPTY
        if t in ("command_substitution", "process_substitution"):  # ``< <(…)``: a subshell
            with self.scan.child(self.exact):
                return self.block(node.children, EMPTY)
        if t in _SKIP or not node.is_named:
            return EMPTY
        for ch in node.named_children:  # test_command, arithmetic and anything new: find what runs inside
            if (
                ch.type in ("command_substitution", "process_substitution", "command", "pipeline", "list")
                or ch.named_child_count
            ):
                self.stmt(ch, EMPTY)
        return EMPTY

    def block(self, children: Any, stdin: Flow) -> Flow:
        out = EMPTY
        for ch in children:
            if ch.is_named and ch.type not in _SKIP:
                following = ch.next_sibling
                if following is not None and following.type == "&":  # a background job: a subshell
                    out = self.child(ch, stdin)
                else:
                    out = self.stmt(ch, stdin)
        return out

    def child(self, node: Any, stdin: Flow) -> Flow:
        """``node`` run in a child process (a pipeline stage, a background job): its working directory,
        variables and environment changes end with it. In a tree with an error nothing is scoped."""
        if not self.exact:
            return self.stmt(node, stdin)
        with self.scan.child():
            return self.stmt(node, stdin)

    def for_loop(self, node: Any, stdin: Flow) -> Flow:
        name, values, body, seen_in = None, [], [], False
        for ch in node.children:
            if ch.type == "variable_name" and name is None:
                name = self.text(ch)
            elif ch.type == "in":
                seen_in = True
            elif ch.type == "do_group":
                body.append(ch)
            elif ch.is_named and seen_in and ch.type != "comment":
                values.extend(self.words(ch))
        if name in self.scan.refs:  # a nameref names each word in turn; the body is walked once, for the
            # stricter one: a setting of guard's when one is named (``for r in A GUARD_HOME``), else the last
            names = [v for v in values if v.isidentifier() and v.isascii()]
            self.scan.refs[name] = next((v for v in names if v.startswith("GUARD_")), names[-1] if names else "")
        elif name:  # (set as any assignment: ``for GUARD_HOME in /tmp/x; do …`` moves guard's workspace)
            self.scan.assign(name, IFS.join(values) if seen_in else self.scan.dynamic(f"${name}"))
        return self.block(body, stdin)

    def assign(self, node: Any) -> None:
        name, value = self.assignment(node)
        if name:
            self.scan.assign(name, value)

    def assignment(self, node: Any) -> tuple[str, str]:
        name, value = "", ""
        for ch in node.children:
            if ch.type in ("variable_name", "subscript") and not name:
                name = self.text(ch)
            elif ch.is_named:
                if ch.type == "array":
                    value = IFS.join(w for el in ch.named_children for w in self.words(el))
                else:
                    value = IFS.join(self.words(ch)) if ch.type != "word" else self.value(ch, False, True)
        return name, value

    def declaration(self, node: Any) -> Flow:
        keyword = node.children[0].type if node.child_count else "declare"
        flags: list[str] = []
        named = False
        for ch in node.named_children:  # one name at a time, as the shell: ``local X=/ Y=$X`` reads the new X
            if ch.type == "variable_assignment":
                entries: list[tuple[str, str | None]] = [self.assignment(ch)]
            elif ch.type == "variable_name":
                entries = [(self.text(ch), None)]
            else:
                entries = []
                for word in self.words(ch):  # ``-n``, ``+x``, a quoted ``"X=1"``, ``$(…)`` (which runs)
                    if len(word) > 1 and word[0] in "-+":
                        flags.append(word)
                    else:
                        key, eq, value = word.partition("=")
                        entries.append((key, value if eq else None))
            if entries:
                named = True
                self.engine.declare(keyword, flags, entries)
        # no names: ``declare -x``/``export -p`` print (the family judges what), as on the fast path
        if not named and not any(f[0] == "+" for f in flags):
            return self.engine.simple([keyword, *flags], EMPTY, {})  # ``export -p``: prints the environment
        return EMPTY

    # -- commands and redirections
    def command(self, node: Any, stdin: Flow, outputs: tuple[tuple[str, Any], ...]) -> Flow:
        stdin = self.stdin_of.pop(node.end_byte, stdin)
        env: dict[str, str] = {}
        argv: list[str] = []
        redirects = []
        for ch in node.children:
            t = ch.type
            if t == "variable_assignment":
                name, value = self.assignment(ch)
                env[self.scan.referent(name)] = value  # (``r=/tmp/x claude`` with ``declare -n r=GUARD_HOME``)
            elif t == "command_name":
                for part in ch.named_children:
                    argv.extend(self.words(part))
            elif t in _REDIRECTS:
                redirects.append(ch)
            elif t == "number" and ch.end_byte == node.end_byte and self.fd_of_next(ch):
                continue  # ``sh 0<&2``: tree-sitter-bash reads the ``0`` of ``0<`` as an argument
            elif ch.is_named and t != "comment":
                argv.extend(self.words(ch))
        argv.extend(self.dropped.pop(node.end_byte, ()))
        if redirects:
            stdin, more, _after = self.redirections(redirects, stdin)
            outputs = outputs + more
        if not argv:
            self.scan.vars.update(env)
            for name, value in env.items():
                self.engine.env_var(name, value, env)
            out = EMPTY
        else:
            out = self.engine.simple(argv, stdin, env)
        self.apply_outputs(outputs, out)
        return out

    def redirected(self, node: Any, stdin: Flow) -> Flow:
        body, redirects = None, []
        for ch in node.children:
            if ch.type in _REDIRECTS:
                redirects.append(ch)
            elif ch.is_named and body is None:
                body = ch
        if body is not None and redirects:
            # tree-sitter-bash leaves a word out of the tree before ``2>x`` (``make -f - 2>x`` parses as
            # ``make -f``): what lies between the command and its first redirect is still its argument
            gap = self.src[body.end_byte : redirects[0].start_byte].decode("utf-8", "replace").split()
            # and words after a redirect's target (``rm -rf 2>/dev/null /``) come as more targets of it
            for r in redirects:
                if r.type == "file_redirect":
                    targets = [ch for ch in r.named_children if ch.type not in ("file_descriptor", "ERROR")]
                    gap.extend(w for ch in targets[1:] if not self.fd_of_next(ch) for w in self.words(ch))
            if gap:
                self.dropped[body.end_byte if body.type == "command" else _last_command_end(body)] = gap
        given = stdin
        stdin, outputs, after = self.redirections(redirects, stdin)
        if body is None:
            out = EMPTY
            self.apply_outputs(outputs, out)
        elif body.type == "command":
            out = self.command(body, stdin, outputs)
        else:
            last = _last_simple_command(body) if stdin is not given else None
            if last is not None:  # in bash the input redirect is the last command's, whatever the tree
                self.stdin_of[last.end_byte] = stdin
            out = self.stmt(body, stdin)
            self.apply_outputs(outputs, out)
        for kind, part in after:  # tree-sitter hangs the rest of a heredoc line under the redirect
            if kind == "pipe":
                flow = out
                for stage in part.named_children:
                    flow = self.stmt(stage, piped(flow))
            else:
                self.stmt(part, EMPTY)
        return out

    def fd_of_next(self, node: Any) -> bool:
        """A number glued to the next redirect (``0`` of ``>& x 0>&1``), misread as one more target."""
        return node.type == "number" and self.src[node.end_byte : node.end_byte + 1] in (b">", b"<")

    def redirections(
        self, nodes: list[Any], stdin: Flow
    ) -> tuple[Flow, tuple[tuple[str, Any], ...], list[tuple[str, Any]]]:
        outputs: list[tuple[str, Any]] = []
        after: list[tuple[str, Any]] = []
        for r in nodes:
            if r.type == "herestring_redirect":
                words = [w for ch in r.named_children for w in self.words(ch)]
                text = " ".join(words)
                stdin = Flow(self.scan.flow_of(text).bits, text + "\n")
            elif r.type == "heredoc_redirect":
                misread = self.misread_heredoc(r)
                if misread is not None:  # the body's first line became words of the redirect
                    stdin = Flow(0, misread)
                for ch in r.children:
                    if misread is not None and ch.type != "heredoc_body" and ch.start_byte > self.body_line(r):
                        if ch.is_named and ch.type not in _SKIP:
                            self.stmt(ch, EMPTY)  # a ``$(…)`` there runs as before
                        continue
                    if ch.type == "heredoc_body":
                        if misread is not None:
                            continue
                        stdin = Flow(0, self.text(ch))
                        if ch.named_child_count:  # an unquoted delimiter: ``$(…)`` in the body runs
                            self.block(ch.children, EMPTY)
                    elif ch.type == "file_redirect":
                        stdin = self.file_redirect(ch, stdin, outputs)
                    elif ch.type == "pipeline":
                        after.append(("pipe", ch))
                    elif ch.is_named and ch.type not in _SKIP:
                        after.append(("stmt", ch))
            else:
                stdin = self.file_redirect(r, stdin, outputs)
        return stdin, tuple(outputs), after

    def file_redirect(self, node: Any, stdin: Flow, outputs: list[tuple[str, Any]]) -> Flow:
        op, fd, dest = ">", "", None
        for ch in node.children:
            if ch.type == "file_descriptor":
                fd = self.text(ch)
            elif not ch.is_named:
                op = ch.type
            elif ch.type == "ERROR":
                op = "<>"  # the grammar does not know ``<>`` (open for reading and writing)
            elif dest is None:
                dest = ch
        if dest is None:
            return stdin
        target = self.text(dest) if dest.type == "number" else "".join(self.words(dest))
        if op in ("<&", ">&", ">&-", "<&-") and (target.isdigit() or target in ("-", "")):  # ``>&'3'`` is ``>&3``
            opened = self.scan.fds.get(target) if op == ">&" and fd != "2" else None
            if opened is not None:  # ``echo … >&3`` after ``exec 3>~/.bashrc`` writes that file
                outputs.append(opened)
            return stdin  # duplicating or closing a descriptor
        if op == "<":
            if dest.type == "process_substitution":
                return self.stmt(dest, EMPTY) | Flow(0)
            word = " ".join(self.words(dest))
            if word.startswith("\ue000"):
                return self.scan.flow_of(word)
            if word in _TERMINALS:  # ``sh < /dev/tty``: input from the person's terminal, not a script
                return stdin
            return effects.read_flow(self.scan, word)._replace(file=word)  # (``bash < x.sh``, ``tar -x < x.tar``)
        outputs.append((("append" if op in (">>", "&>>") else "write") + (":2" if fd == "2" else ""), dest))
        if fd.isdigit() and int(fd) > 2 and op in (">", ">>", ">|", "<>"):
            for word in self.words(dest):
                self.scan.fds[fd] = ("append", word)  # later writes through it add to the file
        return stdin

    def misread_heredoc(self, node: Any) -> str | None:
        """The body of a heredoc whose first line tree-sitter-bash took for words (a body line that
        starts with ``\\``: ``bash <<'E'`` + ``\\rm -rf /``), read from the source; ``None`` if read right."""
        end = next((ch for ch in node.children if ch.type == "heredoc_end"), None)
        if end is None:
            return None
        at = self.body_line(node)
        if not any(ch.is_named and ch.type not in _SKIP and ch.start_byte > at for ch in node.children):
            return None
        return self.src[at + 1 : end.start_byte].decode("utf-8", "replace")

    def body_line(self, node: Any) -> int:
        """The newline ending a heredoc redirect's own line: its body starts after it."""
        start = next((ch for ch in node.children if ch.type == "heredoc_start"), node)
        at = self.src.find(b"\n", start.end_byte)
        return at if at >= 0 else len(self.src)

    def apply_outputs(self, outputs: tuple[tuple[str, Any], ...], out: Flow) -> None:
        for how, dest in outputs:
            if isinstance(dest, str):  # a file opened on a descriptor earlier
                effects.write(self.scan, dest, out, how)
                continue
            if dest.type == "process_substitution":  # ``> >(…)``: a subshell
                with self.scan.child(self.exact):
                    self.block(dest.children, out)
                continue
            flow = EMPTY if how.endswith(":2") else out
            for word in self.words(dest):
                effects.write(self.scan, word, flow, how.split(":")[0])

    # -- words (see guard.static.shell.expand)
    def words(self, node: Any) -> list[str]:
        return expand.words(self, node)

    def value(self, node: Any, quoted: bool, first: bool) -> str:
        return expand.value(self, node, quoted, first)


def _last_simple_command(node: Any) -> Any:
    """The simple command a redirect written after a list or pipeline belongs to (its last one), or
    None when that is a group, a subshell or a loop (their redirect is the whole group's)."""
    while node.type in ("pipeline", "list") and node.named_child_count:
        node = node.named_children[-1]
    return node if node.type == "command" else None


def _last_command_end(node: Any) -> int:
    """The end byte of the last simple command in ``node`` (a pipeline's last stage)."""
    while node.type != "command" and node.named_child_count:
        node = node.named_children[-1]
    return int(node.end_byte)
