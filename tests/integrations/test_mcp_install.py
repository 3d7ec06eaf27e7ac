"""``guard install HOST --mcp``: a host's configured MCP servers behind ``guard mcp-proxy``, reversibly.

Every run has its own HOME (and XDG_CONFIG_HOME, GUARD_HOME) under the test's folder. The one
server that is really started is a FastMCP server whose tool only echoes its text.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hookhelpers import hook_env

from guard.integrations.mcp.install import proxied
from tests.conftest import GUARD_CMD, ROOT

SERVERS = {
    "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"TOKEN": "x"}},
    "bare": {"command": "my-server"},
    "remote": {"type": "http", "url": "https://example.invalid/mcp"},
}


class Home:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.project = root / "project"
        self.home.mkdir()
        self.project.mkdir()
        self.env = hook_env(
            HOME=str(self.home), XDG_CONFIG_HOME=str(self.home / ".config"), GUARD_HOME=str(root / "ws")
        )

    def guard(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*GUARD_CMD, *args], capture_output=True, text=True, env=self.env, cwd=self.project, timeout=120
        )

    def write(self, path: Path, doc: Any) -> str:
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        path.write_text(text, encoding="utf-8")
        return text


@pytest.fixture
def places(tmp_path: Path) -> Home:
    return Home(tmp_path)


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def desktop_config(h: Home) -> Path:
    return h.home / ".config" / "Claude" / "claude_desktop_config.json"


# -- wrapping and unwrapping --------------------------------------------------------------------
def test_claude_desktop_servers_are_wrapped_and_restored_exactly(places: Home) -> None:
    path = desktop_config(places)
    before = places.write(path, {"globalShortcut": "Ctrl+Space", "mcpServers": SERVERS, "zeta": ["ü"]})
    done = places.guard("install", "claude-desktop")
    assert done.returncode == 0, done.stderr
    assert "2 MCP server(s)" in done.stdout and "left as it is: remote (not a stdio server" in done.stdout
    doc = load(path)
    github = doc["mcpServers"]["github"]
    assert github["args"][-6:] == ["--name", "github", "--", "npx", "-y", "@modelcontextprotocol/server-github"]
    assert github["command"] == sys.executable and "mcp-proxy" in github["args"]  # this guard, by absolute path
    assert github["env"] == {"TOKEN": "x"}  # the rest of the entry stays
    assert proxied(github) == ["npx", "-y", "@modelcontextprotocol/server-github"]
    assert proxied(doc["mcpServers"]["bare"]) == ["my-server"]
    assert doc["mcpServers"]["remote"] == SERVERS["remote"]
    assert doc["globalShortcut"] == "Ctrl+Space" and doc["zeta"] == ["ü"]

    again = places.guard("install", "claude-desktop")
    assert "no MCP server to wrap" in again.stdout and load(path) == doc  # twice changes nothing

    undone = places.guard("uninstall", "claude-desktop")
    assert undone.returncode == 0 and "2 MCP server(s)" in undone.stdout
    assert path.read_text(encoding="utf-8") == before


def test_claude_code_user_and_project_scoped_servers_are_wrapped(places: Home) -> None:
    path = places.home / ".claude.json"
    doc = {
        "numStartups": 3,
        "mcpServers": {"notes": {"type": "stdio", "command": "notes-mcp", "args": []}},
        "projects": {"/work/app": {"allowedTools": [], "mcpServers": {"db": {"command": "db-mcp", "args": ["--ro"]}}}},
    }
    places.write(path, doc)
    path.chmod(0o600)
    done = places.guard("install", "claude-code", "--mcp")
    assert done.returncode == 0, done.stderr
    assert "notes" in done.stdout and "projects[/work/app].db" in done.stdout
    wrapped = load(path)
    assert proxied(wrapped["mcpServers"]["notes"]) == ["notes-mcp"]
    assert wrapped["mcpServers"]["notes"]["type"] == "stdio"
    assert proxied(wrapped["projects"]["/work/app"]["mcpServers"]["db"]) == ["db-mcp", "--ro"]
    assert wrapped["numStartups"] == 3
    assert path.stat().st_mode & 0o777 == 0o600  # a private file stays private
    places.guard("uninstall", "claude-code", "--mcp")
    restored = load(path)
    assert restored["projects"] == doc["projects"] and restored["mcpServers"]["notes"]["command"] == "notes-mcp"


def test_project_files_and_cursor(places: Home) -> None:
    project_mcp = places.project / ".mcp.json"
    cursor_user = places.home / ".cursor" / "mcp.json"
    places.write(project_mcp, {"mcpServers": {"fs": {"command": "fs-mcp"}}})
    places.write(cursor_user, {"mcpServers": {"web": {"command": "web-mcp", "args": ["--port", "0"]}}})
    assert places.guard("install", "claude-code", "--mcp", "--project").returncode == 0
    assert places.guard("install", "cursor", "--mcp", "--workspace", str(places.root / "ws2")).returncode == 0
    assert proxied(load(project_mcp)["mcpServers"]["fs"]) == ["fs-mcp"]
    web = load(cursor_user)["mcpServers"]["web"]
    assert "--workspace" in web["args"] and proxied(web) == ["web-mcp", "--port", "0"]
    assert (places.home / ".claude.json").exists() is False  # the user file was not touched


def test_dry_run_writes_nothing(places: Home) -> None:
    path = desktop_config(places)
    before = places.write(path, {"mcpServers": SERVERS})
    done = places.guard("install", "claude-desktop", "--dry-run")
    assert done.returncode == 0 and proxied(json.loads(done.stdout)["mcpServers"]["github"]) is not None
    assert path.read_text(encoding="utf-8") == before


@pytest.mark.parametrize("text", ["{not json", '{"mcpServers": []}'])
def test_a_file_guard_cannot_read_is_left_untouched(places: Home, text: str) -> None:
    path = desktop_config(places)
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    done = places.guard("install", "claude-desktop")
    assert done.returncode != 0 and "left untouched" in done.stderr
    assert path.read_text(encoding="utf-8") == text


def test_hosts_without_mcp_configuration_are_refused(places: Home) -> None:
    done = places.guard("install", "codex", "--mcp")
    assert done.returncode != 0 and "claude-desktop, claude-code or cursor" in done.stderr


def test_wrapping_beside_guards_hooks_warns_of_judging_twice(places: Home) -> None:
    assert places.guard("install", "claude-code", "--command", "guard").returncode == 0
    places.write(places.home / ".claude.json", {"mcpServers": {"notes": {"command": "notes-mcp"}}})
    done = places.guard("install", "claude-code", "--mcp")
    assert "judged twice" in done.stdout


# -- the wrapped entry really runs the server behind guard ---------------------------------------
SERVER = """
from mcp.server.fastmcp import FastMCP

server = FastMCP("echo")


@server.tool()
def echo(text: str) -> str:
    return text


server.run()
"""


def test_a_wrapped_entry_launches_the_server_through_the_proxy(places: Home) -> None:
    pytest.importorskip("mcp")
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    script = places.root / "echo_server.py"
    script.write_text(SERVER, encoding="utf-8")
    path = desktop_config(places)
    places.write(path, {"mcpServers": {"echo": {"command": sys.executable, "args": [str(script)]}}})
    assert places.guard("install", "claude-desktop").returncode == 0
    entry = load(path)["mcpServers"]["echo"]
    env = places.env | {"PYTHONPATH": str(ROOT)}

    async def scenario() -> str:
        params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env, cwd=places.project)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("echo", {"text": "hi"})
            return str(result.content[0].text)  # type: ignore[union-attr]

    text = asyncio.run(asyncio.wait_for(scenario(), 60))
    # Judged on the way: an unknown tool is asked about, and this client cannot answer elicitations.
    assert "mcp__echo__echo call needs the user's confirmation" in text and "guard approve" in text
    decisions = [json.loads(line) for line in (places.root / "ws" / ".fusion-decisions.jsonl").read_text().splitlines()]
    assert [d["tool"] for d in decisions] == ["mcp__echo__echo"]
