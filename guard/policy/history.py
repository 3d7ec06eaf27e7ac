"""The workspace's history as typed events, for learning rules, replaying and reporting.

Reads the three seed files with ``JsonlLog`` (torn or malformed lines are skipped with a
warning) and keeps only what the policy tools use. Synonyms other writers use are folded:
``rejected`` is a denial; ``failed`` and ``error`` are failures.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import attrs

from guard import workspace as ws
from guard.jsonl import JsonlLog
from guard.model import ToolCall
from guard.outcomes import execution_ok, interaction_ok, parse_ts
from guard.policy.patterns import params_for
from guard.signature import signature
from guard.toolnames import canonical_tool


@attrs.frozen
class Event:
    """One history line: ``source`` is ``execution``, ``interaction`` or ``decision``."""

    source: str
    ts: float
    tool: str
    params: Mapping[str, Any]
    session_id: str | None
    signature: str
    outcome: str  # success|failure, approved|denied, or the logged decision
    raw: Mapping[str, Any]

    @property
    def kind(self) -> str:
        return canonical_tool(self.tool)

    @property
    def text(self) -> str:
        """The call's normalised text: the command, path or URL."""
        return self.signature.partition(":")[2]

    @property
    def when(self) -> datetime:
        return datetime.fromtimestamp(self.ts).astimezone()

    def call(self) -> ToolCall:
        """The call as logged (parameters redacted); rebuilt from the signature when a writer
        left the parameters out."""
        params = self.params or params_for(self.kind, self.text) or {}
        return ToolCall(self.tool, params, self.session_id, None, None, self.when)


def executions(root: Path) -> Iterator[Event]:
    for n, rec in enumerate(JsonlLog(root / ws.EXECUTIONS)):
        ok = execution_ok(rec)
        if ok is not None:
            ev = _event("execution", rec, n, "success" if ok else "failure")
            if ev is not None:
                yield ev


def interactions(root: Path) -> Iterator[Event]:
    for n, rec in enumerate(JsonlLog(root / ws.INTERACTIONS)):
        ok = interaction_ok(rec)
        if ok is not None:
            ev = _event("interaction", rec, n, "approved" if ok else "denied")
            if ev is not None:
                yield ev


def decisions(root: Path) -> Iterator[Event]:
    for n, rec in enumerate(JsonlLog(root / ws.DECISIONS)):
        decision = rec.get("decision")
        if decision in ("auto_allow", "request_confirm", "block"):
            ev = _event("decision", rec, n, decision)
            if ev is not None:
                yield ev


def _event(source: str, rec: Mapping[str, Any], n: int, outcome: str) -> Event | None:
    tool = rec.get("tool")
    if not isinstance(tool, str) or not tool.strip():
        return None
    params = rec.get("params")
    params = params if isinstance(params, Mapping) else {}
    sig = rec.get("signature")
    if not isinstance(sig, str) or ":" not in sig:
        sig = signature(tool, params)
    sid = rec.get("session_id")
    # A line without a usable time sorts by file position, before anything dated.
    ts = parse_ts(rec.get("timestamp"), float(n) * 1e-6)
    return Event(source, ts, tool, params, None if sid is None else str(sid), sig, outcome, rec)


def parse_date(text: str) -> float:
    """``--since`` values: ``2025-06-01`` (local midnight) or a full ISO timestamp → epoch seconds."""
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"not a date: {text!r} (expected YYYY-MM-DD or an ISO timestamp)") from None
    return (when if when.tzinfo else when.astimezone()).timestamp()
