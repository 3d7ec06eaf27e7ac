"""A throw-away world for one live host run: fake home, fake project, guard's workspace.

Everything a host process can touch lives under one temporary folder: ``home/`` (HOME, the
XDG folders and each host's config directory point here), ``project/`` (the host's cwd, a
git repository whose ``origin`` is a bare repository in the same folder) and ``guard/``
(GUARD_HOME). The environment a host gets is built from nothing, not copied from ours.

``bin/guard`` is first on PATH: this checkout's guard, as a person's ``guard`` is. ``guard
install HOST`` writes the hook command with guard's interpreter by absolute path
(``/venv/bin/python -I -m guard hook HOST``); :meth:`World.capture` then puts a shim in that
interpreter's place in the host's settings (``bin/python-capture``): it keeps each hook run
(argv, the environment, stdin, stdout, stderr, exit code) in ``captures/`` and runs the real
interpreter with the same arguments.
``LIVE_HOOK_UNSET=A,B`` in the host's environment hides those variables from guard (not from
the capture): how the recorded fixtures of a path an adapter defect closes were made.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs

ROOT = Path(__file__).resolve().parents[2]
SENTINEL = "sentinel_dir"
README_TEXT = "live-readme-7f3a91\n"

PYTHON = os.path.abspath(sys.executable)  # what `guard install` writes: guard's own interpreter
HOOK_PREFIX = f"{shlex.quote(PYTHON)} -I -m guard hook "

_LAUNCHER = """\
#!/bin/sh
exec {python} -m guard "$@"
"""

_SHIM = '''\
#!{python} -I
"""guard's interpreter, with each hook run kept in {captures} (argv, env, stdin, answer)."""
import json, os, subprocess, sys, time
args = sys.argv[1:]
argv = args[3:] if args[:3] == ["-I", "-m", "guard"] else []
if argv[:1] != ["hook"]:
    os.execv({python!r}, [{python!r}, *args])
data = sys.stdin.buffer.read()
env = dict(os.environ)
for name in filter(None, env.get("LIVE_HOOK_UNSET", "").split(",")):
    env.pop(name, None)
p = subprocess.run([{python!r}, *args], input=data, capture_output=True, env=env)
record = {{"argv": argv, "interpreter_argv": args, "env": dict(os.environ),
          "stdin": data.decode("utf-8", "replace"), "stdout": p.stdout.decode("utf-8", "replace"),
          "stderr": p.stderr.decode("utf-8", "replace"), "rc": p.returncode}}
name = os.path.join({captures!r}, "%d-%d.json" % (time.time_ns(), os.getpid()))
with open(name + ".part", "w", encoding="utf-8") as f:  # renamed when whole: tests poll this folder
    json.dump(record, f)
os.replace(name + ".part", name)
sys.stdout.buffer.write(p.stdout)
sys.stderr.buffer.write(p.stderr)
sys.exit(p.returncode)
'''

# Where `guard install HOST` writes its handlers.
SETTINGS = {
    "claude-code": ".claude/settings.json",
    "codex": ".codex/hooks.json",
    "gemini": ".gemini/settings.json",
}


@attrs.define
class World:
    root: Path
    installed: dict[str, Any] = attrs.field(factory=dict)  # the settings as `guard install` wrote them

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def remote(self) -> Path:
        return self.root / "remote.git"

    @property
    def guard_home(self) -> Path:
        return self.root / "guard"

    @property
    def captures_dir(self) -> Path:
        return self.root / "captures"

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def shim(self) -> Path:
        """Stands in for guard's interpreter in the hook commands: keeps each hook run."""
        return self.bin / "python-capture"

    def settings(self, host: str) -> Path:
        return self.home / SETTINGS[host]

    def capture(self, host: str) -> dict[str, Any]:
        """Check what ``guard install HOST`` wrote, then route its hooks through the shim.

        Every handler's command must be guard's interpreter by absolute path with isolated
        imports, ``PY -I -m guard hook HOST`` (for Claude Code and Gemini CLI followed by the
        crash fallback). In the settings file that interpreter is replaced by the shim, the
        rest of the command kept. Returns the document as guard wrote it.
        """
        path = self.settings(host)
        text = path.read_text(encoding="utf-8")
        doc: dict[str, Any] = json.loads(text)
        commands = [h["command"] for entries in doc["hooks"].values() for e in entries for h in e["hooks"]]
        assert commands, doc
        for command in commands:
            assert command.startswith(HOOK_PREFIX + host), (command, HOOK_PREFIX)
        shimmed = json.loads(text)
        for entries in shimmed["hooks"].values():
            for e in entries:
                for h in e["hooks"]:
                    h["command"] = shlex.quote(str(self.shim)) + h["command"].removeprefix(shlex.quote(PYTHON))
        path.write_text(json.dumps(shimmed, indent=2) + "\n", encoding="utf-8")
        self.installed = doc
        return doc

    @classmethod
    def make(cls, root: Path) -> World:
        w = cls(root)
        for d in (w.home, w.project, w.captures_dir, w.bin, w.project / SENTINEL):
            d.mkdir(parents=True)
        w.guard_home.mkdir(mode=0o700)
        (w.project / SENTINEL / "keep.txt").write_text("keep\n", encoding="utf-8")
        (w.project / "readme.txt").write_text(README_TEXT, encoding="utf-8")
        launcher = w.bin / "guard"
        launcher.write_text(_LAUNCHER.format(python=shlex.quote(PYTHON)), encoding="utf-8")
        launcher.chmod(0o755)
        w.shim.write_text(_SHIM.format(python=PYTHON, captures=str(w.captures_dir)), encoding="utf-8")
        w.shim.chmod(0o755)
        w._git_repos()
        return w

    def _git_repos(self) -> None:
        """``project`` on main, one commit ahead of and diverged from ``remote.git``'s main."""
        env = self.env()
        run = lambda *a, cwd=self.project: subprocess.run(  # noqa: E731
            ["git", *a], cwd=cwd, env=env, check=True, capture_output=True
        )
        run("init", "-q", "--bare", "-b", "main", str(self.remote), cwd=self.root)
        run("init", "-q", "-b", "main")
        run("config", "user.email", "live@example.invalid")
        run("config", "user.name", "live")
        run("add", "readme.txt")
        run("commit", "-q", "-m", "one")
        run("remote", "add", "origin", str(self.remote))
        run("push", "-q", "origin", "main")
        run("commit", "-q", "--amend", "-m", "one, rewritten")

    def remote_head(self) -> str:
        p = subprocess.run(
            ["git", "--git-dir", str(self.remote), "rev-parse", "main"], env=self.env(), capture_output=True, text=True
        )
        return p.stdout.strip()

    def env(self, **extra: str) -> dict[str, str]:
        h = str(self.home)
        env = {
            "PATH": os.pathsep.join(
                [str(self.bin), str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]
            ),
            "HOME": h,
            "USER": "live",
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "TMPDIR": str(self.root),
            "XDG_CONFIG_HOME": f"{h}/.config",
            "XDG_DATA_HOME": f"{h}/.local/share",
            "XDG_CACHE_HOME": f"{h}/.cache",
            "XDG_STATE_HOME": f"{h}/.local/state",
            "XDG_RUNTIME_DIR": str(self.root),
            "GUARD_HOME": str(self.guard_home),
            "GUARD_SYSTEM_HEALTH": "90",
            "GUARD_HOOKS_DAEMON_IDLE_SECONDS": "120",
            "LANCE_LOG": "error",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "NO_COLOR": "1",
        }
        env.update(extra)
        return env

    def guard(self, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
        """This checkout's guard, run in the world as ``guard`` (first on its PATH)."""
        return subprocess.run(
            [str(self.bin / "guard"), *args], cwd=self.project, env=self.env(), capture_output=True, text=True, **kw
        )

    def stop_daemon(self) -> None:
        self.guard("serve", "--stop", "--wait", "5", timeout=30)

    def reap(self) -> list[int]:
        """Kill what the hosts left running: every process whose HOME is this world's fake home
        (Codex's TUI starts an app-server daemon in a session of its own). Returns their ids."""
        mine = f"HOME={self.home}".encode()
        killed = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                environ = (entry / "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if mine in environ:
                try:
                    os.kill(int(entry.name), signal.SIGKILL)
                    killed.append(int(entry.name))
                except ProcessLookupError:
                    pass
        return killed

    # --- what guard wrote -----------------------------------------------------------------

    def _jsonl(self, name: str) -> list[dict[str, Any]]:
        path = self.guard_home / name
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    def decisions(self) -> list[dict[str, Any]]:
        return self._jsonl(".fusion-decisions.jsonl")

    def executions(self) -> list[dict[str, Any]]:
        return self._jsonl(".command-execution.jsonl")

    def captures(self) -> list[dict[str, Any]]:
        """Every hook run, oldest first, with its payload parsed (``payload``)."""
        out = []
        for f in sorted(self.captures_dir.glob("*.json")):
            rec = json.loads(f.read_text(encoding="utf-8"))
            try:
                rec["payload"] = json.loads(rec["stdin"])
            except ValueError:
                rec["payload"] = None
            out.append(rec)
        return out

    def describe(self) -> str:
        """What happened, for an assertion message."""
        lines = [f"world {self.root}"]
        for c in self.captures():
            p = c["payload"] or {}
            lines.append(
                f"  hook {p.get('hook_event_name')} rc={c['rc']} out={c['stdout'][:300]!r} err={c['stderr'][:300]!r}"
            )
        for d in self.decisions():
            lines.append(f"  decision {d.get('tool')} {d.get('decision')} {str(d.get('reasons'))[:200]}")
        for e in self.executions():
            lines.append(f"  execution {json.dumps(e)[:300]}")
        return "\n".join(lines)


def version_of(argv: list[str], root: Path) -> subprocess.CompletedProcess[str]:
    """A host's ``--version``, run in a fake home of its own: even that writes there (Gemini CLI
    leaves ``~/.gemini/projects.json.*.tmp`` behind), and no host run may touch the real HOME."""
    world = World(root)
    world.home.mkdir(parents=True, exist_ok=True)
    env = world.env(PATH=os.environ.get("PATH", "/usr/bin:/bin"))
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, cwd=root)


def run_host(argv: list[str], world: World, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """Run a host to the end in its own process group; on timeout the whole group is killed
    (a CLI that relaunches itself leaves a child that outlives its parent) and TimeoutExpired raised."""
    p = subprocess.Popen(
        argv,
        cwd=world.project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise
    finally:
        try:  # anything it left behind
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return subprocess.CompletedProcess(argv, p.returncode, out, err)


RECORD_ENV = "LIVE_RECORD"
PERSON_SETS = ("GUARD_HEADLESS",)  # guard's variables a person sets for a run (kept in the fixture)
FIXTURES = ROOT / "tests" / "integrations" / "protocols" / "live"
HOST_DIRS = {"claude-code": "claude_code", "codex": "codex", "gemini": "gemini_cli", "openclaw": "openclaw"}


def record(world: World, host: str, version: str, scenario: str, given: dict[str, str]) -> None:
    """With ``LIVE_RECORD=1``, keep this run's hook payloads as a replay fixture.

    ``protocols/live/HOST_DIR/SCENARIO.json``: each hook run's argv, the variables the host
    added to the environment we gave it (tokens redacted), the payload as the host sent it
    and guard's answer; ``set_by_the_person``: guard's variables the run was started with
    (``GUARD_HEADLESS``). The world's folder is written as ``/tmp/live`` so fixtures are stable.
    """
    if os.environ.get(RECORD_ENV) != "1":
        return
    runs = []
    for c in world.captures():
        added = {k: v for k, v in sorted(c["env"].items()) if given.get(k) != v}
        added = {k: ("<redacted>" if "TOKEN" in k or "KEY" in k else v) for k, v in added.items()}
        runs.append(
            {
                "argv": c["argv"],
                "env_added_by_host": added,
                "payload": c["payload"] if c["payload"] is not None else c["stdin"],
                "answer": {"stdout": c["stdout"], "stderr": c["stderr"], "exit_code": c["rc"]},
            }
        )
    doc: dict[str, Any] = {"host": host, "version": version, "scenario": scenario}
    said = {k: given[k] for k in PERSON_SETS if k in given}
    if said:
        doc["set_by_the_person"] = said
    if given.get("LIVE_HOOK_UNSET"):
        doc["hidden_from_guard"] = given["LIVE_HOOK_UNSET"].split(",")
    doc["runs"] = runs
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    text = text.replace(str(world.root), "/tmp/live").replace(str(ROOT), "/repo")
    text = text.replace(str(Path(sys.executable).parent), "/venv/bin").replace(str(Path(PYTHON).parent), "/venv/bin")
    text = text.replace(re.sub(r"[^A-Za-z0-9]", "-", str(world.root)), "-tmp-live")
    out = FIXTURES / HOST_DIRS[host] / f"{re.sub(r'[^A-Za-z0-9_-]+', '_', scenario).strip('_')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
