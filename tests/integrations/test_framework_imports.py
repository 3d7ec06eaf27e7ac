"""The framework adapters are leaves: guard's core and its hook process never load an agent framework."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, guard_cli_env

FRAMEWORKS = ("langchain", "langchain_core", "langgraph", "agents", "openai", "guard.integrations.frameworks")


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


# -- the runnable examples in docs/integrations.md ----------------------------------------------
def _example(name: str) -> str:
    text = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(# example: [^\n]+\n.*?)```", text, re.S)
    found = [b for b in blocks if b.startswith(f"# example: {name}\n")]
    assert len(found) == 1, f"docs/integrations.md has {len(found)} examples named {name}"
    return found[0]


@pytest.mark.parametrize(
    ("name", "module"), [("langchain", "langchain.agents"), ("openai-agents", "agents")], ids=["langchain", "openai"]
)
def test_the_docs_example_runs_as_written(tmp_path: Path, name: str, module: str) -> None:
    """Each framework's example runs offline, in a fresh HOME and GUARD_HOME, and shows all three answers."""
    pytest.importorskip(module)
    (tmp_path / "home").mkdir()
    script = tmp_path / "example.py"
    script.write_text(_example(name), encoding="utf-8")
    env = guard_cli_env() | {"HOME": str(tmp_path / "home"), "GUARD_HOME": str(tmp_path / "ws")}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "guard asks" in out.stdout and "publish_note" in out.stdout
    assert "not run in this example) ls" in out.stdout  # allowed
    assert "this shell call is blocked" in out.stdout  # blocked, as data
    assert "published" in out.stdout  # asked, approved, run
    decisions = [
        json.loads(line)["decision"] for line in (tmp_path / "ws" / ".fusion-decisions.jsonl").read_text().splitlines()
    ]
    assert sorted(decisions) == ["auto_allow", "block", "request_confirm"]
