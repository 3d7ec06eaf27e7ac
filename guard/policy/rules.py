"""Learned rules and their life cycle: candidate → active → reverted.

State lives in ``<workspace>/rules.json`` (0600, replaced atomically): each rule with its
stable id, kind, text, status, the evidence that earned it, and when it was suggested,
applied and reverted. ``apply`` writes active rules into ``guard.toml``'s ``[permissions]``
(see :mod:`guard.policy.permissions`: nothing else in the file changes); ``revert`` removes
exactly that rule again. A file lock serialises concurrent runs.

Held rules (contradicted evidence) and reverted ones are applied only when named by id:
that is the person deciding.
"""

from __future__ import annotations

import contextlib
import difflib
import fcntl
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import attrs

from guard.atomic import write_private_atomic
from guard.config import CONFIG_FILENAME
from guard.errors import InputError
from guard.policy import permissions
from guard.policy.suggest import Evidence, SuggestResult

RULES_FILE = "rules.json"
LOCK_FILE = ".rules.lock"
VERSION = 1
STATUSES = ("candidate", "held", "active", "reverted")


@attrs.frozen
class LearnedRule:
    id: str
    kind: str  # allow | deny
    rule: str
    status: str
    reason: str = ""
    evidence: Evidence | None = None
    suggested_at: str | None = None
    applied_at: str | None = None
    reverted_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = attrs.asdict(self, recurse=False)
        out["evidence"] = self.evidence.to_dict() if self.evidence else None
        return out

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> LearnedRule:
        ev = raw.get("evidence")
        return cls(
            id=str(raw["id"]),
            kind=str(raw["kind"]),
            rule=str(raw["rule"]),
            status=str(raw["status"]),
            reason=str(raw.get("reason") or ""),
            evidence=Evidence.from_dict(ev) if isinstance(ev, Mapping) else None,
            suggested_at=raw.get("suggested_at"),
            applied_at=raw.get("applied_at"),
            reverted_at=raw.get("reverted_at"),
        )


@attrs.frozen
class Change:
    id: str
    kind: str
    rule: str
    action: str  # add | remove | already present | not in guard.toml | already active | already reverted

    def to_dict(self) -> dict[str, str]:
        return attrs.asdict(self)


@attrs.frozen
class EditResult:
    dry_run: bool
    changes: tuple[Change, ...]
    file: str
    diff: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "file": self.file,
            "changes": [c.to_dict() for c in self.changes],
            "diff": self.diff,
        }


# -- the rule book ---------------------------------------------------------------------------------
def load(workspace: Path) -> dict[str, LearnedRule]:
    """Every tracked rule by id; an unreadable file is an error (it holds the user's decisions)."""
    path = workspace / RULES_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise InputError(f"{path} is unreadable ({exc}); fix or remove it") from None
    try:
        rules = [LearnedRule.from_dict(r) for r in raw["rules"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{path} does not look like guard's rules file ({exc})") from None
    return {r.id: r for r in rules}


def _save(workspace: Path, book: Mapping[str, LearnedRule]) -> None:
    rules = sorted(book.values(), key=lambda r: (STATUSES.index(r.status) if r.status in STATUSES else 9, r.id))
    text = json.dumps({"version": VERSION, "rules": [r.to_dict() for r in rules]}, indent=2, ensure_ascii=False)
    write_private_atomic(workspace / RULES_FILE, text + "\n")


@contextlib.contextmanager
def _locked(workspace: Path) -> Iterator[None]:
    fd = os.open(workspace / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _now(now: datetime | None) -> str:
    return (now or datetime.now().astimezone()).isoformat(timespec="seconds")


def skip_states(workspace: Path) -> dict[str, str]:
    """Rule ids suggest must not offer again: active and reverted ones."""
    return {r.id: r.status for r in load(workspace).values() if r.status in ("active", "reverted")}


def configured_rules(workspace: Path) -> list[str]:
    """Every rule text in ``[permissions]`` (allow, deny and ask)."""
    path = workspace / CONFIG_FILENAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return [r for rules in permissions.read_permissions(text).values() for r in rules]


def record(workspace: Path, result: SuggestResult, now: datetime | None = None) -> None:
    """Store this run's candidates and held rules; earlier unapplied suggestions are replaced."""
    stamp = _now(now)
    with _locked(workspace):
        before = load(workspace)
        book = {k: r for k, r in before.items() if r.status in ("active", "reverted")}
        for s in (*result.suggested, *result.held):
            if s.id in book:
                continue
            first = before[s.id].suggested_at if s.id in before else stamp
            book[s.id] = LearnedRule(s.id, s.kind, s.rule, s.status, s.reason, s.evidence, suggested_at=first)
        _save(workspace, book)


# -- apply and revert ------------------------------------------------------------------------------
def apply(
    workspace: Path, ids: Sequence[str] = (), *, dry_run: bool = False, now: datetime | None = None
) -> EditResult:
    """Make rules active: every candidate, or exactly ``ids`` (held and reverted ones too)."""
    with _locked(workspace):
        book = load(workspace)
        if ids:
            _check_ids(book, ids)
            chosen = [book[i] for i in dict.fromkeys(ids)]
        else:
            chosen = [r for r in book.values() if r.status == "candidate"]
        path = workspace / CONFIG_FILENAME
        text = _read(path)
        present = permissions.read_permissions(text)
        changes: list[Change] = []
        add: dict[str, list[str]] = {}
        for r in chosen:
            if r.status == "active":
                changes.append(Change(r.id, r.kind, r.rule, "already active"))
            elif r.rule in present[r.kind]:
                changes.append(Change(r.id, r.kind, r.rule, "already present"))
            else:
                changes.append(Change(r.id, r.kind, r.rule, "add"))
                add.setdefault(r.kind, []).append(r.rule)
        notes = {r.rule: f"guard rules: {r.id}" for r in chosen}
        new = permissions.edit(text, add=add, comments=notes)
        result = EditResult(dry_run, tuple(changes), str(path), _diff(path, text, new))
        if dry_run:
            return result
        if new != text:
            permissions.write_text(path, new)
        stamp = _now(now)
        for c in changes:
            if c.action != "already active":
                book[c.id] = attrs.evolve(book[c.id], status="active", applied_at=stamp, reverted_at=None)
        _save(workspace, book)
        return result


def revert(workspace: Path, rule_id: str, *, dry_run: bool = False, now: datetime | None = None) -> EditResult:
    """Remove exactly this rule from ``[permissions]`` and never suggest it again."""
    with _locked(workspace):
        book = load(workspace)
        _check_ids(book, [rule_id])
        r = book[rule_id]
        path = workspace / CONFIG_FILENAME
        text = _read(path)
        if r.status == "reverted":
            return EditResult(dry_run, (Change(r.id, r.kind, r.rule, "already reverted"),), str(path), "")
        present = permissions.read_permissions(text)
        if r.rule in present[r.kind]:
            change = Change(r.id, r.kind, r.rule, "remove")
            new = permissions.edit(text, remove={r.kind: [r.rule]})
        else:
            change = Change(r.id, r.kind, r.rule, "not in guard.toml")
            new = text
        result = EditResult(dry_run, (change,), str(path), _diff(path, text, new))
        if dry_run:
            return result
        if new != text:
            permissions.write_text(path, new)
        book[r.id] = attrs.evolve(r, status="reverted", reverted_at=_now(now))
        _save(workspace, book)
        return result


def listing(workspace: Path) -> list[dict[str, Any]]:
    """Tracked rules, then rules in ``[permissions]`` that guard did not learn (``manual``)."""
    book = load(workspace)
    text = _read(workspace / CONFIG_FILENAME)
    present = permissions.read_permissions(text)
    rows = [r.to_dict() | {"in_config": r.rule in present.get(r.kind, [])} for r in book.values()]
    rows.sort(key=lambda r: (STATUSES.index(r["status"]) if r["status"] in STATUSES else 9, r["id"]))
    learned = {(r.kind, r.rule) for r in book.values()}
    for kind, rules in present.items():
        for rule in rules:
            if (kind, rule) not in learned:
                rows.append({"id": None, "kind": kind, "rule": rule, "status": "manual", "in_config": True})
    return rows


def _check_ids(book: Mapping[str, LearnedRule], ids: Sequence[str]) -> None:
    unknown = [i for i in ids if i not in book]
    if unknown:
        raise InputError(
            f"unknown rule id(s): {', '.join(unknown)}; 'guard rules list' shows the ids "
            "(rejected suggestions have none to apply)"
        )


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def _diff(path: Path, old: str, new: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), str(path), f"{path} (after)"
    )
    return "".join(lines)
