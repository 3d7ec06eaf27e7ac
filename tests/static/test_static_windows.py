"""Windows: path tiers, the PowerShell/cmd.exe tokenizer, and the cheap test that sends text to it.

The labelled cases (``cases/windows.jsonl``) carry the decisions; this file pins the parts below them.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from static_helpers import HOME, judge

from guard.model import BLOCK
from guard.static.facts import paths as P
from guard.static.facts.paths import Resolver
from guard.static.families.windows import param
from guard.static.reading import pwsh
from guard.static.reading.winsyntax import looks_windows

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PWSHISH = st.lists(
    st.sampled_from(
        [
            *"\"'`^$(){}[]|&;<>#,.:=%~*? \n\r\t-/\\abcCrx019",
            "<#",
            "#>",
            "$(",
            "@(",
            "@{",
            "$env:",
            "${",
            "&&",
            "||",
            "2>&1",
            "Remove-Item",
            "-Recurse",
            "C:\\",
            "%USERPROFILE%",
            "iex",
            "\u200b",
        ]
    ),
    max_size=80,
).map("".join)


@pytest.mark.parametrize(
    ("word", "tier"),
    [
        ("C:\\", P.ROOT),
        ("c:/", P.ROOT),
        ("D:", P.ROOT),
        ("/mnt/c/", P.ROOT),
        ("/c", P.ROOT),
        ("C:\\Users", P.HOME),
        ("c:\\users\\Bob", P.HOME),
        ("%USERPROFILE%", P.HOME),
        ("$env:userprofile", P.HOME),
        ("~\\", P.HOME),
        ("/mnt/c/Users/bob", P.HOME),
        ("/c/Users/bob", P.HOME),
        ("C:\\WINDOWS\\system32", P.SYSTEM),
        ("C:/Program Files (x86)", P.SYSTEM),
        ("%ProgramData%", P.SYSTEM),
        ("/mnt/c/Windows", P.SYSTEM),
        ("%USERPROFILE%\\.ssh", P.CREDENTIAL),
        ("$env:APPDATA\\Microsoft\\Credentials", P.CREDENTIAL),
        ("C:\\Users\\x\\AppData\\Local\\Microsoft\\Vault\\a", P.CREDENTIAL),
        ("%APPDATA%\\Microsoft\\Windows\\Start Menu\\Programs\\Startup\\x.lnk", P.PERSIST),
        ("%TEMP%\\build", P.TEMP),
        ("C:\\Windows\\Temp\\x", P.TEMP),
        ("C:\\Users\\bob\\Documents", P.HOME_OTHER),
        ("D:\\data", P.OTHER),
        ("\\\\server\\share", P.OTHER),
    ],
)
def test_windows_paths_land_on_posix_tiers(word: str, tier: str) -> None:
    assert Resolver(HOME, "/work/proj").place(word).tier == tier


@pytest.mark.parametrize("word", ["./c/Users", "c/Users", "build", "/data/c/x", "$env:NOT_A_KNOWN_VAR"])
def test_relative_and_unknown_words_are_not_windows_roots(word: str) -> None:
    """Near-misses: a project directory named ``c`` is not the C: drive."""
    assert Resolver(HOME, "/work/proj").place(word).tier not in (P.ROOT, P.HOME, P.SYSTEM)


def test_wsl_project_is_still_the_project() -> None:
    """A project under /mnt/c keeps its own leniency: ``rm -rf build`` there is not a drive delete."""
    assert Resolver(HOME, "/mnt/c/Users/bob/proj").place("/mnt/c/Users/bob/proj/build").tier == P.PROJECT


def test_tokenizer_splits_statements_quotes_and_escapes() -> None:
    split = pwsh.split('& \'C:\\a b\\t.exe\' -x; Remove-Item "a`"b" | iex # note\nGet-Location')
    assert split.statements == [
        ("", ["C:\\a b\\t.exe", "-x"]),
        (";", ["Remove-Item", 'a"b']),
        ("|", ["iex"]),
        (";", ["Get-Location"]),
    ]
    assert pwsh.split("del /q x & rd /s /q y", cmd=True).statements == [
        ("", ["del", "/q", "x"]),
        (";", ["rd", "/s", "/q", "y"]),
    ]


def test_tokenizer_flattens_blocks_and_keeps_method_arguments() -> None:
    split = pwsh.split("gci | ForEach-Object { Remove-Item $_ } ; $wc.DownloadFile('u', 'f')")
    assert ["Remove-Item", "$_"] in [w for _, w in split.statements]
    assert any(w[0] == "$wc.DownloadFile('u', 'f')" for _, w in split.statements)


def test_parameters_are_case_insensitive_prefixes() -> None:
    names = {"recurse": False, "force": False, "filter": True}
    assert param("-REC", names) == "recurse"
    assert param("-fo", names) == "force"
    assert param("-f", names) is None  # ambiguous: force or filter
    assert param("Recurse", names) is None


@pytest.mark.parametrize(
    "text",
    ["rmdir /s /q C:\\", "del /f /s /q x", "type %USERPROFILE%\\.ssh\\id_rsa", "Get-Content $env:APPDATA\\x"],
)
def test_windows_syntax_is_spotted(text: str) -> None:
    assert looks_windows(text)


@pytest.mark.parametrize(
    "text",
    [
        "git status",
        "ls -la /tmp",
        "rm -rf /",
        "grep -rn 'a\\|b' src",
        "printf '%s' x",
        "date +%Y",
        "find . -exec rm {} \\;",
    ],
)
def test_posix_commands_are_not_sent_to_the_windows_reader(text: str) -> None:
    assert not looks_windows(text)


@FAST
@given(PWSHISH, st.booleans())
def test_tokenizer_never_raises_and_stays_bounded(text: str, cmd: bool) -> None:
    split = pwsh.split(text, cmd=cmd)
    assert sum(len(w) for _, w in split.statements) <= len(text) + 1


@FAST
@given(PWSHISH)
def test_powershell_commands_never_crash_the_static_layer(text: str) -> None:
    """Whatever follows ``pwsh -c``, the layer answers without an error, and never allows a block's twin."""
    verdict = judge(f"pwsh -c {text!r}")
    assert verdict.error is None
    assert judge(f"pwsh -c 'Remove-Item -Recurse -Force C:\\; {text.replace(chr(39), '')}'").decision == BLOCK
