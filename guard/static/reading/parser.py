"""The bash grammar, loaded on first use.

tree-sitter-bash parses a typical command in a few microseconds and never raises on bad input:
it returns a tree with ``ERROR``/``MISSING`` nodes, which guard reports as "could not be parsed".
``import guard`` must stay lean, so the language is loaded the first time a shell command is
judged, once per process; a ``Parser`` is not thread-safe, so each thread gets its own.

tree-sitter-bash 0.25.1 reads out of bounds, and on Linux dies with SIGSEGV, on ``{`` followed by
some 4-byte UTF-8 characters (``{\U000cc47f``: five bytes; upstream tree-sitter/tree-sitter-bash#337).
A crash in a hook lets the call through, so the parser never sees a non-ASCII byte: each one becomes
``a``. Bash treats both as ordinary word characters, byte offsets stay the same, and the walker reads
every word's text from the original bytes. The one difference, ``$é`` read as a variable, errs
towards caution.
"""

from __future__ import annotations

import threading
from typing import Any

_local = threading.local()
_lock = threading.Lock()
_language: Any = None


def _load_language() -> Any:
    global _language
    if _language is None:
        with _lock:
            if _language is None:
                import tree_sitter
                import tree_sitter_bash

                _language = tree_sitter.Language(tree_sitter_bash.language())
    return _language


_ASCII = bytes(range(128)) + b"a" * 128  # bytes.translate table: every non-ASCII byte -> "a"


def parse(source: bytes) -> Any:
    """The syntax tree of ``source`` (a ``tree_sitter.Tree``) with the same byte offsets; node text
    must be read from ``source``, not from the tree (see the module note on non-ASCII bytes)."""
    if not source.isascii():
        source = source.translate(_ASCII)
    parser = getattr(_local, "parser", None)
    if parser is None:
        import tree_sitter

        parser = tree_sitter.Parser(_load_language())
        _local.parser = parser
    return parser.parse(source)


def sexp(source: str, limit: int = 4000) -> str:
    """The parse as an s-expression, for ``guard explain``."""
    text = str(parse(source.encode("utf-8", "surrogatepass")).root_node)
    return text if len(text) <= limit else text[:limit] + " ..."
