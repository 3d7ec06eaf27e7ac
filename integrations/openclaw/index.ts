// OpenClaw entry for guard: before_tool_call / after_tool_call go through guard.
// The logic lives in guard-plugin.mjs (runs as is under node, tested with `node --test`);
// index.mjs is this file without its types, for OpenClaw installs that need runtime JS.

import { registerGuard, type GuardPluginConfig, type PluginApi } from "./guard-plugin.mjs";

const plugin = {
  id: "guard",
  name: "Guard",
  description: "Decides auto_allow / request_confirm / block for every tool call with guard",
  register(api: PluginApi): void {
    registerGuard(api, (api.pluginConfig ?? {}) as GuardPluginConfig);
  },
};

export default plugin;
