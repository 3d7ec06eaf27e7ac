"""``guard serve`` answering hooks: its garbage-collection pauses before and after it settles, and
its answers with the open-questions file empty and full.

A child process (a clean heap, as a daemon has) builds the daemon's ``HookServer`` over a fresh
workspace with the default configuration (memory on: LanceDB, pyarrow and pydantic load on a
background thread after the first call) and answers Claude Code ``PreToolUse`` events through the
daemon's own request handler, with no socket in between: the client's cost is ``bench_hook``'s.
Once the memory is ready it answers blocks of events in turn (ABBA): as it is (unfrozen), then
settled as its idle loop does (``HookServer.settle``: ``gc.freeze`` of what it holds). Over the
blocks of each kind: the longest garbage collection (a ``gc`` callback), the slowest answer, p99.9
and the median. Answers slow down as the workspace and the memory grow, so both kinds alternate.

Budget: the longest collection while settled ≤ 25 ms, and settled ÷ unsettled ≤ 0.5 in the same run.
"""

from __future__ import annotations

import json
from typing import Any

from benchmarks.common import Row, child_env, progress, row, run_python

LONGEST_BUDGET_MS = 25.0

# What both children send the daemon's request handler: one Claude Code event for a Bash command, run
# from ``cwd``, in the daemon's request envelope (a ``PostToolUse`` carries the tool's response).
_REQUEST = r"""
import json

def hook_request(ws, cwd, event, i, command, session, env):
    payload = {
        "session_id": session, "transcript_path": str(ws / "t.jsonl"), "cwd": str(cwd),
        "permission_mode": "default", "hook_event_name": event, "tool_name": "Bash",
        "tool_input": {"command": command}, "tool_use_id": f"toolu_{i}",
    }
    if event == "PostToolUse":
        payload["tool_response"] = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}
    return json.dumps({"op": "hook", "host": "claude-code", "version": "bench", "input": json.dumps(payload), "env": env}).encode()
"""

_CHILD = (
    _REQUEST
    + r"""
import gc, json, sys, tempfile, time
from pathlib import Path
from guard.integrations.server import HookServer

n, PAIRS = N
ws = Path(tempfile.mkdtemp(prefix="guard-bench-daemon-")) / "ws"
ws.mkdir(mode=0o700)
srv = HookServer(ws, version="bench")
commands = ("git status", "ls -la src", "npm test", "pytest -q tests", "git diff", "cat README.md")  # no asks: the open-question file stays small

def request(i):
    return hook_request(ws, ws, "PreToolUse", i, commands[i % len(commands)], f"bench-{i % 7}", {})

for i in range(30):
    srv._answer(request(i))
for _ in range(600):  # LanceDB's import and first table, on the memory's background thread
    memory = getattr(srv._guard.state, "memory", None)
    if "lancedb" in sys.modules and getattr(memory, "ready", None) is not None and memory.ready.is_set():
        break
    time.sleep(0.05)

pauses, began = [], [0.0]
def watch(phase, info):
    if phase == "start":
        began[0] = time.perf_counter()
    else:
        pauses.append((time.perf_counter() - began[0]) * 1000.0)

def block(start):
    del pauses[:]
    answers = []
    gc.callbacks.append(watch)
    for i in range(start, start + n):
        t0 = time.perf_counter()
        srv._answer(request(i))
        answers.append((time.perf_counter() - t0) * 1000.0)
    gc.callbacks.remove(watch)
    answers.sort()
    return {"p50": answers[len(answers) // 2], "p999": answers[min(len(answers) - 1, int(len(answers) * 0.999))],
            "max": answers[-1], "longest": max(pauses, default=0.0), "collections": len(pauses)}

out = {"lancedb": "lancedb" in sys.modules, "unsettled": [], "settled": [], "frozen": 0}
def unsettled(start):
    gc.unfreeze()
    srv._settled = None
    out["unsettled"].append(block(start))

def settled(start):
    srv.settle()
    out["frozen"] = max(out["frozen"], gc.get_freeze_count())
    out["settled"].append(block(start))

for k in range(PAIRS):  # in turn, ABBA: both see the workspace and the memory grow alike
    first, second = (unsettled, settled) if k % 2 == 0 else (settled, unsettled)
    first(1000 + 2 * k * n)
    second(1000 + (2 * k + 1) * n)
srv._guard.close()
print(json.dumps(out))
"""
)


# An ask and its result through the daemon's request handler, with no open question before and
# with the file full (``LIMIT`` asks whose results never came): blocks of each in turn.
_QUESTIONS = (
    _REQUEST
    + r"""
import json, statistics, sys, tempfile, time
from pathlib import Path
from guard.integrations.pending import LIMIT
from guard.integrations.server import HookServer

n, ROUNDS = N
root = Path(tempfile.mkdtemp(prefix="guard-bench-questions-"))
project = root / "project"
project.mkdir()
env = {"GUARD_MEMORY_BACKEND": "history", "GUARD_SYSTEM_HEALTH": "90"}

def request(ws, event, i, command, session):
    return hook_request(ws, project, event, i, command, session, env)

servers = {}
for kind in ("none", "full"):
    ws = root / kind
    ws.mkdir(mode=0o700)
    srv = servers[kind] = (HookServer(ws, version="bench"), ws)
    if kind == "full":
        for i in range(LIMIT + 8):  # asks whose results never came
            srv[0]._answer(request(ws, "PreToolUse", 10**6 + i, f"rm -rf old{i}/", f"old-{i % 40}"))
times = {k: {"ask": [], "result": []} for k in servers}
i = 0
for r in range(ROUNDS):
    for kind in (("none", "full") if r % 2 == 0 else ("full", "none")):
        srv, ws = servers[kind]
        for _ in range(n):
            i += 1
            command, session = f"rm -rf out{i}/", f"s-{i % 7}"
            t0 = time.perf_counter()
            answer = srv._answer(request(ws, "PreToolUse", i, command, session))
            t1 = time.perf_counter()
            srv._answer(request(ws, "PostToolUse", i, command, session))
            t2 = time.perf_counter()
            assert '"ask"' in answer["stdout"], answer
            times[kind]["ask"].append((t1 - t0) * 1000.0)
            times[kind]["result"].append((t2 - t1) * 1000.0)
out = {k: {what: statistics.median(v) for what, v in d.items()} for k, d in times.items()}
out["open"] = len(json.loads((root / "full" / ".guard-pending.json").read_text())["entries"])
for srv, _ in servers.values():
    srv._guard.close()
print(json.dumps(out))
"""
)


def questions(quick: bool) -> list[Row]:
    n, rounds = (100, 4) if quick else (200, 8)
    progress(f"daemon: {rounds} × {n} asks and their results, no open questions and a full file")
    code = _QUESTIONS.replace("n, ROUNDS = N\n", f"n, ROUNDS = {n}, {rounds}\n", 1)
    out, _ = run_python(code, env=child_env(), timeout=900)
    facts: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    none, full = facts["none"], facts["full"]
    return [
        row(
            f"daemon: an ask, {facts['open']} open questions",
            full["ask"],
            "ms",
            note=f"with none open {none['ask']:.2f} ms (the request handler, no socket; medians)",
        ),
        row(
            f"daemon: a result, {facts['open']} open questions",
            full["result"],
            "ms",
            note=f"with none open {none['result']:.2f} ms (the result answers its question)",
        ),
    ]


def run(quick: bool = False) -> list[Row]:
    return gc_rows(quick) + questions(quick)


def gc_rows(quick: bool = False) -> list[Row]:
    n, pairs = (300, 2) if quick else (500, 4)
    progress(f"daemon: {pairs} × ({n} answers unsettled, {n} settled)")
    out, _ = run_python(_CHILD.replace("n, PAIRS = N\n", f"n, PAIRS = {n}, {pairs}\n", 1), env=child_env(), timeout=900)
    facts: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    before, after = _worst(facts["unsettled"]), _worst(facts["settled"])
    n *= pairs
    memory = "LanceDB loaded" if facts["lancedb"] else "LanceDB not loaded"
    return [
        row(
            "daemon answers: longest collection, settled",
            after["longest"],
            "ms",
            f"<= {LONGEST_BUDGET_MS:g}",
            note=f"{after['collections']} collections in {n} answers; {facts['frozen']} objects frozen; {memory}",
        ),
        row(
            "daemon answers: longest collection, unsettled",
            before["longest"],
            "ms",
            note=f"{before['collections']} collections in {n} answers (the blocks not settled)",
        ),
        row(
            "daemon answers: longest collection, settled ÷ unsettled",
            after["longest"] / before["longest"] if before["longest"] else None,
            "×",
            "<= 0.5",
        ),
        row(
            "daemon answers: slowest, settled",
            after["max"],
            "ms",
            note=f"unsettled {before['max']:.1f} ms; p99.9 {after['p999']:.1f} (unsettled {before['p999']:.1f}) ms",
        ),
        row(
            "daemon answers: median, settled",
            after["p50"],
            "ms",
            note=f"unsettled {before['p50']:.2f} ms (the request handler, no socket; medians of the blocks' medians)",
        ),
    ]


def _worst(blocks: list[dict[str, float]]) -> dict[str, float]:
    """Over alternating blocks: the longest collection and slowest answer of all, the median of medians."""
    medians = sorted(b["p50"] for b in blocks)
    return {
        "longest": max(b["longest"] for b in blocks),
        "max": max(b["max"] for b in blocks),
        "p999": max(b["p999"] for b in blocks),
        "p50": medians[len(medians) // 2],
        "collections": sum(b["collections"] for b in blocks),
    }


if __name__ == "__main__":
    import sys

    for r in run(quick="--quick" in sys.argv):
        print(r)
