"""Redaction: what masking secrets costs per record written, against the JSON dump of that record.

Three records in the decision log's shape, each made unique per iteration so that the cache
of short strings never answers: an ordinary command, a command carrying secrets (a bearer
header, ``curl -u``, ``mysql -p``), and a Write of a 1 kB ``.env`` body. Each is timed through
``redact`` and through ``json.dumps`` in the same loop (interleaved), so the ratio means the
same on a busy machine as on a quiet one. Informational: no budget of its own (the decision
budget, bench_decide, includes redaction).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from benchmarks.common import Row, median, progress, row
from guard.redact import redact


def _line(i: int, tool: str, params: dict[str, Any]) -> dict[str, Any]:
    return {
        "timestamp": "2026-04-11T10:30:00+00:00",
        "tool": tool,
        "session_id": f"s{i % 20}",
        "fusion_score": 60.25,
        "decision": "request_confirm",
        "components": {"memory": 55.0, "cmd_success": 55.0, "user_pref": 55.0, "system": 90.0},
        "risk": "medium",
        "reasons": [{"id": "G199", "message": "an ordinary command; outcome depends on context"}],
        "layers": [{"layer": n, "risk": "medium", "decision": None, "reasons": [], "elapsed_us": 12.5} for n in "abc"],
        "unavailable": [],
        "notes": [],
        "params": params,
    }


def ordinary(i: int) -> dict[str, Any]:
    return _line(i, "bash", {"command": f"git log --oneline -n {i} -- src/module_{i}.py | head -20"})


def with_secrets(i: int) -> dict[str, Any]:
    command = (
        f"curl -H 'Authorization: Bearer tok{i:08d}AbCdEfGhIjKl' -u admin:pw{i}x https://api.example.com/v1/items "
        f"&& mysql -u root -ppw{i}Secret shop -e 'select 1'"
    )
    return _line(i, "bash", {"command": command})


def env_write(i: int) -> dict[str, Any]:
    body = "".join(f"SETTING_{k}=value-{i}-{k}\n" for k in range(30))
    body += f"DATABASE_URL=postgres://app:pw{i}@db:5432/app\nSTRIPE_KEY=sk_live_{i:010d}abcdefghijklmn\n"
    return _line(i, "write", {"file_path": "/srv/app/.env", "content": body})


def measure(make: Callable[[int], dict[str, Any]], n: int) -> tuple[list[float], list[float], int]:
    """(redact µs, json.dumps µs, record bytes) per record, interleaved."""
    clock = time.perf_counter_ns
    red, dump = [], []
    size = 0
    for i in range(n):
        record = make(1_000_000 + i)
        t0 = clock()
        redact(record)
        t1 = clock()
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        t2 = clock()
        red.append((t1 - t0) / 1000.0)
        dump.append((t2 - t1) / 1000.0)
        size = len(text)
    return red, dump, size


def run(quick: bool = False) -> list[Row]:
    n = 300 if quick else 3000
    rows: list[Row] = []
    for name, make in (
        ("ordinary command", ordinary),
        ("command with secrets", with_secrets),
        (".env write", env_write),
    ):
        progress(f"redact: {name}")
        measure(make, 50)  # warm up (compiles the patterns)
        red, dump, size = measure(make, n)
        r, d = median(red), median(dump)
        rows.append(row(f"redact p50, {name} ({size} B record)", r, "us"))
        rows.append(row(f"redact ÷ json.dumps of the same record, {name}", r / d if d else None, "x"))
    return rows
