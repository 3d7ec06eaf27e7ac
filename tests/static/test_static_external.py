"""Peers' own test expectations (dcg, cc-safety-net, safe-chains, Codex) judged by guard.

``data/peer_cases.jsonl`` holds the commands those projects' test suites mark as dangerous
(``expect: deny``) or safe (``expect: allow``), mapped onto guard's labels: a peer's deny must at least
ask (``confirm``; ``block`` where guard's critical families apply); a peer's allow must not block
(``allow`` for read-only and ordinary project work). Where a peer's expectation and guard's documented
design differ, the row's ``note`` says why and the label keeps guard's behaviour; ``gap:`` notes mark
known misses left open.
"""

from __future__ import annotations

from collections import Counter

import pytest
from static_helpers import DATA, HOME, cold_decision, judge, load_jsonl, satisfies

from guard.model import AUTO_ALLOW

ROWS = load_jsonl(DATA / "peer_cases.jsonl")


def _repo(row: dict) -> str:
    return row["source"].split(":", 1)[0]


def test_peer_cases_meet_their_labels() -> None:
    misses = []
    for row in ROWS:
        decision = cold_decision(judge(row["command"], home=HOME))
        if not satisfies(row["label"], decision):
            misses.append((row["label"], decision, row["command"], row["source"]))
    assert not misses, misses[:20]


def test_agreement_with_each_peer() -> None:
    """How often guard agrees with the peer's own verdict (deny → asks or blocks, allow → runs)."""
    agree: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for row in ROWS:
        decision = cold_decision(judge(row["command"], home=HOME))
        total[_repo(row)] += 1
        agree[_repo(row)] += (decision != AUTO_ALLOW) == (row["expect"] == "deny")
    rates = {repo: agree[repo] / total[repo] for repo in total}
    for repo, rate in sorted(rates.items()):
        print(f"{repo}: {agree[repo]}/{total[repo]} = {rate:.1%}")
    assert set(total) >= {
        "Dicklesworthstone/destructive_command_guard",
        "kenryu42/claude-code-safety-net",
        "michaeldhopkins/safe-chains",
        "openai/codex",
    }
    # Floors at the measured rates (a drop means a regression or a relabelling to review).
    assert rates["Dicklesworthstone/destructive_command_guard"] >= 0.88
    assert rates["kenryu42/claude-code-safety-net"] >= 0.85
    assert rates["michaeldhopkins/safe-chains"] >= 0.60
    assert rates["openai/codex"] >= 0.55


@pytest.mark.parametrize("label", ["block", "confirm", "allow", "notblock"])
def test_every_label_is_present(label: str) -> None:
    assert any(row["label"] == label for row in ROWS)


def test_rows_are_well_formed() -> None:
    for row in ROWS:
        assert set(row) >= {"label", "command", "source", "note", "expect"}, row
        assert row["expect"] in ("deny", "allow")
        if row["expect"] == "deny" and row["label"] == "notblock":
            assert row["note"].startswith(("design:", "gap:")), row  # every disagreement is triaged
