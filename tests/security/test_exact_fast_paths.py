"""Fast paths that must answer exactly what the slow steps would: the call's signature,
remembered by its exact inputs (a changed input is never answered from the memo), and the
fused score's rounded components."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pytest

from guard.layers.data import Component
from guard.model import Risk, ToolCall
from guard.signature import signature
from guard.toolnames import canonical_tool


def _unremembered(tool: str, params: Mapping[str, Any]) -> str:
    """The signature's steps, written out once more (what the memo must agree with)."""
    text = None
    for key in ("command", "cmd", "script"):
        value = params.get(key)
        if isinstance(value, str):
            text = value
            break
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            text = " ".join(value)
            break
    if text is None:
        for key in ("file_path", "path", "file", "filePath", "absolute_path", "notebook_path", "url", "pattern"):
            value = params.get(key)
            if isinstance(value, str):
                text = value
                break
    if text is None:
        try:
            text = json.dumps(params, sort_keys=True, default=str, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            text = repr(sorted(params))
    return f"{canonical_tool(tool)}:{' '.join(unicodedata.normalize('NFKC', text).split())[:512]}"


CASES: list[tuple[str, Any]] = [
    ("Bash", {"command": "git  status"}),
    ("Bash", {"command": "git status", "description": "x"}),
    ("bash", {"command": "git status"}),
    ("Bash", {"command": ["git", "status"]}),
    ("Bash", {"cmd": "ls -la"}),
    ("Bash", {"command": 3, "cmd": "ls -la"}),
    ("Bash", {"command": 3, "file_path": "/x"}),
    ("Write", {"file_path": "/src/a.py", "content": "x"}),
    ("Write", {"file_path": "/src/b.py", "content": "x"}),
    ("Read", {"path": "/etc/hosts"}),
    ("mcp__github__create_issue", {"title": "flaky", "body": "see CI"}),
    ("mcp__github__create_issue", {"title": "flaky", "body": "see CI 2"}),
    ("mcp__github__create_issue", {"body": "see CI", "title": "flaky"}),
    ("mcp__github__create_issue", {"title": "flaky", "labels": ["bug"]}),
    ("mcp__github__create_issue", {"title": "flaky", "n": 1}),
    ("mcp__github__create_issue", {"title": "flaky", "n": "1"}),
    ("mcp__x__y", MappingProxyType({"title": "flaky"})),
    ("mcp__x__y", {}),
]


@pytest.mark.parametrize(("tool", "params"), CASES)
def test_remembered_signature_is_what_its_steps_make(tool: str, params: Any) -> None:
    """Asked twice (the second from the memo), the answer is the one the steps make."""
    assert signature(tool, params) == _unremembered(tool, params)
    assert signature(tool, params) == _unremembered(tool, params)


def test_a_changed_input_is_not_answered_from_the_memo() -> None:
    """A near miss (another command, tool, value or key) gets its own signature."""
    assert signature("Bash", {"command": "rm a"}) == "bash:rm a"
    assert signature("Bash", {"command": "rm b"}) == "bash:rm b"
    assert signature("mcp__x__y", {"title": "a"}) != signature("mcp__x__y", {"title": "b"})
    assert signature("mcp__x__y", {"title": "a"}) != signature("mcp__x__y", {"name": "a"})
    assert signature("mcp__x__y", {"title": "a"}) != signature("mcp__x__z", {"title": "a"})
    assert signature("mcp__x__y", {"n": "1"}) != signature("mcp__x__y", {"n": 1})


def test_a_params_dict_changed_in_place_gets_its_new_signature() -> None:
    """The memo keeps values, not the dict: a dict changed after a call is read afresh."""
    params = {"title": "a"}
    assert signature("mcp__x__y", params) == 'mcp__x__y:{"title": "a"}'
    params["title"] = "b"
    assert signature("mcp__x__y", params) == 'mcp__x__y:{"title": "b"}'
    assert ToolCall("mcp__x__y", params).redacted_signature == 'mcp__x__y:{"title": "b"}'


# -- the fused score's components: a value at its (whole) prior is written as it is -------------


@pytest.mark.parametrize("risk", list(Risk))
@pytest.mark.parametrize("value", [None, 0.0, -0.0, 12.345678, 66.666666, 100.0])
def test_fused_components_are_the_rounded_effective_values(risk: Risk, value: float | None) -> None:
    """Each component is ``round(effective, 2)``: at the prior (the shortcut) and beside it."""
    from guard.config import Config
    from guard.layers.fusion import PRIORS, FusionLayer

    layer = FusionLayer(Config.load(None, env={}))
    prior = PRIORS[risk]
    at = prior if value is None else value
    parts = [Component(50.0, 0.0, "x", effective=v) for v in (at, prior, prior + 0.004, at)]
    fused = layer._fuse(risk, 100.0, *parts)
    components = fused[3]  # (in COMPONENT_KEYS order)
    expected = [round(p.effective, 2) for p in parts]  # type: ignore[arg-type]
    assert list(components) == expected
    assert [str(v) for v in components] == [str(v) for v in expected]  # -0.0 stays -0.0


@pytest.mark.parametrize("risk", [Risk.SAFE, Risk.MEDIUM])
@pytest.mark.parametrize("value", [-40.0, -0.0, 0.0, 37.5, 100.0, 100.0001, 250.0])
def test_fused_score_is_the_clipped_weighted_sum(risk: Risk, value: float) -> None:
    """The score is ``max(0, min(100, Σ weight·effective))``, and a measured low-risk failure
    never pulls a dimension below the prior, as the written-out comparisons make them."""
    from guard.config import Config
    from guard.layers.fusion import PRIORS, FusionLayer

    layer = FusionLayer(Config.load(None, env={}))
    prior = PRIORS[risk]
    mem = Component(50.0, 0.0, "x", matched=3, effective=value)
    cmd = Component(50.0, 0.0, "x", matched=None, effective=value)
    user = Component(50.0, 0.0, "x", effective=value)
    score, _, _, components, weights, *_ = layer._fuse(risk, 100.0, mem, cmd, user, user)
    e_mem = max(value, prior) if risk <= Risk.LOW else value
    total = sum(
        (
            weights["memory"] * e_mem,
            weights["cmd_success"] * value,
            weights["user_pref"] * value,
            weights["system"] * value,
        )
    )
    expected = max(0.0, min(100.0, total))
    assert str(score) == str(expected)
    assert components[0] == round(e_mem, 2)  # (memory: COMPONENT_KEYS order)


class _Unshowable:
    def __str__(self) -> str:
        raise RuntimeError("no text")


@pytest.mark.parametrize(
    "params",
    [
        {"command": "ls", "n": 10**5000},  # text first, then a number too long to write
        {"n": 10**5000, "command": "ls"},
        {"command": "ls", 7: {"nested": 1.5}, (1, 2): "a tuple key"},  # a key that is no text
        {"command": "ls", "x": _Unshowable()},
        {"command": "ls", "x": [1, {"y": _Unshowable()}]},
    ],
)
def test_params_checked_past_their_text_items(tmp_path: Any, params: dict[Any, Any]) -> None:
    """``make_call`` answers text-only params without ``check_params``' walk; one item that is
    not text, wherever it stands, sends the whole mapping through it (and it is refused)."""
    from guard.core import Guard
    from guard.errors import InputError

    with Guard(tmp_path / "ws") as g, pytest.raises(InputError):
        g.decide("mcp__x__put", params, session_id="s", save=False)


def test_text_only_params_are_taken_as_they_are(tmp_path: Any) -> None:
    """The near-miss: text-only params (none, one, several, empty strings) are accepted and copied."""
    from guard.core import Guard

    with Guard(tmp_path / "ws") as g:
        for params in ({}, {"command": "ls"}, {"a": "", "b": "日本語", "c": "\ud800"}, None):
            call = g.make_call("mcp__x__put", params, session_id="s")
            assert call.params == (params or {}) and call.params is not params
