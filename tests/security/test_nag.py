"""Ordinary work is never nagged (issue 14), and what is dangerous is still stopped.

Every case goes through ``guard.feed.apply_event`` (what ``guard feed`` and the replay run)
on a Guard over a temporary workspace, with explicit timestamps (no clock, no sleep).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from guard.core import Guard
from guard.feed import apply_event

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


class Session:
    """One agent session fed as hook events, 20 s apart."""

    def __init__(self, guard: Guard, project: Path, sid: str = "s1") -> None:
        self.guard, self.project, self.sid, self.t = guard, project, sid, T0

    def _ts(self) -> str:
        self.t += timedelta(seconds=20)
        return self.t.isoformat()

    def call(
        self, tool: str, params: dict[str, Any], *, ok: bool | None = True, answer: str | None = None
    ) -> dict[str, Any]:
        base = {"tool": tool, "params": params, "session_id": self.sid}
        record = apply_event(self.guard, {**base, "event": "tool_dispatch", "ts": self._ts(), "cwd": str(self.project)})
        assert record is not None
        if answer is not None and record["decision"] == "request_confirm":
            apply_event(self.guard, {**base, "event": "user_confirmation", "ts": self._ts(), "action": answer})
            if answer == "denied":
                return record
        if ok is not None and record["decision"] != "block":
            status = "success" if ok else "failure"
            apply_event(self.guard, {**base, "event": "tool_result", "ts": self._ts(), "status": status})
        return record

    def bash(self, command: str, **kw: Any) -> dict[str, Any]:
        return self.call("Bash", {"command": command}, **kw)


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    project = tmp_path / "project"
    project.mkdir()
    with Guard(tmp_path / "ws", {"system.health": 90}, memory_backend="history") as guard:
        yield Session(guard, project)


def ids(record: dict[str, Any]) -> list[str]:
    return [r["id"] for r in record["reasons"]]


# -- the deciding reason first ------------------------------------------------------------
class TestDecidingReasonFirst:
    def test_a_loop_leads_with_the_loop(self, session: Session) -> None:
        """The same failing call again and again: the loop or the breaker speaks first, not the parse."""
        out = [session.bash("make deploy-staging", ok=False) for _ in range(8)]
        stopped = [r for r in out if r["decision"] != "auto_allow"]
        assert stopped, "the loop was never stopped"
        for r in stopped:
            assert ids(r)[0] in ("G201", "G202", "G203", "G210", "G302"), ids(r)
        assert any(ids(r)[0] in ("G202", "G210") for r in stopped)

    def test_an_ask_from_history_says_so(self, session: Session) -> None:
        """A low-risk call asked about only because the person refused shell calls before leads with G302."""
        earlier = Session(session.guard, session.project, "s0")
        for package in ("left-pad", "is-odd", "is-even", "colors", "faker"):
            earlier.bash(f"npm install {package}", ok=None, answer="denied")
        r = session.bash("make build", ok=None)
        assert r["decision"] == "request_confirm" and ids(r)[0] == "G302", ids(r)
        assert "user_pref" in r["reasons"][0]["message"]

    def test_a_static_ask_leads_with_its_rule(self, session: Session) -> None:
        """No history: a medium-risk install is asked about for what it is (the static rule), not the score."""
        r = session.bash("pip install requests", ok=None)
        assert r["decision"] == "request_confirm" and ids(r)[0].startswith("G1"), ids(r)

    def test_a_static_block_still_leads_with_its_rule(self, session: Session) -> None:
        r = session.bash("rm -rf ~", ok=None)
        assert r["decision"] == "block" and ids(r)[0].startswith("G1")
