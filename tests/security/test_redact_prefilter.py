"""Redaction's prefilter (one trie scan for the shapes' triggers, once a process has redacted
enough long texts to pay for building it) masks exactly what one ``in`` per trigger did, on
random text, text full of triggers and text carrying real secret shapes."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guard import redact
from guard.secretshapes import SHAPES
from tests.security.secret_cases import CASES


def _woken_by_scans(text: str) -> str:
    """The path before the prefilter: every root looked for with its own ``in``."""
    low = text.lower()
    woken: set[int] = set()
    for root in redact._ROOTS if redact._long_token(text) else redact._ROOTS_SHORT:
        if root in low:
            woken.update(redact._WAKES[root])
    for i in sorted(woken):
        shape = SHAPES[i]
        if any(trigger in low for trigger in shape.triggers):
            text = redact._apply(shape, text)
    return text


def _present_by_scans(low: str, long: bool) -> list[str]:
    return [r for r in (redact._ROOTS if long else redact._ROOTS_SHORT) if r in low]


@pytest.fixture(autouse=True)
def warm(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a long-lived process: past the warm-up, the trie answers."""
    monkeypatch.setattr(redact, "_scans", [redact._WARM])


# Texts made of the triggers themselves (overlapping, glued, in any case), secret-looking
# values and filler, so that many roots occur, next to each other and inside each other.
_ROOT = st.sampled_from(redact._ROOTS)
_SECRETS = [json.dumps(params) for _, _, params, _ in CASES]
_PIECE = st.one_of(
    _ROOT,
    _ROOT.map(str.upper),
    st.sampled_from(_SECRETS),
    st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 =:-_./'\"\n"), max_size=12),
)
_TEXTS = st.one_of(st.lists(_PIECE, max_size=40).map("".join), st.text(max_size=400))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_TEXTS)
def test_the_prefilter_masks_what_one_scan_per_trigger_masked(text: str) -> None:
    """Same output as the scan-per-trigger path, and the same roots found."""
    if text.isascii():
        low = text.lower()
        for long in (False, True):
            assert sorted(redact._present_by_trie(low, long)) == sorted(_present_by_scans(low, long))
        assert redact._redact(text) == _woken_by_scans(text)


def test_every_secret_case_redacts_as_before() -> None:
    """Each secret-bearing case from the redaction suite, whole and padded past the short cache."""
    for _, _, params, _ in CASES:
        text = json.dumps(params)
        for variant in (text, "x" * 300 + text, text + " " + text):
            if variant.isascii():
                assert redact._redact(variant) == _woken_by_scans(variant)


def test_text_packed_with_triggers_falls_back_to_scanning_and_still_finds_all() -> None:
    """More occurrences than the trie follows one by one: the rest are scanned for, none lost."""
    low = ("gh" * (redact._HITS + 5)) + "bearer token key"
    got = sorted(redact._present_by_trie(low, False))
    assert got == sorted(_present_by_scans(low, False))
    assert {"gh", "bearer", "token", "key"} <= set(got)


def test_a_write_without_any_trigger_is_returned_unchanged() -> None:
    """The benchmark's write content: no trigger, nothing masked, nothing found."""
    text = "print('hello')\n" * 20
    assert redact._present_by_trie(text.lower(), False) == []
    assert redact.redact_text(text) is text


def test_a_fresh_process_scans_until_warm_then_uses_the_trie(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first long texts are scanned trigger by trigger (no trie built), later ones by the trie."""
    monkeypatch.setattr(redact, "_scans", [0])
    redact._any.cache_clear()
    text = "x" * 250 + " --password hunter2x " + "gh " * 10
    expected = _woken_by_scans(text)
    for _ in range(redact._WARM):
        assert redact.redact_text(text) == expected
    assert redact._any.cache_info().currsize == 0
    assert redact.redact_text(text) == expected
    assert redact._any.cache_info().currsize == 1


def test_the_fallback_starts_right_after_the_last_occurrence_followed() -> None:
    """The 64th occurrence is ``dsn`` in ``dsntr``; ``sntr`` starts one character later and is only
    found by the scan that takes over there (a scan from two characters on would miss it)."""
    low = "sk" * (redact._HITS - 1) + "dsntr"
    got = redact._present_by_trie(low, False)
    assert sorted(got) == sorted(_present_by_scans(low, False)) == ["dsn", "sk", "sntr"]


def test_the_fallback_looks_for_the_long_only_root_only_in_long_texts() -> None:
    """``.`` (a Discord token's) is a root only when the text is long enough to hold one."""
    low = "sk" * (redact._HITS + 2) + " a.b.c"
    assert "." in redact._present_by_trie(low, True)
    assert "." not in redact._present_by_trie(low, False)
    assert sorted(redact._present_by_trie(low, True)) == sorted(_present_by_scans(low, True))
    assert sorted(redact._present_by_trie(low, False)) == sorted(_present_by_scans(low, False))
