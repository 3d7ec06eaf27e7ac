"""Rules as data: the built-in catalogue and the user's ``allow``/``ask``/``deny`` lists.

``catalog`` (every static rule: a stable ``G1xx``/``G4xx`` id, a severity, a reason, a safer
alternative; detectors elsewhere only name an id), ``examples.json`` (per rule, the shortest
labelled case naming it, written by ``tests/static/cases/build.py``; ``guard rules builtin``),
``userrules`` (``Bash(npm run test:*)``-style user rules and ``user_rule_matches``, applied by
:mod:`guard.layers.static` on top of the cached analysis).

``catalog`` imports only :mod:`guard.model`, so every layer may name a rule. ``userrules`` reads the
configuration file format (:mod:`guard.configfile`) and, of the static layer, only
:mod:`guard.static.facts` (a URL's host): it takes an analysis as data, it does not make one.
"""
