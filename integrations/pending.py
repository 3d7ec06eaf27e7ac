"""Open questions between hook calls: asks awaiting their outcome, approvals awaiting their retry.

Every hook call is a separate process (or a separate request to ``guard serve``), so what
one call asked has to be on disk for the next: a small JSON file in the workspace, 0600,
rewritten atomically under an ``flock``, bounded (the newest ``LIMIT`` entries) and expiring
(``hooks.pending_ttl_seconds``). Parameters are stored redacted.

States:

- ``asked``: the host asked the person. The tool's result (same call id, else the same
  call content) means *approved*; a new prompt or the end of the turn first means *denied*.
- ``awaiting``: the host could not ask (Codex PreToolUse, ``--no-ask``). The person answers
  out of band with ``guard approve ID`` (at their own terminal: :mod:`guard.integrations.person`)
  or ``guard approve ID --deny``.
- ``approved``: approved out of band, bound to the call's host, session and :func:`call_key`
  (canonical tool and parameters); the next identical call in that session consumes it, so it
  lets exactly one call run.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs

from guard.atomic import write_atomic
from guard.errors import InputError
from guard.integrations.hosts.base import Event
from guard.redact import redact
from guard.toolnames import canonical_tool

try:  # hashlib's own BLAKE2, without hashlib loading OpenSSL: this runs in a hook process per call
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - other Pythons
    from hashlib import blake2b

ASKED = "asked"
AWAITING = "awaiting"
APPROVED = "approved"

FILENAME = ".guard-pending.json"
LOCKNAME = ".guard-pending.lock"
LIMIT = 256


def call_key(tool: str, params: Mapping[str, Any]) -> str:
    """The same call's content gives the same key, whichever hook event carried it."""
    text = json.dumps([canonical_tool(tool), params], sort_keys=True, ensure_ascii=False, default=str)
    return blake2b(text.encode(), digest_size=8).hexdigest()


@attrs.frozen
class Entry:
    id: str
    state: str
    host: str
    session_id: str | None
    call_id: str | None
    key: str
    tool: str
    params: Mapping[str, Any]
    created: float
    cwd: str | None = None

    def matches(self, host: str, session_id: str | None, call_id: str | None, key: str) -> bool:
        """An ask is answered by its own call (by id when both have one); an approval by the same content."""
        if self.host != host or self.session_id != session_id:
            return False
        if self.state == ASKED and self.call_id and call_id:
            return self.call_id == call_id
        return self.key == key


_FIELDS = tuple(a.name for a in attrs.fields(Entry))


def _as_dict(entry: Entry) -> dict[str, Any]:
    """What ``attrs.asdict(entry)`` writes, for the JSON text only (``_save``): the file holds up to
    ``LIMIT`` entries and is rewritten on every ask, and ``asdict`` copies each entry's parameters
    object by object. They are written as they are (a ``dict`` of JSON values, from the hook's JSON)."""
    out = {name: getattr(entry, name) for name in _FIELDS}
    params = entry.params
    if type(params) is not dict:
        out["params"] = dict(params)
    return out


def _answers(event: Event) -> tuple[str, str | None, str | None, str]:
    """What :meth:`Entry.matches` compares an entry with: the event's host, session, call id and
    the key of its content, worked out once for all the entries (the key is a JSON dump and a hash:
    once per entry, a full file took 256 of them for every tool result)."""
    return event.host, event.session_id, event.call_id, call_key(event.tool or "", event.params)


def choose(waiting: list[Entry], ref: str | None, *, session_id: str | None = None) -> Entry:
    """The one held call ``guard approve`` means: by id, else the newest of one session.

    ``last`` (or no id) is never "the newest of any session": with calls held in several
    sessions and no ``session_id``, it raises and names the sessions, so the person says
    which. An approval is for one call of one session.
    """
    if ref and ref != "last":
        found = [e for e in waiting if e.id == ref and (session_id is None or e.session_id == session_id)]
        if not found:
            known = ", ".join(e.id for e in waiting) or "none"
            raise InputError(f"no call is waiting for approval under {ref!r} (waiting: {known})")
        return found[0]
    if session_id is not None:
        mine = [e for e in waiting if e.session_id == session_id]
        if not mine:
            raise InputError(f"no call is waiting for approval in session {session_id!r}")
        return mine[-1]
    sessions = list(dict.fromkeys((e.host, e.session_id) for e in waiting))
    if not sessions:
        raise InputError("no call is waiting for approval")
    if len(sessions) > 1:
        raise SeveralSessions(sessions)
    return waiting[-1]


class SeveralSessions(InputError):
    """``guard approve last`` with calls held in more than one session: the person must choose."""

    def __init__(self, sessions: list[tuple[str, str | None]]) -> None:
        self.sessions = sessions
        super().__init__(
            "calls are waiting in several sessions; say which one: guard approve --session SESSION "
            f"({', '.join(str(s) for _, s in sessions)}), or guard approve ID"
        )


class Pending:
    def __init__(self, workspace: Path, ttl_seconds: float, *, limit: int = LIMIT) -> None:
        self.path = workspace / FILENAME
        self.lock_path = workspace / LOCKNAME
        self.ttl = ttl_seconds
        self.limit = limit

    # -- questions ------------------------------------------------------------------------
    def add(self, state: str, event: Event, params: Mapping[str, Any] | None = None) -> Entry:
        """Keep a question about ``event``; ``params`` is its parameters already redacted (the
        decided call's), else they are redacted here."""
        entry = Entry(
            id=os.urandom(4).hex(),
            state=state,
            host=event.host,
            session_id=event.session_id,
            call_id=event.call_id,
            key=call_key(event.tool or "", event.params),
            tool=event.tool or "",
            params=redact(dict(event.params)) if params is None else dict(params),
            created=time.time(),
            cwd=event.cwd,
        )
        with self._edit() as entries:
            entries.append(entry)
        return entry

    def find(self, event: Event, states: tuple[str, ...]) -> Entry | None:
        answers = _answers(event)
        with self._edit() as entries:
            return next((e for e in entries if e.state in states and e.matches(*answers)), None)

    def take(self, event: Event, states: tuple[str, ...]) -> Entry | None:
        """Remove and return the oldest open question this event answers."""
        answers = _answers(event)
        with self._edit() as entries:
            for i, e in enumerate(entries):
                if e.state in states and e.matches(*answers):
                    return entries.pop(i)
        return None

    def take_session(self, host: str, session_id: str | None, states: tuple[str, ...]) -> list[Entry]:
        with self._edit() as entries:
            taken = [e for e in entries if e.state in states and e.host == host and e.session_id == session_id]
            entries[:] = [e for e in entries if e not in taken]
        return taken

    def waiting(self, session_id: str | None = None) -> list[Entry]:
        """Calls held for an out-of-band answer, oldest first; only ``session_id``'s when given."""
        return [e for e in self.entries() if e.state == AWAITING and (session_id is None or e.session_id == session_id)]

    def pick(self, ref: str | None, *, session_id: str | None = None) -> Entry:
        """The one held call ``guard approve`` means (see :func:`choose`)."""
        return choose(self.waiting(), ref, session_id=session_id)

    def resolve(self, ref: str, *, approved: bool, session_id: str | None = None) -> Entry:
        """``guard approve``: answer one ``awaiting`` call (see :meth:`pick`).

        An approval stays bound to that call: its host, its session and the key of its tool
        and parameters (:func:`call_key`); the hook consumes it on the first identical call
        (:meth:`take`), so it lets exactly one call through.
        """
        with self._edit() as entries:
            chosen = choose([e for e in entries if e.state == AWAITING], ref, session_id=session_id)
            i = entries.index(chosen)
            if approved:
                entries[i] = attrs.evolve(chosen, state=APPROVED, created=time.time())
            else:
                entries.pop(i)
            return chosen

    def entries(self) -> list[Entry]:
        with self._edit() as entries:
            return list(entries)

    # -- the file -------------------------------------------------------------------------
    @contextmanager
    def _edit(self) -> Iterator[list[Entry]]:
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            before = self._load()
            entries = list(before)
            yield entries
            entries = entries[-self.limit :]
            if entries != before:
                self._save(entries)
        finally:
            os.close(fd)  # closing releases the lock

    def _load(self) -> list[Entry]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            entries = [Entry(**e) for e in raw["entries"]]
        except FileNotFoundError:
            return []
        except (OSError, ValueError, TypeError, KeyError) as exc:
            from guard.log import logger

            logger.warning(f"{self.path}: unreadable ({exc}); open hook questions are forgotten")
            return []
        oldest = time.time() - self.ttl
        return [e for e in entries if e.created >= oldest]

    def _save(self, entries: list[Entry]) -> None:
        # Unlike atomic.write_private_atomic this raises: a question guard could not keep must
        # reach the hook, which then refuses the call instead of asking and forgetting.
        text = json.dumps({"version": 1, "entries": [_as_dict(e) for e in entries]}, ensure_ascii=False)
        write_atomic(self.path, text, mode=0o600, keep_mode=False, fsync=False)
