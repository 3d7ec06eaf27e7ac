"""``guard doctor``'s self-test: each installed hook command answers as its host needs.

For every host guard is installed in, the command from the host's settings file is run the way
the host runs it (``sh -c COMMAND`` in the project folder, the host's own payload on stdin) for
two calls given as data: a harmless read (``ls -la``), which must come back "allow", and a
destructive sample (``rm -rf /``), which must come back "deny". guard's answer is the test;
neither command is ever run. The reply is read the way the host reads it (its JSON fields, its
exit codes), so a command that crashes, prints something else or answers in another host's
format is a problem, with the command that fixes it.

Nothing of the person's is touched: the hook gets a throwaway workspace (``GUARD_HOME``, or the
command's own ``--workspace`` pointed there) that is removed afterwards, the daemon is off for the
run (``GUARD_HOOKS_DAEMON=off``: a daemon decides in its own workspace), and the payload carries a
fresh ``guard-doctor-…`` session id. The throwaway workspace starts with guard's defaults, so the
person's own rules cannot make the read ask.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from guard.integrations.install import CRASH_GUARD

ALLOW, DENY = "allow", "deny"
READ, DESTRUCTIVE = "ls -la", "rm -rf /"  # data for guard to judge, never run
TIMEOUT_S = 30.0  # what guard's installer gives each hook


@attrs.frozen
class Outcome:
    """What one self-test call came back with: ``answer`` as the host reads it, or None and why."""

    command: str  # the sample judged (``ls -la``)
    expected: str
    answer: str | None
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.answer == self.expected


# -- the host's payload for a shell call, and how the host reads the reply --------------------------
def _claude(session: str, cwd: str, command: str) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": "",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "guard doctor self-test"},
        "tool_use_id": f"toolu_{session}",
    }


def _codex(session: str, cwd: str, command: str) -> dict[str, Any]:
    return _claude(session, cwd, command) | {"turn_id": "guard-doctor", "model": "guard-doctor"}


def _gemini(session: str, cwd: str, command: str) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": "",
        "cwd": cwd,
        "hook_event_name": "BeforeTool",
        "tool_name": "run_shell_command",
        "tool_input": {"command": command, "description": "guard doctor self-test"},
    }


def _cursor(session: str, cwd: str, command: str) -> dict[str, Any]:
    return {
        "conversation_id": session,
        "generation_id": session,
        "hook_event_name": "beforeShellExecution",
        "workspace_roots": [cwd],
        "command": command,
        "cwd": cwd,
    }


def _read_claude(doc: Any, code: int) -> str | None:
    if code == 2:
        return DENY  # Claude Code and Codex: exit 2 refuses the call
    if doc is None:
        return ALLOW if code == 0 else None  # no opinion: the host's own flow (Codex: runs it)
    out = doc.get("hookSpecificOutput") if isinstance(doc, dict) else None
    decision = out.get("permissionDecision") if isinstance(out, dict) else None
    return decision if decision in (ALLOW, DENY, "ask") else None


def _read_gemini(doc: Any, code: int) -> str | None:
    if code == 2:
        return DENY
    decision = doc.get("decision") if isinstance(doc, dict) else None
    return {"allow": ALLOW, "deny": DENY, "block": DENY, "ask": "ask"}.get(decision) if decision else None


def _read_cursor(doc: Any, code: int) -> str | None:
    permission = doc.get("permission") if isinstance(doc, dict) else None
    return permission if permission in (ALLOW, DENY, "ask") else None


Payload = Callable[[str, str, str], dict[str, Any]]
Reader = Callable[[Any, int], "str | None"]
# host -> (the settings event whose command judges a shell call, its payload, how the host reads the reply)
DIALECTS: dict[str, tuple[str, Payload, Reader]] = {
    "claude-code": ("PreToolUse", _claude, _read_claude),
    "codex": ("PreToolUse", _codex, _read_claude),
    "gemini": ("BeforeTool", _gemini, _read_gemini),
    "cursor": ("beforeShellExecution", _cursor, _read_cursor),
}


def _redirected(command: str, workspace: Path) -> str:
    """The command with its own ``--workspace DIR`` (if any) pointed at the throwaway workspace."""
    body, tail = command, ""
    for code in (2, 0):
        suffix = CRASH_GUARD.format(code=code)
        if body.endswith(suffix):
            body, tail = body.removesuffix(suffix), suffix
    try:
        argv = shlex.split(body)
    except ValueError:
        return command
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a == "--workspace" and i + 1 < len(argv):
            out += [a, str(workspace)]
            i += 2
            continue
        out.append(f"--workspace={workspace}" if a.startswith("--workspace=") else a)
        i += 1
    return shlex.join(out) + tail if out != argv else command


def run_one(host: str, command: str, sample: str, expected: str, cwd: Path, env: Mapping[str, str]) -> Outcome:
    """Run ``command`` as ``host`` would for a shell call of ``sample``; read the reply as the host does."""
    _, payload_of, read = DIALECTS[host]
    session = f"guard-doctor-{uuid.uuid4().hex[:12]}"
    with tempfile.TemporaryDirectory(prefix="guard-doctor-") as tmp:
        workspace = Path(tmp) / "workspace"
        run_env = {**env, "GUARD_HOME": str(workspace), "GUARD_HOOKS_DAEMON": "off"}
        try:
            proc = subprocess.run(
                ["/bin/sh", "-c", _redirected(command, workspace)],
                input=json.dumps(payload_of(session, str(cwd), sample)),
                capture_output=True,
                text=True,
                cwd=cwd,
                env=run_env,
                timeout=TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            return Outcome(sample, expected, None, f"no answer within {TIMEOUT_S:.0f} s")
        except OSError as exc:
            return Outcome(sample, expected, None, f"could not start ({exc})")
    text = proc.stdout.strip()
    try:
        doc = json.loads(text) if text else None
    except ValueError:
        return Outcome(sample, expected, None, f"the reply is not JSON: {_excerpt(text or proc.stderr)}")
    answer = read(doc, proc.returncode)
    if answer is None:
        why = f"exit {proc.returncode}, {_excerpt(text or proc.stderr) or 'no output'}"
        return Outcome(sample, expected, None, f"not a {host} hook answer ({why})")
    return Outcome(sample, expected, answer, "" if answer == expected else _excerpt(text or proc.stderr))


def self_test(host: str, command: str, cwd: Path, env: Mapping[str, str] | None = None) -> list[Outcome]:
    """The read and the destructive sample through ``command``; both outcomes."""
    env = dict(os.environ if env is None else env)
    return [run_one(host, command, sample, want, cwd, env) for sample, want in ((READ, ALLOW), (DESTRUCTIVE, DENY))]


def _excerpt(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= 160 else line[:157] + "..."
