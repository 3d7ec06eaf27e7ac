"""A small tokenizer for PowerShell and cmd.exe command lines: statements of words, never an exception.

There is no PowerShell grammar for tree-sitter here, and guard only needs what a command line
*runs*: which command, with which words, joined by which separator. So one linear pass splits
statements on ``;``, ``|``, ``&&``, ``||``, newlines and (for cmd.exe) ``&``; reads ``'…'`` and
``"…"`` quotes, backtick (PowerShell) or caret (cmd.exe) escapes and ``<# … #>`` comments; drops
the ``&`` call operator; and flattens ``( … )``, ``$( … )`` and ``{ … }`` into statements of their
own, so ``iwr -Body (Get-Content key)`` still shows the read. Variables are handed to a callback
(guard turns them into runtime values). What it cannot follow sets ``opaque``; callers treat an
opaque script as one they cannot fully see.

    >>> split("Remove-Item -Recurse C:\\\\x; dir").statements
    [('', ['Remove-Item', '-Recurse', 'C:\\\\x']), (';', ['dir'])]
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

MAX_CHARS = 65536
_END = "\uffff"
_NAME_END = frozenset(" \t\r\n;|&(){}'\",<>`=")


@attrs.frozen
class Split:
    statements: list[tuple[str, list[str]]]
    opaque: bool  # something guard does not follow: a type, a script block, a redirection to a variable …
    redirects: list[str]  # files written with ``>``/``>>``
    inner: list[str]  # ``$( … )`` inside double quotes: scripts of their own


def _keep(name: str) -> str:
    return "$" + name


def split(
    text: str, cmd: bool = False, var: Callable[[str], str] = _keep, tick: Callable[[], None] | None = None
) -> Split:
    """Statements of ``text`` as ``(separator before, words)``; ``cmd=True`` reads cmd.exe syntax.
    ``tick`` is called once per word (a decision's budget: :mod:`guard.static.budget`)."""
    text = text[:MAX_CHARS]
    n = len(text)
    esc = "^" if cmd else "`"
    out: list[tuple[str, list[str]]] = []
    redirects: list[str] = []
    inner: list[str] = []
    words: list[str] = []
    cur: list[str] = []
    in_word = False
    sep = ""
    opaque = n == MAX_CHARS
    redirect = False  # the next word is a redirection target

    def flush() -> None:
        nonlocal in_word, redirect
        if in_word:
            if tick is not None:
                tick()
            word = "".join(cur)
            if redirect:
                redirects.append(word)
                redirect = False
            else:
                words.append(word)
        cur.clear()
        in_word = False

    def end(next_sep: str) -> None:
        nonlocal sep, words
        flush()
        if words:
            out.append((sep, words))
            sep = next_sep
        elif next_sep in ("|", "&&", "||"):
            sep = next_sep  # ``{ … } | Remove-Item``: the pipe joins what the block closed
        words = []

    i = 0
    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else _END  # never ``""``: ``"" in "({"`` is true
        if c in " \t":
            flush()
            i += 1
        elif c in "\r\n" or (c == ";" and not cmd):
            end(";")
            i += 1
        elif c == "|":
            end("||" if nxt == "|" else "|")
            i += 2 if nxt == "|" else 1
        elif c == "&":
            if nxt == "&":
                end("&&")
                i += 2
            elif not cmd and not words and not in_word:
                i += 1  # the call operator: ``& "C:\\x\\tool.exe" args``
            else:
                end(";")  # cmd.exe's separator; PowerShell's background job
                i += 1
        elif c == esc:
            if nxt in "\r\n":
                i += 2  # a line continuation
            else:
                cur.append(nxt if nxt != _END else "")
                in_word = True
                i += 2
        elif c == "<" and nxt == "#" and not cmd:
            close = text.find("#>", i + 2)
            i = n if close < 0 else close + 2
        elif c == "#" and not in_word and not cmd:
            close = text.find("\n", i)
            i = n if close < 0 else close
        elif c == "'" and not cmd:
            i += 1
            while i < n:
                if text[i] == "'":
                    if i + 1 < n and text[i + 1] == "'":
                        cur.append("'")
                        i += 2
                        continue
                    break
                cur.append(text[i])
                i += 1
            i += 1
            in_word = True
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                ch = text[i]
                if ch == esc and i + 1 < n and not cmd:
                    cur.append(text[i + 1])
                    i += 2
                elif ch == "$" and not cmd and i + 1 < n and (text[i + 1].isalnum() or text[i + 1] in "_{:"):
                    i, name = _variable(text, i + 1)
                    cur.append(var(name))
                elif ch == "$" and not cmd and i + 1 < n and text[i + 1] == "(":
                    close = _closing(text, i + 2)  # a subexpression inside a string: judged on its own
                    inner.append(text[i + 2 : close])
                    cur.append(var("(…)"))
                    i = close + 1
                else:
                    cur.append(ch)
                    i += 1
            i += 1
            in_word = True
        elif c == "$" and not cmd and (nxt.isalnum() or nxt in "_{:?"):
            i, name = _variable(text, i + 1)
            cur.append(var(name))
            in_word = True
        elif c == "(" and in_word and not cmd:
            close = _closing(text, i + 1)  # ``.DownloadString('…')``: a method's arguments stay in its word
            cur.append(text[i : close + 1])
            i = close + 1
        elif c in "(){}" or (c in "$@" and nxt in "({"):
            if c in "$@":
                i += 1
            if not cmd or c in "()":
                end(";")
            i += 1
        elif c in "<>":
            if in_word and "".join(cur) in ("1", "2", "3", "4", "5", "6", "*"):
                cur.clear()
                in_word = False  # ``2>`` names a stream, not a word
            flush()
            i += 2 if nxt == ">" else 1
            if i < n and text[i] == "&":
                i += 2  # ``2>&1``
            elif c == ">":
                redirect = True
            else:
                opaque = True  # ``<`` input: not PowerShell syntax, and cmd.exe reads a file
        else:
            cur.append(c)
            in_word = True
            i += 1
    end(";")
    if redirect:
        opaque = True
    return Split(out, opaque, redirects, inner)


def _closing(text: str, i: int) -> int:
    """The index of the ``)`` closing a ``$(`` whose body starts at ``i`` (or the end of the text)."""
    depth = 1
    for j in range(i, len(text)):
        if text[j] == "(":
            depth += 1
        elif text[j] == ")":
            depth -= 1
            if depth == 0:
                return j
    return len(text)


def _variable(text: str, i: int) -> tuple[int, str]:
    """The variable name starting at ``i`` (after ``$``) and the index after it."""
    if text[i] == "{":
        close = text.find("}", i + 1)
        close = len(text) if close < 0 else close
        return close + 1, text[i + 1 : close]
    j = i
    n = len(text)
    while j < n and text[j] not in _NAME_END and not (text[j] in ".[\\/" and j > i and text[i:j].lower() != "env"):
        j += 1
    if j == i:
        j = i + 1
    return j, text[i:j]
