"""A fast path for flat scripts: words, simple quotes, ``|``, ``&&``, ``||`` and ``;`` only.

Most agent commands are ``git status``, ``ls -la src``, ``grep -n 'x' f | head``. For those
a full parse costs more than the judgement, so this lexer handles exactly the subset where
word splitting is trivial: no expansions (``$``, backticks), no escapes, no redirections,
subshells, comments, history or assignments. Anything outside the subset returns ``None``
and goes to tree-sitter; a property test checks both paths agree on what the subset covers.
"""

from __future__ import annotations

from guard import lazyre
from guard.static.reading.text import expand_braces, protect_braces, tilde, wordset

_TOKEN = lazyre.compile(r"""[ \t]*(?:(\|\||&&|\||;)|((?:[^\s'"\\|&;<>()$`#!]|'[^']*'|"[^"$`\\!]*")+))""")
_PIECE = lazyre.compile(r"""'([^']*)'|"([^"]*)"|([^'"]+)""")
_BARE = lazyre.compile(r"""[^\s'"\\|&;<>()$`#!=]+(?:[ \t]+[^\s'"\\|&;<>()$`#!]+)*[ \t]*""")
_TILDE_SPOT = lazyre.compile(r"""['"=:]~""")
_RESERVED = wordset("if then else elif fi for while until do done case esac function select { } [[ ]] coproc in")


def split(text: str, home: str, cwd: str | None) -> list[tuple[str, list[str]]] | None:
    """``split("ls src | head", …) == [("", ["ls", "src"]), ("|", ["head"])]``; ``None`` outside the subset."""
    if "\n" in text or "\r" in text or "~+" in text or "~-" in text:  # ``~+`` is $PWD when the word runs
        return None
    if "~" in text and _TILDE_SPOT.search(text):  # ``'~'`` (a name), ``of=~/x`` (the home): expand.words
        return None
    text = text.strip(" \t")
    if _BARE.fullmatch(text):  # the commonest shape: one command of bare words
        words = text.split()
        if words[0] in _RESERVED:
            return None
        if "~" not in text and "{" not in text:  # no quotes either (``_BARE``): every word is itself
            return [("", words)]
        return [("", [w for raw in words for w in _word(raw, home, cwd, False)])]
    pos, n = 0, len(text)
    out: list[tuple[str, list[str]]] = []
    sep, words = "", []  # the separator before the current command
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:
            if text[pos:].strip():
                return None
            break
        pos = m.end()
        if m.group(1):
            if not words:
                return None
            out.append((sep, words))
            sep, words = m.group(1), []
            continue
        raw = m.group(2)
        if not words and ("=" in raw.split("'")[0].split('"')[0] or raw in _RESERVED):
            return None
        words.extend(_word(raw, home, cwd, first=not words))
    if words:
        out.append((sep, words))
    elif sep not in ("", ";"):
        return None
    return out


def _word(raw: str, home: str, cwd: str | None, first: bool) -> list[str]:
    if raw.isalnum() or ("'" not in raw and '"' not in raw and "~" not in raw[:1] and "{" not in raw):
        return [raw]
    parts = []
    for i, m in enumerate(_PIECE.finditer(raw)):
        single, double, bare = m.groups()
        if bare is not None:
            if i == 0 and bare.startswith("~"):
                bare = tilde(bare, home, cwd)
            parts.append(bare)
        else:
            parts.append(protect_braces(single if single is not None else double))
    return expand_braces("".join(parts))
