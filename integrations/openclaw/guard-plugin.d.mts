// Types for guard-plugin.mjs (OpenClaw's own hook types live in its plugin SDK; these are the
// parts guard uses, kept local so the plugin has no build-time dependency).

export type ApprovalDecision = "allow-once" | "allow-always" | "deny";
export type ApprovalResolution = ApprovalDecision | "timeout" | "cancelled";

export interface BeforeToolCallResult {
  params?: Record<string, unknown>;
  block?: boolean;
  blockReason?: string;
  requireApproval?: {
    title: string;
    description: string;
    severity?: "info" | "warning" | "critical";
    timeoutMs?: number;
    allowedDecisions?: ApprovalDecision[];
    onResolution?: (decision: ApprovalResolution) => void | Promise<void>;
  };
}

export interface PluginApi {
  pluginConfig?: unknown;
  on(
    hook: "before_tool_call",
    handler: (event: Record<string, unknown>, ctx: Record<string, unknown>) => Promise<BeforeToolCallResult | undefined>,
    options?: { priority?: number; timeoutMs?: number },
  ): void;
  on(
    hook: "after_tool_call",
    handler: (event: Record<string, unknown>, ctx: Record<string, unknown>) => Promise<void>,
    options?: { priority?: number; timeoutMs?: number },
  ): void;
}

export interface GuardPluginConfig {
  /** How to run guard, by absolute path: ["/venv/bin/python", "-I", "-m", "guard"]; default ["guard"], found on PATH once. */
  command?: string[];
  /** guard's workspace (default: $GUARD_HOME, else ~/.guard). */
  workspace?: string;
  /** The daemon's socket (default: derived from the workspace as guard does). */
  socket?: string;
  /** How long to wait for guard's answer (default 10000). */
  timeoutMs?: number;
  /** Block the call when guard cannot be asked (default true). */
  failClosed?: boolean;
  /** Hook priority; higher runs earlier (default 1000). */
  priority?: number;
}

export interface GuardClient {
  hook(payload: Record<string, unknown>): Promise<Record<string, unknown>>;
}

export declare const PLUGIN_ID: string;
export declare function workspaceOf(config?: GuardPluginConfig, env?: Record<string, string | undefined>): string;
export declare function socketPathFor(workspace: string, env?: Record<string, string | undefined>): string;
export declare function plain(value: unknown): Record<string, unknown>;
export declare function summarizeResult(result: unknown): unknown;
/** guard's command with its program by absolute path (looked up on PATH once), or null. */
export declare function resolveCommand(command: string[], env?: Record<string, string | undefined>): string[] | null;
export declare function createGuardClient(config?: GuardPluginConfig, env?: Record<string, string | undefined>): GuardClient;
export declare function toHookResult(
  answer: Record<string, unknown>,
  onResolution: (decision: ApprovalResolution) => Promise<void>,
): BeforeToolCallResult | undefined;
export declare function registerGuard(
  api: PluginApi,
  config?: GuardPluginConfig,
  deps?: { client?: GuardClient; env?: Record<string, string | undefined> },
): void;
