"""Reading: shell, PowerShell and interpreter text into words, trees and statements.

``text`` (word normalisation: invisible code points, NFKC, ANSI-C strings, braces, the runtime-value
markers), ``parser`` (tree-sitter-bash, loaded on first use), ``lexer`` (the fast path for flat
scripts), ``pwsh`` (PowerShell and cmd.exe statements), ``unwrap`` (the command inside ``sudo``,
``timeout``, ``env`` …), ``fold`` (constant folding of interpreter one-liners), ``filters`` (what
``head``, ``cut``, ``sed s///`` make of known text).

The bottom layer: pure functions of text, knowing no rule, no path tier and no :class:`Scan`. It
imports nothing of :mod:`guard.static` outside this package (``guard.lazyre`` only). Layering,
bottom up: ``reading`` ← ``facts`` ← ``scan`` ← ``families`` ← ``shell`` ← ``analysis``.
"""
