"""The OpenClaw plugin: its own node tests, and the plugin driving the real ``guard hook openclaw``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hookhelpers import PROTOCOLS, decisions, executions, hook_env, interactions, node_available, sample

from tests.conftest import ROOT

PLUGIN = ROOT / "integrations" / "openclaw"
pytestmark = pytest.mark.skipif(not node_available(), reason="node is not installed")

E2E = """
import { readFileSync } from "node:fs";
const plugin = await import(process.env.PLUGIN_URL);
const handlers = {};
plugin.registerGuard({ on: (name, handler) => { handlers[name] = handler; } },
                     { command: [process.env.PY, "-m", "guard"], workspace: process.env.WS, timeoutMs: 60000 });
const sample = (name) => JSON.parse(readFileSync(process.env.PROTOCOLS + "/openclaw/" + name, "utf8"));
const { event, ctx } = sample("before_tool_call.event.json");
const out = {};
for (const [name, command] of [["allow", "ls -la"], ["ask", "rm -rf build"], ["block", "rm -rf /"]]) {
  const result = await handlers.before_tool_call({ ...event, params: { ...event.params, command }, toolCallId: name }, ctx);
  if (result?.requireApproval) {
    out[name] = { requireApproval: { ...result.requireApproval, onResolution: typeof result.requireApproval.onResolution } };
    await result.requireApproval.onResolution("allow-once");
  } else {
    out[name] = result ?? null;
  }
}
const after = sample("after_tool_call.event.json");
await handlers.after_tool_call(after.event, after.ctx);
console.log(JSON.stringify(out));
"""


def test_the_plugins_node_tests_pass() -> None:
    proc = subprocess.run(
        ["node", "--test", "test/plugin.test.mjs"],
        cwd=PLUGIN,
        capture_output=True,
        text=True,
        timeout=120,
        env=hook_env(GUARD_PROTOCOLS=str(PROTOCOLS)),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "# fail 0" in proc.stdout


def test_the_plugin_with_the_real_guard(ws: Path) -> None:
    env = hook_env(
        PLUGIN_URL=(PLUGIN / "guard-plugin.mjs").as_uri(), PY=sys.executable, WS=str(ws), PROTOCOLS=str(PROTOCOLS)
    )
    proc = subprocess.run(
        ["node", "--input-type=module", "-e", E2E], capture_output=True, text=True, timeout=180, env=env
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["allow"] is None
    assert out["block"]["block"] is True and "G101" in out["block"]["blockReason"]
    approval = out["ask"]["requireApproval"]
    expected = sample("openclaw", "before_tool_call.require_approval.result.json")["requireApproval"]
    assert set(approval) == set(expected) | {"onResolution"} and approval["onResolution"] == "function"
    assert approval["allowedDecisions"] == expected["allowedDecisions"]
    assert [(d["host"], d["decision"], d["call_id"]) for d in decisions(ws)] == [
        ("openclaw", "auto_allow", "allow"),
        ("openclaw", "request_confirm", "ask"),
        ("openclaw", "block", "block"),
    ]
    assert [(i["action"], i["params"]["command"]) for i in interactions(ws)] == [("approved", "rm -rf build")]
    assert [(e["status"], e["session_id"]) for e in executions(ws)] == [("success", "agent:main:telegram:dm:12345")]
