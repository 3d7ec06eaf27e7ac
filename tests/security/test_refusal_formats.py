"""Each host's refusal of a call guard could not judge, declared once and checked once.

Two paths refuse that way: ``guard hook HOST`` given input it cannot read (the host's
``unreadable`` reply), and the hook's last resort (guard itself failed, or a live daemon went
silent), which must answer without ``guard.integrations.hosts``. Both must give the host the same
shape: on main Claude Code's last resort lacked the ``decision: block`` its hook path sends.
The hook runs as a subprocess with a fake HOME and GUARD_HOME.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GUARD_CMD, guard_cli_env


def _pre_deny(m: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": m,
        }
    }


# host -> (the refusal for message m, the exit code): written out here, independently of guard
EXPECTED = {
    "claude-code": (lambda m: {"decision": "block", "reason": m, **_pre_deny(m)}, 2),
    "codex": (_pre_deny, 0),
    "gemini": (lambda m: {"decision": "deny", "reason": m}, 2),
    "cursor": (lambda m: {"permission": "deny", "continue": False, "user_message": m, "agent_message": m}, 0),
    "openclaw": (lambda m: {"block": True, "blockReason": m}, 0),
}


def _hook(tmp_path: Path, host: str, data: bytes) -> subprocess.CompletedProcess[bytes]:
    env = guard_cli_env()
    env.update(HOME=str(tmp_path / "home"), GUARD_HOME=str(tmp_path / "gh"), GUARD_HOOKS_DAEMON="off")
    (tmp_path / "home").mkdir()
    return subprocess.run(
        [*GUARD_CMD, "hook", host, "--workspace", str(tmp_path / "ws")],
        input=data,
        capture_output=True,
        env=env,
        timeout=60,
    )


@pytest.mark.parametrize("host", sorted(EXPECTED))
def test_unreadable_input_and_the_last_resort_refuse_in_the_hosts_one_shape(tmp_path: Path, host: str) -> None:
    """The hook's refusal of unreadable input, and the last resort for the same message, are the host's shape."""
    from guard.cli.hook import _last_resort

    shape, code = EXPECTED[host]
    proc = _hook(tmp_path, host, b"{not json")
    message = proc.stderr.decode().strip()
    assert message.startswith("guard:") and "refused" in message
    assert (json.loads(proc.stdout), proc.returncode) == (shape(message), code)
    out, last_code, err = _last_resort(host, message)
    assert (json.loads(out), last_code, err) == (shape(message), code, message + "\n")


def test_aliases_and_unknown_hosts_in_the_last_resort() -> None:
    """An alias refuses in its host's shape; a host guard cannot name gets Claude Code's, exit 2."""
    from guard.cli.hook import _last_resort

    out, code, _ = _last_resort("gemini-cli", "guard: x")
    assert (json.loads(out), code) == ({"decision": "deny", "reason": "guard: x"}, 2)
    out, code, _ = _last_resort("windsurf", "guard: x")
    assert (json.loads(out), code) == (EXPECTED["claude-code"][0]("guard: x"), 2)
