"""Helpers for the integration tests (imported as ``hookhelpers``): the hosts' recorded payloads, hook runs, workspace files.

``protocols/`` holds copies of the hosts' documented sample payloads (``../shared/protocols``
in the project's working tree; ``test_samples.py`` checks the copies stay identical).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import attrs

from tests.conftest import GUARD_CMD, ROOT, guard_cli_env

PROTOCOLS = Path(__file__).parent / "protocols"
SHARED_PROTOCOLS = ROOT.parent / "shared" / "protocols"
HOST_DIRS = {
    "claude-code": "claude_code",
    "codex": "codex",
    "gemini": "gemini_cli",
    "cursor": "cursor",
    "openclaw": "openclaw",
}

# Every call that is neither safe read-only nor critical is asked about: outcomes that do not
# depend on which static classifier is installed. ``ls`` is allowed, ``rm -rf /`` blocked.
# Safe reads score 90 on a fresh install, everything else at most 80: 88 asks about all but
# reads (a threshold the person sets is honoured; the static floor no longer lifts above it).
ASK_MOST = "[thresholds]\nauto_allow = 88\nrequest_confirm = 1\n"
ALLOW, ASK, BLOCK = "ls -la", "rm -rf build", "rm -rf /"


def sample(host: str, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((PROTOCOLS / HOST_DIRS[host] / name).read_text(encoding="utf-8"))
    return data


def with_command(payload: dict[str, Any], command: str) -> dict[str, Any]:
    """A copy of a sample with its shell command replaced (wherever the host keeps it)."""
    out = json.loads(json.dumps(payload))
    for holder in (out.get("tool_input"), out.get("event", {}).get("params"), out):
        if isinstance(holder, dict) and "command" in holder:
            holder["command"] = command
            return out
    raise KeyError("no command in this sample")


def prepare(workspace: Path, toml: str = ASK_MOST) -> Path:
    workspace.mkdir(mode=0o700, parents=True, exist_ok=True)
    (workspace / "guard.toml").write_text(toml, encoding="utf-8")
    return workspace


@attrs.frozen
class Hooked:
    stdout: str
    stderr: str
    code: int

    @property
    def json(self) -> Any:
        return json.loads(self.stdout) if self.stdout.strip() else None


def hook_env(**extra: str) -> dict[str, str]:
    env = guard_cli_env()
    env["GUARD_HOOKS_DAEMON"] = "off"
    env.pop("CLAUDE_CODE_CHILD_SESSION", None)
    env.update(extra)
    return env


def run_hook(host: str, payload: Any, workspace: Path, *flags: str, env: dict[str, str] | None = None) -> Hooked:
    """``guard hook HOST --workspace WS`` as a subprocess; payload as JSON, or raw str/bytes."""
    if isinstance(payload, (dict, list)):
        data = json.dumps(payload).encode()
    elif isinstance(payload, str):
        data = payload.encode()
    else:
        data = payload
    proc = subprocess.run(
        [*GUARD_CMD, "hook", host, "--workspace", str(workspace), *flags],
        input=data,
        capture_output=True,
        env=env or hook_env(),
        timeout=60,
    )
    return Hooked(proc.stdout.decode(), proc.stderr.decode(), proc.returncode)


def lines(workspace: Path, name: str) -> list[dict[str, Any]]:
    path = workspace / name
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def decisions(workspace: Path) -> list[dict[str, Any]]:
    return lines(workspace, ".fusion-decisions.jsonl")


def interactions(workspace: Path) -> list[dict[str, Any]]:
    return lines(workspace, ".user-interactions.jsonl")


def executions(workspace: Path) -> list[dict[str, Any]]:
    return lines(workspace, ".command-execution.jsonl")


def pending(workspace: Path) -> list[dict[str, Any]]:
    path = workspace / ".guard-pending.json"
    return json.loads(path.read_text())["entries"] if path.exists() else []


def node_available() -> bool:
    try:
        return subprocess.run(["node", "--version"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def file_mode(path: Path) -> int:
    return os.stat(path).st_mode & 0o777
