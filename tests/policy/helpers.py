"""Helpers for the policy tests: an event-stream builder, in-process feeding, the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from guard import Guard
from guard.feed import feed

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2025, 6, 2, 9, 0, tzinfo=UTC)


class Stream:
    """Hook events with a clock that advances a minute per event (``at`` jumps it)."""

    def __init__(self, start: datetime = T0) -> None:
        self.now = start
        self.lines: list[str] = []

    def at(self, when: datetime) -> Stream:
        self.now = when
        return self

    def _emit(self, **event: Any) -> None:
        event["ts"] = self.now.isoformat()
        self.now += timedelta(minutes=1)
        self.lines.append(json.dumps(event))

    def dispatch(self, params: dict[str, Any], session: str, tool: str = "Bash") -> Stream:
        self._emit(event="tool_dispatch", tool=tool, params=params, session_id=session)
        return self

    def answer(self, params: dict[str, Any], session: str, approved: bool, tool: str = "Bash") -> Stream:
        action = "approved" if approved else "denied"
        self._emit(event="user_confirmation", tool=tool, params=params, session_id=session, action=action)
        return self

    def result(self, params: dict[str, Any], session: str, ok: bool = True, tool: str = "Bash") -> Stream:
        status = "success" if ok else "failure"
        self._emit(event="tool_result", tool=tool, params=params, session_id=session, status=status, duration_ms=50)
        return self

    def approved(self, command: str, session: str, ok: bool | None = True, tool: str = "Bash") -> Stream:
        """Asked, approved, then run (``ok=None``: never run)."""
        params = {"command": command} if tool == "Bash" else {"file_path": command, "content": "x"}
        self.dispatch(params, session, tool).answer(params, session, True, tool)
        if ok is not None:
            self.result(params, session, ok, tool)
        return self

    def denied(self, command: str, session: str) -> Stream:
        params = {"command": command}
        return self.dispatch(params, session).answer(params, session, False)


def play(workspace: Path, stream: Stream, **config: Any) -> list[dict[str, Any]]:
    """Feed the stream through a Guard on ``workspace`` in-process; the decision records."""
    with Guard(workspace, {"memory.backend": "history"} | config) as g:
        out = list(feed(g, stream.lines))
    stream.lines.clear()
    return out


def cli(*args: str, workspace: Path, check: bool = True, **kw: Any) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["LANCE_LOG"] = "error"
    proc = subprocess.run(
        [sys.executable, "-m", "guard", *args, "--workspace", str(workspace)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        **kw,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"guard {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


def decode_png(path: Path) -> Any:
    """An 8-bit RGB(A) PNG as a numpy array (height, width, 3): enough to look at a screenshot."""
    import struct
    import zlib

    import numpy as np

    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG")
    pos, idat, width, height, bpp = 8, b"", 0, 0, 0
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace:
                raise ValueError(f"unsupported PNG (depth {depth}, colour type {colour}, interlace {interlace})")
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
    rows = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, 1 + width * bpp)
    out = np.zeros((height, width * bpp), dtype=np.int64)
    prev = np.zeros(width * bpp, dtype=np.int64)
    for y in range(height):
        kind, line = rows[y, 0], rows[y, 1:].astype(np.int64)
        if kind == 0:
            cur = line
        elif kind == 1:  # Sub: a running sum per channel
            cur = np.cumsum(line.reshape(width, bpp), axis=0).reshape(-1) % 256
        elif kind == 2:  # Up
            cur = (line + prev) % 256
        else:  # Average and Paeth depend on the pixel just reconstructed: one byte at a time
            raw, up, rec = line.tolist(), prev.tolist(), [0] * len(line)
            for x, v in enumerate(raw):
                a = rec[x - bpp] if x >= bpp else 0
                b = up[x]
                if kind == 3:
                    rec[x] = (v + ((a + b) >> 1)) & 255
                else:
                    c = up[x - bpp] if x >= bpp else 0
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    rec[x] = (v + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            cur = np.array(rec, dtype=np.int64)
        out[y] = cur
        prev = cur
    return out.reshape(height, width, bpp)[:, :, :3]
