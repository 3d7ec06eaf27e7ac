"""The shell interpreter: a script walked the way bash would run it, each command sent to its family.

``engine`` (one simple command: name resolution, wrappers, dispatch to the families, the depth
bound; implements :class:`~guard.static.scan.Interpreter`), ``walker`` (statements: pipelines,
lists, loops, functions, heredocs, redirections), ``expand`` (words: quotes, variables, ``${…}``,
``~``, substitutions), ``shells`` (what runs scripts: ``sh -c``, ``eval``, ``source``, a file),
``envvars`` (variables that load or run code when set).

The top of the static layer below :mod:`guard.static.analysis`, the one module that builds an
:class:`~guard.static.shell.engine.Engine`: it may import ``reading``, ``facts``, ``rules``,
``scan`` and ``families``. Nothing below imports it; families reach the interpreter through
``scan.engine`` (the protocol), never by import.
"""
