"""guard's protected paths are followed on disk when the decision is made, not only read as text.

Every case builds a fake home and project under ``tmp_path``: sentinel host settings and a
workspace, real symbolic and hard links onto them, then drives the decision through the CLI
(``guard hook claude-code`` with a PreToolUse payload on stdin, ``guard check``) in a subprocess
whose HOME and GUARD_HOME are the fake ones. Nothing is ever executed: commands are data, and the
links are made here with ``os.symlink``/``os.link`` on sentinel files. Each hit has a near-miss
beside it (a link to an ordinary file, a hard link between two ordinary files, ``ln -s`` to a
project file), which stays allowed.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from guard import Guard
from tests.conftest import GUARD_CMD, guard_check, guard_cli_env

SENTINEL = '{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "guard hook"}]}]}}\n'
ALLOW, ASK, BLOCK = "auto_allow", "request_confirm", "block"


@attrs.frozen
class World:
    home: Path
    ws: Path
    proj: Path

    @property
    def settings(self) -> Path:
        return self.home / ".claude" / "settings.json"

    def env(self) -> dict[str, str]:
        env = guard_cli_env()
        env |= {"HOME": str(self.home), "GUARD_HOME": str(self.ws), "GUARD_HOOKS_DAEMON": "off"}
        env.pop("CLAUDE_CODE_CHILD_SESSION", None)
        return env


@pytest.fixture
def world(tmp_path: Path) -> World:
    home, proj = tmp_path / "home", tmp_path / "proj"
    ws = home / ".guard"
    for d in (home / ".claude" / "hooks", home / ".codex", ws, proj / "src", proj / "docs"):
        d.mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(SENTINEL)
    (home / ".codex" / "hooks.json").write_text(SENTINEL)
    (ws / ".user-interactions.jsonl").write_text("")
    (ws / ".fusion-decisions.jsonl").write_text("")
    (proj / "src" / "app.py").write_text("print('hi')\n")
    (proj / "README.md").write_text("# project\n")
    return World(home, ws, proj)


def check(world: World, tool: str, params: dict[str, Any], cwd: Path | None = None) -> tuple[str, set[str]]:
    """``guard check TOOL PARAMS --json`` in the fake home: (decision, rule ids)."""
    cwd = cwd or world.proj
    record = guard_check(tool, params, env=world.env(), cwd=cwd)
    return record["decision"], {r["id"] for r in record["reasons"]}


def hook_write(world: World, file_path: str, tool: str = "Write", **tool_input: Any) -> str:
    """A Claude Code PreToolUse event for a file tool through ``guard hook claude-code``: its answer."""
    payload = {
        "session_id": "s-protected",
        "transcript_path": str(world.home / ".claude" / "projects" / "p" / "s.jsonl"),
        "cwd": str(world.proj),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": {"file_path": file_path, "content": "{}\n", **tool_input},
        "tool_use_id": "toolu_protected",
    }
    proc = subprocess.run(
        [*GUARD_CMD, "hook", "claude-code", "--workspace", str(world.ws)],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=world.env(),
        cwd=world.proj,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    return str(json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"])


def bash(command: str) -> dict[str, str]:
    return {"command": command}


# -- the links the cases stand on (made on disk, onto sentinels)


def link_settings(w: World) -> None:
    """``cfg.json`` -> ``../home/.claude/settings.json`` (relative)."""
    os.symlink(os.path.relpath(w.settings, w.proj), w.proj / "cfg.json")


def link_workspace(w: World) -> None:
    os.symlink(w.ws, w.proj / "w")


def link_hooks_dir(w: World) -> None:
    os.symlink(w.home / ".claude" / "hooks", w.proj / "lnk")


def chain_of_links(w: World) -> None:
    """``a`` -> ``docs/b`` -> ``../c`` -> the settings: three hops, relative and absolute."""
    os.symlink(w.settings, w.proj / "c")
    os.symlink("../c", w.proj / "docs" / "b")
    os.symlink("docs/b", w.proj / "a")


def link_through_parent(w: World) -> None:
    """A folder link in the middle of the path: ``h/.claude/settings.json`` with ``h`` -> the home."""
    os.symlink(w.home, w.proj / "h")


def hard_link_history(w: World) -> None:
    os.link(w.ws / ".user-interactions.jsonl", w.proj / "notes.jsonl")


def hard_link_settings(w: World) -> None:
    os.link(w.settings, w.proj / "cfg.json")


def link_via_proc(w: World) -> None:
    """A link (as a cloned repository may hold) whose target goes through ``/proc/self/root``."""
    os.symlink(f"/proc/self/root{w.settings}", w.proj / "cfg.json")


def dotfiles(w: World) -> None:
    """``~/.claude`` itself a link into a dotfiles folder in the project, as dotfile managers make."""
    real = w.proj / "dotfiles" / "claude"
    real.mkdir(parents=True)
    os.replace(w.settings, real / "settings.json")
    os.rmdir(w.home / ".claude" / "hooks")
    os.rmdir(w.home / ".claude")
    os.symlink(real, w.home / ".claude")


def link_ordinary(w: World) -> None:
    os.symlink("src/app.py", w.proj / "app.py")


def hard_link_ordinary(w: World) -> None:
    os.link(w.proj / "README.md", w.proj / "README.copy.md")


def nothing(w: World) -> None:
    pass


HOOK_CASES: list[tuple[str, Callable[[World], None], Callable[[World], str], str]] = [
    ("symlink to the host settings", link_settings, lambda w: "cfg.json", "deny"),
    ("the same, by absolute path", link_settings, lambda w: str(w.proj / "cfg.json"), "deny"),
    ("a chain of three links", chain_of_links, lambda w: "a", "deny"),
    ("a folder link mid-path", link_through_parent, lambda w: "h/.claude/settings.json", "deny"),
    ("'..' out of a linked folder", link_hooks_dir, lambda w: "lnk/../settings.json", "deny"),
    ("a file in a linked workspace", link_workspace, lambda w: "w/.fusion-decisions.jsonl", "deny"),
    ("a new file in a linked workspace", link_workspace, lambda w: "w/approvals.json", "deny"),
    ("a hard link to guard's history", hard_link_history, lambda w: "notes.jsonl", "deny"),
    ("a hard link to the host settings", hard_link_settings, lambda w: "cfg.json", "deny"),
    ("/proc/self/root in front", link_settings, lambda w: f"/proc/self/root{w.proj}/cfg.json", "deny"),
    ("/proc/self/cwd in front", link_settings, lambda w: "/proc/self/cwd/cfg.json", "deny"),
    ("a link through /proc/self/root", link_via_proc, lambda w: "cfg.json", "deny"),
    (
        "the settings' real file, under ~/.claude linked away",
        dotfiles,
        lambda w: "dotfiles/claude/settings.json",
        "deny",
    ),
    ("near-miss: '..' out of the linked-away folder", dotfiles, lambda w: "dotfiles/claude/../notes.md", "allow"),
    ("near-miss: a link to a project file", link_ordinary, lambda w: "app.py", "allow"),
    ("near-miss: a hard link between project files", hard_link_ordinary, lambda w: "README.copy.md", "allow"),
    ("near-miss: '..' that stays in the project", link_ordinary, lambda w: "src/../notes.md", "allow"),
    ("near-miss: a new project file", nothing, lambda w: "docs/new.md", "allow"),
]


@pytest.mark.parametrize(("setup", "path", "answer"), [c[1:] for c in HOOK_CASES], ids=[c[0] for c in HOOK_CASES])
def test_claude_code_write_through_links(world: World, setup: Any, path: Any, answer: str) -> None:
    """A Write tool call is judged where the file really is, through ``guard hook claude-code``."""
    setup(world)
    assert hook_write(world, path(world)) == answer
    assert world.settings.read_text() == SENTINEL  # guard only decided (read through the link, if any)


SHELL_CASES = [
    ("echo '{}' > cfg.json", BLOCK),
    ("echo x | tee -a cfg.json", BLOCK),
    ("cp /tmp/evil.json cfg.json", BLOCK),
    ("mv other.json cfg.json", BLOCK),
    ("sed -i 's/guard/true/' cfg.json", BLOCK),
    ("truncate -s 0 cfg.json", BLOCK),
    ("dd if=/dev/zero of=cfg.json", BLOCK),
    ("install -m 644 other.json cfg.json", BLOCK),
    ("rsync other.json cfg.json", BLOCK),
    ("chmod 000 cfg.json", BLOCK),
    ("echo '{}' > ./docs/../cfg.json", BLOCK),
    ("cd docs && echo '{}' > ../cfg.json", BLOCK),
    ("echo '{}' > /proc/self/cwd/cfg.json", BLOCK),
    ("rm -rf w/", BLOCK),
    ("rm -rf w/*", BLOCK),
    ("echo forged >> w/.user-interactions.jsonl", BLOCK),
    ("cd w && echo '[]' > .fusion-decisions.jsonl", BLOCK),
    ("rm cfg.json", ALLOW),  # removes the link, not the settings
    ("mv cfg.json cfg.old", ALLOW),  # moves the link
    ("cat cfg.json", ALLOW),  # reads stay as they were
    ("echo x > src/app.py", ALLOW),
    ("echo x > app.py", ALLOW),  # a link to a project file
]


def shell_links(w: World) -> None:
    link_settings(w)
    link_workspace(w)
    link_ordinary(w)


@pytest.mark.parametrize(("command", "expected"), SHELL_CASES, ids=[c for c, _ in SHELL_CASES])
def test_shell_writes_through_links(world: World, command: str, expected: str) -> None:
    """Redirections, tee, cp, mv, sed -i, truncate, dd, rm … land where the links lead (``guard check``)."""
    shell_links(world)
    decision, rules = check(world, "bash", bash(command))
    assert decision == expected, rules
    if expected == BLOCK:
        assert "G415" in rules


@pytest.mark.parametrize("proc", ["/proc/self/root", "/proc/thread-self/root", "/proc/1/root"])
def test_proc_root_spellings(world: World, proc: str) -> None:
    link_settings(world)
    assert check(world, "bash", bash(f"echo '{{}}' > {proc}{world.proj}/cfg.json"))[0] == BLOCK
    assert check(world, "bash", bash(f"echo x > {proc}{world.proj}/README.md"))[0] == ALLOW


FILE_TOOLS = [
    ("MultiEdit", {"file_path": "cfg.json", "edits": [{"old_string": "guard", "new_string": "true"}]}),
    ("NotebookEdit", {"notebook_path": "cfg.json", "new_source": "x"}),
    ("Edit", {"file_path": "cfg.json", "old_string": "guard", "new_string": "true"}),
    ("apply_patch", {"input": "*** Begin Patch\n*** Update File: cfg.json\n@@\n-a\n+b\n*** End Patch\n"}),
    ("write_file", {"file_path": "cfg.json", "content": "{}"}),
    ("replace", {"file_path": "cfg.json", "old_string": "guard", "new_string": "true"}),
    ("mcp__filesystem__write_file", {"path": "cfg.json", "content": "{}"}),
    ("mcp__filesystem__edit_file", {"path": "cfg.json", "edits": [{"oldText": "a", "newText": "b"}]}),
    ("mcp__filesystem__move_file", {"source": "README.md", "destination": "cfg.json"}),
]


@pytest.mark.parametrize(("tool", "params"), FILE_TOOLS, ids=[t for t, _ in FILE_TOOLS])
def test_every_file_tool_follows_links(world: World, tool: str, params: dict[str, Any]) -> None:
    link_settings(world)
    decision, rules = check(world, tool, params)
    assert (decision, "G415" in rules) == (BLOCK, True)


def test_file_tool_near_miss_through_an_ordinary_link(world: World) -> None:
    link_ordinary(world)
    assert check(world, "MultiEdit", {"file_path": "app.py", "edits": [{"old_string": "a", "new_string": "b"}]})[0] == (
        ALLOW
    )


LINK_CASES = [
    ("ln -s ~/.claude/settings.json cfg2.json", BLOCK),
    ("ln ~/.guard/.user-interactions.jsonl x", BLOCK),
    ("ln -sf ~/.guard ./w2", BLOCK),
    ("cp -s ~/.codex/hooks.json h.json", BLOCK),
    ("ln -s ../home/.claude/settings.json docs/../cfg2.json", BLOCK),
    ("ln -s cfg.json again.json", BLOCK),  # onto an existing link onto the settings: found on disk
    ("ln notes.jsonl more.jsonl", BLOCK),  # a hard link of a hard link of guard's history
    ('python3 -c \'import os; os.symlink(os.path.expanduser("~/.guard"), "w2")\'', BLOCK),
    ("sudo mount --bind ~/.guard /mnt/w", BLOCK),
    ("ln -s src/app.py app2.py", ALLOW),
    ("ln README.md README.hard.md", ALLOW),
    ("ln -s app.py app3.py", ALLOW),  # a link to a link to a project file
]


@pytest.mark.parametrize(("command", "expected"), LINK_CASES, ids=[c for c, _ in LINK_CASES])
def test_making_links_onto_protected_files(world: World, command: str, expected: str) -> None:
    """A link onto guard's files or a host's settings is itself a protected write (G416)."""
    link_settings(world)
    link_ordinary(world)
    hard_link_history(world)
    decision, rules = check(world, "bash", bash(command))
    assert decision == expected, rules
    if expected == BLOCK:
        assert "G416" in rules


def test_a_link_loop_asks_never_allows(world: World) -> None:
    os.symlink("loop2", world.proj / "loop1")
    os.symlink("loop1", world.proj / "loop2")
    decision, rules = check(world, "bash", bash("echo x > loop1/out.txt"))
    assert decision == ASK and "G417" in rules
    assert hook_write(world, "loop1") == "ask"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may look into any folder")
def test_a_folder_guard_may_not_look_into_asks(world: World) -> None:
    closed = world.proj / "closed"
    closed.mkdir()
    closed.chmod(0)
    try:
        decision, rules = check(world, "bash", bash("echo x > closed/out.txt"))
    finally:
        closed.chmod(0o700)
    assert decision == ASK and "G417" in rules


def test_reads_through_links_are_unchanged(world: World) -> None:
    link_settings(world)
    link_workspace(world)
    assert check(world, "Read", {"file_path": "cfg.json"})[0] == ALLOW
    assert check(world, "bash", bash("cat w/.fusion-decisions.jsonl"))[0] == ALLOW


def test_a_link_made_between_two_decisions_is_seen(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same call, decided twice in one process: the disk is looked at again, not the cache."""
    monkeypatch.setenv("HOME", str(world.home))
    (world.proj / "cfg.json").write_text("{}\n")
    g = Guard(world.ws, {"system.health": 90, "memory.backend": "history"})
    try:
        params = {"file_path": "cfg.json", "content": "{}"}
        first = g.decide("Write", params, cwd=str(world.proj), save=False)
        (world.proj / "cfg.json").unlink()
        link_settings(world)
        second = g.decide("Write", params, cwd=str(world.proj), save=False)
    finally:
        g.close()
    assert (first.decision, second.decision) == (ALLOW, BLOCK)


def test_openclaw_settings_and_plugin_are_protected(world: World) -> None:
    plugin = world.home / ".openclaw" / "extensions" / "guard"
    plugin.mkdir(parents=True)
    (plugin / "index.mjs").write_text("export default {}\n")
    (world.home / ".openclaw" / "openclaw.json").write_text("{}\n")
    os.symlink(plugin / "index.mjs", world.proj / "plugin.mjs")
    assert check(world, "bash", bash("echo '{}' > ~/.openclaw/openclaw.json"))[0] == BLOCK
    assert check(world, "bash", bash("rm -rf ~/.openclaw/extensions/guard"))[0] == BLOCK
    assert check(world, "Write", {"file_path": "plugin.mjs", "content": ""})[0] == BLOCK
    assert check(world, "bash", bash("cat ~/.openclaw/openclaw.json"))[0] == ALLOW


def test_a_replaced_settings_file_is_known_by_its_new_inode(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The inode table kept between decisions is rebuilt when the settings file is replaced."""
    monkeypatch.setenv("HOME", str(world.home))
    g = Guard(world.ws, {"system.health": 90, "memory.backend": "history"})
    try:
        params = {"file_path": "cfg.json", "content": "{}"}
        (world.proj / "cfg.json").write_text("{}\n")
        first = g.decide("Write", params, cwd=str(world.proj), save=False)  # builds the table
        fresh = world.home / ".claude" / "settings.new"
        fresh.write_text(SENTINEL)
        os.replace(fresh, world.settings)  # what an editor or an installer does: a new inode
        (world.proj / "cfg.json").unlink()
        hard_link_settings(world)
        second = g.decide("Write", params, cwd=str(world.proj), save=False)
    finally:
        g.close()
    assert (first.decision, second.decision) == (ALLOW, BLOCK)
