"""Per-call hook process: ``guard hook claude-code`` against cc-safety-net's hook, side by side.

Each round runs, in turn, one PreToolUse event (a Bash ``ls -la`` of a fresh path, the most
common kind of call; never the same call twice, which guard's session layer calls a loop)
through:

- guard's hook with a warm ``guard serve`` (the default: ``hooks.daemon = "auto"``),
- guard's hook deciding in its own process (``--no-daemon``, what happens while the daemon
  is down or when ``hooks.daemon = "off"``),
- cc-safety-net 2.4.5's hook (``node …/cc-safety-net.js hook --claude-code``, no npx),
- ``python -c pass``, the floor any Python hook stands on.

Rounds are interleaved (A B C D, A B C D, …) so that load on the machine hits every
contender alike; the medians and their ratios are reported. Budgets: with the daemon,
≤ 1.25× ``python -c pass`` (issue 17) and ≤ the peer (DESIGN §5); in-process ≤ 0.8× the peer
(issue 17). System health is sampled for real (no pin), and
bytecode caching is on for the child processes, as in an installed guard; the warm-up round
leaves the workspace's ``.guard-attrs-code`` (attrs' compiled record methods), as any earlier
hook on that workspace would.

The peer is installed, as ``../shared/tools/peer_compare.sh`` does, with
``npm install cc-safety-net@2.4.5`` into ``${XDG_CACHE_HOME:-~/.cache}/guard-peer``; without
node or npm its rows say why they are missing.

    python -m benchmarks.bench_hook [--quick]
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PEER_VERSION = "2.4.5"

Row = dict[str, Any]


def _row(name: str, value: float | None, unit: str, budget: str | None = None, note: str | None = None) -> Row:
    met = None
    if budget is not None and value is not None:
        met = value <= float(budget.removeprefix("<=").strip())
    out: Row = {
        "name": name,
        "value": None if value is None else round(value, 2),
        "unit": unit,
        "budget": budget,
        "met": met,
    }
    if note:
        out["note"] = note
    return out


def peer_script() -> tuple[Path | None, str]:
    """cc-safety-net's hook script, installing it on first use; (None, why) when it cannot be had."""
    if shutil.which("node") is None:
        return None, "node is not installed: cc-safety-net not measured"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "guard-peer"
    script = cache / "node_modules" / "cc-safety-net" / "dist" / "bin" / "cc-safety-net.js"
    if not script.exists():
        npm = shutil.which("npm")
        if npm is None:
            return None, "npm is not installed: cc-safety-net not measured"
        cache.mkdir(parents=True, exist_ok=True)
        try:
            if not (cache / "package.json").exists():
                subprocess.run([npm, "init", "-y"], cwd=cache, capture_output=True, check=True, timeout=120)
            subprocess.run(
                [npm, "install", "--silent", f"cc-safety-net@{PEER_VERSION}"],
                cwd=cache,
                capture_output=True,
                check=True,
                timeout=600,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return None, f"could not install cc-safety-net@{PEER_VERSION} ({exc}): not measured"
    return script, ""


def _payload(cwd: Path, command: str) -> bytes:
    event = {
        "session_id": "bench",
        "transcript_path": str(cwd / "t.jsonl"),
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "List files"},
        "tool_use_id": "toolu_bench",
    }
    return json.dumps(event).encode()


def _wall_ms(cmd: list[str], data: bytes, env: dict[str, str], cwd: Path) -> float:
    """One run's wall time (the peer says nothing when it allows, so only the exit code is checked)."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, input=data, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    elapsed = (time.perf_counter() - t0) * 1000.0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} exited {proc.returncode}")
    return elapsed


def isolation() -> list[str]:
    """``["-I"]`` (how ``guard install`` writes hook commands) when this checkout is what an isolated
    interpreter imports (an editable install); else no flag, and PYTHONPATH finds the checkout.
    Bare Python runs with the same flags."""
    probe = subprocess.run(
        [sys.executable, "-I", "-c", "import guard; print(guard.__file__)"], capture_output=True, text=True, cwd="/"
    )
    found = probe.stdout.strip()
    return ["-I"] if probe.returncode == 0 and found and Path(found).resolve().is_relative_to(REPO) else []


def run(quick: bool) -> list[Row]:
    rounds = 15 if quick else 61
    with tempfile.TemporaryDirectory(prefix="guard-bench-hook-") as tmp:
        root = Path(tmp)
        ws, project, peer_home = root / "ws", root / "project", root / "peer-home"
        for d in (project, peer_home):
            d.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("GUARD_") and k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
        env["CC_SAFETY_NET_HOME"] = str(peer_home)
        flags = isolation()
        guard_cmd = [sys.executable, *flags, "-m", "guard", "hook", "claude-code", "--workspace", str(ws)]
        contenders: dict[str, list[str]] = {
            "guard (daemon)": guard_cmd,
            "guard (in-process)": [*guard_cmd, "--no-daemon"],
            "python -c pass": [sys.executable, *flags, "-c", "pass"],
        }
        script, why = peer_script()
        if script is not None:
            contenders["cc-safety-net"] = ["node", str(script), "hook", "--claude-code"]
        count = iter(range(1_000_000))

        def event(name: str) -> bytes:
            """A fresh read-only call each time: the same call over and over is a loop, and guard says so."""
            if name == "python -c pass":
                return b""
            return _payload(project, f"ls -la build/{name.split()[0]}-{next(count)}")

        daemon = subprocess.Popen(
            [sys.executable, "-m", "guard", "serve", "--workspace", str(ws)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
            cwd=root,
        )
        try:
            assert daemon.stdout is not None
            if not daemon.stdout.readline().startswith("guard serve: listening"):
                raise RuntimeError("guard serve did not start")
            for name, cmd in contenders.items():  # warm-up: bytecode, the daemon's Guard, node's caches
                _wall_ms(cmd, event(name), env, project)
            for name in ("guard (daemon)", "guard (in-process)"):  # measure a real answer, not a refusal
                out = subprocess.run(contenders[name], input=event(name), capture_output=True, env=env, cwd=project)
                if b'"permissionDecision": "allow"' not in out.stdout:
                    raise RuntimeError(f"{name} did not allow `ls -la`: {out.stdout[:300]!r}")
            samples: dict[str, list[float]] = {name: [] for name in contenders}
            for _ in range(rounds):
                for name, cmd in contenders.items():
                    samples[name].append(_wall_ms(cmd, event(name), env, project))
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.communicate(timeout=30)
    med = {name: statistics.median(values) for name, values in samples.items()}
    peer = med.get("cc-safety-net")
    note = f"median of {rounds} interleaved rounds"
    rows = [
        _row("guard hook median wall, warm daemon", med["guard (daemon)"], "ms", note=note),
        _row("guard hook median wall, in-process", med["guard (in-process)"], "ms", note=note),
        _row(f"cc-safety-net {PEER_VERSION} hook median wall", peer, "ms", note=note if peer else why),
        _row(
            "python -c pass median wall",
            med["python -c pass"],
            "ms",
            note=f"the floor of any Python hook (flags: {' '.join(flags) or 'none'}, as guard's)",
        ),
    ]
    bare = med["python -c pass"]
    rows.append(
        _row(
            "guard hook ÷ python -c pass, warm daemon",
            med["guard (daemon)"] / bare,
            "x",
            "<= 1.25",
            "same run; the thin client (guard.hookclient) imports os, sys, json, socket",
        )
    )
    for label, key, budget in (
        ("warm daemon", "guard (daemon)", "<= 1.0"),
        ("in-process", "guard (in-process)", "<= 0.8"),
    ):
        ratio = med[key] / peer if peer else None
        rows.append(_row(f"guard hook ÷ cc-safety-net, {label}", ratio, "x", budget, None if peer else why))
    return rows


def _table(rows: list[Row]) -> str:
    lines = [f"{'measure':<48} {'value':>9} {'unit':<4} {'budget':<8} met"]
    for r in rows:
        value = "-" if r["value"] is None else f"{r['value']:.2f}"
        met = {True: "yes", False: "NO", None: ""}[r["met"]]
        lines.append(f"{r['name']:<48} {value:>9} {r['unit']:<4} {r['budget'] or '':<8} {met}")
        if r.get("note") and r["value"] is None:
            lines.append(f"    {r['note']}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(_table(run(quick="--quick" in sys.argv[1:])))
