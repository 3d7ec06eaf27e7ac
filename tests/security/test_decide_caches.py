"""What a warm decision remembers is exact: a changed input is never answered from memory.

The fused score of a call with no history, the static analysis of a repeated call, history
memory's answer for the same counts and the history files' "unchanged" check are remembered
or skipped by value (session 23). Each test changes one input and compares with a Guard that
has nothing remembered (the same history, the same frozen time), beside the near-miss where
the remembered answer is the right one.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from freezegun import freeze_time

from guard import Guard
from guard.config import Config
from guard.model import REQUEST_CONFIRM, Risk, ToolCall
from guard.static.analysis import cache_key
from guard.system import SystemHealth

T0 = "2026-03-02 12:00:00"
CONFIG = {"system.health": 90, "memory.backend": "history"}


def fused(g: Guard, tool: str, params: dict[str, Any]) -> tuple[Any, ...]:
    """Everything the fusion verdict says about a call (the record's view of it), decided in a
    healthy session (the history below is made in another one: an unhealthy session's score
    is never remembered, and these tests are about the one that is)."""
    rec = g.decide(tool, params, session_id="deciding")
    fusion = rec.layer("fusion")
    behavior = rec.layer("behavior")
    assert fusion is not None and behavior is not None and behavior.data["health"] >= 40
    return rec.decision, rec.final_score, rec.components, fusion.data.to_dict(), fusion.reasons


def cold(tmp: Path, name: str, history: Any = None, **config: Any) -> Guard:
    """A Guard with nothing remembered, optionally given the same history first."""
    g = Guard(tmp / name, CONFIG | config)
    if history is not None:
        history(g)
    return g


class TestFusedScore:
    def test_a_call_without_history_is_answered_the_same_again(self, tmp_path: Path) -> None:
        """Near-miss: the remembered answer for the same call is what a cold Guard computes."""
        with freeze_time(T0):
            g = cold(tmp_path, "a")
            first = fused(g, "bash", {"command": "frobnicate --all"})
            again = fused(g, "bash", {"command": "frobnicate --all"})
            fresh = fused(cold(tmp_path, "b"), "bash", {"command": "frobnicate --all"})
        assert first == again == fresh

    def test_history_of_the_operation_is_weighed_at_once(self, tmp_path: Path) -> None:
        call = {"command": "frobnicate --all"}

        def history(g: Guard) -> None:
            for _ in range(3):
                g.record_result("bash", call, success=False, session_id="history")

        with freeze_time(T0):
            g = cold(tmp_path, "a")
            before = fused(g, "bash", call)
            history(g)
            after = fused(g, "bash", call)
            fresh = fused(cold(tmp_path, "b", history), "bash", call)
        assert after == fresh
        assert after[2]["cmd_success"] < before[2]["cmd_success"]
        assert after[3]["dimensions"]["memory"]["matched"] == 3

    def test_history_of_a_sibling_in_the_family_is_weighed_at_once(self, tmp_path: Path) -> None:
        """``pip install flask`` failing is family evidence for ``pip install requests``."""

        def history(g: Guard) -> None:
            for _ in range(4):
                g.record_result("bash", {"command": "pip install flask"}, success=False, session_id="history")
                g.record_interaction("bash", {"command": "pip install flask"}, approved=False, session_id="history")

        with freeze_time(T0):
            g = cold(tmp_path, "a")
            before = fused(g, "bash", {"command": "pip install requests"})
            history(g)
            after = fused(g, "bash", {"command": "pip install requests"})
            fresh = fused(cold(tmp_path, "b", history), "bash", {"command": "pip install requests"})
        assert after == fresh
        assert after[3]["dimensions"]["user_pref"]["levels"]["family"]["n"] == 4.0
        assert after[2]["user_pref"] < before[2]["user_pref"]

    def test_the_same_family_at_another_risk_is_fused_afresh(self, tmp_path: Path) -> None:
        """Two writes share the family ``write:``; the second one's risk (prior) differs."""
        with freeze_time(T0):
            g = cold(tmp_path, "a")
            ordinary = fused(g, "write", {"file_path": "src/app.py", "content": "x = 1\n"})
            risky = fused(g, "write", {"file_path": str(Path.home() / ".bashrc"), "content": "x=1\n"})
            fresh = fused(cold(tmp_path, "b"), "write", {"file_path": str(Path.home() / ".bashrc"), "content": "x=1\n"})
        assert risky == fresh
        assert risky[3]["prior"] != ordinary[3]["prior"]

    def test_a_busier_machine_is_weighed_at_once(self, tmp_path: Path) -> None:
        """The system dimension changes (here: the pinned value) between two identical calls."""
        call = {"command": "frobnicate --all"}  # medium risk: the system counts
        with freeze_time(T0):
            g = cold(tmp_path, "a")
            calm = fused(g, "bash", call)
            g.state.system = SystemHealth(Config.load(tmp_path / "a", env={}, overrides={"system.health": 10}))
            busy = fused(g, "bash", call)
            fresh = fused(cold(tmp_path, "b", **{"system.health": 10}), "bash", call)
        assert busy == fresh
        assert (calm[2]["system"], busy[2]["system"]) == (90.0, 10.0)
        assert busy[1] < calm[1]

    def test_an_unhealthy_session_is_fused_afresh(self, tmp_path: Path) -> None:
        """The session's health falls (another operation failed and was refused); the same
        call, still without history of its own, is weighed with the low-health weights (G301)."""
        call = {"command": "pip install requests"}

        def refusals(g: Guard) -> None:
            for _ in range(4):
                g.record_result("bash", {"command": "make deploy"}, success=False, session_id="s")
                g.record_interaction("bash", {"command": "make deploy"}, approved=False, session_id="s")

        with freeze_time(T0):
            g = cold(tmp_path, "a")
            healthy = g.decide("bash", call, session_id="s")
            refusals(g)
            unhealthy = g.decide("bash", call, session_id="s")
            fresh = cold(tmp_path, "b", refusals).decide("bash", call, session_id="s")
        assert "G301" not in {r.rule_id for r in healthy.layer("fusion").reasons}  # type: ignore[union-attr]
        assert "G301" in {r.rule_id for r in unhealthy.layer("fusion").reasons}  # type: ignore[union-attr]
        assert unhealthy.layer("fusion").data.to_dict() == fresh.layer("fusion").data.to_dict()  # type: ignore[union-attr]
        assert (unhealthy.decision, unhealthy.final_score) == (fresh.decision, fresh.final_score)


class TestHistoryMemory:
    def test_the_answer_follows_the_counts(self, tmp_path: Path) -> None:
        call = {"command": "frobnicate --all"}
        with freeze_time(T0):
            g = cold(tmp_path, "a")
            g.record_result("bash", call, success=True, session_id="history")
            one = fused(g, "bash", call)[3]["dimensions"]["memory"]
            same = fused(g, "bash", call)[3]["dimensions"]["memory"]
            g.record_result("bash", call, success=False, session_id="history")
            two = fused(g, "bash", call)[3]["dimensions"]["memory"]
        assert one == same
        assert (one["matched"], two["matched"]) == (1, 2)
        assert "100% succeeded" in one["note"] and "50% succeeded" in two["note"]


class TestMemoryDimension:
    """The memory dimension is remembered by the provider's answer (by identity), the prior and
    whether the operation ran before (session 24)."""

    def test_the_same_answer_at_another_risk_is_weighed_afresh(self, tmp_path: Path) -> None:
        """Two operations with the same counts get the same answer object from history memory;
        their priors differ (a read-only listing, an unknown program)."""
        calls = ({"command": "ls -la src"}, {"command": "frobnicate --all"})

        def history(g: Guard) -> None:
            for call in calls:
                for ok in (True, True, False):
                    g.record_result("bash", call, success=ok, risk="medium", session_id="history")

        with freeze_time(T0):
            g = cold(tmp_path, "a", history)
            safe, medium = (fused(g, "bash", call) for call in calls)
            fresh = fused(cold(tmp_path, "b", history), "bash", calls[1])
            again = fused(g, "bash", calls[1])
        assert medium == fresh == again  # near-miss: the same call again is what a cold Guard says
        assert safe[3]["prior"] != medium[3]["prior"]
        assert safe[3]["dimensions"]["memory"]["note"] == medium[3]["dimensions"]["memory"]["note"]
        assert safe[2]["memory"] != medium[2]["memory"]

    def test_an_operation_that_never_ran_is_not_lifted_by_the_same_answer(self) -> None:
        from guard.counters import ToolStats
        from guard.layers.fusion import _memory_component, _memory_of
        from guard.memory.base import MemoryResult

        res = MemoryResult(score=90.0, matched=5, confidence=0.8, success_rate=1.0, note="5 similar")
        ran = _memory_of(res, 55.0, ToolStats(runs=2, successes=2))
        never = _memory_of(res, 55.0, None)
        assert (ran.effective, never.effective) == (None, 55.0)
        assert "not this operation" in never.note and "not this operation" not in ran.note
        # near-miss: asked again, each is what its steps make; an equal answer object is answered alike
        twin = MemoryResult(score=90.0, matched=5, confidence=0.8, success_rate=1.0, note="5 similar")
        assert _memory_of(res, 55.0, None) == _memory_of(twin, 55.0, None) == _memory_component(res, 55.0, False)
        assert _memory_of(res, 55.0, ToolStats(runs=1)) == _memory_component(res, 55.0, True) == ran
        assert _memory_of(res, 90.0, None).effective == 90.0  # the same answer at another prior
        other = MemoryResult(score=20.0, matched=5, confidence=0.8, success_rate=0.2, note="5 similar")
        assert _memory_of(other, 55.0, None).value == 20.0

    def test_an_unreadable_snapshot_says_so_at_once(self, tmp_path: Path) -> None:
        """The snapshot reader's "unavailable" answer is one object per reason: a new reason
        (a snapshot that cannot be read appeared) is a new note."""
        from guard.memory.published import snapshot_path

        g = Guard(tmp_path / "a", CONFIG | {"memory.backend": "snapshot"})
        memory = g.state.memory
        assert memory is not None
        first = fused(g, "bash", {"command": "frobnicate --all"})[3]["dimensions"]["memory"]
        again = fused(g, "bash", {"command": "frobnicate --all"})[3]["dimensions"]["memory"]
        snapshot_path(tmp_path / "a").write_bytes(b"not a snapshot")
        memory.refresh()  # type: ignore[attr-defined]
        broken = fused(g, "bash", {"command": "frobnicate --all"})[3]["dimensions"]["memory"]
        assert first == again and "no snapshot published yet" in first["note"]
        assert "unreadable snapshot" in broken["note"]
        assert first["confidence"] == broken["confidence"] == 0.0


class TestStaticCache:
    def test_keys_tell_types_apart_as_the_json_does(self) -> None:
        keys = [cache_key("mcp", {"n": v}) for v in (1, True, 1.0, "1", None, [1])]
        assert len(set(keys)) == len(keys)
        # near-miss: the order of the keys is not part of the call
        assert cache_key("mcp", {"a": "x", "b": 2}) == cache_key("mcp", {"b": 2, "a": "x"})
        assert cache_key("mcp", {"a": "x"}) != cache_key("mcp", {"a": "x", "b": ""})

    def test_other_limits_are_analysed_afresh(self) -> None:
        """The key holds the limits' fields (session 24): other limits, another analysis; equal
        limits in another record, the same one."""
        from guard.layers.static import Analyser
        from guard.static.analysis import Limits

        analyser = Analyser()
        call = ToolCall("Bash", {"command": "echo " + "b" * 3000})
        big, small, small_twin = Limits(), Limits(max_bytes=2048), Limits(max_bytes=2048)
        verdicts = [analyser(call, "/home/u", None, limits)[1] for limits in (big, small, big, small_twin, small)]
        ids = [{r.rule_id for r in v.reasons} for v in verdicts]
        assert "G198" in ids[1] and "G198" not in ids[0]
        assert verdicts[2] is verdicts[0] and verdicts[3] is verdicts[1] and verdicts[4] is verdicts[1]

    def test_a_project_rule_file_that_appears_is_applied_at_once(self, tmp_path: Path) -> None:
        """A folder without a project rule file is judged by the configured rules alone (session
        24: not added to an empty set again); the file, once written, applies to the next call."""
        repo = tmp_path / "repo"
        (repo / ".git").mkdir(parents=True)
        g = Guard(tmp_path / "ws", CONFIG)
        call = {"command": "make deploy"}
        before = g.decide("bash", call, session_id="s", cwd=str(repo))
        again = g.decide("bash", call, session_id="s", cwd=str(repo))
        (repo / ".guard.toml").write_text('[permissions]\ndeny = ["Bash(make deploy:*)"]\n', encoding="utf-8")
        after = g.decide("bash", call, session_id="s", cwd=str(repo))
        assert before.decision == again.decision != "block"
        assert after.decision == "block" and "G190" in {r.rule_id for r in after.reasons}

    def test_another_target_is_analysed_afresh(self, tmp_path: Path) -> None:
        g = cold(tmp_path, "a")
        ordinary = g.decide("write", {"file_path": "src/app.py", "content": "x = 1\n"})
        risky = g.decide("write", {"file_path": str(Path.home() / ".bashrc"), "content": "x = 1\n"})
        again = g.decide("write", {"file_path": "src/app.py", "content": "x = 1\n"})
        assert risky.risk > ordinary.risk
        assert (again.decision, again.risk, again.reasons) == (ordinary.decision, ordinary.risk, ordinary.reasons)

    def test_an_analysis_cut_short_is_not_kept(self, tmp_path: Path) -> None:
        layer = cold(tmp_path, "a").chain.layer("static")
        assert layer is not None
        call = ToolCall("Bash", {"command": " && ".join(f"ls dir{i}" for i in range(300))})
        rushed = layer.judge(call, deadline=time.perf_counter() - 1.0)  # type: ignore[attr-defined]
        calm = layer.judge(call)  # type: ignore[attr-defined]
        assert rushed.ceiling == REQUEST_CONFIRM and "G420" in {r.rule_id for r in rushed.reasons}
        assert calm.risk == Risk.SAFE and "G420" not in {r.rule_id for r in calm.reasons}


class TestHistoryFiles:
    def test_a_file_replaced_by_one_of_the_same_size_is_recounted(self, tmp_path: Path) -> None:
        g = cold(tmp_path, "a")
        call = {"command": "frobnicate --all"}
        g.record_result("bash", call, success=True)
        g.decide("bash", call)
        applied = g.state.aggregates.lines_applied
        g.decide("bash", call)  # near-miss: unchanged, nothing read again
        assert g.state.aggregates.lines_applied == applied
        path = tmp_path / "a" / ".command-execution.jsonl"
        text = path.read_bytes()
        assert b'"status":"success"' in text
        replacement = tmp_path / "replacement.jsonl"
        replacement.write_bytes(text.replace(b'"status":"success"', b'"status":"failure"'))
        os.replace(replacement, path)  # another process (guard tidy, an editor) swapped the file
        g.decide("bash", call)
        stats = g.state.aggregates.tool("bash")
        assert stats is not None and (stats.runs, stats.successes) == (1, 0)
        g.close()

    def test_lines_another_writer_appended_are_counted(self, tmp_path: Path) -> None:
        g = cold(tmp_path, "a")
        call = {"command": "frobnicate --all"}
        g.record_result("bash", call, success=True)
        g.decide("bash", call)
        path = tmp_path / "a" / ".command-execution.jsonl"
        with path.open("ab") as f:
            f.write(path.read_bytes().replace(b'"status":"success"', b'"status":"failure"'))
        g.decide("bash", call)
        stats = g.state.aggregates.tool("bash")
        assert stats is not None and (stats.runs, stats.successes) == (2, 1)
        g.close()


class TestFusedRounding:
    def test_the_components_round_as_round_does(self) -> None:
        """The fused score's rounding without the decimal conversion (session 24) is ``round(x, 2)``,
        the same float with the same sign: ties, near-ties either side, zeros, negatives, huge
        and non-finite values beside ordinary ones."""
        import math
        import random

        from guard.layers.fusion import _round2

        rng = random.Random(24)
        cases = [rng.uniform(0, 100) for _ in range(20_000)] + [rng.uniform(0, 1e6) for _ in range(5_000)]
        cases += [rng.uniform(0, 1e-3) for _ in range(1_000)] + [k / 1000 for k in range(100_001)]
        ties = [k / 100 + 0.005 for k in range(10_000)] + [k / 200 for k in range(20_001)]
        cases += ties + [math.nextafter(t, math.inf) for t in ties] + [math.nextafter(t, -math.inf) for t in ties]
        cases += [0.0, -0.0, 5e-324, 1e-300, 2.675, 1.005, 0.125, 99.995, 100.0, 1e6, 999_999.995, 1e300]
        cases += [-1.5, -0.005, -87.125, math.inf, -math.inf]
        for x in cases:
            want, got = round(x, 2), _round2(x)
            assert (got, math.copysign(1.0, got)) == (want, math.copysign(1.0, want)), x
        assert math.isnan(_round2(math.nan))


class TestFusionDataIsEachRecordsOwn:
    """The fusion verdict's data holds the fused score's values as they are (a remembered score is
    shared by every call it answers) and makes the dicts a reader could change on first read:
    a reader changing one record's dicts changes no other record and not the layer (session 25)."""

    def test_a_reader_changing_one_record_changes_no_other(self, tmp_path: Path) -> None:
        call = {"command": "frobnicate --all"}  # no history: the second call is answered from memory
        with freeze_time(T0):
            g = cold(tmp_path, "a")
            first = g.decide("bash", call, session_id="deciding")
            data = first.layer("fusion").data  # type: ignore[union-attr]
            untouched = {k: dict(data[k]) for k in ("components", "weights")}  # (copies: changed below)
            data["components"]["memory"] = -1.0
            data["weights"]["memory"] = 9.0
            first.components["cmd_success"] = -1.0
            first.weights["user_pref"] = 9.0
            again = fused(g, "bash", call)
            fresh = fused(cold(tmp_path, "b"), "bash", call)
        assert again == fresh  # near-miss: the remembered answer is still the cold one
        assert again[3]["components"] == untouched["components"] and again[3]["weights"] == untouched["weights"]
        assert again[2] == untouched["components"]
        assert dict(g.chain.layer("fusion").weights) == untouched["weights"]  # type: ignore[union-attr]

    def test_the_data_reads_as_the_mapping_it_replaces(self, tmp_path: Path) -> None:
        with freeze_time(T0):
            rec = Guard(tmp_path / "a", CONFIG).decide("bash", {"command": "git status"}, session_id="s")
        data = rec.layer("fusion").data  # type: ignore[union-attr]
        plain = data.to_dict()
        assert dict(data) == plain and list(data.values()) == list(plain.values())
        assert list(plain) == ["components", "weights", "health", "mode", "prior", "dimensions"]
        assert data["components"] == rec.components and data.get("weights") == rec.weights
        assert (
            list(plain["components"]) == list(plain["dimensions"]) == ["memory", "cmd_success", "user_pref", "system"]
        )
        assert data["components"] is not rec.components and data["weights"] is not rec.weights
