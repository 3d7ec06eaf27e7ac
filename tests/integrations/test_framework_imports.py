"""The framework adapters are leaves: guard's core and its hook process never load an agent framework."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import guard_cli_env

FRAMEWORKS = ("langchain", "langchain_core", "langgraph", "agents", "openai", "integrations.frameworks")


def _loaded(code: str, env: dict[str, str]) -> list[str]:
    probe = f"{code}\nimport sys, json\nprint(json.dumps([m for m in {FRAMEWORKS!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    return list(json.loads(out.stdout.splitlines()[-1]))


def test_import_guard_loads_no_agent_framework() -> None:
    assert _loaded("import guard, guard.core, integrations", guard_cli_env()) == []


def test_a_hook_call_loads_no_agent_framework(tmp_path: Path) -> None:
    """`guard hook claude-code` as the host runs it, in-process so `sys.modules` can be read after."""
    env = guard_cli_env() | {"HOME": str(tmp_path / "home"), "GUARD_HOME": str(tmp_path / "ws")}
    (tmp_path / "home").mkdir()
    payload = {"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash", "tool_input": {"command": "ls"}}
    code = (
        "import io, json, sys\n"
        f"sys.stdin = io.TextIOWrapper(io.BytesIO({json.dumps(payload).encode()!r}))\n"
        "from guard.cli import main\n"
        "try:\n    main(['hook', 'claude-code'])\nexcept SystemExit:\n    pass\n"
    )
    assert _loaded(code, env) == []
