// index.ts without its types (OpenClaw's runtime entry where TypeScript is not loaded).

import { registerGuard } from "./guard-plugin.mjs";

const plugin = {
  id: "guard",
  name: "Guard",
  description: "Decides auto_allow / request_confirm / block for every tool call with guard",
  register(api) {
    registerGuard(api, api.pluginConfig ?? {});
  },
};

export default plugin;
