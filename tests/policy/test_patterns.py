"""The normaliser: a call → the pattern one rule covers, and the rule's text."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from guard.policy.patterns import Pattern, bash_prefix, bash_words, parse_rule, pattern_of


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("npm run test -- --watch", "Bash(npm run test:*)"),
        ("npm run test", "Bash(npm run test:*)"),
        ("npm run test:unit", "Bash(npm run test:unit:*)"),
        ("git status", "Bash(git status:*)"),
        ("git   status  --short", "Bash(git status:*)"),
        ("git commit -m 'fix: a | b'", "Bash(git commit:*)"),
        ("git push origin main", "Bash(git push origin:*)"),  # at most three words
        ("git checkout 3f2a91c0", "Bash(git checkout:*)"),  # a commit hash is volatile
        ("pytest tests/policy -q", "Bash(pytest:*)"),
        ("ls -la", "Bash(ls:*)"),
        ("cargo build --release", "Bash(cargo build:*)"),
        ("npm install lodash@4.17.21", "Bash(npm install:*)"),
        ("docker compose up -d", "Bash(docker compose up:*)"),
        ("kubectl get pods 42", "Bash(kubectl get pods:*)"),
        ("./gradlew build", "Bash(./gradlew build:*)"),
        ("python manage.py migrate", "Bash(python manage.py migrate:*)"),
        ("python3 -m pytest -x", "Bash(python3 -m pytest:*)"),
        ("make", "Bash(make:*)"),
        ("make build#2", "Bash(make:*)"),  # ``#`` inside a word is not a comment
        ("npm run test # watch", "Bash(npm run test:*)"),
    ],
)
def test_bash_commands_generalise_to_their_program_and_subcommands(command: str, rule: str) -> None:
    pattern = pattern_of("Bash", command)
    assert pattern is not None
    assert pattern.rule == rule


@pytest.mark.parametrize(
    "command",
    [
        "npm test && rm -rf build",  # compound
        "cat a | sh",
        "echo hi > out.txt",
        "echo $(whoami)",
        "echo `id`",
        "FOO=1 npm test",  # an assignment changes what runs
        "sudo apt-get install x",  # wrappers run anything
        "env npm test",
        "xargs rm",
        "timeout 5 make",
        "bash -c 'npm test'",  # shells run anything
        "sh script.sh",
        "python -c 'print(1)'",  # an interpreter without its script
        "node",
        "'unterminated",
        "-x y",  # not a program
        "",
    ],
)
def test_commands_that_would_make_an_overbroad_rule_get_no_pattern(command: str) -> None:
    assert pattern_of("bash", command) is None


@pytest.mark.parametrize(
    ("tool", "path", "rule"),
    [
        ("Write", "src/guard/x.py", "Write(src/guard/**)"),
        ("Edit", "./src/a.py", "Edit(src/**)"),
        ("Write", "/srv/app/config/settings.py", "Write(//srv/app/config/**)"),
        ("Edit", "~/notes/todo.md", "Edit(~/notes/**)"),
        ("Write", "README.md", "Write(/README.md)"),  # no directory part: that file, anchored
        ("Read", "docs/a.md", "Read(docs/**)"),
    ],
)
def test_file_tools_generalise_to_their_directory(tool: str, path: str, rule: str) -> None:
    pattern = pattern_of(tool, path)
    assert pattern is not None and pattern.rule == rule


@pytest.mark.parametrize(
    "path",
    [
        "/etc",
        "~/.bashrc",
        "../outside/a.py",
        "src/../../x",
        "/",
        "src/*.py",
        "~/../other/a.py",  # normpath would fold it into other/a.py
        "./~/proj/a.py",  # a directory named ~, not home
        "$HOME/proj/a.py",  # expanded by the static layer
        "~bob/proj/a.py",
        "//srv/app/a.py",
        "src/a.py ",  # a rule text cannot carry surrounding blanks
        "src/a\tb.py",  # a control character
    ],
)
def test_file_paths_too_broad_or_escaping_get_no_pattern(path: str) -> None:
    assert pattern_of("Write", path) is None


def test_the_home_directory_is_too_broad() -> None:
    assert pattern_of("Write", str(Path.home() / "notes.txt")) is None
    assert pattern_of("Write", str(Path.home() / "proj" / "notes.txt")) is not None


def test_web_fetch_generalises_to_the_host_and_other_tools_not_at_all() -> None:
    pattern = pattern_of("WebFetch", "https://docs.python.org/3/library/json.html")
    assert pattern is not None and pattern.rule == "WebFetch(domain:docs.python.org)"
    assert pattern_of("mcp__github__create_issue", '{"title": "x"}') is None


def test_prefix_covers_whole_words_only_and_never_a_compound_command() -> None:
    pattern = Pattern("bash", "prefix", "npm run test")
    assert pattern.covers("Bash", "npm run test")
    assert pattern.covers("bash", "npm run test -- --watch")
    assert pattern.covers("shell", "npm  run   test")  # host name folded, whitespace normalised
    assert not pattern.covers("bash", "npm run testing")
    assert not pattern.covers("bash", "npm run test && curl x | sh")
    assert not pattern.covers("bash", "npm run")
    assert not pattern.covers("Write", "npm run test")


def test_directory_covers_files_below_it_only() -> None:
    pattern = Pattern("write", "dir", "src")
    assert pattern.covers("Write", "src/a.py")
    assert pattern.covers("Write", "./src/deep/b.py")
    assert not pattern.covers("Write", "srcx/a.py")
    assert not pattern.covers("Write", "src/../etc/passwd")
    assert pattern.covers("Edit", "src/a.py")  # the static layer reads Write and Edit rules alike
    assert not pattern.covers("Read", "src/a.py")


def test_a_file_pattern_covers_that_file_only() -> None:
    pattern = Pattern("write", "file", "README.md")
    assert pattern.covers("Write", "README.md")
    assert not pattern.covers("Write", "docs/README.md")  # a bare Write(README.md) would cover it
    assert pattern.covers("Write", "/proj/README.md", cwd="/proj")
    assert not pattern.covers("Write", "/elsewhere/README.md", cwd="/proj")


def test_a_domain_pattern_covers_the_host_and_its_subdomains() -> None:
    pattern = Pattern("web_fetch", "domain", "docs.python.org")
    assert pattern.covers("WebFetch", "https://docs.python.org/3/library/json.html")
    assert pattern.covers("WebFetch", "https://en.docs.python.org/")
    assert not pattern.covers("WebFetch", "https://python.org/")
    assert not pattern.covers("WebFetch", "https://docs.python.org.evil.example/")


@pytest.mark.parametrize(
    "url", ["https://evil.example#@docs.python.org/", "https://user@docs.python.org/", "https://a b.org/"]
)
def test_urls_whose_host_parsers_disagree_on_get_no_pattern(url: str) -> None:
    assert pattern_of("WebFetch", url) is None


@pytest.mark.parametrize(
    "rule",
    [
        "Bash(npm run test:*)",
        "Write(src/**)",
        "Write(//srv/app/**)",
        "Edit(~/notes/**)",
        "Edit(/a.md)",
        "WebFetch(domain:example.com)",
        "Bash(pip install requests)",
    ],
)
def test_rule_text_round_trips(rule: str) -> None:
    pattern = parse_rule(rule)
    assert pattern is not None and pattern.rule == rule


@pytest.mark.parametrize(
    "rule",
    ["Bash(npm *)", "Bash(:*)", "Glob(**)", "nonsense", "WebFetch(example.com)", "Edit(a.md)", "Edit(./a.md)"],
)
def test_rules_this_module_does_not_write_do_not_parse(rule: str) -> None:
    assert parse_rule(rule) is None


_words = st.one_of(
    st.sampled_from(["npm", "run", "test", "git", "-x", "--flag", "a/b", "x.py", "~/", "&&", "|", ";", "$(x)", "'q"]),
    st.text(min_size=1, max_size=8),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_words, max_size=6).map(" ".join))
@example("wipe ~/")  # a delete of the home: its prefix rule would not cover it (found by a long run)
@example("npm test > ../out.txt")
def test_normaliser_never_raises_and_yields_a_word_prefix_of_the_command(command: str) -> None:
    prefix = bash_prefix(command)
    if prefix is None:
        return
    words = bash_words(command)
    assert words is not None
    assert words[: len(prefix.split(" "))] == prefix.split(" ")
    pattern = pattern_of("bash", command)
    assert pattern is not None and parse_rule(pattern.rule) == pattern
    if not pattern.covers("bash", command):
        # An allow rule never covers a call that writes or deletes outside the project
        # (``wipe ~/``, ``x > ../f``): those are judged on their own, and rated at least medium,
        # so the gates never suggest such a rule.
        from guard.layers.static import classify
        from guard.model import Risk, ToolCall

        verdict = classify(ToolCall("Bash", {"command": command}))
        assert verdict.risk is not None and verdict.risk >= Risk.MEDIUM, (command, verdict.reasons)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40), st.sampled_from(["Write", "Edit", "Read", "WebFetch", "Bash", "other"]))
def test_any_text_for_any_tool_never_raises(text: str, tool: str) -> None:
    pattern = pattern_of(tool, text)
    if pattern is not None:
        assert pattern.covers(tool, text)
