"""A hook process without the daemon starts lean (issue 17 item 2) and answers the same.

``guard hook`` keeps the code attrs compiles for guard's records in ``<workspace>/.guard-attrs-code``
(``guard.cli.attrscode``). The cache may only save time: a missing, stale, corrupt or foreign file
is never used, the next hook rewrites it, and what a cached snippet makes (``__init__``,
``__hash__`` …) is what attrs would have compiled, in every process (string hashes are salted per
process). The hook ends its process without the interpreter's teardown, so its atexit work must
still run and its answer still be printed. Fake HOME and GUARD_HOME; the commands are data.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import attrs
import pytest

from guard.cli import attrscode
from guard.workspace import DECISIONS
from tests.conftest import GUARD_CMD, ROOT, guard_cli_env

CACHE = attrscode.NAME


def _event(command: str, n: int = 0) -> bytes:
    return json.dumps(
        {
            "session_id": "startup",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_use_id": f"toolu_{n}",
            "cwd": "/tmp",
        }
    ).encode()


def _hook(tmp_path: Path, ws: Path, command: str, n: int = 0, seed: str = "0") -> Any:
    env = guard_cli_env() | {"HOME": str(tmp_path / "home"), "GUARD_HOME": str(ws), "PYTHONHASHSEED": seed}
    proc = subprocess.run(
        [*GUARD_CMD, "hook", "claude-code", "--no-daemon"],
        input=_event(command, n),
        capture_output=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode in (0, 2), proc.stderr
    return json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"]


def _lines(ws: Path) -> list[dict[str, Any]]:
    """The decision log without what differs between any two runs (times, durations)."""
    out = []
    for line in (ws / DECISIONS).read_text().splitlines():
        record = json.loads(line)
        for key in ("timestamp", "ts", "time", "elapsed_us", "layers"):
            record.pop(key, None)
        out.append(record)
    return out


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir(mode=0o700)
    return path


def test_the_first_hook_writes_the_cache_and_the_next_ones_use_it_unchanged(tmp_path: Path, ws: Path) -> None:
    assert _hook(tmp_path, ws, "ls -la", 1, seed="1") == "allow"
    cache = ws / CACHE
    assert cache.exists() and cache.stat().st_mode & 0o777 == 0o600
    first = cache.read_bytes()
    # another process, another string-hash salt: the same answers, and nothing new to compile
    assert _hook(tmp_path, ws, "rm -rf /", 2, seed="2") == "deny"
    assert _hook(tmp_path, ws, "git status", 3, seed="3") == "allow"
    assert cache.read_bytes() == first


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda raw: raw[: len(raw) // 2], id="truncated"),
        pytest.param(lambda raw: raw[:-40] + bytes(b ^ 0xFF for b in raw[-40:]), id="bytes-flipped"),
        pytest.param(lambda raw: raw.replace(b" py", b" py0", 1), id="another-python"),
        pytest.param(lambda raw: b"not a cache at all", id="garbage"),
        pytest.param(lambda raw: b"", id="empty"),
    ],
)
def test_a_damaged_or_foreign_cache_is_ignored_and_rewritten(tmp_path: Path, ws: Path, damage: Any) -> None:
    plain = tmp_path / "plain"
    plain.mkdir(mode=0o700)
    assert (_hook(tmp_path, plain, "ls -la", 1), _hook(tmp_path, plain, "rm -rf /", 2)) == ("allow", "deny")
    good = (plain / CACHE).read_bytes()
    assert _hook(tmp_path, ws, "ls -la", 1) == "allow"
    (ws / CACHE).write_bytes(damage(good))
    assert _hook(tmp_path, ws, "rm -rf /", 2) == "deny"
    assert _lines(ws) == _lines(plain)  # the same decisions, recorded the same
    assert attrscode.read(str(ws / CACHE), good.split(b" ")[1])  # a whole, readable cache again


def _fresh() -> attrscode.CodeCache:
    """A cache as installed, without putting it into this process's attrs."""
    from attr import _make

    cache = attrscode.CodeCache("/nonexistent/x")
    cache.flags = attrscode._future_flags(_make._compile_and_eval)
    cache.installed = True
    return cache


def test_an_entry_for_other_source_is_never_used() -> None:
    """A snippet is looked up by its exact source: what attrs writes today never meets old code."""
    cache = _fresh()
    filename = "<attrs generated methods tests.Rec>"
    planted = compile("def __init__(self): self.x = 'stale'", filename, "exec")
    cache.codes[(filename, "def __init__(self): self.x = 'old source'")] = (planted, None)
    globs: dict[str, Any] = {}
    cache.compile_and_eval("def __init__(self): self.x = 'today'", globs, None, filename)

    class Rec:
        __init__ = globs["__init__"]

    assert Rec().x == "today"
    assert cache.added == 1


def test_a_cached_hash_is_the_hash_attrs_makes_in_this_process() -> None:
    """The per-process salt attrs writes into ``__hash__`` is swapped for this process's value."""
    from attr import _make

    seen: list[tuple[str, dict[str, Any], str]] = []
    original = _make._compile_and_eval

    def spy(script: str, globs: Any, locs: Any = None, filename: str = "") -> None:
        seen.append((script, dict(globs or {}), filename))
        original(script, globs, locs, filename)

    _make._compile_and_eval = spy
    try:

        @attrs.frozen
        class Rec:
            a: int
            b: str = "x"

    finally:
        _make._compile_and_eval = original
    script, globs, filename = next((s, g, f) for s, g, f in seen if "__hash__" in s)
    salt = attrscode.salt_of(filename)
    assert salt is not None and f" {salt},\n" in script
    other = salt ^ 0x5A5A5A5A  # as written by a process with another hash salt
    old_script = script.replace(f" {salt},\n", f" {other},\n")
    key, _ = attrscode.key_of(filename, script)
    cache = _fresh()
    cache.codes[key] = (compile(old_script, filename, "exec", dont_inherit=True), other)
    locs: dict[str, Any] = {}
    made: dict[str, Any] = {}
    exec(compile(script, filename, "exec"), dict(globs), made)  # what attrs compiles here
    cache.compile_and_eval(script, dict(globs), locs, filename)
    assert cache.added == 0  # answered from the cache
    rec = Rec(1, "y")
    assert locs["__hash__"](rec) == made["__hash__"](rec) == hash(rec)


def test_without_the_hook_to_patch_attrs_compiles_as_usual(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from attr import _make

    monkeypatch.delattr(_make, "_compile_and_eval")
    cache = attrscode.CodeCache.open(str(tmp_path))
    assert not cache.installed and not hasattr(_make, "_compile_and_eval")


def test_the_hook_runs_atexit_work_and_prints_its_answer_before_ending(tmp_path: Path, ws: Path) -> None:
    """The process ends with os._exit once its answer is out; atexit handlers still run first."""
    mark = tmp_path / "atexit-ran"
    wrapper = textwrap.dedent(
        f"""
        import atexit, runpy, sys
        atexit.register(lambda: open({str(mark)!r}, "w").write("yes"))
        sys.argv = ["guard", "hook", "claude-code", "--no-daemon"]
        runpy.run_module("guard", run_name="__main__", alter_sys=True)
        raise SystemExit("not reached: the hook ends the process")
        """
    )
    env = guard_cli_env() | {"HOME": str(tmp_path / "home"), "GUARD_HOME": str(ws)}
    proc = subprocess.run(
        [sys.executable, "-c", wrapper], input=_event("rm -rf /"), capture_output=True, env=env, cwd=ROOT, timeout=120
    )
    assert proc.returncode == 0, proc.stderr  # Claude Code reads a deny from the JSON
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert b"not reached" not in proc.stderr
    assert mark.read_text() == "yes"
    assert len(_lines(ws)) == 1  # the decision was recorded (Guard.close ran)
    assert os.stat(ws / CACHE).st_size > 0


def test_the_redaction_triggers_built_at_import_are_the_pairwise_definition() -> None:
    """``guard.redact`` builds its trigger tables at every hook's import, now by substrings: the
    same tables as comparing every pair of triggers (the shortest ones, and which shapes each wakes)."""
    from guard import redact
    from guard.secretshapes import SHAPES

    every = {t for shape in SHAPES for t in shape.triggers}
    roots = sorted(t for t in every if not any(o != t and o in t for o in every))
    wakes = {r: tuple(i for i, shape in enumerate(SHAPES) if any(r in t for t in shape.triggers)) for r in roots}
    assert (tuple(r for r in roots if r != "."), tuple(roots), wakes) == (
        redact._ROOTS_SHORT,
        redact._ROOTS,
        redact._WAKES,
    )
    assert list(redact._WAKES) == roots


# -- an attrs whose private helper differs leaves the cache out, never the hook ------------------


class _Make:
    """Stands in for ``attr._make``'s module namespace (the one attribute the cache replaces)."""

    def __init__(self, helper: Any) -> None:
        self._compile_and_eval = helper


def _attrs_helper(script: str, globs: Any, locs: Any = None, filename: str = "") -> None:
    eval(compile(script, filename, "exec"), globs, locs)


def _other_helper(source: str, namespace: Any) -> None:  # a future attrs' shape
    exec(source, namespace)


def test_a_helper_with_another_signature_is_left_alone(tmp_path: Path) -> None:
    make = _Make(_other_helper)
    cache = attrscode.CodeCache(str(tmp_path / CACHE))
    cache.install(make)
    assert not cache.installed
    assert make._compile_and_eval is _other_helper
    # near miss: attrs' own shape is taken
    make = _Make(_attrs_helper)
    cache.install(make)
    assert cache.installed and make._compile_and_eval == cache.compile_and_eval


def test_a_failing_cache_step_falls_back_to_attrs_own_compile(tmp_path: Path) -> None:
    calls: list[str] = []

    def helper(script: str, globs: Any, locs: Any = None, filename: str = "") -> None:
        calls.append(filename)
        _attrs_helper(script, globs, locs, filename)

    cache = attrscode.CodeCache(str(tmp_path / CACHE))
    cache.install(_Make(helper))
    cache.flags = -1  # compile() refuses these flags: the cache's own step fails
    namespace: dict[str, Any] = {}
    cache.compile_and_eval("def f():\n    return 7\n", namespace, None, "<attrs generated methods x.Y>")
    assert namespace["f"]() == 7  # the snippet still ran, through attrs' helper
    assert calls == ["<attrs generated methods x.Y>"] and cache.added == 0
