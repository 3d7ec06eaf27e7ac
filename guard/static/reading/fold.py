"""Constant folding for interpreter one-liners: what a call's computed argument works out to.

``x = 'rm -rf '; os.system(x + '~')``, ``shutil.rmtree(os.path.expanduser('~'))``,
``system("rm -rf $ENV{HOME}")``, ``fs.rmSync(os.homedir(), {recursive: true})``: the argument is
folded from string literals, concatenation, joins, format strings, known path and environment
functions and simple assignments seen earlier in the code. Each call that runs a command, deletes a
path, writes a file or kills a process becomes an :class:`Effect` with its folded value, or with
``None`` when the value cannot be worked out (the caller asks: guard cannot see the target).

Python is read with :mod:`ast`; Node, Perl, Ruby and PHP with a small tokenizer and a folder for
expressions (terms joined by ``+`` or ``.``), not a parser (:mod:`~guard.static.reading.fold_python`,
:mod:`~guard.static.reading.fold_tokens`; what both yield is in :mod:`~guard.static.reading.folded`).
Both are linear in the code's size, and bounded: at most ``MAX_CODE`` characters, ``MAX_VALUE``
characters per folded value.
"""

from __future__ import annotations

from typing import Any

from guard.static.reading.fold_python import python
from guard.static.reading.fold_tokens import tokens
from guard.static.reading.folded import Effect

__all__ = ["Effect", "describe", "effects"]


def effects(code: str, lang: str, home: str) -> list[Effect] | None:
    """Folded effects of ``code`` in ``lang``; None when the language is not read or the code does not parse."""
    if lang == "python":
        return python(code, home)
    return tokens(code, lang, home)


def describe(effect: Effect) -> str:
    value: Any = effect.value
    if isinstance(value, tuple):
        value = " ".join(value)
    return f"{effect.call}({value if value is not None else '…'})"
