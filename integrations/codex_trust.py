"""What Codex needs before it runs guard's hooks: the hooks feature on, and each hook trusted.

Codex 0.171 (checked live, ``tests/integrations/protocols/live/README.md``) runs hooks only with
``[features] hooks = true`` in ``$CODEX_HOME/config.toml`` (``codex_hooks`` is the deprecated
spelling), and only hooks the person has trusted: the interactive ``codex`` shows "Hooks need
review" and "Trust all and continue" saves one entry per handler,

    [hooks.state."<abs path of hooks.json>:<event in snake case>:<group>:<handler>"]
    trusted_hash = "sha256:…"

``codex exec`` prints nothing about an untrusted hook: it just runs every call unguarded. guard
cannot recompute the hash (Codex does not document what it covers), so a hook whose command
changed after it was trusted still looks trusted here; Codex asks again at its next start.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from guard.integrations.install import is_ours

FEATURE_FIX = "add `hooks = true` under `[features]` in {config}"
TRUST_FIX = 'start `codex` once in a terminal and choose "Trust all and continue" at "Hooks need review"'


def snake(event: str) -> str:
    """``PreToolUse`` -> ``pre_tool_use``, as Codex keys its hook state."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def feature_problem(config: dict[str, Any]) -> str | None:
    """Why Codex would not run hooks at all under this ``config.toml``, or None."""
    features = config.get("features")
    if not isinstance(features, dict):
        return "the hooks feature is off (no [features] hooks = true): Codex runs no hook"
    value = features.get("hooks", features.get("codex_hooks"))
    if value is True:
        return None
    return f"the hooks feature is off ([features] hooks = {json.dumps(value)}): Codex runs no hook"


def handlers(doc: Any) -> Iterator[tuple[str, int, int]]:
    """guard's handlers in a Codex ``hooks.json``: (event, group index, handler index)."""
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    for event, groups in (hooks or {}).items() if isinstance(hooks, dict) else ():
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            inner = group.get("hooks") if isinstance(group, dict) else None
            for h, handler in enumerate(inner if isinstance(inner, list) else []):
                if is_ours(handler, "codex"):
                    yield event, g, h


def untrusted(config: dict[str, Any], hooks_path: Path, doc: Any) -> list[str]:
    """guard's handlers in ``hooks_path`` with no trust saved in ``config``: ``["PreToolUse", …]``."""
    state = config.get("hooks", {}).get("state", {}) if isinstance(config.get("hooks"), dict) else {}
    state = state if isinstance(state, dict) else {}
    spellings = {str(hooks_path), str(hooks_path.resolve())}
    missing = []
    for event, g, h in handlers(doc):
        keys = [f"{p}:{snake(event)}:{g}:{h}" for p in spellings]
        entry = next((state[k] for k in keys if isinstance(state.get(k), dict)), None)
        if not (entry and isinstance(entry.get("trusted_hash"), str) and entry["trusted_hash"]):
            missing.append(event)
    return missing


def read_config(path: Path) -> dict[str, Any] | None:
    """``config.toml`` as a table; ``{}`` when it does not exist; None when it does not parse."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
