"""The real agent hosts, installed from npm at pinned versions into ``tests/live/.hosts/``.

An install that fails (no registry, no npm) makes the tests of that host skip with the
reason; a host that installs and then misbehaves fails them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import attrs
import pytest

CACHE = Path(__file__).parent / ".hosts"


@attrs.frozen
class Package:
    name: str
    version: str
    binaries: tuple[str, ...]  # relative to the install prefix, the first that exists
    node: Package | None = None  # a node the package's install checks for (first on PATH)

    @property
    def prefix(self) -> Path:
        return CACHE / f"{self.name.replace('@', '').replace('/', '+')}-{self.version}"

    def path(self) -> Path:
        """The installed binary, installing first if needed; skips the test when that fails."""
        stamp = self.prefix / ".installed"
        if stamp.exists() and (exe := self._binary()) is not None:
            return exe
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip(f"{self.name}@{self.version}: npm is not installed")
        self.prefix.mkdir(parents=True, exist_ok=True)
        try:
            p = subprocess.run(
                [
                    npm,
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--no-save",
                    "--prefix",
                    str(self.prefix),
                    f"{self.name}@{self.version}",
                ],
                capture_output=True,
                text=True,
                timeout=600,
                env=self._env(),
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            pytest.skip(f"{self.name}@{self.version}: npm install failed: {e}")
        exe = self._binary()
        if p.returncode != 0 or exe is None:
            pytest.skip(f"{self.name}@{self.version}: npm install failed: {(p.stderr or p.stdout)[-500:]}")
        stamp.write_text(self.version, encoding="utf-8")
        return exe

    def _env(self) -> dict[str, str]:
        env = {**os.environ, "npm_config_update_notifier": "false"}
        # The test process's HOME is fake (tests/conftest.py); npm needs the real one's
        # registry settings (~/.npmrc) and download cache (~/.npm), and nothing else of it.
        real = Path(os.environ.get("REAL_HOME") or Path.home())
        env.setdefault("npm_config_userconfig", str(real / ".npmrc"))
        env.setdefault("npm_config_cache", str(real / ".npm"))
        if self.node is not None:
            env["PATH"] = str(self.node.path().parent) + os.pathsep + env.get("PATH", "")
        return env

    def _binary(self) -> Path | None:
        for rel in self.binaries:
            if (self.prefix / rel).is_file():
                return self.prefix / rel
        return None


# The npm package's postinstall links the platform binary into bin/; the binary itself is in
# the platform package whether or not the postinstall ran.
CLAUDE_CODE = Package(
    "@anthropic-ai/claude-code",
    "2.1.332",
    (
        "node_modules/@anthropic-ai/claude-code-linux-x64/claude",
        "node_modules/@anthropic-ai/claude-code-linux-arm64/claude",
        "node_modules/@anthropic-ai/claude-code/bin/claude.exe",
    ),
)

GEMINI_CLI = Package(
    "@google/gemini-cli", "0.61.0", ("node_modules/@google/gemini-cli/bundle/gemini.js", "node_modules/.bin/gemini")
)

# The npm package ships the native binary in its platform package (vendor/<triple>/bin/codex).
CODEX = Package(
    "@openai/codex",
    "0.171.0",
    (
        "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
        "node_modules/@openai/codex-linux-arm64/vendor/aarch64-unknown-linux-musl/bin/codex",
    ),
)

# OpenClaw 2026.9.6 refuses Node < 24.16: node itself comes from npm too.
NODE_24 = Package("node", "24.21.0", ("node_modules/node/bin/node",))
OPENCLAW = Package("openclaw", "2026.9.6", ("node_modules/openclaw/openclaw.mjs",), node=NODE_24)
