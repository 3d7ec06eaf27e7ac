"""A PNG of latency distributions, written with zlib and struct (no plotting dependency).

One strip per series on a log time axis from 1 µs to 1 s: a grey density histogram of the
samples, black at p50, blue at p99, red at the budget. Labels use a 3×5 bitmap font.

    write_png(Path("bench.png"), {"decide 100k history": (samples_us, 200.0)})
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

Color = tuple[int, int, int]
WHITE: Color = (255, 255, 255)
GRID: Color = (225, 225, 225)
INK: Color = (20, 20, 20)
DENSITY: Color = (110, 110, 110)
P99: Color = (30, 80, 220)
BUDGET: Color = (220, 30, 30)

LEFT, RIGHT, TOP, ROW, SCALE = 330, 20, 34, 34, 2
DECADES = (0, 6)  # 10^0 µs .. 10^6 µs

_GLYPHS = {
    "0": "111101101101111", "1": "010110010010111", "2": "111001111100111", "3": "111001111001111",
    "4": "101101111001001", "5": "111100111001111", "6": "111100111101111", "7": "111001001001001",
    "8": "111101111101111", "9": "111101111001111", "A": "010101111101101", "B": "110101110101110",
    "C": "011100100100011", "D": "110101101101110", "E": "111100110100111", "F": "111100110100100",
    "G": "011100101101011", "H": "101101111101101", "I": "111010010010111", "J": "001001001101010",
    "K": "101101110101101", "L": "100100100100111", "M": "101111111101101", "N": "110101101101101",
    "O": "010101101101010", "P": "110101110100100", "Q": "010101101110011", "R": "110101110101101",
    "S": "011100010001110", "T": "111010010010010", "U": "101101101101111", "V": "101101101101010",
    "W": "101101111111101", "X": "101101010101101", "Y": "101101010010010", "Z": "111001010100111",
    " ": "000000000000000", ".": "000000000000010", ",": "000000000010100", ":": "000010000010000",
    "-": "000000111000000", "+": "000010111010000", "/": "001001010100100", "(": "010100100100010",
    ")": "010001001001010", "%": "101001010100101", "=": "000111000111000", "_": "000000000000111",
    "@": "010101111100011", ">": "100010001010100", "<": "001010100010001", "×": "000101010101000",
}  # fmt: skip
_ALIASES = {"µ": "U", "÷": "/", "≤": "<", "≥": ">"}


class Canvas:
    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.pixels = bytearray(WHITE * (width * height))

    def rect(self, x0: int, y0: int, x1: int, y1: int, color: Color) -> None:
        x0, x1 = max(0, x0), min(self.width, x1)
        y0, y1 = max(0, y0), min(self.height, y1)
        if x0 >= x1:
            return
        run = bytes(color) * (x1 - x0)
        for y in range(y0, y1):
            at = (y * self.width + x0) * 3
            self.pixels[at : at + len(run)] = run

    def text(self, x: int, y: int, s: str, color: Color = INK, scale: int = SCALE) -> None:
        for ch in s.upper():
            glyph = _GLYPHS.get(_ALIASES.get(ch, ch), _GLYPHS["-"])
            for i, bit in enumerate(glyph):
                if bit == "1":
                    gx, gy = x + (i % 3) * scale, y + (i // 3) * scale
                    self.rect(gx, gy, gx + scale, gy + scale, color)
            x += 4 * scale

    def png(self) -> bytes:
        stride = self.width * 3
        raw = b"".join(b"\x00" + bytes(self.pixels[y * stride : (y + 1) * stride]) for y in range(self.height))

        def chunk(tag: bytes, data: bytes) -> bytes:
            return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)  # 8-bit RGB
        return (
            b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
        )


def _x(us: float, x0: int, width: int) -> int:
    lo, hi = DECADES
    pos = (math.log10(max(us, 10.0**lo)) - lo) / (hi - lo)
    return x0 + int(min(1.0, max(0.0, pos)) * (width - 1))


def _pct(ordered: Sequence[float], q: float) -> float:
    return ordered[max(0, min(len(ordered), math.ceil(q * len(ordered) / 100)) - 1)]


def render(series: Mapping[str, tuple[Sequence[float], float | None]], width: int = 1000) -> Canvas:
    """Draw every series (name → (samples in µs, budget in µs or None)) on one canvas."""
    names = [n for n, (s, _) in series.items() if s]
    height = TOP + ROW * len(names) + 30
    c = Canvas(width, height)
    x0, plot_w = LEFT, width - LEFT - RIGHT
    labels = {0: "1US", 1: "10US", 2: "100US", 3: "1MS", 4: "10MS", 5: "100MS", 6: "1S"}
    for d in range(DECADES[0], DECADES[1] + 1):
        gx = _x(10.0**d, x0, plot_w)
        c.rect(gx, TOP - 4, gx + 1, TOP + ROW * len(names), GRID)
        label = labels.get(d, f"1E{d}")
        c.text(min(gx - 8, width - 4 * SCALE * len(label) - 2), 10, label)
    for i, name in enumerate(names):
        samples, budget = series[name]
        ordered = sorted(samples)
        top = TOP + i * ROW
        c.text(8, top + 12, name[:40])
        bins = [0] * plot_w
        for v in ordered:
            bins[_x(v, 0, plot_w)] += 1
        peak = max(bins) or 1
        for bx, n in enumerate(bins):
            if n:
                h = max(2, int((ROW - 8) * math.sqrt(n / peak)))
                c.rect(x0 + bx, top + ROW - 4 - h, x0 + bx + 1, top + ROW - 4, DENSITY)
        for value, color in ((_pct(ordered, 50), INK), (_pct(ordered, 99), P99)):
            mx = _x(value, x0, plot_w)
            c.rect(mx - 1, top + 2, mx + 1, top + ROW - 2, color)
        if budget:
            bx = _x(budget, x0, plot_w)
            c.rect(bx - 1, top, bx + 2, top + ROW, BUDGET)
        c.rect(x0, top + ROW - 1, x0 + plot_w, top + ROW, GRID)
    legend_y = TOP + ROW * len(names) + 10
    c.text(8, legend_y, "P50", INK)
    c.text(48, legend_y, "P99", P99)
    c.text(88, legend_y, "BUDGET", BUDGET)
    c.text(160, legend_y, "GREY: DENSITY OF SAMPLES, LOG TIME")
    return c


def write_png(path: Path, series: Mapping[str, tuple[Sequence[float], float | None]]) -> None:
    path.write_bytes(render(series).png())
