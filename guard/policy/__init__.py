"""Policy tuning: rules learned from the history, replay under another configuration, a report.

- :mod:`guard.policy.patterns`: the normaliser from a call to the pattern a rule covers
  (``npm run test -- --watch`` → ``Bash(npm run test:*)``);
- :mod:`guard.policy.suggest`: candidate allow/deny rules behind evidence gates;
- :mod:`guard.policy.rules`: the rule book (``rules.json``), apply to / revert from ``guard.toml``;
- :mod:`guard.policy.permissions`: edits of ``[permissions]`` that leave the rest of the file alone
  (:mod:`guard.policy.tomlscan` finds where things sit in the TOML text);
- :mod:`guard.policy.replay`: re-decide the decision log under another configuration;
- :mod:`guard.policy.report` and :mod:`guard.policy.page`: the picture, as text, JSON or one HTML page.

Nothing here runs on the decision path; ``import guard`` does not import this package.
"""
