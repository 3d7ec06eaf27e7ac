// The OpenClaw plugin against a fake plugin api and a fake guard (no network, no OpenClaw).
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, existsSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import entry from "../index.mjs";
import { registerGuard, resolveCommand, socketPathFor, summarizeResult, workspaceOf } from "../guard-plugin.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const fakeGuard = [process.execPath, join(here, "..", "test-support", "fake-guard.mjs")];
const protocols = process.env.GUARD_PROTOCOLS || join(here, "..", "..", "..", "tests", "integrations", "protocols");
const sample = (name) => JSON.parse(readFileSync(join(protocols, "openclaw", name), "utf8"));

function fakeApi(pluginConfig) {
  const handlers = {};
  return {
    pluginConfig,
    handlers,
    on(name, handler, options) {
      handlers[name] = { handler, options };
    },
  };
}

function setup(config = {}) {
  const dir = mkdtempSync(join(tmpdir(), "guard-oc-"));
  const log = join(dir, "calls.jsonl");
  const api = fakeApi();
  registerGuard(api, { command: fakeGuard, workspace: join(dir, "ws"), ...config }, {
    env: { ...process.env, FAKE_GUARD_LOG: log },
  });
  const calls = () =>
    existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l)) : [];
  return { api, calls, dir };
}

function before(api, command) {
  const { event, ctx } = sample("before_tool_call.event.json");
  return api.handlers.before_tool_call.handler({ ...event, params: { ...event.params, command } }, ctx);
}

test("registers before_tool_call early and after_tool_call", () => {
  const { api } = setup();
  assert.deepEqual(Object.keys(api.handlers).sort(), ["after_tool_call", "before_tool_call"]);
  assert.equal(api.handlers.before_tool_call.options.priority, 1000);
});

test("allow: guard's empty answer means no decision (undefined)", async () => {
  const { api, calls } = setup();
  assert.equal(await before(api, "ls"), undefined);
  const [call] = calls();
  assert.deepEqual(call.argv.slice(0, 2), ["hook", "openclaw"]);
  assert.equal(call.payload.hook, "before_tool_call");
  assert.equal(call.payload.event.toolName, "exec");
  assert.equal(call.payload.ctx.sessionKey, "agent:main:telegram:dm:12345");
});

test("block: guard's block passes through in the recorded result shape", async () => {
  const { api } = setup();
  const result = await before(api, "rm -rf /");
  const expected = sample("before_tool_call.block.result.json");
  assert.deepEqual(Object.keys(result).sort(), Object.keys(expected).sort());
  assert.equal(result.block, true);
  assert.match(result.blockReason, /G101/);
});

test("approval: requireApproval in the recorded shape, onResolution records the answer", async () => {
  const { api, calls } = setup();
  const result = await before(api, "rm -rf build");
  const expected = sample("before_tool_call.require_approval.result.json").requireApproval;
  const { onResolution, ...rest } = result.requireApproval;
  assert.deepEqual(rest, expected);
  assert.equal(typeof onResolution, "function");
  assert.equal(await onResolution("allow-once"), undefined);
  const last = calls().at(-1).payload;
  assert.equal(last.hook, "approval_resolution");
  assert.equal(last.resolution, "allow-once");
  assert.equal(last.event.params.command, "rm -rf build");
  assert.equal(last.ctx.sessionId, "sess-1");
});

test("after_tool_call forwards the outcome, not the content", async () => {
  const { api, calls } = setup();
  const { event, ctx } = sample("after_tool_call.event.json");
  await api.handlers.after_tool_call.handler({ ...event, result: { ...event.result, details: { exitCode: 0 } } }, ctx);
  const sent = calls()[0].payload;
  assert.equal(sent.hook, "after_tool_call");
  assert.deepEqual(sent.event.result, { details: { exitCode: 0 } });
  assert.equal(sent.event.durationMs, 12);
});

test("summarizeResult keeps flags and exit codes, drops content", () => {
  assert.deepEqual(summarizeResult({ content: [{ type: "text", text: "x" }], isError: true, details: { exitCode: 2, out: [1] } }), {
    isError: true,
    details: { exitCode: 2 },
  });
});

for (const [command, why] of [
  ["garbage", /not valid JSON|Unexpected token|JSON/],
  ["silent", /exited with code 3/],
  ["weird", /does not understand/],
]) {
  test(`fails closed when guard answers ${command}`, async () => {
    const { api } = setup();
    const result = await before(api, command);
    assert.equal(result.block, true);
    assert.match(result.blockReason, why);
  });
}

test("fails closed when guard hangs past timeoutMs", async () => {
  const { api } = setup({ timeoutMs: 300 });
  const result = await before(api, "hang");
  assert.equal(result.block, true);
  assert.match(result.blockReason, /within 300 ms/);
});

test("fails closed when guard cannot be run at all", async () => {
  const { api } = setup({ command: [join(tmpdir(), "no-such-guard-binary")] });
  const result = await before(api, "ls");
  assert.equal(result.block, true);
  assert.match(result.blockReason, /ENOENT/);
});

test("a bare guard is found once on PATH and run by its absolute path, from /", async () => {
  const bin = mkdtempSync(join(tmpdir(), "guard-bin-"));
  const script = join(bin, "guard");
  writeFileSync(script, `#!/bin/sh\npwd > "${bin}/cwd"\nexec "${fakeGuard[0]}" "${fakeGuard[1]}" "$@"\n`);
  chmodSync(script, 0o755);
  assert.deepEqual(resolveCommand(["guard", "-x"], { PATH: `relative:${bin}` }), [script, "-x"]);
  const dir = mkdtempSync(join(tmpdir(), "guard-oc-"));
  const api = fakeApi();
  registerGuard(api, { workspace: join(dir, "ws") }, { env: { ...process.env, PATH: `${bin}:/usr/bin:/bin` } });
  assert.equal(await before(api, "ls"), undefined);
  assert.equal(readFileSync(join(bin, "cwd"), "utf8").trim(), "/");
});

test("a command that is neither absolute nor on PATH is never looked up relative to the cwd", async () => {
  assert.equal(resolveCommand(["./guard"], { PATH: "/usr/bin" }), null);
  assert.equal(resolveCommand(["guard"], { PATH: ".::bin" }), null);
  const { api } = setup({ command: ["no-such-guard-on-path"] });
  const result = await before(api, "ls");
  assert.equal(result.block, true);
  assert.match(result.blockReason, /not an absolute path and not on PATH/);
});

test("failClosed: false lets the call through when guard cannot answer", async () => {
  const { api } = setup({ failClosed: false });
  assert.equal(await before(api, "garbage"), undefined);
});

test("uses guard serve's socket when one answers, with guard's request shape", async () => {
  const dir = mkdtempSync(join(tmpdir(), "guard-oc-"));
  chmodSync(dir, 0o700);
  const requests = [];
  const server = createServer((conn) => {
    let data = "";
    conn.on("data", (chunk) => {
      data += chunk;
      if (data.endsWith("\n")) {
        requests.push(JSON.parse(data));
        conn.end(JSON.stringify({ v: 1, stdout: '{"block": true, "blockReason": "from the daemon"}\n', exit: 0 }) + "\n");
      }
    });
  });
  await new Promise((ok) => server.listen(socketPathFor(dir), ok));
  try {
    const api = fakeApi();
    registerGuard(api, { workspace: dir, command: [join(dir, "no-such-guard")] });
    const result = await before(api, "ls");
    assert.deepEqual(result, { block: true, blockReason: "from the daemon" });
    const [request] = requests;
    assert.equal(request.op, "hook");
    assert.equal(request.host, "openclaw");
    assert.equal(JSON.parse(request.input).event.params.command, "ls");
  } finally {
    server.close();
  }
});

test("falls back to the command when the daemon answers with an error", async () => {
  const dir = mkdtempSync(join(tmpdir(), "guard-oc-"));
  chmodSync(dir, 0o700);
  const server = createServer((conn) => conn.end(JSON.stringify({ v: 1, error: "daemon runs guard 0.0.9" }) + "\n"));
  await new Promise((ok) => server.listen(socketPathFor(dir), ok));
  try {
    const api = fakeApi();
    registerGuard(api, { workspace: dir, command: fakeGuard });
    assert.equal((await before(api, "rm -rf /")).block, true);
    assert.equal(await before(api, "ls"), undefined);
  } finally {
    server.close();
  }
});

test("socket path: in the workspace when short, a private hashed path when long", () => {
  assert.equal(socketPathFor("/home/u/.guard"), "/home/u/.guard/guard.sock");
  const long = "/tmp/" + "x".repeat(120);
  const path = socketPathFor(long, { XDG_RUNTIME_DIR: "/run/user/7" });
  assert.match(path, new RegExp(`^/run/user/7/guard-${process.getuid()}/[0-9a-f]{16}\\.sock$`));
});

test("workspace: config, then GUARD_HOME, then ~/.guard", () => {
  assert.equal(workspaceOf({ workspace: "/w" }, { GUARD_HOME: "/g" }), "/w");
  assert.equal(workspaceOf({}, { GUARD_HOME: "/g" }), "/g");
  assert.match(workspaceOf({}, {}), /\/\.guard$/);
});

test("the entry registers with the plugin's config; index.ts says the same as index.mjs", () => {
  const api = fakeApi({ command: fakeGuard });
  entry.register(api);
  assert.equal(entry.id, "guard");
  assert.deepEqual(Object.keys(api.handlers).sort(), ["after_tool_call", "before_tool_call"]);
  const ts = readFileSync(join(here, "..", "index.ts"), "utf8");
  for (const text of [`id: "${entry.id}"`, `name: "${entry.name}"`, `description: "${entry.description}"`, "registerGuard(api, "]) {
    assert.ok(ts.includes(text), `index.ts lacks ${text}`);
  }
  const manifest = JSON.parse(readFileSync(join(here, "..", "openclaw.plugin.json"), "utf8"));
  assert.equal(manifest.id, entry.id);
});
