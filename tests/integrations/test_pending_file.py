"""The open-questions file holds every entry's fields, as ``attrs.asdict`` writes them, and reads back whole."""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from guard.integrations.hosts.base import Event
from guard.integrations.pending import ASKED, LIMIT, Pending


def _event(i: int) -> Event:
    params = {"command": f"rm -rf build/{i}", "env": {"A": [1, {"b": None}]}, "timeout": 1.5, "ok": True}
    return Event("claude-code", "PreToolUse", "pre", "Bash", params, f"s{i % 3}", "/w", call_id=f"toolu_{i}")


def test_the_file_holds_what_asdict_writes_and_reads_back(tmp_path: Path) -> None:
    store = Pending(tmp_path, 3600)
    added = [store.add(ASKED, _event(i)) for i in range(5)]
    written = json.loads((tmp_path / ".guard-pending.json").read_text(encoding="utf-8"))
    assert written == {"version": 1, "entries": [attrs.asdict(e) for e in added]}
    assert written["entries"][0]["params"]["env"] == {"A": [1, {"b": None}]}
    assert store._load() == added  # and every field reads back


def test_a_full_file_keeps_the_newest_entries(tmp_path: Path) -> None:
    store = Pending(tmp_path, 3600)
    added = [store.add(ASKED, _event(i)) for i in range(LIMIT + 4)]
    assert store._load() == added[-LIMIT:]
