"""guard's own control commands are the person's: an agent running them blocks, in every spelling.

``guard approve last`` would let the agent approve its own blocked call, ``guard reset`` forget its
failures, ``guard uninstall`` switch guard off, ``guard feed`` write the history guard trusts. The
hits are every spelling (console script by any path, ``python -m guard``, Python importing guard,
shell-outs, wrappers) times the state-changing verbs; the near-misses are the read-only verbs and
text that only mentions guard. Driven through ``Guard.decide``'s static layer, the real CLI
(``guard check``, exit 20 on block) and the Claude Code hook, in a fake HOME.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guard.layers.static import classify
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM, Risk, ToolCall, Verdict
from tests.conftest import GUARD_CMD, guard_cli_env
from tests.integrations.hookhelpers import hook_env, prepare, run_hook, sample, with_command

HOME = "/home/u"

SPELLINGS = [
    "guard {}",
    "./.venv/bin/guard {}",
    "~/.local/bin/guard {}",
    "/abs/path/bin/guard {}",
    "python -m guard {}",
    "python3 -m guard {}",
    "python3.11 -I -m guard {}",
    "python3.11 -Im guard {}",
    "python -mguard {}",
    "python -m guard.cli {}",
    "python3 -m guard.__main__ {}",
    "env guard {}",
    "env -i PATH=/usr/bin guard {}",
    "sudo guard {}",
    "sudo -u root guard {}",
    "nohup guard {}",
    "timeout 5 guard {}",
    "nice -n 5 guard {}",
    "setsid guard {}",
    "command guard {}",
    "exec guard {}",
    "uv run guard {}",
    "sh -c {q}",
    "bash -c {q}",
    "eval {q}",
    "xargs -a /dev/null guard {}",
    "python -c {py}",
    "python3 -c {py_alias}",
    "python - <<'EOF'\nfrom guard.cli import main\nmain({argv})\nEOF",
    "echo {py_q} > x.py && python x.py",
    "node -e {node}",
    "ruby -e {ruby}",
    "python -c {subprocess}",
]

VERBS = [
    "approve last",
    "approve --deny a1b2",
    "reset --all",
    "reset --session s1",
    "uninstall codex",
    "install claude-code",
    "feed x.jsonl",
    "hook claude-code",
    "rules apply",
    "rules revert r1",
    "serve --stop",
    "serve --on-demand",
    "tidy --force",
    "config set thresholds.auto_allow 0",
    "check bash {} --save",
]

READ_ONLY = [
    "check bash {}",
    "explain last",
    "log -n 5",
    "stats",
    "report",
    "config",
    "config --check",
    "--help",
    "rules list",
    "rules suggest",
    "replay --since 2026-01-01",
    "serve --status",
    "reset --help",
]


def spelled(spelling: str, verb: str) -> str:
    """One spelling of ``guard VERB``; ``{q}``-style slots get the verb in that language."""
    argv = shlex.split(verb)
    line = "guard " + verb
    py = f"from guard.cli import main; main({argv!r})"
    return spelling.format(
        verb,
        q=shlex.quote(line),
        argv=repr(argv),
        py=shlex.quote(py),
        py_q=shlex.quote(py),
        py_alias=shlex.quote(f"import guard.cli as g; g.main({argv!r})"),
        node=shlex.quote(f"require('child_process').execSync({line!r})"),
        ruby=shlex.quote(f"system({line!r})"),
        subprocess=shlex.quote(f"import subprocess, sys; subprocess.run([sys.executable, '-m', 'guard', *{argv!r}])"),
    )


def verdict(command: str) -> Verdict:
    return classify(ToolCall("Bash", {"command": command}), home=HOME)


def cold(v: Verdict) -> str:
    if v.decision == BLOCK:
        return BLOCK
    if v.ceiling == REQUEST_CONFIRM or (v.risk is not None and v.risk >= Risk.MEDIUM):
        return REQUEST_CONFIRM
    return AUTO_ALLOW


def rules(v: Verdict) -> set[str]:
    return {r.rule_id for r in v.reasons} | set(v.data.get("rules", ()))


HITS = [spelled(s, v) for s in SPELLINGS for v in VERBS]
NEAR = [spelled(s, v) for s in SPELLINGS for v in READ_ONLY if not s.startswith(("sudo", "uv", "xargs", "echo"))]


@pytest.mark.parametrize("command", HITS)
def test_control_verb_blocks_in_every_spelling(command: str) -> None:
    """Every spelling of a state-changing verb blocks with a self-protection rule."""
    v = verdict(command)
    assert v.decision == BLOCK, (command, v.reasons)
    assert rules(v) & {"G410", "G412"}, (command, sorted(rules(v)))


@pytest.mark.parametrize("command", NEAR)
def test_read_only_verb_runs_in_every_spelling(command: str) -> None:
    """The same spellings of a read-only verb are auto-allowed."""
    v = verdict(command)
    assert cold(v) == AUTO_ALLOW, (command, v.reasons)


CODE_HITS = [
    ('python -c \'__import__("guard").cli.main(["reset"])\'', "G412"),
    ('python -c \'import importlib; importlib.import_module("guard.cli").main(["reset"])\'', "G412"),
    ('python -c \'import runpy, sys; sys.argv = ["guard", "reset"]; runpy.run_module("guard")\'', "G412"),
    ("python -c 'from guard.cli import main; main()' approve last", "G412"),
    ("python -c 'import guard.cli, sys; guard.cli.main(sys.argv[1:])' reset", "G412"),
    ('python -c \'import guard.cli as c; getattr(c, "ma" + "in")(["re" + "set"])\'', "G412"),
    ("python -c 'from guard import Guard; Guard().record_interaction(\"bash\", approved=True)'", "G412"),
    ("python -c 'from guard.cli.reset import run; run(None)'", "G412"),
    ('python -c \'from guard.integrations.pending import Pending; Pending("p").approve("a1")\'', "G412"),
    ("python -m guard.integrations.server", "G410"),
    ("python -m guard.cli.reset --all", "G410"),
    ("python -m guard.cli.approve last", "G410"),
    ("pkill -f 'guard serve'", "G411"),
    ("pkill -f guard", "G411"),
    ("pkill guard", "G411"),
    ("pkill -f 'gu.rd'", "G411"),
    ("pkill -f '(guard|x)+ serve'", "G411"),  # not run as a regular expression (it could backtrack): it names guard
    ("killall guard", "G411"),
    ("kill $(pgrep -f 'guard serve')", "G411"),
    ("kill $(cat ~/.guard/daemon.pid)", "G411"),
    ("kill -9 $GUARD_PID", "G411"),
    ("python -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"/home/u/.guard/guard.sock\")'", "G411"),
    ("$(which guard) reset", "G410"),
    ('"$(command -v guard)" approve last', "G410"),
    ("python .venv/bin/guard reset --all", "G410"),
    ("python guard reset", "G410"),
    ('perl -e \'system("guard", "reset")\'', "G410"),
    ('python -c \'import os; os.execvp("guard", ["guard", "reset"])\'', "G410"),
    ('echo \'{"op": "stop"}\' | nc -U ~/.guard/guard.sock', "G411"),
    ("socat - UNIX-CONNECT:$HOME/.guard/guard.sock", "G411"),
    ("fuser -k ~/.guard/guard.sock", "G411"),
    ("guard check bash '{}' --sav", "G410"),  # argparse expands an unambiguous prefix
    ("guard serve --status --sto", "G410"),
    ("guard frobnicate", "G413"),
    ("guard config --set x=1", "G410"),
    ('guard check bash "$(cat call.json)"', "G413"),
    ("guard $(echo reset)", "G410"),
    ("guard reset $(cat flags.txt)", "G410"),
]


@pytest.mark.parametrize(("command", "rule_id"), CODE_HITS)
def test_code_imports_and_daemon_kills(command: str, rule_id: str) -> None:
    """Python that imports guard, guard modules run by name, kills aimed at the daemon, unknown verbs."""
    v = verdict(command)
    assert rule_id in rules(v), (command, sorted(rules(v)))
    assert cold(v) == (REQUEST_CONFIRM if rule_id == "G413" else BLOCK), (command, v.reasons)


NEAR_MISSES = [
    "pytest",
    "python -m pytest tests/security -q",
    'grep -r "guard reset" docs/',
    "echo 'guard reset'",
    "printf '%s\\n' 'guard approve last'",
    'git commit -m "guard reset fix"',
    "guard report --html report.html",
    "guard rules apply --dry-run",
    "guard",
    "guard --version",
    "guard --help reset",
    "guard report --html=out.html",
    "python -c 'import guard; print(guard.__version__)'",
    "python -c 'from guard.static.rules import rule; print(rule(\"G410\"))'",
    'python -c \'from guard.cli import main; main(["log", "-n", "3"])\'',
    "python -c 'import guardrails; guardrails.reset()'",
    "python -c 'import integrations; print(guard.integrations.__file__)'",
    "ps aux | grep guard",
    "pgrep -f 'guard serve'",
    "cat docs/static-rules.md | grep G410",
    "python .venv/bin/guard log",
    "ls -la ~/.guard/guard.sock",
]


@pytest.mark.parametrize("command", NEAR_MISSES)
def test_text_and_reads_about_guard_run(command: str) -> None:
    """Mentioning guard, reading about it or running its read-only verbs is not a control command."""
    v = verdict(command)
    assert cold(v) == AUTO_ALLOW, (command, v.reasons)


@pytest.mark.parametrize(
    "command",
    ["pkill -f python", "kill 4242", "killall node", "pkill -f serve", "pkill -f '(.*)*x'", "pkill -f '(\\S+\\s*)+Z'"],
)
def test_broad_kills_stay_ordinary(command: str) -> None:
    """A kill that is not aimed at guard keeps its ordinary rule: it asks, it does not block (and a
    pattern that would backtrack for ever against the daemon's command line is never run)."""
    v = verdict(command)
    assert "G411" not in rules(v) and cold(v) == REQUEST_CONFIRM, (command, v.reasons)


def test_written_script_that_runs_a_control_command_is_flagged() -> None:
    """Writing a Python file that runs ``guard reset`` is writing a script guard would block (G127)."""
    call = ToolCall("Write", {"file_path": "do.py", "content": "from guard.cli import main\nmain(['reset'])\n"})
    v = classify(call, home=HOME)
    assert "G127" in rules(v) and cold(v) != AUTO_ALLOW


WRAPPERS = [
    "sudo {}",
    "env A=1 {}",
    "nohup {}",
    "timeout 9 {}",
    "nice -n 3 {}",
    "setsid {}",
    "command {}",
    "time {}",
    "stdbuf -o0 {}",
    "sh -c {q}",
    "bash -c {q}",
    "eval {q}",
    "{{ {}; }}",
    "( {} )",
    "true && {}",
    "ls; {}",
]
BASES = [
    "guard reset --all",
    "./.venv/bin/guard approve last",
    "python3 -m guard uninstall codex",
    'python -c \'from guard.cli import main; main(["feed", "x.jsonl"])\'',
    "pkill -f 'guard serve'",
]


ARGV_WRAPPERS = WRAPPERS[:9]  # these run an argv; the rest are shell syntax or take a script


def wrap(command: str, wrapper: str) -> str:
    return wrapper.replace("{}", command, 1).replace("{q}", shlex.quote(command)).replace("{{", "{").replace("}}", "}")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(BASES), st.lists(st.sampled_from(WRAPPERS), max_size=4))
def test_wrapping_a_hit_keeps_it_a_block(base: str, wrappers: list[str]) -> None:
    """Metamorphic: any stack of wrappers around a control command still blocks for the same family."""
    command, simple = base, True
    for w in wrappers:
        if not simple and w in ARGV_WRAPPERS:  # ``sudo { …; }`` is not a command: a shell in between is
            command = wrap(command, "bash -c {q}")
        command = wrap(command, w)
        simple = w in ARGV_WRAPPERS or "{q}" in w
    v = verdict(command)
    assert v.decision == BLOCK, (command, v.reasons)
    assert rules(v) & {"G410", "G411", "G412"}, (command, sorted(rules(v)))


# --- the real entry points, in a fake HOME


@pytest.fixture
def fake_home(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    (home / ".guard").mkdir(parents=True, mode=0o700)
    env = guard_cli_env()
    env["HOME"] = str(home)
    env["GUARD_HOME"] = str(home / ".guard")
    env["GUARD_HOOKS_DAEMON"] = "off"
    return env


CLI_HITS = [
    "python -m guard approve last",
    "python3 -m guard reset --all",
    "./.venv/bin/guard reset --all",
    "python -c 'from guard.cli import main; main([\"reset\"])'",
    "guard approve last",
    "sudo guard uninstall codex",
    "env guard feed x.jsonl",
    "pkill -f 'guard serve'",
]
CLI_NEAR = ["guard log", "python -m guard check bash '{}'", "echo 'guard reset'", "guard config --check"]


@pytest.mark.parametrize("command", CLI_HITS)
def test_guard_check_cli_exits_20_for_a_control_command(command: str, fake_home: dict[str, str]) -> None:
    """``guard check bash JSON`` (a subprocess) blocks: exit 20, reason addressed to the person."""
    proc = subprocess.run(
        [*GUARD_CMD, "check", "bash", json.dumps({"command": command}), "--json"],
        capture_output=True,
        text=True,
        env=fake_home,
        timeout=60,
    )
    assert proc.returncode == 20, (proc.stdout, proc.stderr)
    record = json.loads(proc.stdout)
    assert "only the person may do this" in json.dumps(record)


@pytest.mark.parametrize("command", CLI_NEAR)
def test_guard_check_cli_exits_0_for_a_read_only_verb(command: str, fake_home: dict[str, str]) -> None:
    proc = subprocess.run(
        [*GUARD_CMD, "check", "bash", json.dumps({"command": command})],
        capture_output=True,
        text=True,
        env=fake_home,
        timeout=60,
    )
    assert proc.returncode == 0, (proc.stdout, proc.stderr)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("guard approve last", "deny"),
        ("python3.11 -I -m guard reset --all", "deny"),
        ("bash -c 'timeout 5 ~/.local/bin/guard uninstall claude-code'", "deny"),
        ("guard log", "allow"),
        ("guard stats", "allow"),
    ],
)
def test_claude_code_hook_denies_control_commands(
    command: str, expected: str, tmp_path: Path, fake_home: dict[str, str]
) -> None:
    """A PreToolUse payload through ``guard hook claude-code``: control commands are denied, reads allowed."""
    ws = prepare(Path(fake_home["GUARD_HOME"]), toml="")
    payload = with_command(sample("claude-code", "pretooluse_bash.in.json"), command)
    out = run_hook("claude-code", payload, ws, env=hook_env(HOME=fake_home["HOME"], GUARD_HOME=str(ws)))
    decision = out.json["hookSpecificOutput"]["permissionDecision"] if out.json else "allow"
    assert decision == expected, (out.stdout, out.stderr)
    if expected == "deny":
        reason = out.json["hookSpecificOutput"]["permissionDecisionReason"]
        assert "only the person may do this" in reason, reason
