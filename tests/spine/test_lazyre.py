"""Patterns compiled on first use: the same answers as ``re``, and every pattern in guard compiles."""

from __future__ import annotations

import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import guard
from guard import lazyre
from guard.lazyre import LazyPattern

ROOT = Path(__file__).resolve().parents[2]


def test_answers_like_re() -> None:
    lazy, eager = lazyre.compile(r"(?P<w>[a-z]+)(\d*)", re.I), re.compile(r"(?P<w>[a-z]+)(\d*)", re.I)
    text = "Ab1 cd22 -- EF"
    assert lazy.pattern == eager.pattern and isinstance(lazy, LazyPattern)
    assert lazy.search(text).group(0) == eager.search(text).group(0)  # type: ignore[union-attr]
    assert lazy.findall(text) == eager.findall(text)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in eager.finditer(text)]
    assert lazy.sub("x", text) == eager.sub("x", text) and lazy.subn("x", text) == eager.subn("x", text)
    assert lazy.split(text) == eager.split(text)
    assert lazy.match("zz9") is not None and lazy.fullmatch("zz9 ") is None
    assert lazy.flags == eager.flags and lazy.groups == 2 and dict(lazy.groupindex) == {"w": 1}


def test_a_bytes_pattern_answers_like_re() -> None:
    """The shell engine's patterns over the UTF-8 source are bytes patterns; the near miss, text."""
    lazy, eager = lazyre.compile(rb"(?<!\\)\n[ \t]*\\"), re.compile(rb"(?<!\\)\n[ \t]*\\")
    src = b"ls\n  \\rm -rf x\na\\\n\\b"
    assert [m.span() for m in lazy.finditer(src)] == [m.span() for m in eager.finditer(src)] != []
    assert lazy.sub(b";", src) == eager.sub(b";", src)
    with pytest.raises(TypeError):
        lazy.search("ls\n  \\rm")  # type: ignore[arg-type]


def test_compiles_once_then_uses_the_compiled_methods() -> None:
    lazy = lazyre.compile(r"a+")
    assert "search" not in vars(lazy)  # nothing compiled at creation
    lazy.search("aaa")
    assert vars(lazy)["search"].__self__ is vars(lazy)["match"].__self__  # one compiled pattern's methods
    assert isinstance(vars(lazy)["search"].__self__, re.Pattern)


def test_a_bad_pattern_fails_at_first_use_with_re_error() -> None:
    bad = lazyre.compile(r"(unclosed")
    with pytest.raises(re.error):
        bad.search("x")


def test_every_module_level_pattern_in_guard_compiles() -> None:
    """Lazy patterns only fail when used: compile all of them here, so a typo fails this test."""
    for info in pkgutil.walk_packages(guard.__path__, "guard."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    assert lazyre.compile_all() >= 80


def test_a_hook_process_compiles_only_what_it_uses() -> None:
    code = (
        "import sys, re\n"
        "from guard.layers.static import classify\n"
        "from guard.model import ToolCall\n"
        "import guard.lazyre as L\n"
        "mods = [m for n, m in list(sys.modules.items()) if n.startswith('guard')]\n"
        "lazy = [v for m in mods for v in vars(m).values() if isinstance(v, L.LazyPattern)]\n"
        "classify(ToolCall('Bash', {'command': 'git status'}))\n"
        "print(len(lazy), sum(v._compiled is not None for v in lazy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)}, timeout=120
    )
    total, used = map(int, out.stdout.split())
    assert total >= 50 and used < total / 2, (total, used)
