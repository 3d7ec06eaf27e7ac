"""The bash grammar, loaded on first use.

tree-sitter-bash parses a typical command in a few microseconds and never raises on bad input:
it returns a tree with ``ERROR``/``MISSING`` nodes, which guard reports as "could not be parsed".
``import guard`` must stay lean, so the language is loaded the first time a shell command is
judged, once per process; a ``Parser`` is not thread-safe, so each thread gets its own.
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


def parse(source: bytes) -> Any:
    """The syntax tree of ``source`` (a ``tree_sitter.Tree``)."""
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
