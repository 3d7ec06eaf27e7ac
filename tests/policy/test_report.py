"""guard report: the numbers, the HTML page and its charts, and a real render in headless Chromium."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from datetime import timedelta
from html.parser import HTMLParser
from pathlib import Path

import pytest

from guard.jsonl import JsonlLog
from guard.policy import page as html_page
from guard.policy import report, rules
from guard.policy.history import decisions

from .helpers import T0, Stream, cli, decode_png, play
from .test_suggest import run_suggest


@pytest.fixture
def history(workspace: Path, stream: Stream) -> Path:
    """Two sessions two days apart, with a quiet day between them."""
    stream.approved("npm run test", "s1").approved("npm run test", "s1")
    stream.dispatch({"command": "rm -rf ~"}, "s1").dispatch({"command": "rm -rf /"}, "s1")
    stream.approved("make build", "s1", ok=False)
    stream.at(T0 + timedelta(days=2))
    stream.approved("git status", "s2").approved("src/a.py", "s2", tool="Write").denied("docker system prune", "s2")
    play(workspace, stream)
    return workspace


class _Charts(HTMLParser):
    """Counts ``<g class="bar">`` per ``<svg id>`` and notes anything that would fetch."""

    def __init__(self) -> None:
        super().__init__()
        self.bars: Counter[str] = Counter()
        self.charts: list[str] = []
        self.fetches: list[str] = []
        self._svg: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "svg":
            self._svg = a.get("id") or "?"
            self.charts.append(self._svg)
        elif tag == "g" and a.get("class") == "bar" and self._svg:
            self.bars[self._svg] += 1
        if (
            tag in ("script", "link", "img", "iframe")
            or "src" in a
            or any(v and ("http:" in v or "https:" in v) for v in a.values())
        ):
            self.fetches.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg":
            self._svg = None


def charts_of(page: str) -> _Charts:
    parser = _Charts()
    parser.feed(page)
    return parser


class TestNumbers:
    def test_decisions_per_day_cover_every_calendar_day_up_to_the_last(self, history: Path) -> None:
        data = report.build(history)
        logged = Counter((e.when.date().isoformat(), e.outcome) for e in decisions(history))
        assert len(data.days) == 3
        for day, counts in data.days:
            assert counts == {d: logged.get((day, d), 0) for d in ("auto_allow", "request_confirm", "block")}
        assert sum(data.days[1][1].values()) == 0  # the quiet day is there, empty
        assert data.days_left_off == 0

    def test_a_short_window_reports_the_days_it_left_off(self, history: Path) -> None:
        data = report.build(history, days=1)
        assert len(data.days) == 1 and data.days_left_off == 1

    def test_blocking_rules_are_those_of_the_layer_that_blocked(self, history: Path) -> None:
        data = report.build(history)
        assert [(r["id"], r["count"]) for r in data.blocking_rules] == [("G101", 2)]

    def test_tools_by_trust(self, history: Path) -> None:
        tools = {t["tool"]: t for t in report.build(history).tools}
        assert (tools["bash"]["runs"], tools["bash"]["success_rate"]) == (4, 0.75)
        assert (tools["bash"]["asked"], tools["bash"]["approval_rate"]) == (5, 0.8)
        assert (tools["write"]["runs"], tools["write"]["approval_rate"]) == (1, 1.0)

    def test_sessions_worst_first_with_an_estimated_health(self, history: Path) -> None:
        sessions = report.build(history).sessions
        assert [s["session"] for s in sessions] == ["s1", "s2"]
        s1 = sessions[0]
        # good: 2 successes + 3 approvals; bad: 1 failure + 2 blocks
        assert (s1["health"], s1["source"], s1["blocks"], s1["failures"]) == (62.5, "estimated", 2, 1)

    def test_health_logged_by_the_behavior_layer_wins_over_the_estimate(self, history: Path) -> None:
        JsonlLog(history / ".fusion-decisions.jsonl").append(
            {
                "timestamp": (T0 + timedelta(days=2, hours=1)).isoformat(),
                "tool": "Bash",
                "session_id": "s2",
                "decision": "request_confirm",
                "params": {"command": "make"},
                "layers": [{"layer": "behavior", "data": {"health": 35.0}}],
            }
        )
        s2 = next(s for s in report.build(history).sessions if s["session"] == "s2")
        assert (s2["health"], s2["source"]) == (35.0, "logged")

    def test_an_empty_workspace_gives_an_empty_report(self, workspace: Path) -> None:
        data = report.build(workspace)
        assert data.totals["decisions"] == 0 and data.days == () and data.saved == ()
        assert "no decisions logged yet" in report.text(data)
        assert charts_of(html_page.render(data)).charts == [
            "chart-days",
            "chart-blocking",
            "chart-tools",
            "chart-sessions",
            "chart-saved",
        ]


def test_prompts_saved_counts_calls_the_learned_rule_lifted_after_it_was_applied(
    workspace: Path, stream: Stream
) -> None:
    """The chain as shipped: the static layer reads the applied rule from [permissions]."""
    for s in ("s1", "s2", "s3"):
        # A deploy command (medium) is asked about; failures elsewhere keep it in the confirm band.
        stream.approved("kubectl apply -f k8s/", s).approved("make build", s, ok=False)
    play(workspace, stream)
    rules.record(workspace, run_suggest(workspace))
    rules.apply(workspace, now=stream.now)
    assert "Bash(kubectl apply -f k8s/)" in (workspace / "guard.toml").read_text()
    asked_before = sum(1 for e in decisions(workspace) if e.outcome == "request_confirm" and "kubectl" in e.text)
    stream.at(stream.now + timedelta(days=365))  # the answers have faded; the rule has not
    # the learned operation twice; another target (k8s/api) and another program are not covered
    for command in ("kubectl apply -f k8s/", "kubectl apply -f k8s/api", "kubectl apply -f k8s/"):
        stream.dispatch({"command": command}, "s4")
    stream.dispatch({"command": "kubectl applyx -f k8s/"}, "s4")
    after = play(workspace, stream)
    assert [d["decision"] for d in after] == ["auto_allow", "request_confirm", "auto_allow", "request_confirm"]
    assert after[0]["reasons"][0]["id"] == "G192"  # allowed by a user rule

    data = report.build(workspace)
    [row] = data.saved
    assert row["rule"] == "Bash(kubectl apply -f k8s/)"
    assert (row["asked_before"], row["covered"], row["saved"]) == (asked_before, 2, 2)
    assert asked_before >= 2 and data.prompts_saved == 2
    assert "saved 2 of 2 covered calls" in report.text(data)


def test_the_page_has_one_bar_per_day_rule_tool_session_and_learned_rule(history: Path) -> None:
    data = report.build(history)
    page = html_page.render(data)
    charts = charts_of(page)
    assert charts.charts == ["chart-days", "chart-blocking", "chart-tools", "chart-sessions", "chart-saved"]
    assert charts.bars == {
        "chart-days": len(data.days),
        "chart-blocking": len(data.blocking_rules),
        "chart-tools": len(data.tools),
        "chart-sessions": len(data.sessions),
    }
    assert charts.fetches == []  # self-contained: nothing to load
    assert "<script" not in page and "url(" not in page and "@import" not in page
    assert 'class="chart empty"' in page and "no active learned allow rules" in page


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(
    _chromium() is None,
    reason="headless Chromium is not installed (Debian: apt-get install -y chromium; .ci/run installs it)",
)
def test_the_page_renders_its_charts_in_headless_chromium(history: Path, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    cli("report", "--html", str(page), workspace=history)
    png = tmp_path / "report.png"
    subprocess.run(
        [
            str(_chromium()),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={png}",
            "--window-size=1200,1600",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert png.stat().st_size > 0
    image = decode_png(png)
    assert image.shape == (1600, 1200, 3)
    pixels = image.reshape(-1, 3)

    def painted(colour: str) -> int:
        rgb = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
        return int((pixels == rgb).all(axis=1).sum())

    # Every outcome's colour is painted by the bars (the legend swatches alone are ~120 px).
    for decision in ("auto_allow", "request_confirm", "block"):
        assert painted(html_page.COLOURS[decision]) > 1000, decision
    assert painted("#1565c0") > 1000  # the tools chart's success-rate bars


def test_cli_report_text_json_and_html(history: Path, tmp_path: Path) -> None:
    text = cli("report", workspace=history).stdout
    assert "decisions per day" in text and "G101" in text and "prompts saved by learned rules: 0" in text
    out = json.loads(cli("report", "--json", workspace=history).stdout)
    assert out["totals"]["decisions"] == sum(
        sum(d[k] for k in ("auto_allow", "request_confirm", "block")) for d in out["decisions_per_day"]
    )
    page = tmp_path / "r.html"
    printed = cli("report", "--html", str(page), workspace=history).stdout
    assert str(page) in printed and page.stat().st_mode & 0o777 == 0o600
    assert charts_of(page.read_text()).bars["chart-days"] == 3
    bad = cli("report", "--days", "0", workspace=history, check=False)
    assert bad.returncode == 2
