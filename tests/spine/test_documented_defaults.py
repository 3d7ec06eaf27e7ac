"""The docs' settings tables say what ``guard.config.SETTINGS`` declares: each default is declared
once, in code, and every ``| key | default |`` table under ``docs/`` is checked against it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from guard.config import SETTINGS

DOCS = Path(__file__).resolve().parents[2] / "docs"
BY_KEY = {s.key: s for s in SETTINGS}
UNSET = {"unset", "none", "–", "-", ""}


def documented() -> Iterator[tuple[str, str, str]]:
    """(where, key, the default as written) for every row of every settings table in docs/."""
    for md in sorted(DOCS.glob("*.md")):
        lines = md.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if not re.match(r"^\| key \| default \|", line):
                continue
            for j in range(i + 2, len(lines)):
                if not lines[j].startswith("|"):
                    break
                cells = [c.strip() for c in lines[j].strip("|").split("|")]
                keys = re.findall(r"`([^`]+)`", cells[0])
                section = keys[0].rsplit(".", 1)[0]
                keys = [k if "." in k else f"{section}.{k}" for k in keys]  # `weights.memory` / `cmd_success`
                written = [d.strip() for d in cells[1].split(" / ")]
                if len(written) == 1:
                    written *= len(keys)
                assert len(written) == len(keys), f"{md.name}:{j + 1}: {len(keys)} keys, {len(written)} defaults"
                for key, value in zip(keys, written, strict=True):
                    yield f"{md.name}:{j + 1}", key, value


def as_value(text: str) -> Any:
    """A default as the docs write it (`75`, `0.30`, `true`, `` `auto` ``, `250,000`, unset)."""
    text = text.strip("`")
    if text in UNSET:
        return None
    if text in ("true", "false"):
        return text == "true"
    number = text.replace(",", "")
    if re.fullmatch(r"-?\d+(\.\d+)?", number):
        return float(number)
    return text


def declared(key: str) -> Any:
    value = BY_KEY[key].default
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value if value != "" else None
    if value == ():  # an empty list of options
        return None
    if isinstance(value, int | float):
        return float(value)
    return value


ROWS = list(documented())


def test_the_docs_have_settings_tables() -> None:
    # near-miss guard: a parser that finds nothing would pass everything below
    assert len(ROWS) >= 60
    assert {where.split(":")[0] for where, _, _ in ROWS} >= {"configuration.md", "behavior.md", "memory.md"}


@pytest.mark.parametrize(("where", "key", "written"), ROWS, ids=[f"{w}-{k}" for w, k, _ in ROWS])
def test_a_documented_default_is_the_declared_one(where: str, key: str, written: str) -> None:
    assert key in BY_KEY, f"{where}: {key} is not a setting (guard config lists them)"
    if key == "memory.uri":  # written as a path pattern, computed per workspace
        return
    assert as_value(written) == declared(key), (
        f"{where}: {key} documented as {written}, declared {BY_KEY[key].default!r}"
    )


def test_a_wrong_default_is_caught() -> None:
    assert as_value("0.30") == declared("weights.memory")
    assert as_value("0.31") != declared("weights.memory")
    assert as_value("`auto`") == declared("memory.backend")
    assert as_value("`lancedb`") != declared("memory.backend")
