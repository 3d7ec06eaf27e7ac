"""``docs/static-rules.md``'s rule table is ``rules_table()``'s output, regenerated, never hand-edited.

Regenerate it with ``python tests/static/test_static_docs.py`` after changing ``guard/static/rules/catalog.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

from guard.static.explain import rules_table

DOC = Path(__file__).resolve().parents[2] / "docs" / "static-rules.md"
BLOCK = re.compile(
    r"(<!-- generated from guard/static/rules/catalog.py[^\n]*-->\n)(.*?)(\n<!-- end of the generated table -->)", re.S
)


def test_the_rule_table_in_the_docs_is_generated_from_the_catalogue() -> None:
    """The table between the markers is exactly ``rules_table()`` (one row per rule, current wording)."""
    found = BLOCK.search(DOC.read_text(encoding="utf-8"))
    assert found is not None, "the generated-table markers are missing from docs/static-rules.md"
    assert found.group(2) == rules_table(), "stale table: run python tests/static/test_static_docs.py"


def _regenerate() -> None:
    text = DOC.read_text(encoding="utf-8")
    DOC.write_text(BLOCK.sub(lambda m: m.group(1) + rules_table() + m.group(3), text, count=1), encoding="utf-8")


if __name__ == "__main__":
    _regenerate()
