"""Register guard's hooks in an agent host's settings file, and take them out again.

Only guard's own handlers are touched: a handler is guard's when its command (with its
``args``) says ``guard hook HOST``. Everything else in the file stays as it was, in its
order. Installing twice changes nothing; an installed handler is updated in place (its
group keeps any matcher the user edited). A file guard cannot read is an error and is left
untouched; writes go through a temporary file and a rename.

Layouts: Claude Code, Codex and Gemini CLI nest ``{event: [{matcher, hooks: [handler]}]}``;
Cursor lists handlers flat, ``{event: [handler]}``.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import attrs

from guard.atomic import write_atomic
from guard.errors import GuardError
from guard.integrations.hosts import ALIASES


class InstallError(GuardError):
    """A settings file guard cannot safely edit."""


@attrs.frozen
class Target:
    host: str
    path: str  # relative to the home directory (--user) or the project (--project)
    events: tuple[tuple[str, str | None, tuple[tuple[str, Any], ...]], ...]  # event, matcher, handler extras
    flat: bool = False
    skeleton: tuple[tuple[str, Any], ...] = ()


_CODEX_TOOLS = "Bash|apply_patch|mcp__.*"
TARGETS = {
    "claude-code": Target(
        "claude-code",
        ".claude/settings.json",
        (
            ("PreToolUse", "*", (("timeout", 30),)),
            ("PermissionRequest", "*", (("timeout", 30),)),
            ("PostToolUse", "*", (("timeout", 30),)),
            ("PostToolUseFailure", "*", (("timeout", 30),)),
            ("UserPromptSubmit", None, (("timeout", 30),)),
        ),
    ),
    "codex": Target(
        "codex",
        ".codex/hooks.json",
        (
            ("PreToolUse", _CODEX_TOOLS, (("timeout", 30),)),
            ("PermissionRequest", _CODEX_TOOLS, (("timeout", 30),)),
            ("PostToolUse", _CODEX_TOOLS, (("timeout", 30),)),
            ("UserPromptSubmit", None, (("timeout", 30),)),
        ),
    ),
    "gemini": Target(
        "gemini",
        ".gemini/settings.json",
        (
            ("BeforeTool", ".*", (("name", "guard-before"), ("timeout", 30_000))),
            ("AfterTool", ".*", (("name", "guard-after"), ("timeout", 30_000))),
            ("BeforeAgent", None, (("name", "guard-prompt"), ("timeout", 30_000))),
        ),
    ),
    "cursor": Target(
        "cursor",
        ".cursor/hooks.json",
        (
            ("beforeShellExecution", None, ()),
            ("beforeMCPExecution", None, ()),
            ("afterShellExecution", None, ()),
            ("afterMCPExecution", None, ()),
            ("beforeSubmitPrompt", None, ()),
        ),
        flat=True,
        skeleton=(("version", 1),),
    ),
}


def settings_path(host: str, *, project: bool, home: Path | None = None, cwd: Path | None = None) -> Path:
    base = (cwd or Path.cwd()) if project else (home or Path.home())
    return base / TARGETS[host].path


# Hosts that run the call when a hook dies (a signal, an out-of-memory kill) but refuse it on
# exit 2. guard answers every failure it can see itself; this covers the ones it cannot.
_CRASH_EXIT = {"claude-code": 2, "gemini": 2}
CRASH_GUARD = ' || {{ echo "guard hook died (status $?): refusing" >&2; exit {code}; }}'


def hook_command(
    host: str, *, base: str | None = None, workspace: str | None = None, flags: tuple[str, ...] = ()
) -> str:
    """``guard hook HOST`` as the host should run it: this Python by absolute path, imports isolated.

    The default ``base`` is :func:`python_command`, so the hook finds this guard whatever the
    host's PATH and working directory. For Claude Code and Gemini CLI on POSIX shells the
    command ends in a fallback that turns a crashed hook (which those hosts treat as "go
    ahead") into exit 2, their refusal.
    """
    if base is None:
        base = python_command()
    parts = [base, "hook", host, *flags]
    if workspace:
        parts += ["--workspace", shlex.quote(str(Path(workspace).expanduser().absolute()))]
    command = " ".join(parts)
    if host in _CRASH_EXIT and os.name == "posix":
        command += CRASH_GUARD.format(code=_CRASH_EXIT[host])
    return command


def python_command() -> str:
    """``/abs/python -I -m guard``, quoted for a POSIX shell (see :func:`python_argv`)."""
    return " ".join(shlex.quote(a) for a in python_argv())


def python_argv() -> list[str]:
    """This interpreter by absolute path with isolated imports, then ``-m guard``.

    ``python -m guard`` alone puts the working directory first on ``sys.path``: a ``guard.py``,
    ``guard/__main__.py`` or ``json.py`` in the agent's project would answer instead of guard.
    ``-I`` leaves it out (and ``PYTHONPATH``, every ``PYTHON*`` variable, the user's site
    directory). The path is made absolute but its symlinks are kept: a virtual environment's
    ``bin/python`` is a symlink, and its location is what selects the environment.
    """
    exe = os.path.abspath(sys.executable)
    return [exe, *isolation_flags(exe), "-m", "guard"]


@functools.cache
def isolation_flags(exe: str) -> tuple[str, ...]:
    """``-I`` when this guard imports under it; ``-E -P`` for a guard in the user's site directory.

    Checked once by running the interpreter from a neutral directory. A guard that imports
    under neither is an error: the host would run a hook that cannot start.
    """
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="guard-probe-") as neutral:
        for flags in (("-I",), ("-E", "-P")):
            try:
                done = subprocess.run(
                    [exe, *flags, "-c", "import guard.cli, guard.integrations.hosts"],
                    cwd=neutral,
                    capture_output=True,
                    timeout=60,
                )
            except (OSError, subprocess.SubprocessError):
                continue
            if done.returncode == 0:
                return flags
    raise InstallError(
        f"{exe} cannot import guard with isolated imports (-I, or -E -P); "
        "install guard into that environment, or pass --command with how to run it"
    )


def is_ours(handler: Any, host: str) -> bool:
    if not isinstance(handler, dict):
        return False
    command = handler.get("command")
    args = handler.get("args")
    text = command if isinstance(command, str) else ""
    if isinstance(args, list):
        text += " " + " ".join(str(a) for a in args)
    names = [host] + [a for a, h in ALIASES.items() if h == host]
    return any(re.search(rf"\bguard\s+hook\s+{re.escape(n)}(\s|$)", text) for n in names)


# -- editing --------------------------------------------------------------------------------
def install(path: Path, host: str, command: str, *, dry_run: bool = False) -> tuple[bool, dict[str, Any]]:
    """Add or update guard's handlers; (changed, the new document)."""
    target = TARGETS[host]
    original, doc = _read(path, dict(target.skeleton))
    hooks = _hooks(doc, path, create=True)
    for event, matcher, extras in target.events:
        handler = _handler(command, dict(extras), flat=target.flat)
        entries = _list(hooks, event, path, create=True)
        if target.flat:
            _place_flat(entries, handler, host)
        else:
            _place_nested(entries, handler, host, matcher)
    changed = doc != original
    if changed and not dry_run:
        _write(path, doc)
    return changed, doc


def uninstall(path: Path, host: str, *, dry_run: bool = False) -> tuple[int, dict[str, Any]]:
    """Remove guard's handlers only; (how many, the new document)."""
    target = TARGETS[host]
    if not path.exists():
        return 0, {}
    original, doc = _read(path, {})
    hooks = _hooks(doc, path, create=False)
    removed = 0
    for event, entries in list(hooks.items()):
        if not isinstance(entries, list):
            continue  # not guard's, and not something guard understands: leave it be
        count = _remove_flat(entries, host) if target.flat else _remove_nested(entries, host)
        removed += count
        if count and not entries:
            del hooks[event]
    if removed and "hooks" in doc and not doc["hooks"]:
        del doc["hooks"]
    if doc != original and not dry_run:
        _write(path, doc)
    return removed, doc


def _handler(command: str, extras: dict[str, Any], *, flat: bool) -> dict[str, Any]:
    """Keys in the order the hosts' own examples use: name, type, command, then the rest."""
    handler: dict[str, Any] = {"name": extras.pop("name")} if "name" in extras else {}
    if not flat:
        handler["type"] = "command"
    handler["command"] = command
    return handler | extras


def _place_nested(groups: list[Any], handler: dict[str, Any], host: str, matcher: str | None) -> None:
    """Update guard's first handler in place, drop any duplicates of it, or add a group."""
    placed = False
    for group in list(groups):
        inner = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(inner, list) or not any(is_ours(h, host) for h in inner):
            continue
        kept = []
        for h in inner:
            if not is_ours(h, host):
                kept.append(h)
            elif not placed:
                kept.append(handler)
                placed = True
        inner[:] = kept
        if not kept:
            groups.remove(group)
    if not placed:
        groups.append(({"matcher": matcher} if matcher is not None else {}) | {"hooks": [handler]})


def _remove_nested(groups: list[Any], host: str) -> int:
    removed = 0
    for group in list(groups):
        inner = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(inner, list):
            continue
        ours = [h for h in inner if is_ours(h, host)]
        removed += len(ours)
        inner[:] = [h for h in inner if not is_ours(h, host)]
        if ours and not inner:
            groups.remove(group)
    return removed


def _place_flat(entries: list[Any], handler: dict[str, Any], host: str) -> None:
    ours = [i for i, h in enumerate(entries) if is_ours(h, host)]
    if not ours:
        entries.append(handler)
        return
    entries[ours[0]] = handler
    for i in reversed(ours[1:]):
        del entries[i]


def _remove_flat(entries: list[Any], host: str) -> int:
    before = len(entries)
    entries[:] = [h for h in entries if not is_ours(h, host)]
    return before - len(entries)


# -- the file -------------------------------------------------------------------------------
def _read(path: Path, skeleton: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the document as found, a copy to edit); a missing file reads as ``skeleton``."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, json.loads(json.dumps(skeleton))
    except (OSError, UnicodeDecodeError) as exc:
        raise InstallError(f"{path}: cannot read it ({exc}); left untouched") from None
    try:
        doc = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise InstallError(
            f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); left untouched. "
            "Fix or move the file, then run this again."
        ) from None
    if not isinstance(doc, dict):
        raise InstallError(f"{path}: expected a JSON object at the top, found {type(doc).__name__}; left untouched")
    return doc, json.loads(json.dumps(doc))


def _hooks(doc: dict[str, Any], path: Path, *, create: bool) -> dict[str, Any]:
    hooks = doc.get("hooks")
    if hooks is None:
        if not create:
            return {}
        hooks = doc["hooks"] = {}
    if not isinstance(hooks, dict):
        raise InstallError(f'{path}: "hooks" is a {type(hooks).__name__}, expected an object; left untouched')
    return hooks


def _list(hooks: dict[str, Any], event: str, path: Path, *, create: bool) -> list[Any]:
    entries = hooks.get(event)
    if entries is None and create:
        entries = hooks[event] = []
    if not isinstance(entries, list):
        raise InstallError(f'{path}: "hooks.{event}" is not a list; left untouched')
    return entries


def _write(path: Path, doc: dict[str, Any]) -> None:
    write_settings(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n", new_mode=0o644)


def write_settings(path: Path, text: str, *, new_mode: int) -> None:
    """Replace a host's settings file atomically and durably, keeping its permissions (``new_mode`` for a new one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text, mode=new_mode, keep_mode=True, fsync=True)
