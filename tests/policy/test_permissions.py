"""Editing [permissions] in guard.toml: only the requested rules change; everything else survives."""

from __future__ import annotations

import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guard.errors import ConfigError
from guard.policy.permissions import edit, read_permissions

USER_FILE = """\
# guard configuration (hand-written)
[weights]
memory = 0.4  # tuned after the June incident

[permissions]
# things I always allow
allow = ["Bash(ls:*)", "Read(src/**)"]
deny = [
    "Bash(rm:*)",  # never
    'Bash(curl:*)',
]

[thresholds]
auto_allow = 80   # stricter than default
"""


def test_adding_keeps_every_comment_and_unrelated_value() -> None:
    new = edit(USER_FILE, add={"allow": ["Bash(npm run test:*)"], "deny": ["Bash(git push:*)"]})
    for line in USER_FILE.splitlines():
        if not line.startswith("allow = "):  # the one line that had to change
            assert line in new.splitlines(), line
    data = tomllib.loads(new)
    assert data["permissions"]["allow"] == ["Bash(ls:*)", "Read(src/**)", "Bash(npm run test:*)"]
    assert data["permissions"]["deny"] == ["Bash(rm:*)", "Bash(curl:*)", "Bash(git push:*)"]
    assert data["weights"] == {"memory": 0.4} and data["thresholds"] == {"auto_allow": 80}


def test_removing_takes_out_exactly_that_rule() -> None:
    new = edit(USER_FILE, remove={"deny": ["Bash(rm:*)"], "allow": ["Bash(ls:*)"]})
    assert read_permissions(new) == {"allow": ["Read(src/**)"], "deny": ["Bash(curl:*)"], "ask": []}
    assert "# never" not in new  # the removed rule's own line, comment included
    assert "# things I always allow" in new and "# tuned after the June incident" in new


def test_add_then_remove_restores_the_original_text() -> None:
    added = edit(USER_FILE, add={"deny": ["Bash(git push:*)"]}, comments={"Bash(git push:*)": "guard rules: x"})
    assert '"Bash(git push:*)",  # guard rules: x' in added
    assert edit(added, remove={"deny": ["Bash(git push:*)"]}) == USER_FILE


def test_a_missing_table_or_key_is_created() -> None:
    assert tomllib.loads(edit("", add={"allow": ["Bash(a:*)"]})) == {"permissions": {"allow": ["Bash(a:*)"]}}
    new = edit("[weights]\nmemory = 0.4\n", add={"deny": ["Bash(b:*)"]})
    assert tomllib.loads(new) == {"weights": {"memory": 0.4}, "permissions": {"deny": ["Bash(b:*)"]}}
    new = edit("[permissions]\nallow = []\n", add={"deny": ["Bash(c:*)"], "allow": ["Bash(d:*)"]})
    assert tomllib.loads(new)["permissions"] == {"allow": ["Bash(d:*)"], "deny": ["Bash(c:*)"]}


def test_rules_with_quotes_and_brackets_survive() -> None:
    rule = 'Bash(echo "a]b" \\ x:*)'
    new = edit(USER_FILE, add={"allow": [rule]})
    assert read_permissions(new)["allow"][-1] == rule
    assert read_permissions(edit(new, remove={"allow": [rule]})) == read_permissions(USER_FILE)


def test_nothing_to_do_returns_the_text_unchanged() -> None:
    assert edit(USER_FILE, add={"allow": ["Bash(ls:*)"]}) == USER_FILE
    assert edit(USER_FILE, remove={"allow": ["Bash(not-there:*)"]}) == USER_FILE


@pytest.mark.parametrize(
    "text",
    ['permissions.allow = ["Bash(ls:*)"]\n', 'permissions = { allow = ["Bash(ls:*)"] }\n'],
)
def test_forms_that_cannot_be_edited_in_place_are_refused_with_a_hint(text: str) -> None:
    with pytest.raises(ConfigError, match=r"\[permissions\] table"):
        edit(text, add={"allow": ["Bash(x:*)"]})


def test_invalid_toml_is_refused() -> None:
    with pytest.raises(ConfigError, match="not valid TOML"):
        edit("[permissions\nallow = [", add={"allow": ["Bash(x:*)"]})


def test_a_non_list_value_is_refused() -> None:
    with pytest.raises(ConfigError, match="array"):
        edit('[permissions]\nallow = "Bash(ls:*)"\n', add={"allow": ["Bash(x:*)"]})


_rule = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=20)


@settings(max_examples=150, deadline=None)
@given(st.lists(_rule, max_size=4, unique=True), st.lists(_rule, max_size=3, unique=True), st.booleans())
def test_any_rules_add_and_remove_cleanly(existing: list[str], new: list[str], multiline: bool) -> None:
    base = edit(USER_FILE, add={"ask": existing}) if multiline else USER_FILE
    added = edit(base, add={"allow": new, "ask": new})
    want_allow = ["Bash(ls:*)", "Read(src/**)", *[r for r in new if r not in ("Bash(ls:*)", "Read(src/**)")]]
    assert read_permissions(added)["allow"] == want_allow
    back = edit(added, remove={"allow": [r for r in want_allow if r not in ("Bash(ls:*)", "Read(src/**)")]})
    assert read_permissions(back)["allow"] == ["Bash(ls:*)", "Read(src/**)"]
    assert tomllib.loads(back)["thresholds"] == {"auto_allow": 80}
