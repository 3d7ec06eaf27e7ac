// guard for OpenClaw: every tool call is put to guard before it runs.
//
//   before_tool_call  -> guard decides: nothing (allow), {block, blockReason}, or
//                        {requireApproval} whose onResolution records the person's answer
//   after_tool_call   -> guard records how the call went
//
// guard is reached through its daemon's Unix socket (`guard serve`, started on demand by
// guard's own hook command) when one runs, else by running `guard hook openclaw`. Whatever
// fails (guard missing, slow, or answering nonsense) blocks the call unless the plugin is
// configured with failClosed: false.
//
// Plain JavaScript with JSDoc types so that it runs as is; types for TypeScript callers are
// in guard-plugin.d.mts, and index.ts is the typed OpenClaw entry.

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { accessSync, constants, statSync } from "node:fs";
import { createConnection } from "node:net";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";

export const PLUGIN_ID = "guard";
const PROTOCOL = 1;
const MAX_SOCKET_PATH = 100;
const ENV_PREFIXES = ["GUARD_"];

/** @typedef {import("./guard-plugin.d.mts").GuardPluginConfig} GuardPluginConfig */
/** @typedef {import("./guard-plugin.d.mts").PluginApi} PluginApi */
/** @typedef {import("./guard-plugin.d.mts").GuardClient} GuardClient */

/** guard's workspace: config.workspace, else $GUARD_HOME, else ~/.guard (as guard resolves it). */
export function workspaceOf(config = {}, env = process.env) {
  const raw = config.workspace || env.GUARD_HOME || "~/.guard";
  return resolve(raw === "~" || raw.startsWith("~/") ? join(homedir(), raw.slice(1)) : raw);
}

/** Where `guard serve` listens for a workspace; mirrors integrations/daemon.py socket_path. */
export function socketPathFor(workspace, env = process.env) {
  const path = join(workspace, "guard.sock");
  if (Buffer.byteLength(path) <= MAX_SOCKET_PATH) return path;
  const base = env.XDG_RUNTIME_DIR || env.TMPDIR || "/tmp";
  const digest = createHash("sha256").update(workspace).digest("hex").slice(0, 16);
  return join(base, `guard-${process.getuid()}`, `${digest}.sock`);
}

function privateDir(path) {
  try {
    const st = statSync(path);
    return st.isDirectory() && st.uid === process.getuid() && (st.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

function guardEnv(env) {
  return Object.fromEntries(Object.entries(env).filter(([k]) => ENV_PREFIXES.some((p) => k.startsWith(p))));
}

/**
 * guard's command with its program by absolute path: as given when absolute, else looked up
 * once on PATH (absolute PATH entries only: an empty or relative entry would mean the agent's
 * working directory). null when it cannot be found; a relative path such as "./guard" never is.
 * @param {string[]} command
 * @returns {string[] | null}
 */
export function resolveCommand(command, env = process.env) {
  const [program, ...rest] = command;
  if (typeof program !== "string" || !program) return null;
  if (isAbsolute(program)) return [program, ...rest];
  if (program.includes("/")) return null;
  for (const dir of (env.PATH || "").split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, program);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return [candidate, ...rest];
    } catch {
      // not here
    }
  }
  return null;
}

/** A JSON-safe copy: drops functions, abort signals and anything that will not serialise. */
export function plain(value) {
  try {
    return JSON.parse(
      JSON.stringify(value ?? {}, (key, v) =>
        key === "abortSignal" || typeof v === "function" || typeof v === "bigint" ? undefined : v,
      ),
    );
  } catch {
    return {};
  }
}

/** Only what guard needs from a tool result: its flags and exit code, not its (possibly huge) content. */
export function summarizeResult(result) {
  if (result === null || typeof result !== "object" || Array.isArray(result)) return result;
  const out = {};
  for (const [k, v] of Object.entries(result)) {
    if (v === null || ["string", "number", "boolean"].includes(typeof v)) {
      out[k] = typeof v === "string" ? v.slice(0, 500) : v;
    } else if (k === "details" && typeof v === "object" && !Array.isArray(v)) {
      out.details = summarizeResult(v);
    }
  }
  return out;
}

/**
 * The way to guard: its daemon's socket when it answers, else the `guard hook openclaw` command.
 * @param {GuardPluginConfig} config
 * @returns {GuardClient}
 */
export function createGuardClient(config = {}, env = process.env) {
  const workspace = workspaceOf(config, env);
  const socket = config.socket || socketPathFor(workspace, env);
  const wanted = config.command && config.command.length ? config.command : ["guard"];
  const command = resolveCommand(wanted, env);
  const timeoutMs = config.timeoutMs ?? 10_000;

  function viaSocket(payload) {
    return new Promise((resolveAnswer) => {
      if (!privateDir(dirname(socket))) return resolveAnswer(null);
      const conn = createConnection(socket);
      const chunks = [];
      const give = (answer) => {
        conn.destroy();
        resolveAnswer(answer);
      };
      conn.setTimeout(timeoutMs, () => give(null));
      conn.on("error", () => give(null));
      conn.on("connect", () => {
        const request = { v: PROTOCOL, op: "hook", host: "openclaw", input: JSON.stringify(payload),
                          headless: false, may_ask: true, env: guardEnv(env) };
        conn.write(JSON.stringify(request) + "\n");
      });
      conn.on("data", (chunk) => chunks.push(chunk));
      conn.on("end", () => {
        try {
          const reply = JSON.parse(Buffer.concat(chunks).toString("utf8"));
          give(typeof reply.stdout === "string" ? reply.stdout : null);
        } catch {
          give(null);
        }
      });
    });
  }

  function viaCommand(payload) {
    return new Promise((resolveAnswer, reject) => {
      if (command === null) {
        return reject(new Error(`${JSON.stringify(wanted[0])} is not an absolute path and not on PATH; set ` +
                                "plugins.entries.guard.config.command to guard's absolute command " +
                                "(`guard install openclaw` prints it)"));
      }
      const args = [...command.slice(1), "hook", "openclaw"];
      if (config.workspace) args.push("--workspace", workspace);
      let child;
      try {
        // cwd "/": not the agent's project, whose files must not answer for guard (`python -m guard`)
        child = spawn(command[0], args, { stdio: ["pipe", "pipe", "pipe"], env, cwd: "/" });
      } catch (err) {
        return reject(err);
      }
      const out = [];
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error(`guard did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      child.on("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.stdout.on("data", (chunk) => out.push(chunk));
      child.stderr.resume();
      child.on("close", (code) => {
        clearTimeout(timer);
        const text = Buffer.concat(out).toString("utf8");
        if (!text.trim()) return reject(new Error(`guard exited with code ${code} and no answer`));
        resolveAnswer(text);
      });
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify(payload));
    });
  }

  return {
    async hook(payload) {
      const text = (await viaSocket(payload)) ?? (await viaCommand(payload));
      const answer = JSON.parse(text);
      if (answer === null || typeof answer !== "object" || Array.isArray(answer)) {
        throw new Error("guard's answer is not a JSON object");
      }
      return answer;
    },
  };
}

/** The tool call's id, from the event or its context. */
function callIdOf(event, ctx) {
  const id = (event && event.toolCallId) || (ctx && ctx.toolCallId);
  return typeof id === "string" && id ? id : null;
}

/** guard's answer as OpenClaw's before_tool_call result; throws on anything it does not recognise. */
export function toHookResult(answer, onResolution) {
  if (answer.block === true) {
    return { block: true, blockReason: String(answer.blockReason || "guard: blocked") };
  }
  if (answer.requireApproval && typeof answer.requireApproval === "object") {
    return { requireApproval: { ...answer.requireApproval, onResolution } };
  }
  if (Object.keys(answer).length === 0) return undefined;
  throw new Error(`guard answered something this plugin does not understand: ${JSON.stringify(answer).slice(0, 200)}`);
}

/**
 * Register guard's hooks on an OpenClaw plugin api.
 * @param {PluginApi} api
 * @param {GuardPluginConfig} [config]
 * @param {{client?: GuardClient, env?: Record<string, string | undefined>}} [deps]
 */
export function registerGuard(api, config = {}, deps = {}) {
  const client = deps.client ?? createGuardClient(config, deps.env ?? process.env);
  const failClosed = config.failClosed !== false;
  const priority = config.priority ?? 1000;
  // Calls guard refused (blocked, or the person denied): OpenClaw still reports them to
  // after_tool_call with an error, which is not a tool failure; guard already counted the refusal.
  const refused = new Set();
  const refuse = (event, ctx) => {
    const id = callIdOf(event, ctx);
    if (!id) return;
    refused.add(id);
    if (refused.size > 1024) refused.delete(refused.values().next().value);
  };

  api.on(
    "before_tool_call",
    async (event, ctx) => {
      const payload = { hook: "before_tool_call", event: plain(event), ctx: plain(ctx) };
      try {
        const answer = await client.hook(payload);
        const onResolution = async (resolution) => {
          if (resolution !== "allow-once" && resolution !== "allow-always") refuse(event, ctx);
          try {
            await client.hook({ hook: "approval_resolution", event: payload.event, ctx: payload.ctx, resolution });
          } catch {
            // the person's answer stands; guard only misses one data point
          }
        };
        const result = toHookResult(answer, onResolution);
        if (result && result.block) refuse(event, ctx);
        return result;
      } catch (err) {
        if (!failClosed) return undefined;
        refuse(event, ctx);
        const why = err instanceof Error ? err.message : String(err);
        return { block: true, blockReason: `guard could not check this call (${why}), so it is blocked.` };
      }
    },
    { priority },
  );

  api.on("after_tool_call", async (event, ctx) => {
    const copy = plain(event);
    if ("result" in copy) copy.result = summarizeResult(copy.result);
    const id = callIdOf(event, ctx);
    if (id && refused.delete(id)) copy.guardRefused = true;
    try {
      await client.hook({ hook: "after_tool_call", event: copy, ctx: plain(ctx) });
    } catch {
      // observing only: a lost result must not disturb the run
    }
  });
}
