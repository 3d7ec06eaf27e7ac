"""Close circuit breakers and forget sessions on disk (``guard reset``).

A running process notices the change by the file's stamp and reloads the session.
``task`` is a task id as shown by ``guard stats --session`` (12 hex digits), or the call's
signature (``bash:make test``), or a shell command (``make test``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from guard.behavior import files
from guard.behavior.breaker import Breaker
from guard.behavior.settings import BehaviorSettings
from guard.behavior.tracker import LOCK, journal_file, session_file
from guard.signature import signature


def task_matches(b: Breaker, query: str) -> bool:
    from guard.behavior.facts import task_id

    q = " ".join(query.split())
    if b.task == q or b.text == q:
        return True
    candidates = {q, signature("bash", {"command": q})}
    return b.text in candidates or b.task in {task_id(c) for c in candidates}


def close_in_state(state: Any, task: str) -> list[str]:
    done = []
    for key, b in list(state.breakers.items()):
        if task_matches(b, task):
            done.append(f"session {state.session_id}: closed the breaker of '{b.text}' ({b.task})")
            del state.breakers[key]
    return done


def reset(
    directory: Path,
    *,
    session_id: str | None = None,
    task: str | None = None,
    everything: bool = False,
) -> list[str]:
    """Do it under the sessions lock; one line per thing reset."""
    from guard.behavior.session import SessionState

    done: list[str] = []
    if not directory.is_dir():
        return done
    settings = BehaviorSettings(window=10_000)
    with files.locked(directory / LOCK):
        if everything:
            for path in sorted(directory.glob("*.json")):
                files.remove(path)
                files.remove(journal_file(path))
                done.append(f"{path.name}: cleared")
            return done
        if task is None:
            path = session_file(directory, session_id)
            if session_id is not None and files.remove(path):
                files.remove(journal_file(path))
                done.append(f"session {session_id}: cleared (breakers, counters, taint)")
            return done
        paths = [session_file(directory, session_id)] if session_id is not None else sorted(directory.glob("*.json"))
        for path in paths:
            doc, _ = files.read_json(path)
            if doc is None:
                continue
            try:
                state = SessionState.from_json(doc, settings)
            except (KeyError, TypeError, ValueError, IndexError):
                continue
            closed = close_in_state(state, task)
            if closed:
                files.write_json(path, state.to_json())
                done += closed
    return done
