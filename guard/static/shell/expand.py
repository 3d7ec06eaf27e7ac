"""Words: what bash makes of a word before a command sees it.

Quotes are spliced (``'r'm``, ``"rm"``), escapes removed (``\\rm``), ANSI-C strings decoded
(``$'\\x72m'``), ``~``/``$HOME``/``${HOME}`` expanded, variables the script set resolved (with
``${X:-default}`` read as its default and ``${X:?}`` as guarded), unquoted values split on ``$IFS``,
braces expanded, and command or process substitutions run in place: their output becomes a
runtime value carrying the taint of what produced it.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any, Protocol

from guard import lazyre
from guard.static.reading.text import (
    DYN_OPEN,
    IFS,
    assignment_tilde,
    decode_ansi_c,
    expand_braces,
    protect_braces,
    split_ifs,
    tilde,
    unescape_double,
    unescape_unquoted,
)
from guard.static.scan import EMPTY, OPAQUE_FLOW, Flow, Scan

if TYPE_CHECKING:
    from guard.static.scan import Interpreter

MAX_NEST = 120  # nesting bound shared with statements: Python recursion, not the shell's, sets it
MAX_VALUE = 16 * 1024  # a longer value is not copied into words (``x=$x$x`` doubles it each time)


class Walking(Protocol):
    """What expanding a word asks of the walker reading its source (:class:`~guard.static.shell.walker.Walker`).

    Words and statements nest inside each other (``$(…)`` in a word, a word in a statement), so the
    walker calls this module and this module calls back through the walker it was handed.
    """

    engine: Interpreter
    scan: Scan
    src: bytes
    nest: int
    exact: bool  # the tree parsed without an error (see :class:`~guard.static.shell.walker.Walker`)

    def text(self, node: Any) -> str: ...

    def stmt(self, node: Any, stdin: Flow = ...) -> Flow: ...

    def block(self, children: Any, stdin: Flow) -> Flow: ...


def words(w: Walking, node: Any) -> list[str]:
    t = node.type
    if t == "word":
        text = w.text(node)
        if "`" in text:
            _backticks(w, text)
        if text[:2] == "~-":
            text = oldpwd(w.scan, text)
        out = plain_words(text, w.scan.resolver.home, w.scan.cwd)
    elif t in ("number", "test_operator", "regex", "extglob_pattern"):
        return [w.text(node)]
    else:
        out = []
        for part in split_ifs(value(w, node, False, True)):
            out.extend(expand_braces(part))
    if out and out[0][:1] == "~":
        _literal_tildes(w, node, out)
    return out


_QUOTED_LEAD = ("'", '"', "$'", '$"', "\\~")


def _literal_tildes(w: Walking, node: Any, out: list[str]) -> None:
    """A word whose ``~`` bash does not expand (``'~'``, ``"~/x"``, ``\\~``, ``""~``): a name, said so.

    Bash expands only a tilde that starts a word unquoted, before any other expansion; braces come
    first (``{~,x}`` is the home), so a word with a brace keeps the cautious reading.
    """
    source = w.text(node)
    if source.startswith(_QUOTED_LEAD) and "{" not in source:
        for word in out:
            if word[:1] == "~":
                w.scan.literal(word)


def value(w: Walking, node: Any, quoted: bool, first: bool) -> str:
    w.scan.budget.tick()
    w.nest += 1
    try:
        if w.nest > MAX_NEST:  # words nest too (``${a:-${b:-…}}``): same bound as statements
            w.scan.hit("G197", "word nested too deeply")
            return w.scan.dynamic("…", OPAQUE_FLOW)
        return _value(w, node, quoted, first)
    finally:
        w.nest -= 1


def _value(w: Walking, node: Any, quoted: bool, first: bool) -> str:
    t = node.type
    if t == "word":
        text = w.text(node)
        if "`" in text:
            _backticks(w, text)
        if quoted:
            return protect_braces(text)
        if first and text.startswith("~"):
            text = oldpwd(w.scan, text) if text[:2] == "~-" else tilde(text, w.scan.resolver.home, w.scan.cwd)
        return unescape_unquoted(text)
    if t == "raw_string":
        return protect_braces(w.text(node)[1:-1])
    if t == "ansi_c_string":
        return protect_braces(decode_ansi_c(w.text(node)[2:-1]))
    if t in ("string", "translated_string", "concatenation"):
        return spliced(w, node, quoted or t != "concatenation", first)
    if t == "simple_expansion":
        name = w.text(node)[1:]
        return variable(w.scan, name, quoted)
    if t == "expansion":
        return expansion(w, node, quoted)
    if t in ("command_substitution", "process_substitution"):
        return substitution(w, node, quoted)
    if t == "string_content":
        return protect_braces(unescape_double(w.text(node)))
    if t == "arithmetic_expansion":
        w.stmt(node, EMPTY)  # ``$(( $(cmd) + 1 ))``: substitutions inside still run
        return w.scan.dynamic(w.text(node), EMPTY)
    if node.named_child_count:
        w.stmt(node, EMPTY)  # a node kind this module does not know: run what is inside it all the same
    text = w.text(node)
    if "`" in text or "$(" in text:  # ``${x#`cmd`}``, ``${x%$(cmd)}``: a pattern the grammar left whole
        _backticks(w, text)
        _dollar_parens(w, text)
    return text


_BACKTICK = lazyre.compile(r"(?<!\\)`((?:[^`\\]|\\.)*)`")


def _backticks(w: Walking, text: str) -> None:
    """A word the grammar left whole (``${x:=`cmd`}``) still runs the backquoted commands in it."""
    for inner in _BACKTICK.findall(text):
        if inner.strip():
            w.engine.script(inner)


def _dollar_parens(w: Walking, text: str) -> None:
    if "$(" in text:
        w.engine.script(": " + text[text.index("$(") :])  # read again as a word: its substitution runs


def spliced(w: Walking, node: Any, quoted: bool, first: bool) -> str:
    """Concatenate parts, filling gaps from the source so no literal text is lost."""
    is_string = node.type in ("string", "translated_string")
    start = node.start_byte + (1 if node.type == "string" else 2 if is_string else 0)
    end = node.end_byte - (1 if is_string else 0)
    parts: list[str] = []
    pos = start
    for ch in node.children:
        if not ch.is_named or ch.start_byte < pos:
            continue
        if ch.start_byte > pos:
            gap = w.src[pos : ch.start_byte].decode("utf-8", "replace")
            parts.append(protect_braces(unescape_double(gap)) if quoted else unescape_unquoted(gap))
        parts.append(value(w, ch, True if is_string else quoted, first and not parts))
        pos = ch.end_byte
    if end > pos:
        gap = w.src[pos:end].decode("utf-8", "replace")
        parts.append(protect_braces(unescape_double(gap)) if quoted else unescape_unquoted(gap))
    return "".join(parts)


def oldpwd(scan: Scan, text: str) -> str:
    """``~-`` is bash's ``$OLDPWD`` (the folder before the last ``cd``), ``~-/x`` a path below it:
    what ``cd`` in this call left there, else a runtime value (``rm -rf ~-`` may be ``/etc``)."""
    if text == "~-" or text[:3] == "~-/":
        return variable(scan, "OLDPWD", False) + text[2:]
    return text  # ``~-x``: a name bash leaves as it is


def variable(scan: Scan, name: str, quoted: bool) -> str:
    if scan.refs:  # ``declare -n r=HOME; rm -rf "$r"``: the value of what the nameref points at
        name = scan.referent(name)
    value = scan.vars.get(name)
    if value is not None:
        if len(value) > MAX_VALUE:
            scan.hit("G421", f"${name}: {len(value)} characters")
            return scan.dynamic("$" + name)
        if len(value) > 256:
            scan.budget.tick(len(value) >> 8)  # copying it is work too
        if not quoted and name != "IFS":  # unquoted values are split into words, on the script's IFS if it set one
            for ch in set(scan.vars.get("IFS", " \t\n")) - {IFS}:
                if ch in value:
                    value = value.replace(ch, IFS)
        return value
    if name == "HOME":
        return scan.resolver.home
    if name == "GUARD_HOME":  # guard's workspace, wherever the person put it: ``rm -rf $GUARD_HOME``
        return scan.resolver.guard_dirs[0]
    if name == "IFS":
        return scan.vars.get("IFS", " ") if quoted else IFS
    if name == "PWD" and scan.cwd and scan.cwd.startswith("/"):
        return scan.cwd
    if name in ("USER", "LOGNAME"):
        return posixpath.basename(scan.resolver.home)
    if name == "TMPDIR":
        return "/tmp"
    if name == "SHELL":
        return "/bin/bash"
    return scan.dynamic("$" + name)


def expansion(walker: Walking, node: Any, quoted: bool) -> str:
    scan = walker.scan
    name, op, words = None, "", []
    for ch in node.children:
        if ch.type in ("variable_name", "special_variable_name") and name is None:
            name = walker.text(ch)
        elif not ch.is_named and ch.type not in ("${", "}"):
            op += ch.type
        elif ch.type == "subscript":
            walker.stmt(ch, EMPTY)  # ``${arr[$(cmd)]}``: the index is evaluated
            name = name or walker.text(ch).split("[", 1)[0]
        elif ch.is_named:
            words.append(ch)
    if name is None or (op.startswith(("#", "!")) and not words):
        return scan.dynamic(walker.text(node), EMPTY)
    if scan.refs:
        name = scan.referent(name)
    known = (
        name in scan.vars
        or name in ("HOME", "USER", "LOGNAME", "TMPDIR", "SHELL", "GUARD_HOME")
        or (name == "PWD" and bool(scan.cwd))
    )
    if not op:
        return variable(scan, name, quoted)
    values = [value(walker, w, quoted, False) for w in words]  # substitutions in the word run (bash may)
    if op in (":-", "-", ":=", "="):
        if known:
            return variable(scan, name, quoted)
        return "".join(values)
    if op in (":?", "?"):
        return variable(scan, name, quoted) if known else scan.dynamic(walker.text(node), guarded=True)
    if op in (":+", "+") or op.startswith("!"):
        return scan.dynamic(walker.text(node))
    return variable(scan, name, quoted) if known else scan.dynamic(walker.text(node))


def substitution(walker: Walking, node: Any, quoted: bool = True) -> str:
    scan = walker.scan
    with scan.child(walker.exact):  # a command substitution runs in a subshell
        flow = walker.block(node.children, EMPTY)
    if node.type == "command_substitution" and flow.text is not None and not flow.bits and DYN_OPEN not in flow.text:
        text = flow.text.rstrip("\n")
        return text if quoted else IFS.join(text.split())  # unquoted output is split into words
    shown = walker.text(node)
    return scan.dynamic(shown if len(shown) < 60 else shown[:56] + "…)", flow)


def plain_words(text: str, home: str, cwd: str | None) -> list[str]:
    """An unquoted word: tilde, backslash escapes, brace expansion."""
    if text.startswith("~"):
        text = tilde(text, home, cwd)
    elif "=~" in text or ":~" in text:
        text = assignment_tilde(text, home, cwd)
    if "\\" in text:
        text = unescape_unquoted(text)
    if "{" in text:
        return expand_braces(text)
    return [text]
