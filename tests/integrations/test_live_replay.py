"""The payloads real hosts sent in the live suite (``protocols/live/``), replayed through ``guard hook``.

Each fixture is one live run: the hook payloads in the order the host sent them, the
variables the host added to the hook's environment (and those the person started the run
with, ``set_by_the_person``), and guard's answer then. Replayed in a
fresh workspace with the same environment, every run is read (exit code as recorded) and
every permission answer is the one guard gave live (allow stays allow, deny stays deny), but
where a run's ``expect_now`` names the answer guard gives on purpose since, and why.
Recorded by ``LIVE_RECORD=1 python -m pytest -m live tests/live``; see ``protocols/live/README.md``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hookhelpers import PROTOCOLS, hook_env, run_hook

LIVE = PROTOCOLS / "live"
FIXTURES = sorted(p.relative_to(LIVE).as_posix() for p in LIVE.glob("*/*.json"))


def permission(answer: str) -> Any:
    """The permission part of an answer: Claude/Codex decision or behavior, Gemini decision, OpenClaw block/approval."""
    try:
        out = json.loads(answer) if answer.strip() else {}
    except ValueError:
        return ("unreadable", answer)
    if not isinstance(out, dict):
        return ("not an object", out)
    hso = out.get("hookSpecificOutput") or {}
    if hso:
        return hso.get("permissionDecision") or (hso.get("decision") or {}).get("behavior")
    if out.get("block") is True or "requireApproval" in out:
        return "block" if out.get("block") else "requireApproval"
    return out.get("decision")


def test_there_are_live_fixtures() -> None:
    assert any(f.startswith("claude_code/") for f in FIXTURES)


@pytest.mark.parametrize("name", FIXTURES)
def test_a_live_run_replays_to_the_same_answers(name: str, tmp_path: Path) -> None:
    replay(name, tmp_path)


def replay(name: str, tmp_path: Path) -> Path:
    """Replay one fixture through ``guard hook``, checking each answer; returns the workspace."""
    doc = json.loads((LIVE / name).read_text(encoding="utf-8"))
    root = tmp_path / "live"
    (root / "home").mkdir(parents=True)
    (root / "project").mkdir()
    hidden = set(doc.get("hidden_from_guard", []))  # as when guard answered live
    workspace = tmp_path / "ws"
    for i, run in enumerate(doc["runs"]):
        text = json.dumps(run["payload"]).replace("/tmp/live", str(root))
        added = {k: v.replace("/tmp/live", str(root)) for k, v in run["env_added_by_host"].items() if k not in hidden}
        env = hook_env(HOME=str(root / "home"), **added, **doc.get("set_by_the_person", {}))
        out = run_hook(doc["host"], text, workspace, *run["argv"][2:], env=env)
        recorded = run["answer"]
        where = f"{name} run {i} ({run['payload'].get('hook_event_name')})"
        assert out.code == recorded["exit_code"], f"{where}: {out.stderr}"
        # ``expect_now``: where guard's answer changed on purpose since the live run, and why
        want = run.get("expect_now", {}).get("permission", permission(recorded["stdout"]))
        assert permission(out.stdout) == want, f"{where}: {out.stdout} != {recorded['stdout']}"
    return workspace


def answers(workspace: Path) -> list[tuple[str, str]]:
    path = workspace / ".user-interactions.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [(d["action"], d["params"].get("command", "")) for d in map(json.loads, lines)]


def test_openclaw_asks_nobody_could_approve_are_no_approvals(tmp_path: Path) -> None:
    """``agent --local``: OpenClaw reports a refused call (``guardRefused``) before the approval's
    ``cancelled``; the call never ran, so it is not the person's "yes" (it was, for the loop's calls)."""
    workspace = replay("openclaw/agent_local_turn.json", tmp_path)
    assert answers(workspace) == []


def test_openclaw_an_approved_ask_is_still_an_approval(tmp_path: Path) -> None:
    """The near miss: the person allows the call once, it runs, its result comes back: one "yes"."""
    workspace = tmp_path / "ws"

    def hook(kind: str, **extra: Any) -> None:
        event = {"toolName": "exec", "params": {"command": "rm -rf ./build"}, "runId": "r1", "toolCallId": "c1"}
        payload = {"hook": kind, "event": {**event, **extra.pop("event", {})}, "ctx": CTX, **extra}
        assert run_hook("openclaw", payload, workspace, env=hook_env(HOME=str(tmp_path))).code == 0

    hook("before_tool_call")
    hook("approval_resolution", resolution="allow-once")
    hook("after_tool_call", event={"result": "ok", "durationMs": 3})
    assert answers(workspace) == [("approved", "rm -rf ./build")]


CTX = {"agentId": "main", "sessionKey": "agent:main:main", "toolName": "exec", "toolCallId": "c1"}
