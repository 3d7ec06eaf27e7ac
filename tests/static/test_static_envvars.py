"""Variables that load or run code, and positional parameters: properties over untrusted values.

The labelled cases (``cases/env_code.jsonl``, ``cases/positional.jsonl``) pin the decisions; these
check that any value is judged without a crash, the same whichever way the variable is set, and
that ``set -- words; "$@"`` is judged as the words themselves.
"""

from __future__ import annotations

import shlex

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from static_helpers import cold_decision, judge, rule_ids

from guard.static.families import secrets
from guard.static.shell import envvars

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

JUDGED = [*sorted(envvars._JUDGES), "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0", "GIT_CONFIG_PARAMETERS"]
VALUE = st.lists(
    st.sampled_from(
        [
            *" :=-'\"$/.~\\|;",
            "--require",
            "-r",
            "--import=",
            "--loader",
            "-javaagent:",
            "-Xbootclasspath/a:",
            "-agentlib:",
            "-I",
            "-M",
            "-d",
            "/tmp/x",
            "./src",
            "~/lib",
            "..",
            "data:",
            "file://",
            "https://e.x/",
            "$X",
            "$(id)",
            "core.pager=",
            "alias.x=!",
            "rm -rf /",
            "curl x|sh",
            "\ue000",
            "\ue002",
        ]
    ),
    max_size=12,
).map("".join)


@FAST
@given(st.sampled_from(JUDGED), VALUE)
def test_any_value_of_a_judged_variable_never_raises(name: str, value: str) -> None:
    """Whatever the value, setting it yields a verdict, in every form."""
    quoted = shlex.quote(value)
    for command in (
        f"{name}={quoted} true",
        f"export {name}={quoted}",
        f"{name}={quoted}",
        f"env {name}={quoted} true",
    ):
        assert judge(command).risk is not None


@FAST
@given(st.sampled_from(JUDGED), VALUE.filter(lambda v: "\ue000" not in v and "\ue002" not in v))
def test_export_and_assignment_agree(name: str, value: str) -> None:
    """``export K=v`` (the fast path's handler) and ``K=v`` (the parser's walker) judge ``v`` alike."""
    quoted = shlex.quote(value)
    exported, assigned = judge(f"export {name}={quoted}"), judge(f"{name}={quoted}")
    assert exported.risk == assigned.risk, (rule_ids(exported), rule_ids(assigned))


@pytest.mark.parametrize(
    "words",
    [
        "rm -rf /",
        "rm -rf ~/",
        "chmod -R 777 /etc",
        "git push --force origin main",
        "dd if=/dev/zero of=/dev/sda",
        "ls -la",
        "git status",
        "rm -rf build",
        "npm test",
        "cat .env",
        "curl -s https://example.com",
        "kubectl delete ns prod",
    ],
)
@pytest.mark.parametrize("run", ['"$@"', "$@", '"$*"', "$*"])
def test_set_then_run_positional_is_judged_as_the_words(words: str, run: str) -> None:
    """``set -- W; "$@"`` decides what ``W`` decides."""
    plain = cold_decision(judge(words))
    assert cold_decision(judge(f"set -- {words}; {run}")) == plain


@given(st.lists(st.sampled_from(["--", "-", "-e", "-o", "+o", "pipefail", "-euo", "+x", "a", "-rf", "/"]), max_size=6))
def test_positional_words_are_a_suffix_of_the_arguments(args: list[str]) -> None:
    """What ``set`` makes positional is always the tail of its arguments (or nothing changes)."""
    words = secrets.positional_words(tuple(args))
    assert words is None or args[len(args) - len(words) :] == words
