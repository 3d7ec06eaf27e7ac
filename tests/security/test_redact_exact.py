"""Redaction's exact output (docs/mutation.md): placeholders worked out with hashlib, not with guard.

A placeholder is ``[REDACTED:<kind>:<hash>]``, hash = blake2b(value as UTF-8 with surrogates
passed through, key = the workspace key (first 64 bytes; built-in ``guard-redact-v1``), 4 bytes)
in hex. Each expectation below is that formula applied by hand to the secret it hides.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import pytest

from guard.redact import MASK, redact, redact_text, use_key

DEFAULT_KEY = b"guard-redact-v1"


def ph(kind: str, value: str, key: bytes = DEFAULT_KEY) -> str:
    digest = hashlib.blake2b(value.encode("utf-8", "surrogatepass"), key=key[:64], digest_size=4).hexdigest()
    return f"[REDACTED:{kind}:{digest}]"


@pytest.fixture
def default_key() -> Iterator[None]:
    use_key(None)
    yield
    use_key(None)


def nested(value: object, lists: int) -> object:
    for _ in range(lists):
        value = [value]
    return value


class TestPlaceholders:
    def test_a_secret_named_key_is_masked_whole(self, default_key: None) -> None:
        assert redact({"password": "pw123"}) == {"password": ph("field", "pw123")}

    def test_the_placeholder_reads_the_same_for_the_same_secret(self, default_key: None) -> None:
        out = redact_text("DB_PASSWORD=hunter2 && export TOKEN=hunter2")
        assert out == f"DB_PASSWORD={ph('assign', 'hunter2')} && export TOKEN={ph('assign', 'hunter2')}"

    def test_a_lone_surrogate_is_hashed_not_an_error(self, default_key: None) -> None:
        assert redact({"password": "pw\ud800"}) == {"password": ph("field", "pw\ud800")}

    def test_the_workspace_key_changes_every_placeholder(self, default_key: None) -> None:
        key = b"k" * 100  # longer than blake2b's 64-byte key: its first 64 bytes count
        assert use_key(key) is True
        assert redact({"password": "pw123"}) == {"password": ph("field", "pw123", key)}
        assert redact_text("TOKEN=hunter2") == f"TOKEN={ph('assign', 'hunter2', key)}"  # cached answers dropped
        assert use_key(key) is False  # the same key again: nothing changes
        assert use_key(None) is True
        assert redact_text("TOKEN=hunter2") == f"TOKEN={ph('assign', 'hunter2')}"
        assert use_key(DEFAULT_KEY) is False  # None means the built-in key

    def test_redacting_twice_changes_nothing(self, default_key: None) -> None:
        once = redact_text("curl -H 'Authorization: Bearer abcdefghijklmnop1234' https://bob:hunter2@h/x")
        assert redact_text(once) == once
        assert redact({"password": ph("field", "x")}) == {"password": ph("field", "x")}


class TestTexts:
    def test_url_userinfo_keeps_the_user_and_the_rest(self, default_key: None) -> None:
        out = redact_text("curl https://bob:hunter2@example.com/x and https://ann:s3cret@h.io/y")
        assert (
            out == f"curl https://bob:{ph('url', 'hunter2')}@example.com/x and https://ann:{ph('url', 's3cret')}@h.io/y"
        )

    def test_a_value_behind_a_name_that_is_no_secret(self, default_key: None) -> None:
        """``Error: token: x``: "Error" names nothing, the search goes on inside its value."""
        assert redact_text("Error: token: s3cr3tvalue") == f"Error: token: {ph('assign', 's3cr3tvalue')}"

    def test_a_long_value_is_read_again_on_its_own(self, default_key: None) -> None:
        """A flag whose long value holds ``password=x`` (longer than the 256-character rescan)."""
        filler = "a" * 300
        text = f"--from-literal={filler},password=hunter22 done"
        assert redact_text(text) == f"--from-literal={filler},password={ph('assign', 'hunter22')} done"

    def test_a_secret_in_a_json_body(self, default_key: None) -> None:
        text = '{"user": "bob", "password": "hunter2", "n": 1}'
        assert redact_text(text) == '{"user": "bob", "password": "' + ph("field", "hunter2") + '", "n": 1}'

    def test_non_ascii_text_is_still_redacted(self, default_key: None) -> None:
        assert redact_text("café DB_PASSWORD=hunter2") == f"café DB_PASSWORD={ph('assign', 'hunter2')}"

    def test_a_long_dotted_token_is_found(self, default_key: None) -> None:
        """Discord tokens (59+ characters, two dots) are looked for only in a text that could hold one."""
        token = "MTA4NzY1NDMyMTA5ODc2NTQzMg.GxYzAb.abcdefghijklmnopqrstuvwxyz0"  # 26 + 1 + 6 + 1 + 27 = 61
        assert redact_text(f"x {token}") == f"x {ph('discord', token)}"
        assert redact_text(token) == ph("discord", token)
        short = "MTA4NzY1NDMyMTA5ODc2NTQzMg.GxYzAb.abcdefghijklmnopqrstuvwxyz"  # 27 after the dot: too short
        assert redact_text(f"x {short}") == f"x {short}"

    def test_ordinary_dotted_text_is_unchanged(self, default_key: None) -> None:
        text = "python3.11 -m pytest tests/a.py tests/b.py " + "x" * 60
        assert redact_text(text) == text

    def test_a_huge_text_is_cut_at_a_million_characters(self, default_key: None) -> None:
        assert redact_text("a" * 1_000_001) == "a" * 1_000_000 + "…[truncated]"
        assert redact_text("a" * 1_000_000) == "a" * 1_000_000

    def test_short_and_long_texts_read_alike(self, default_key: None) -> None:
        for pad in (0, 180, 181, 182, 300):  # around the 200-character cache limit
            text = "x" * pad + " TOKEN=hunter2"
            assert redact_text(text) == "x" * pad + f" TOKEN={ph('assign', 'hunter2')}"


class TestValues:
    def test_scalars_under_a_secret_name(self, default_key: None) -> None:
        out = redact({"api_key": 1234, "secret": 1.5, "password": b"pw\xff", "token": True, "auth": None})
        assert out == {
            "api_key": ph("field", "1234"),
            "secret": ph("field", "1.5"),
            "password": ph("field", "pw\ufffd"),  # bytes read as UTF-8, bad bytes replaced
            "token": True,  # a flag is no secret
            "auth": None,
        }

    def test_a_list_under_a_secret_name_masks_each_item(self, default_key: None) -> None:
        assert redact({"auth": ("user", "pw")}) == {"auth": [ph("field", "user"), ph("field", "pw")]}

    def test_a_dict_under_a_secret_name_is_walked(self, default_key: None) -> None:
        out = redact({"auth": {"user": "bob", "password": "pw", "n": 2}})
        assert out == {"auth": {"user": "bob", "password": ph("field", "pw"), "n": 2}}

    def test_empty_values_under_a_secret_name_stay(self, default_key: None) -> None:
        assert redact({"password": "", "token": [], "secret": {}}) == {"password": "", "token": [], "secret": {}}

    def test_keys_are_redacted_and_non_string_keys_read_as_text(self, default_key: None) -> None:
        out = redact({"TOKEN=hunter2": "v", 3: "w", None: 1})
        # the key names a token, so its value is masked too
        assert out == {f"TOKEN={ph('assign', 'hunter2')}": ph("field", "v"), "3": "w", "None": 1}

    def test_other_values(self, default_key: None) -> None:
        class Holder:
            def __repr__(self) -> str:
                return "Holder TOKEN=hunter2"

        assert redact(b"ok \xff") == "ok \ufffd"
        assert redact(Holder()) == f"Holder TOKEN={ph('assign', 'hunter2')}"
        assert redact(("a", 1, None, 2.5, False)) == ["a", 1, None, 2.5, False]
        assert redact({"d": {"x": [1, {"y": "TOKEN=zz"}]}}) == {"d": {"x": [1, {"y": f"TOKEN={ph('assign', 'zz')}"}]}}
        assert redact({"n": None, "b": True, "i": 1, "f": 0.5}) == {"n": None, "b": True, "i": 1, "f": 0.5}

    def test_nesting_is_cut_below_32_levels(self, default_key: None) -> None:
        # the top value is depth 0, each list one deeper: the string at depth 32 stays, at 33 is cut
        assert redact(nested("ok", 32)) == nested("ok", 32)
        assert redact(nested("ok", 33)) == nested("[nested too deep]", 33)
        # under a secret name: the value is depth 1; a list at depth d < 32 masks its items
        assert redact({"auth": nested("pw", 31)}) == {"auth": nested(ph("field", "pw"), 31)}
        assert redact({"auth": nested("pw", 32)}) == {"auth": nested("[nested too deep]", 32)}
        # a dict under a secret name is walked at its own depth
        # (a dict at depth 31 hands its secret's dict on at 32: walked; at 32, on at 33: cut)
        assert redact(nested({"auth": {"k": "v"}}, 31)) == nested({"auth": {"k": "v"}}, 31)
        assert redact(nested({"auth": {"k": "v"}}, 32)) == nested({"auth": "[nested too deep]"}, 32)
        # a dict inside a dict is one level deeper, like a list
        assert redact(nested({"d": {"k": 1}}, 31)) == nested({"d": {"k": 1}}, 31)
        assert redact(nested({"d": {"k": 1}}, 32)) == nested({"d": "[nested too deep]"}, 32)
        assert MASK == "[REDACTED"
