"""guard's static layer: a shell interpreter that judges a command instead of running it.

Reading the shell: ``lexer``, ``parser`` (tree-sitter), ``walker``, ``expand``, ``unwrap``, ``text``.
Per-call state and the interpreter protocol: ``scan`` (``Scan``, ``Flow``, ``Hit``, ``Interpreter``).
The interpreter: ``engine`` (implements ``Interpreter``), ``shells``, ``envvars``, ``interp``.
Knowledge: ``families/`` (one module per family, registered in ``families/registry``), ``effects``,
``paths``, ``places``, ``tools``. Rules: ``rules`` (the catalogue), ``userrules``, ``explain``.
The entry point is :func:`guard.static.analysis.analyse`; :mod:`guard.layers.static` wraps it.
"""
