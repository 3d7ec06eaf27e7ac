"""The guard command: check, feed, explain, log, stats; help and errors."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import GUARD_CMD, guard_cli_env


def run(*args: str, stdin: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    return subprocess.run(
        [*GUARD_CMD, *args], input=stdin, capture_output=True, text=True, env=env or guard_cli_env(), timeout=60
    )


def test_check_ls_prints_an_explained_auto_allow(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = run("check", "bash", '{"command": "ls"}', "--workspace", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "auto_allow" in out.stdout and "G1" in out.stdout and "memory" in out.stdout


@pytest.mark.parametrize(
    ("params", "code", "decision"),
    [
        ('{"command": "ls"}', 0, "auto_allow"),
        ('{"command": "frobnicate --all"}', 10, "request_confirm"),
        ('{"command": "rm -rf ~"}', 20, "block"),
    ],
)
def test_check_exit_codes_and_json(tmp_path, params, code, decision) -> None:  # type: ignore[no-untyped-def]
    out = run("check", "bash", params, "--json", "--workspace", str(tmp_path))
    assert out.returncode == code
    assert json.loads(out.stdout)["decision"] == decision


def test_check_save_appends_and_default_does_not(tmp_path) -> None:  # type: ignore[no-untyped-def]
    run("check", "bash", '{"command": "ls"}', "--workspace", str(tmp_path))
    assert not (tmp_path / ".fusion-decisions.jsonl").exists()
    run("check", "bash", '{"command": "ls"}', "--save", "--session-id", "s9", "--workspace", str(tmp_path))
    line = json.loads((tmp_path / ".fusion-decisions.jsonl").read_text())
    assert line["session_id"] == "s9" and line["decision"] == "auto_allow"


@pytest.mark.parametrize("bad", ["{not json", "[1, 2]", '"ls"'])
def test_check_bad_params_is_a_clear_error(tmp_path, bad) -> None:  # type: ignore[no-untyped-def]
    out = run("check", "bash", bad, "--workspace", str(tmp_path))
    assert out.returncode == 2 and "PARAMS_JSON" in out.stderr


def test_feed_prints_one_record_per_dispatch_and_errors_for_bad_lines(tmp_path) -> None:  # type: ignore[no-untyped-def]
    events = [
        {"event": "tool_dispatch", "tool": "bash", "params": {"command": "make"}, "session_id": "s"},
        {
            "event": "tool_result",
            "tool": "bash",
            "params": {"command": "make"},
            "session_id": "s",
            "status": "success",
            "duration_ms": 120,
            "extra": "ignored",
        },
        {
            "event": "user_confirmation",
            "tool": "bash",
            "params": {"command": "make"},
            "action": "approved",
            "satisfaction": 5,
        },
        {"tool": "bash", "params": {"command": "ls"}},
    ]
    lines = [json.dumps(e) for e in events]
    lines[3:3] = [
        "this is not json",
        json.dumps({"event": "tool_result", "tool": "bash", "status": "maybe"}),
        json.dumps({"event": "tool_dispatch", "tool": "bash", "params": "ls"}),
    ]
    out = run("feed", "-", "--workspace", str(tmp_path), stdin="\n".join(lines) + "\n")
    recs = [json.loads(x) for x in out.stdout.splitlines()]
    assert out.returncode == 1
    assert [r.get("error") is not None for r in recs] == [False, True, True, True, False]
    assert all(r["decision"] != "auto_allow" for r in recs if "error" in r)
    assert recs[-1]["decision"] == "auto_allow"
    execs = (tmp_path / ".command-execution.jsonl").read_text().splitlines()
    inters = (tmp_path / ".user-interactions.jsonl").read_text().splitlines()
    assert len(execs) == 1 and len(inters) == 1


def test_feed_from_file_and_seed_event_names(tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "events.jsonl"
    f.write_text(json.dumps({"event": "agent:tool_dispatch", "tool": "read", "params": {"file_path": "a.txt"}}) + "\n")
    out = run("feed", str(f), "--workspace", str(tmp_path / "ws"))
    assert out.returncode == 0 and json.loads(out.stdout)["decision"] == "auto_allow"
    missing = run("feed", str(tmp_path / "nope.jsonl"), "--workspace", str(tmp_path / "ws"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr


def test_explain_shows_each_layer(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = run("explain", "bash", '{"command": "rm -rf ~"}', "--workspace", str(tmp_path))
    assert out.returncode == 0
    assert "[static]" in out.stdout and "block" in out.stdout
    js = run("explain", "bash", '{"command": "ls"}', "--json", "--workspace", str(tmp_path))
    assert "static" in json.loads(js.stdout)["explain"]


def test_log_and_stats_tables_and_json(tmp_path) -> None:  # type: ignore[no-untyped-def]
    events = "\n".join(
        json.dumps(e)
        for e in [
            {"tool": "bash", "params": {"command": "ls"}, "session_id": "a"},
            {"event": "tool_result", "tool": "bash", "params": {"command": "ls"}, "status": "success"},
            {"event": "tool_result", "tool": "bash", "params": {"command": "ls"}, "status": "failure"},
            {"tool": "bash", "params": {"command": "rm -rf ~"}, "session_id": "b"},
        ]
    )
    run("feed", "--workspace", str(tmp_path), stdin=events)
    log = run("log", "--workspace", str(tmp_path))
    assert "auto_allow" in log.stdout and "block" in log.stdout and "session" in log.stdout
    only_b = run("log", "--json", "--session-id", "b", "--workspace", str(tmp_path))
    assert [json.loads(x)["decision"] for x in only_b.stdout.splitlines()] == ["block"]
    stats = run("stats", "--json", "--workspace", str(tmp_path))
    bash = json.loads(stats.stdout)["tools"]["bash"]
    assert (bash["runs"], bash["successes"], bash["decisions"]) == (2, 1, {"auto_allow": 1, "block": 1})
    assert "50%" in run("stats", "--workspace", str(tmp_path)).stdout


@pytest.mark.parametrize("cmd", ["check", "feed", "explain", "log", "stats", "config"])
def test_every_command_has_help_with_workspace(cmd) -> None:  # type: ignore[no-untyped-def]
    out = run(cmd, "--help")
    assert out.returncode == 0 and "--workspace" in out.stdout


def test_no_command_prints_help() -> None:
    out = run()
    assert out.returncode == 2 and "check" in out.stdout


def test_stats_counts_outcome_words_other_programs_write_as_decisions_do(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / ".command-execution.jsonl").write_text(
        '{"tool": "bash", "status": "success"}\n{"tool": "bash", "status": "failed"}\n'
        '{"tool": "bash", "status": "error"}\n{"tool": "bash", "status": "maybe"}\n'
    )
    (tmp_path / ".user-interactions.jsonl").write_text(
        '{"tool": "bash", "action": "rejected"}\n{"tool": "bash", "action": "approved"}\n{"tool": 3, "action": "approved"}\n'
    )
    bash = json.loads(run("stats", "--json", "--workspace", str(tmp_path)).stdout)["tools"]["bash"]
    assert (bash["runs"], bash["successes"], bash["interactions"], bash["approvals"]) == (3, 1, 2, 1)
