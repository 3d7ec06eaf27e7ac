"""Helpers for the reliability suite: workspaces, the CLI in a subprocess, log inspection."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CONFIG = {"system.health": 90, "memory.backend": "history"}


def cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GUARD_")}
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["GUARD_SYSTEM_HEALTH"] = "90"
    env["LANCE_LOG"] = "error"
    env.update(extra)
    return env


def run_guard(*args: str, stdin: bytes = b"", timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    """``python -m guard ARGS`` with this checkout on the path; bytes in, bytes out."""
    return subprocess.run(
        [sys.executable, "-m", "guard", *args],
        input=stdin,
        env=cli_env(),
        capture_output=True,
        timeout=timeout,
        check=False,
    )


def whole_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of a JSONL file, asserting the file ends on a newline and no line is torn."""
    data = path.read_bytes()
    assert not data or data.endswith(b"\n"), f"{path.name}: last line is torn"
    out = []
    for n, raw in enumerate(data.splitlines(), 1):
        rec = json.loads(raw)  # raises on a torn or interleaved line
        assert isinstance(rec, dict), f"{path.name}:{n} is not an object"
        out.append(rec)
    return out


@pytest.fixture
def make_guard(tmp_path: Path) -> Iterator[Any]:
    """Guards on a workspace (default ``tmp_path/ws``) with pinned health and history memory."""
    from guard.core import Guard

    made: list[Any] = []

    def make(workspace: Path | None = None, **config: Any) -> Any:
        g = Guard(workspace or tmp_path / "ws", CONFIG | config)
        made.append(g)
        return g

    yield make
    for g in made:
        g.close()


@pytest.fixture
def logged() -> Iterator[list[str]]:
    """The warnings guard logs while the test runs (guard's loguru namespace, enabled)."""
    from loguru import logger

    from guard import log
    from guard.log import logger as guard_logger

    guard_logger.level  # noqa: B018  (load loguru the way guard does, before enabling)
    messages: list[str] = []
    logger.enable("guard")
    handler = logger.add(lambda m: messages.append(m.record["message"]), level="WARNING", format="{message}")
    yield messages
    logger.remove(handler)
    if log._state["stderr_level"] is None:  # leave it as guard had it: enabled only if the CLI asked
        logger.disable("guard")


def can_mount_tmpfs(where: Path) -> str | None:
    """None when ``unshare -m`` + ``mount -t tmpfs`` work here, else why not."""
    if os.geteuid() != 0:
        return "needs root for a private mount namespace"
    where.mkdir(parents=True, exist_ok=True)
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs '{where}'"],
        capture_output=True,
        check=False,
    )
    return None if probe.returncode == 0 else f"cannot mount a tmpfs: {probe.stderr.decode(errors='replace')[:200]}"


def in_private_mount(mount_point: Path, source: Path, code: str, *, size_kb: int, read_only: bool) -> tuple[int, str]:
    """Copy ``source`` onto a fresh tmpfs at ``mount_point`` (optionally remounted read-only),
    run ``python -c code MOUNT_POINT`` there, copy the tmpfs back over ``source`` and return
    the exit code and stdout. The mount lives in a private namespace and vanishes with it."""
    script = (
        'mount -t tmpfs -o size="$SIZE"k tmpfs "$MNT" && cp -a "$SRC"/. "$MNT"/ || exit 99\n'
        + ('mount -o remount,ro "$MNT" || exit 98\n' if read_only else "")
        + '"$PY" -c "$CODE" "$MNT"; rc=$?\n'
        + ('[ "$RO" = 1 ] || cp -a "$MNT"/. "$SRC"/\n')
        + "exit $rc\n"
    )
    env = cli_env(
        SIZE=str(size_kb),
        MNT=str(mount_point),
        SRC=str(source),
        PY=sys.executable,
        CODE=code,
        RO="1" if read_only else "0",
    )
    mount_point.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script], env=env, capture_output=True, timeout=120, check=False)
    assert proc.returncode not in (98, 99), proc.stderr.decode(errors="replace")
    return proc.returncode, proc.stdout.decode()
