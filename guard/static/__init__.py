"""guard's static layer: a shell interpreter that judges a command instead of running it.

Sub-packages, bottom up (each imports only those before it):

- ``reading/``: text into words, trees and statements (``text``, ``parser``, ``lexer``, ``pwsh``,
  ``unwrap``, ``fold``, ``filters``); ``rules/``: the rule catalogue (``catalog``), its examples
  and the user's rules (``userrules``).
- ``facts/``: where a word points and what is there (``paths``, ``places``, ``ondisk``, ``inodes``,
  ``landmines``, ``hosts``).
- ``scan`` (``Scan``, ``Flow``, ``Hit``, the ``Interpreter`` protocol) and ``budget``: per-call state.
- ``families/``: one module per family, registered in ``families/registry``, and the policy they
  share (``effects``, ``guardfiles``, ``tools``, ``interp``, ``embedded``).
- ``shell/``: the interpreter (``engine`` implements ``Interpreter``; ``walker``, ``expand``,
  ``shells``, ``envvars``).
- ``analysis`` (with ``oversized``) and ``explain``: the entry points.

The entry point is :func:`guard.static.analysis.analyse`; :mod:`guard.layers.static` wraps it.
"""
