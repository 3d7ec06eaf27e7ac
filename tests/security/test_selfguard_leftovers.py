"""The self-protection holes issue 12 left: each blocked now, with the near-misses beside it.

- a kill whose targets a search for guard picked (``pgrep guard | xargs kill``, ``ps aux | grep
  guard | awk '{print $2}' | xargs kill``) only asked (G178): now G411, like ``pkill -f guard``;
- a copy, link or new name for guard's console script or package (``cp $(which guard) /tmp/g``)
  was allowed: now G414;
- ``__import__("gu" + "ard")`` and other import names built from expressions were allowed: now
  G412, the name worked out by the interpreter folder (``guard/static/reading/fold.py``);
- ``guard mcp-proxy`` started by the agent only asked (G413): the proxy's MCP client would be the
  agent itself, answering guard's confirmations as the person: now G410;
- ``tiers.json`` times were read as written: one in 9999 refused every double reward for ever, a
  ``1e309`` score read as infinity (the top tier);
- ``Guard.record_result`` / ``@guarded`` raised ``OSError`` on a full disk.

Driven through ``Guard.decide``, ``guard check`` and ``guard hook claude-code`` in a subprocess
with a fake HOME and GUARD_HOME, and (the disk) a subprocess with a real file size limit.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

from guard.core import Guard
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM
from tests.conftest import GUARD_CMD, ROOT, guard_cli_env
from tests.integrations.hookhelpers import hook_env, prepare, run_hook, sample, with_command
from tests.security.conftest import decide

HOME = "/home/u"

KILLS = [
    "pgrep guard | xargs kill",
    "pgrep -f 'guard serve' | xargs kill -9",
    "kill $(pgrep -f guard)",
    "pkill -f guard",
    "killall guard",
    "ps aux | grep guard | awk '{print $2}' | xargs kill",
    "ps -ef | grep -i GUARD | grep -v grep | awk '{print $2}' | xargs kill -9",
    "ps aux | awk '/guard/ {print $2}' | xargs kill",
    "ps aux | grep -F 'guard serve' | cut -c10-15 | xargs -I{} kill {}",
    "ps -C guard -o pid= | xargs kill",
    "pidof guard | xargs kill",
    "pgrep guard | while read p; do kill $p; done",
    'pgrep guard | while read -r p; do kill -9 "$p"; done',
    "for p in $(pgrep guard); do kill $p; done",
    "p=$(pgrep -f guard); kill -9 $p",
    "pgrep guard > /tmp/pids; kill $(cat /tmp/pids)",
    "sudo kill $(pgrep guard)",
    "pgrep -f guard | xargs -r kill -TERM",
]
KILL_NEAR = {  # broad kills still ask (G178); searches alone run
    "pgrep python | xargs kill": REQUEST_CONFIRM,
    "ps aux | grep node | awk '{print $2}' | xargs kill": REQUEST_CONFIRM,
    "pgrep -f 'node server.js' | xargs kill": REQUEST_CONFIRM,
    "ps aux | grep -v guard | awk '{print $2}' | xargs kill": REQUEST_CONFIRM,
    "pgrep node | while read p; do kill $p; done": REQUEST_CONFIRM,
    "kill 1234": REQUEST_CONFIRM,
    "pgrep -l python": AUTO_ALLOW,
    "ps aux | grep guard": AUTO_ALLOW,
    "pgrep -f guard": AUTO_ALLOW,
    "ps aux | grep guard | awk '{print $2}'": AUTO_ALLOW,
    "pidof guard": AUTO_ALLOW,
}

COPIES = [
    "cp $(which guard) /tmp/g",
    "cp `command -v guard` ./g",
    'g=$(which guard); cp "$g" ./mine',
    "ln -s ~/.venv/bin/guard /tmp/x",
    "ln /home/u/.venv/bin/guard x",
    "cp -s /home/u/.venv/bin/guard x",
    "install -m755 /home/u/.venv/bin/guard /home/u/g",
    "mv /home/u/.venv/bin/guard /home/u/g",
    "cp -r /home/u/.venv/lib/python3.11/site-packages/guard /home/u/x",
    "rsync -a /home/u/.venv/lib/python3.11/site-packages/integrations/ ./i/",
    "cat $(which guard) > g.py",
    "cat /home/u/.venv/bin/guard | tee ./g >/dev/null",
]
COPY_NEAR = [
    "cp guard.py backup/",
    "cp src/guard/app.py src/app2.py",
    "cat $(which guard)",
    "ls -la $(which guard)",
    "grep -rn def /home/u/.venv/lib/python3.11/site-packages/guard",
    "cp bin/guardian.sh bin/g2.sh",
]

IMPORTS = [
    'python3 -c \'__import__("gu"+"ard")\'',
    'python3 -c \'import importlib; importlib.import_module("gu" "ard")\'',
    'python3 -c \'import importlib; importlib.import_module("".join(["g","uard"]))\'',
    'python3 -c \'import importlib; m=importlib.import_module("gu"+"ard.cli"); m.main(["reset","--all"])\'',
    'python3 -c \'from importlib import import_module as im; im("integ"+"rations.daemon")\'',
    'python3 -c \'n="gu"; n+="ard"; __import__(n)\'',
    'python3 -c \'import runpy; runpy.run_module("gu"+"ard", run_name="__main__")\'',
    "python3 - <<'PY'\nimport importlib\nimportlib.import_module('g' + 'uard.cli').main(['approve', 'last'])\nPY",
]
IMPORT_NEAR = [
    'python3 -c \'import importlib; importlib.import_module("js" + "on")\'',
    "python3 -c 'import importlib; importlib.import_module(\"guardrails\")'",
    'python3 -c \'__import__("o"+"s").getcwd()\'',
    "python3 -c 'import guard; print(guard.__version__)'",
    "python3 -c 'import importlib, sys; importlib.import_module(sys.argv[1])' json",
]

MCP = [
    "guard mcp-proxy --name x -- python3 server.py",
    "python3 -m guard mcp-proxy -- npx -y some-server",
    "python -m guard.cli.mcp_proxy",
]
MCP_NEAR = ["guard mcp-proxy --help"]


# -- Guard.decide ---------------------------------------------------------------------------
@pytest.mark.parametrize("command", KILLS)
def test_a_kill_aimed_at_guard_by_search_blocks(module_guard: Guard, command: str) -> None:
    decision, rules = decide(module_guard, command)
    assert (decision, "G411" in rules) == (BLOCK, True), (command, rules)


@pytest.mark.parametrize(("command", "expected"), KILL_NEAR.items())
def test_broad_kills_ask_and_searches_run(module_guard: Guard, command: str, expected: str) -> None:
    decision, rules = decide(module_guard, command)
    assert decision == expected and "G411" not in rules, (command, decision, rules)


@pytest.mark.parametrize("command", COPIES)
def test_copying_guards_program_blocks(module_guard: Guard, command: str) -> None:
    decision, rules = decide(module_guard, command)
    assert (decision, "G414" in rules) == (BLOCK, True), (command, rules)


@pytest.mark.parametrize("command", COPY_NEAR)
def test_reading_guards_program_or_copying_other_files_does_not(module_guard: Guard, command: str) -> None:
    decision, rules = decide(module_guard, command)
    assert decision != BLOCK and "G414" not in rules, (command, decision, rules)


@pytest.mark.parametrize("command", IMPORTS)
def test_a_folded_import_of_guard_blocks(module_guard: Guard, command: str) -> None:
    decision, rules = decide(module_guard, command)
    assert decision == BLOCK and rules & {"G410", "G412"}, (command, rules)


@pytest.mark.parametrize("command", IMPORT_NEAR)
def test_other_folded_imports_run(module_guard: Guard, command: str) -> None:
    decision, rules = decide(module_guard, command)
    assert decision == AUTO_ALLOW, (command, decision, rules)


def test_an_import_name_decoded_at_run_time_asks(module_guard: Guard) -> None:
    """guard cannot fold ``b64decode(…)``: the name may be guard's, so the person sees it (G431)."""
    decision, rules = decide(
        module_guard, "python3 -c 'import base64; __import__(base64.b64decode(\"Z3VhcmQ=\").decode())'"
    )
    assert decision == REQUEST_CONFIRM and "G431" in rules, rules


def test_a_folded_import_name_also_folds_what_it_runs(module_guard: Guard) -> None:
    """The same folding shows ``__import__("o" + "s").system("rm -rf ~")`` for what it is."""
    decision, rules = decide(module_guard, 'python3 -c \'__import__("o"+"s").system("rm -rf ~")\'')
    assert decision == BLOCK and "G101" in rules, rules


@pytest.mark.parametrize("command", MCP)
def test_guard_mcp_proxy_started_by_the_agent_blocks(module_guard: Guard, command: str) -> None:
    decision, rules = decide(module_guard, command)
    assert (decision, "G410" in rules) == (BLOCK, True), (command, rules)


@pytest.mark.parametrize("command", MCP_NEAR)
def test_guard_mcp_proxy_help_runs(module_guard: Guard, command: str) -> None:
    assert decide(module_guard, command)[0] == AUTO_ALLOW


# -- the real entry points, in a fake HOME ----------------------------------------------------
@pytest.fixture
def fake_home(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    (home / ".guard").mkdir(parents=True, mode=0o700)
    env = guard_cli_env()
    env["HOME"] = str(home)
    env["GUARD_HOME"] = str(home / ".guard")
    env["GUARD_HOOKS_DAEMON"] = "off"
    return env


CLI_HITS = [KILLS[0], KILLS[5], COPIES[0], COPIES[3], COPIES[6], IMPORTS[0], IMPORTS[2], MCP[0]]
CLI_NEAR = ["pgrep -l python", "ps aux | grep guard", "cp guard.py backup/"]


def check(command: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*GUARD_CMD, "check", "bash", json.dumps({"command": command}), "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
    )


@pytest.mark.parametrize("command", CLI_HITS)
def test_guard_check_blocks_with_exit_20(command: str, fake_home: dict[str, str], tmp_path: Path) -> None:
    proc = check(command, fake_home, tmp_path)
    assert proc.returncode == 20, (proc.stdout, proc.stderr)
    assert "only the person may do this" in proc.stdout


@pytest.mark.parametrize("command", CLI_NEAR)
def test_guard_check_allows_the_near_misses(command: str, fake_home: dict[str, str], tmp_path: Path) -> None:
    proc = check(command, fake_home, tmp_path)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (KILLS[0], "deny"),
        (KILLS[5], "deny"),
        (COPIES[0], "deny"),
        (IMPORTS[1], "deny"),
        (MCP[0], "deny"),
        ("pgrep -l python", "allow"),
        ("ps aux | grep guard", "allow"),
        ("cp guard.py backup/", "allow"),
    ],
)
def test_claude_code_hook(command: str, expected: str, fake_home: dict[str, str]) -> None:
    ws = prepare(Path(fake_home["GUARD_HOME"]), toml="")
    payload = with_command(sample("claude-code", "pretooluse_bash.in.json"), command)
    out = run_hook("claude-code", payload, ws, env=hook_env(HOME=fake_home["HOME"], GUARD_HOME=str(ws)))
    decision = out.json["hookSpecificOutput"]["permissionDecision"] if out.json else "allow"
    assert decision == expected, (out.stdout, out.stderr)


# -- tiers.json times ---------------------------------------------------------------------------
CMD = {"command": "ssh build-host uptime"}  # medium risk: "normal" work, 3 points a success
NOW = "2026-11-20 12:00:00"
YEAR_9999 = 253402214400.0


def _card(ws: Path) -> dict[str, Any]:
    doc = json.loads((ws / "tiers.json").read_text())
    card: dict[str, Any] = doc["agents"]["a"]
    return card


def _tamper(ws: Path, **fields: Any) -> None:
    doc = json.loads((ws / "tiers.json").read_text())
    doc["agents"]["a"].update(fields)
    (ws / "tiers.json").write_text(json.dumps(doc))


def _fail_then_succeed(ws: Path, clock: Any = None, later: float = 0.0) -> Any:
    """A failure then a success of one task, ``later`` seconds after the card was read."""
    g = Guard(ws, {"system.health": 90, "memory.backend": "history"})
    try:
        g.state.sessions.tiers.peek("a")
        if later:
            clock.tick(later)
        g.record_result("bash", CMD, session_id="s2", success=False, agent_id="a")
        g.record_result("bash", CMD, session_id="s2", success=True, agent_id="a")
        return g.state.sessions.tiers.peek("a")
    finally:
        g.close()


def _seed_card(ws: Path) -> None:
    g = Guard(ws, {"system.health": 90, "memory.backend": "history"})
    g.record_result("bash", CMD, session_id="s1", success=True, agent_id="a")
    g.close()
    assert _card(ws)["points"] == 3.0


def test_a_double_reward_time_in_9999_does_not_refuse_doubles_for_ever(tmp_path: Path) -> None:
    """A failure then a success earns double once per cooldown (1 h); a last double "in 9999" counts as now."""
    ws = tmp_path / "ws"
    with freeze_time(NOW) as clock:
        _seed_card(ws)
        _tamper(ws, last_double_at=YEAR_9999, updated=YEAR_9999, failed_tasks=[["x", YEAR_9999]])
        card = _fail_then_succeed(ws, clock, later=2 * 3600)
    assert card.double_rewards == 1 and card.points == 3.0 + 6.0, card
    assert card.last_double_at < 2e9 and card.updated < 2e9


def test_a_nan_double_reward_time_is_dropped(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    with freeze_time(NOW) as clock:
        _seed_card(ws)
        _tamper(ws, last_double_at=float("nan"))  # written as NaN, which Python's json reads back
        clock.tick(60)
        card = _fail_then_succeed(ws)
    assert card.double_rewards == 1, card


def test_a_recent_double_reward_still_holds_the_cooldown(tmp_path: Path) -> None:
    """Near miss: past times stand; a double ten minutes ago still refuses the next one."""
    ws = tmp_path / "ws"
    with freeze_time(NOW) as clock:
        _seed_card(ws)
        clock.tick(3600)
        _tamper(ws, last_double_at=clock().timestamp() - 600)
        card = _fail_then_succeed(ws)
    assert card.double_rewards == 0 and card.points == 6.0, card


def test_an_infinite_score_does_not_reach_the_top_tier(tmp_path: Path) -> None:
    """An infinite score would be Forest (no limits): the card starts afresh."""
    ws = tmp_path / "ws"
    with freeze_time(NOW):
        _seed_card(ws)
        _tamper(ws, points=float("inf"))  # written as Infinity; ``1e309`` reads the same
        g = Guard(ws, {"system.health": 90, "memory.backend": "history"})
        try:
            card = g.state.sessions.tiers.peek("a")
            r = g.decide("write", {"file_path": "src/big.py", "content": "x\n" * 400}, session_id="s", agent_id="a")
        finally:
            g.close()
    assert card is None
    tier = r.layer("behavior").data["tier"]
    assert tier["name"] == "Seed", tier


# -- a full disk --------------------------------------------------------------------------------
FULL_DISK = textwrap.dedent(
    """
    import json, resource, signal, sys
    from pathlib import Path
    from loguru import logger
    from guard import log
    from guard.core import Guard
    from guard.guarded import guarded

    ws = Path(sys.argv[1])
    logger.remove()
    logger.add(sys.stderr, level="WARNING", format="WARN {message}")
    log.enable()
    g = Guard(ws, {"system.health": 90, "memory.backend": "history"})
    for i in range(3):
        g.record_result("bash", {"command": f"make t{i}"}, session_id="s", success=True)
    # the disk is full: no file may grow past the largest guard has written (EFBIG, like ENOSPC)
    limit = max(f.stat().st_size for f in ws.rglob("*") if f.is_file())
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    @guarded(tool="bash", guard=g, session_id="s")
    def bash(command: str) -> str:
        return "ran " + command

    out = {"raised": None}
    try:
        g.record_result("bash", {"command": "make big"}, session_id="s", success=True)
        g.record_interaction("bash", {"command": "make big"}, session_id="s", approved=True)
        out["tool"] = bash("ls -la")
        out["again"] = bash("ls -la")
    except BaseException as exc:
        out["raised"] = f"{type(exc).__name__}: {exc}"
    g.close()
    print(json.dumps(out))
    """
)


def test_record_result_on_a_full_disk_degrades(tmp_path: Path) -> None:
    """The Python API does not raise: one warning names the problem, the tool runs, the history stays."""
    ws = tmp_path / "ws"
    env = guard_cli_env() | {"HOME": str(tmp_path / "home"), "GUARD_HOME": str(ws)}
    proc = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(ws)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out == {"raised": None, "tool": "ran ls -la", "again": "ran ls -la"}, out
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("WARN")]
    assert len(warnings) == 1 and "File too large" in warnings[0] and str(ws) in warnings[0], proc.stderr
    lines = (ws / ".command-execution.jsonl").read_text().splitlines()
    assert [json.loads(line)["params"]["command"] for line in lines] == ["make t0", "make t1", "make t2"]
