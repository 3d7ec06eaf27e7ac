"""guard replay: the logged calls re-decided under another configuration, and what changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guard.config import Config
from guard.errors import ConfigError
from guard.policy.history import decisions
from guard.policy.replay import Replayer, load_candidate, replay, timeline

from .helpers import T0, Stream, cli, play


@pytest.fixture
def history(workspace: Path, stream: Stream) -> Path:
    """Three sessions of ordinary work: a deploy command (medium) is asked about until trust builds
    up, tests (low) are auto-allowed, a read is safe, one call is critical and one high."""
    for s in ("s1", "s2", "s3"):
        for _ in range(3):
            stream.approved("kubectl apply -f k8s/", s).approved("npm run test", s)
        stream.dispatch({"command": "ls -la"}, s)
        stream.dispatch({"command": "rm -rf ~"}, s)
        stream.denied("docker system prune", s)
    play(workspace, stream)
    return workspace


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "candidate.toml"
    path.write_text(text)
    return path


def test_the_current_configuration_reproduces_the_log(history: Path) -> None:
    base = Config.load(history)
    result = replay(history, base, baseline=base)
    assert result.total == result.replayed == 3 * (6 + 3)
    assert result.transitions == {} and result.unchanged == result.replayed
    assert result.fidelity == result.replayed  # every logged decision reproduced
    assert result.before == result.after == result.logged


def test_a_stricter_allow_threshold_turns_allows_into_prompts(history: Path, tmp_path: Path) -> None:
    logged = list(decisions(history))
    # Independently from the log: allowed below 95 (the safe read-only floor included: it
    # never overrides a threshold the person set).
    expected = sum(1 for e in logged if e.outcome == "auto_allow" and e.raw["fusion_score"] < 95)
    assert expected >= 3
    candidate = load_candidate(history, write_config(tmp_path, "[thresholds]\nauto_allow = 95\n"))
    result = replay(history, candidate)
    assert result.transitions == {"auto_allow->request_confirm": expected}
    examples = result.examples["auto_allow->request_confirm"]
    assert 1 <= len(examples) <= 3
    assert all(e.before == "auto_allow" and e.after == "request_confirm" for e in examples)
    assert all(e.score_before == e.score_after < 95 for e in examples)  # the threshold moved, not the score
    d = result.to_dict()
    assert d["prompt_rate"]["change"] == pytest.approx(expected / result.replayed, abs=1e-4)
    assert result.after.get("auto_allow", 0) == result.before["auto_allow"] - expected


def test_a_stricter_confirm_threshold_turns_prompts_into_blocks(history: Path, tmp_path: Path) -> None:
    candidate = load_candidate(history, write_config(tmp_path, "[thresholds]\nrequest_confirm = 74\n"))
    result = replay(history, candidate)
    # The direct effect dominates; blocks then feed the session's refusal signal, which may move
    # a few later calls either way.
    assert max(result.transitions, key=result.transitions.__getitem__) == "request_confirm->block"
    assert result.transitions["request_confirm->block"] >= 3
    assert all(e.score_after < 74 for e in result.examples["request_confirm->block"])


def test_since_limits_the_calls_re_decided_but_not_the_history(history: Path, tmp_path: Path) -> None:
    logged = sorted(decisions(history), key=lambda e: e.ts)
    cut = logged[len(logged) // 2]
    candidate = load_candidate(history, write_config(tmp_path, "[thresholds]\nauto_allow = 95\n"))
    result = replay(history, candidate, since=cut.ts)
    assert result.total == len(logged)
    assert result.replayed == sum(1 for e in logged if e.ts >= cut.ts)
    assert result.fidelity == result.replayed  # later calls still see the earlier history


def test_replay_writes_nothing_into_the_workspace(history: Path, tmp_path: Path) -> None:
    before = {p.name: p.stat().st_size for p in history.iterdir()}
    replay(history, load_candidate(history, write_config(tmp_path, "[thresholds]\nauto_allow = 95\n")))
    assert {p.name: p.stat().st_size for p in history.iterdir()} == before


def test_system_health_is_the_logged_one_unless_pinned(
    workspace: Path, stream: Stream, monkeypatch: pytest.MonkeyPatch
) -> None:
    stream.dispatch({"command": "kubectl apply -f k8s/"}, "s1")  # load counts for medium risk and above
    play(workspace, stream, **{"system.health": 37})
    monkeypatch.delenv("GUARD_SYSTEM_HEALTH")
    [ev] = decisions(workspace)
    assert ev.raw["components"]["system"] == 37
    with Replayer(Config.load(workspace)) as r:
        assert r.decide(ev).components["system"] == 37
    with Replayer(Config.load(workspace).with_overrides({"system.health": 80})) as r:
        assert r.decide(ev).components["system"] == 80


def test_candidate_files_override_key_by_key(workspace: Path, tmp_path: Path) -> None:
    workspace.mkdir()
    (workspace / "guard.toml").write_text(
        '[thresholds]\nauto_allow = 80\n[weights]\nmemory = 0.4\nsystem = 0.05\n[permissions]\nallow = ["Bash(ls:*)"]\ndeny = ["Bash(rm:*)"]\n'
    )
    candidate = load_candidate(
        workspace, write_config(tmp_path, '[thresholds]\nauto_allow = 90\n[permissions]\nallow = ["Bash(make:*)"]\n')
    )
    assert candidate.get("thresholds.auto_allow") == 90
    assert candidate.get("weights.memory") == 0.4  # current value kept
    assert candidate.section("permissions") == {"allow": ["Bash(make:*)"], "deny": ["Bash(rm:*)"]}
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_candidate(workspace, write_config(tmp_path, "[thresholds\n"))


def replayed_scores(workspace: Path) -> list[tuple[float, float]]:
    """(logged, replayed) fused score of every dispatch, replaying the timeline by hand."""
    out = []
    with Replayer(Config.load(workspace)) as r:
        for ev in timeline(workspace):
            if ev.source == "decision":
                out.append((ev.raw["fusion_score"], round(r.decide(ev).final_score, 2)))
            else:
                r.feed(ev)
    return out


def test_replay_reproduces_the_logged_scores(history: Path) -> None:
    pairs = replayed_scores(history)
    assert len(pairs) == 27 and all(logged == again for logged, again in pairs)


def test_events_logged_in_the_same_second_replay_dispatch_first(workspace: Path) -> None:
    stream = Stream()
    params = {"command": "make build"}
    for s in ("s1", "s2"):
        stream.dispatch(params, s).answer(params, s, True).result(params, s)
    for line_no in range(len(stream.lines)):  # squash every event into one second
        event = json.loads(stream.lines[line_no])
        event["ts"] = T0.isoformat()
        stream.lines[line_no] = json.dumps(event)
    play(workspace, stream)
    pairs = replayed_scores(workspace)
    assert len(pairs) == 2 and all(logged == again for logged, again in pairs)


def test_cli_replay_json_text_and_progress(history: Path, tmp_path: Path) -> None:
    config = write_config(tmp_path, "[thresholds]\nauto_allow = 95\n")
    out = json.loads(cli("replay", "--config", str(config), "--json", workspace=history).stdout)
    assert set(out["transitions"]) == {"auto_allow->request_confirm"}
    assert out["fidelity"]["agree"] == out["replayed"] and "redacted" in out["note"]
    text = cli("replay", "--config", str(config), "--progress", workspace=history)
    assert "auto_allow->request_confirm" in text.stdout and "prompts:" in text.stdout
    assert "replay [" in text.stderr and "100%" in text.stderr
    quiet = cli("replay", "--config", str(config), workspace=history)
    assert quiet.stderr == ""  # not a TTY and no --progress: no bar
    bad = cli("replay", "--since", "last tuesday", workspace=history, check=False)
    assert bad.returncode == 2 and "--since" in bad.stderr
    missing = cli("replay", "--config", str(tmp_path / "nope.toml"), workspace=history, check=False)
    assert missing.returncode == 2 and "cannot read" in missing.stderr
