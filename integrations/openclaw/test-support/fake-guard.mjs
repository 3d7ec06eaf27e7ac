// A stand-in for `guard hook openclaw` in the plugin's unit tests: logs what it was sent and
// answers by the command in the event. (The real guard is exercised by tests/integrations.)
import { appendFileSync, readFileSync } from "node:fs";

const payload = JSON.parse(readFileSync(0, "utf8"));
if (process.env.FAKE_GUARD_LOG) {
  appendFileSync(process.env.FAKE_GUARD_LOG, JSON.stringify({ argv: process.argv.slice(2), payload }) + "\n");
}
const command = payload.event?.params?.command;
const answers = {
  ls: {},
  "rm -rf /": { block: true, blockReason: "guard: this exec call is blocked: recursive delete [G101]." },
  "rm -rf build": {
    requireApproval: {
      title: "Run shell command",
      description: "guard: `rm -rf build` deletes files",
      severity: "warning",
      allowedDecisions: ["allow-once", "deny"],
      timeoutMs: 120000,
    },
  },
  weird: { allow: "maybe" },
};
if (payload.hook !== "before_tool_call") {
  process.stdout.write("{}\n");
} else if (command === "garbage") {
  process.stdout.write("this is not JSON\n");
} else if (command === "silent") {
  process.exit(3);
} else if (command === "hang") {
  setTimeout(() => {}, 60_000);
} else {
  process.stdout.write(JSON.stringify(answers[command] ?? {}) + "\n");
}
