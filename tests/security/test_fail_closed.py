"""Fail closed where guard cannot record: a read-only or full workspace keeps the static verdict.

Before, an unwritable workspace turned every hook answer into "could not check this call":
``rm -rf ~`` became an ask. Now blocks stay blocks, asks stay asks, safe reads may still run,
nothing learned lifts a call above what the static layer alone says, and stderr names the
problem once per process.

The workspaces are real mounts (tests run as root, where ``chmod 0500`` stops nothing): a
64 KB tmpfs remounted read-only, and one filled to the last byte.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from guard.core import Guard
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM
from tests.conftest import ROOT, guard_cli_env

CONFIG = {"system.health": 90, "memory.backend": "history"}
PROBLEM = "cannot write its workspace"


def _mount(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["mount", *args], capture_output=True, text=True, check=False)


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 64 KB tmpfs we mounted, unmounted by its path afterwards; skipped where mounting is not allowed."""
    yield from _mounted(tmp_path / "mnt", "64k")


@pytest.fixture
def roomy_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """Room for some history before it is made read-only."""
    yield from _mounted(tmp_path / "mnt", "4m")


def _mounted(where: Path, size: str) -> Iterator[Path]:
    where.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    proc = _mount("-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where))
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield where
    finally:  # lazily if a descriptor is still open: the mount must never outlive the test
        if subprocess.run(["umount", str(where)], capture_output=True, check=False).returncode != 0:
            subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


def read_only(where: Path) -> Path:
    proc = _mount("-o", "remount,ro", str(where))
    if proc.returncode != 0:
        pytest.skip(f"cannot remount read-only: {proc.stderr.strip()}")
    return where


def fill(where: Path) -> Path:
    with open(where / "filler.bin", "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass
    with pytest.raises(OSError):
        (where / "probe").write_bytes(b"x" * 8192)
    return where


@pytest.fixture(params=["read-only", "full"])
def broken(request: pytest.FixtureRequest, tmpfs: Path) -> Path:
    (tmpfs / "guard.toml").write_text("[system]\nhealth = 90\n")
    return read_only(tmpfs) if request.param == "read-only" else fill(tmpfs)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def env(ws: Path, home: Path, **extra: str) -> dict[str, str]:
    return guard_cli_env() | {"HOME": str(home), "GUARD_HOME": str(ws), "GUARD_HOOKS_DAEMON": "off"} | extra


def pre_tool_use(command: str) -> dict[str, Any]:
    return {
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": uuid.uuid4().hex,
        "cwd": "/tmp",
    }


def hook(ws: Path, home: Path, command: str, host: str = "claude-code", *flags: str) -> tuple[str, str]:
    """``guard hook HOST``: (decision, stderr)."""
    proc = subprocess.run(
        [sys.executable, "-m", "guard", "hook", host, *flags],
        input=json.dumps(pre_tool_use(command)).encode(),
        capture_output=True,
        env=env(ws, home),
        cwd=ROOT,
        timeout=60,
    )
    err = proc.stderr.decode()
    assert "Traceback" not in err, err
    out = json.loads(proc.stdout)
    return out["hookSpecificOutput"]["permissionDecision"], err


def check(ws: Path, home: Path, command: str, *flags: str) -> tuple[int, str, dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-m", "guard", "check", "bash", json.dumps({"command": command}), "--json", *flags],
        capture_output=True,
        env=env(ws, home),
        cwd=ROOT,
        timeout=60,
    )
    err = proc.stderr.decode()
    assert "Traceback" not in err, err
    return proc.returncode, err, json.loads(proc.stdout)


def one_line_naming_the_problem(stderr: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert PROBLEM in lines[0]


# -- guard hook claude-code -------------------------------------------------------------------
def test_hook_still_denies_rm_rf_home(broken: Path, home: Path) -> None:
    decision, err = hook(broken, home, "rm -rf ~")
    assert decision == "deny"
    one_line_naming_the_problem(err)


def test_hook_allows_ls_or_at_most_asks(broken: Path, home: Path) -> None:
    decision, err = hook(broken, home, "ls -la")
    assert decision in ("allow", "ask")
    one_line_naming_the_problem(err)


def test_hook_asks_about_a_push_and_says_why(broken: Path, home: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "guard", "hook", "claude-code"],
        input=json.dumps(pre_tool_use("git push origin main")).encode(),
        capture_output=True,
        env=env(broken, home),
        cwd=ROOT,
        timeout=60,
    )
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "ask"
    assert "G145" in out["permissionDecisionReason"] and PROBLEM in out["permissionDecisionReason"]


def test_headless_hook_denies_what_it_would_ask(broken: Path, home: Path) -> None:
    decision, err = hook(broken, home, "git push origin main", "claude-code", "--headless")
    assert decision == "deny"
    one_line_naming_the_problem(err)


def test_codex_cannot_keep_an_approval_id_and_denies_saying_why(broken: Path, home: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "guard", "hook", "codex"],
        input=json.dumps(pre_tool_use("git push origin main")).encode(),
        capture_output=True,
        env=env(broken, home),
        cwd=ROOT,
        timeout=60,
    )
    assert "Traceback" not in proc.stderr.decode()
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and PROBLEM in out["permissionDecisionReason"]


# -- guard check -----------------------------------------------------------------------------
def test_check_blocks_rm_rf_home_with_exit_20(broken: Path, home: Path) -> None:
    code, err, record = check(broken, home, "rm -rf ~", "--save")
    assert code == 20 and record["decision"] == BLOCK
    one_line_naming_the_problem(err)


def test_check_ls_is_allowed_and_says_nothing_is_recorded(broken: Path, home: Path) -> None:
    code, err, record = check(broken, home, "ls", "--save")
    assert code in (0, 10) and record["decision"] != BLOCK
    one_line_naming_the_problem(err)


def test_check_a_push_is_confirmed_with_the_reason(broken: Path, home: Path) -> None:
    code, _, record = check(broken, home, "git push origin main", "--save")
    assert code == 10
    assert "G004" in [r["id"] for r in record["reasons"]]


# -- never weaker than the static layer alone --------------------------------------------
def _trusted_history(g: Guard, command: str) -> None:
    for i in range(30):
        g.record_result("bash", {"command": command}, session_id=f"h{i}", success=True)
        g.record_interaction("bash", {"command": command}, session_id=f"h{i}", approved=True, satisfaction=5)


def test_learned_trust_does_not_lift_a_call_while_nothing_can_be_recorded(roomy_tmpfs: Path) -> None:
    tmpfs = roomy_tmpfs
    command = {"command": "make build"}
    g = Guard(tmpfs, CONFIG | {"behavior.tiers": False})
    _trusted_history(g, "make build")
    writable = g.decide("bash", command, session_id="fresh", save=False)
    g.close()
    assert writable.decision == AUTO_ALLOW, writable.reasons  # earned with history
    read_only(tmpfs)
    g = Guard(tmpfs, CONFIG)
    try:
        record = g.decide("bash", command, session_id="fresh")
    finally:
        g.close()
    assert record.decision == REQUEST_CONFIRM
    assert "G004" in [r.rule_id for r in record.reasons]
    assert "decision_log" in record.unavailable


def test_a_safe_read_runs_while_nothing_can_be_recorded(tmpfs: Path) -> None:
    read_only(tmpfs)
    g = Guard(tmpfs, CONFIG)
    try:
        record = g.decide("bash", {"command": "ls -la"})
    finally:
        g.close()
    assert record.decision == AUTO_ALLOW


def test_space_that_comes_back_ends_the_degraded_mode(tmpfs: Path) -> None:
    g = Guard(tmpfs, CONFIG)
    try:
        fill(tmpfs)
        assert "G004" in [r.rule_id for r in g.decide("bash", {"command": "make build"}).reasons]
        (tmpfs / "filler.bin").unlink()
        assert "G004" not in [r.rule_id for r in g.decide("bash", {"command": "make build"}).reasons]
    finally:
        g.close()


# -- large writes that can fill the disk -----------------------------------------------------
@pytest.mark.parametrize(
    "command",
    [
        "dd if=/dev/zero of=./fill.bin bs=1M count=100000",
        "fallocate -l 500G x",
        "yes > big.txt",
        "head -c 100G /dev/zero > f",
        "truncate -s 200G disk.img",
        "cat /dev/urandom > noise.bin",
    ],
)
def test_filling_the_disk_is_not_auto_allowed(make_guard: Any, command: str) -> None:
    record = make_guard().decide("bash", {"command": command})
    assert record.decision != AUTO_ALLOW, record.reasons
    assert "G009" in [r.rule_id for r in record.reasons]


@pytest.mark.parametrize(
    "command",
    ["dd if=in.img of=out.img bs=4M", "head -c 100 /dev/urandom > key.bin", "yes | head -n 3", "truncate -s 0 log.txt"],
)
def test_bounded_writes_are_not_disk_fills(make_guard: Any, command: str) -> None:
    """Near misses: copies, small reads of /dev/urandom, bounded yes, emptying a file."""
    record = make_guard().decide("bash", {"command": command})
    assert "G009" not in [r.rule_id for r in record.reasons]
