"""The benchmark runner: discovery, rows, budgets, failures as notes, the JSON file and the plot.

Benchmarks report numbers; nothing here asserts on a timing.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

import benchmarks
from benchmarks import __main__ as runner
from benchmarks.common import meets, percentile, row
from benchmarks.plot import BUDGET, render, write_png

REPO = Path(__file__).resolve().parents[2]
ROW_KEYS = {"name", "value", "unit", "budget", "met"}


def _valid_rows(rows: Any) -> None:
    assert isinstance(rows, list) and rows
    for r in rows:
        assert set(r) >= ROW_KEYS, r
        assert isinstance(r["name"], str) and r["name"]
        assert r["value"] is None or isinstance(r["value"], (int, float))
        assert isinstance(r["unit"], str)
        assert r["budget"] is None or isinstance(r["budget"], str)
        assert r["met"] in (True, False, None)
        if r["budget"] is not None and r["value"] is not None:
            assert r["met"] == meets(r["value"], r["budget"]), r


class TestBudgets:
    @pytest.mark.parametrize(
        ("value", "budget", "met"),
        [
            (200, "<= 200", True),
            (200.01, "<= 200", False),
            (100, ">= 100", True),
            (99, ">= 100", False),
            (0, "== 0", True),
            (1, "== 0", False),
            (5, "< 5", False),
            (6, "> 5 (seed)", True),
        ],
    )
    def test_meets(self, value: float, budget: str, met: bool) -> None:
        assert meets(value, budget) is met

    def test_an_unreadable_budget_is_an_error(self) -> None:
        with pytest.raises(ValueError, match="budget"):
            meets(1, "about 200")

    def test_row_computes_met_only_with_a_budget_and_a_value(self) -> None:
        assert row("a", 180.0, "µs", "<= 200")["met"] is True
        assert row("a", 180.0, "µs")["met"] is None
        assert row("a", None, "µs", "<= 200")["met"] is None
        assert row("a", 1.0, "", note="why")["note"] == "why"

    def test_percentile_is_nearest_rank(self) -> None:
        samples = list(range(1, 101))
        assert percentile(samples, 50) == 50
        assert percentile(samples, 99) == 99
        assert percentile(samples, 100) == 100
        assert percentile([7.0], 99) == 7.0
        assert percentile([3, 1, 2], 0) == 1


@pytest.fixture
def extra_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A second directory in the ``benchmarks`` package holding test modules."""
    monkeypatch.setattr(benchmarks, "__path__", [*benchmarks.__path__, str(tmp_path)])
    for name in ("zz_ok", "zz_broken", "zz_raises", "zz_junk"):
        monkeypatch.delitem(sys.modules, f"benchmarks.bench_{name}", raising=False)
    (tmp_path / "bench_zz_ok.py").write_text(
        "from benchmarks.common import row\n"
        "def run(quick):\n"
        "    return [row('fast thing', 1.5, 'µs', '<= 2'), row('slow thing', 9.0, 'ms', '<= 5'), row('info', 3, 'x')]\n"
    )
    (tmp_path / "bench_zz_broken.py").write_text("import no_such_module_anywhere\n")
    (tmp_path / "bench_zz_raises.py").write_text("def run(quick):\n    raise RuntimeError('disk on fire')\n")
    (tmp_path / "bench_zz_junk.py").write_text(
        "def run(quick):\n    return [{'value': 1}, 'x', {'name': 'nan', 'value': float('nan')}]\n"
    )
    return tmp_path


class TestRunner:
    def test_discovers_every_bench_module_in_the_package(self) -> None:
        on_disk = sorted(p.stem.removeprefix("bench_") for p in (REPO / "benchmarks").glob("bench_*.py"))
        assert sorted(runner.discover()) == on_disk
        assert {"decide", "guarded", "concurrency", "rss"} <= set(on_disk)

    def test_failures_become_note_rows_and_the_run_goes_on(
        self, extra_modules: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        out, md = tmp_path / "rows.json", tmp_path / "table.md"
        code = runner.main(
            ["--quick", "--only", "zz_ok,zz_broken,zz_raises,zz_junk", "--json", str(out), "--markdown", str(md)]
        )
        assert code == 0  # a missed budget and broken modules are reported, not an error
        rows = json.loads(out.read_text())
        _valid_rows(rows)
        by_name = {r["name"]: r for r in rows}
        assert by_name["fast thing"]["met"] is True and by_name["slow thing"]["met"] is False
        assert by_name["fast thing"]["group"] == "zz_ok"
        broken = by_name["zz_broken: not run: import failed"]
        assert broken["value"] is None and "no_such_module_anywhere" in broken["note"]
        assert "disk on fire" in by_name["zz_raises: failed"]["note"]
        assert by_name["zz_junk: malformed row"]["value"] is None
        assert by_name["nan"]["value"] is None  # NaN is not JSON
        assert md.read_text().count("\n") == len(rows) + 2  # header, rule, one line per row
        printed = capsys.readouterr().out
        assert "1 budgets met, 1 missed" in printed and "  - slow thing" in printed

    def test_unknown_module_is_a_usage_error(self, capsys: pytest.CaptureFixture[str]) -> None:
        with pytest.raises(SystemExit) as exc:
            runner.main(["--only", "nope"])
        assert exc.value.code == 2
        assert "no benchmark module named nope" in capsys.readouterr().err

    def test_table_and_markdown_show_every_row(self) -> None:
        rows = [row("a b", 123.456, "µs", "<= 200"), row("c", 0.5, "×", note="x|y"), row("d", 9.0, "ms", "<= 5")]
        text = runner.table(rows)
        assert "a b" in text and "123.5" in text and "yes" in text and "NO" in text
        md = runner.markdown(rows)
        assert md.count("\n") == len(rows) + 1 and "x\\|y" in md and "**no**" in md


class TestPlot:
    def _decode(self, data: bytes) -> tuple[int, int, bytes]:
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        pos, idat, size = 8, b"", (0, 0)
        while pos < len(data):
            (length,) = struct.unpack(">I", data[pos : pos + 4])
            tag, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
            (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
            assert crc == zlib.crc32(tag + body) & 0xFFFFFFFF, tag
            if tag == b"IHDR":
                w, h, depth, color = struct.unpack(">IIBB", body[:10])
                assert (depth, color) == (8, 2)
                size = (w, h)
            elif tag == b"IDAT":
                idat += body
            pos += 12 + length
        raw = zlib.decompress(idat)
        w, h = size
        assert len(raw) == h * (1 + 3 * w)
        return w, h, raw

    def test_writes_a_valid_png_with_budget_marks(self, tmp_path: Path) -> None:
        series = {"decide 100k history": ([150.0 + i % 40 for i in range(500)], 200.0), "empty": ([], None)}
        write_png(tmp_path / "p.png", series)
        w, h, raw = self._decode((tmp_path / "p.png").read_bytes())
        assert (w, h) == (render(series).width, render(series).height)
        assert bytes(BUDGET) in raw  # the red budget mark is drawn

    def test_no_budget_no_red(self) -> None:
        canvas = render({"x": ([10.0, 20.0, 30.0], None)})
        body = bytes(canvas.pixels)
        legend_rows = 40 * canvas.width * 3  # the legend names the budget colour; look above it
        assert bytes(BUDGET) not in body[: len(body) - legend_rows]


@pytest.mark.slow
def test_quick_run_from_the_command_line_writes_valid_rows(tmp_path: Path) -> None:
    """``python -m benchmarks --quick --json F`` (one module, to stay quick; CI runs them all)."""
    out = tmp_path / "bench.json"
    env = dict(os.environ, PYTHONPATH=str(REPO), LANCE_LOG="error")
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--only", "concurrency", "--json", str(out)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = json.loads(out.read_text())
    _valid_rows(rows)
    names = [r["name"] for r in rows]
    assert any("decision p99" in n and r["budget"] for n, r in zip(names, rows, strict=True))
    assert any("records lost" in n for n in names)
    assert all(r["value"] is not None for r in rows), [r for r in rows if r["value"] is None]
    lost = [r for r in rows if "records lost" in r["name"]]
    assert all(r["value"] == 0 for r in lost), lost
    assert "guard benchmarks (quick run" in proc.stdout
    assert not list(tmp_path.glob("*.png"))  # the quick run draws no plot
