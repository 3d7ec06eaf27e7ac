"""The shared labelled corpus, scored under the cold-start mapping: every label must be met."""

from __future__ import annotations

from collections import Counter

from static_helpers import DATA, HOME, LABELS, call_of, cold_decision, load_jsonl, satisfies

from guard.layers.static import classify

CORPUS = load_jsonl(DATA / "shared_corpus.jsonl")


def score() -> tuple[Counter[str], Counter[str], list[tuple[str, str, dict]]]:
    ok: Counter[str] = Counter()
    total: Counter[str] = Counter()
    misses = []
    for row in CORPUS:
        decision = cold_decision(classify(call_of(row), home=HOME))
        total[row["label"]] += 1
        if satisfies(row["label"], decision):
            ok[row["label"]] += 1
        else:
            misses.append((row["label"], decision, row["params"]))
    return ok, total, misses


def test_corpus_every_label() -> None:
    """100% on every label (cc-safety-net 2.4.5 scores 24/31 block, 10/30 confirm, 35/35, 22/22)."""
    ok, total, misses = score()
    assert set(total) == set(LABELS)
    assert not misses, misses
    assert all(ok[label] == total[label] for label in LABELS)


def test_corpus_copy_matches_shared_labels() -> None:
    """The committed copy keeps the four labels and its size (tests must not depend on ../shared)."""
    assert len(CORPUS) >= 118
    assert {row["label"] for row in CORPUS} == set(LABELS)
