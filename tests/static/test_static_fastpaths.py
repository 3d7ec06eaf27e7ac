"""The static layer's fast paths give what the plain code they stand in for gives (issue 17).

Each shortcut taken for speed (a path already normal left alone, one pattern for a table of
prefixes) is checked against the straightforward computation it replaces, on the table's own
entries and their near misses and on generated input.
"""

from __future__ import annotations

import posixpath

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guard.static.facts import paths as P
from guard.static.facts.places import HOME_CACHES, HOME_CREDENTIALS, HOME_PERSIST, SYSTEM_PERSIST

FAST = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # (a loaded machine)
_PARTS = st.sampled_from(["", ".", "..", "...", ".ssh", "a", "b.c", "..x", "x..", ".env", "etc", "/"])


@FAST
@given(st.lists(_PARTS, max_size=6), st.booleans())
def test_normpath_is_posixpath_normpath(parts: list[str], absolute: bool) -> None:
    """``paths.normpath`` is ``posixpath.normpath`` on any mix of dots, slashes and names."""
    path = ("/" if absolute else "") + "/".join(parts)
    assert P.normpath(path) == posixpath.normpath(path)


def _loop(pairs: list[tuple[str, str]], path: str) -> tuple[str, str] | None:
    """What the prefix tables did before: the first entry in table order that covers ``path``."""
    return next(((p, v) for p, v in pairs if P._under(path, p)), None)


def _cases(prefixes: list[str]) -> list[str]:
    out = []
    for p in prefixes:
        bare = p.rstrip("/.")
        out += [p, bare, p + "x", bare + "/y/z", bare + "x", bare[:-1], p.rstrip("/") + ".d", bare.upper()]
    return out


def test_prefix_tables_match_the_loop_they_replace() -> None:
    """Each prefix table answers, for its entries and their near misses, what a loop over it answers."""
    tables = [
        (P._SYSTEM_PERSIST_IX, list(SYSTEM_PERSIST)),
        (P._HOME_PERSIST_IX, list(HOME_PERSIST)),
        (P._HOME_CRED_IX, [(p, p) for p in HOME_CREDENTIALS]),
        (P._HOME_CACHE_IX, [(p, p) for p in HOME_CACHES]),
    ]
    for index, pairs in tables:
        for path in _cases([p for p, _ in pairs]):
            first = path.strip("/").split("/", 1)[0]
            assert P._first_under(index, first, path) == _loop(
                [(p, v) for p, v in pairs if p.strip("/").split("/", 1)[0] == first], path
            ), path


_NAME_PARTS = st.sampled_from(
    [
        ".",
        "id_",
        "rsa",
        "env",
        "Env",
        "rc",
        "key",
        "pem",
        "json",
        "yml",
        "tfstate",
        ".backup",
        "tfvars",
        "ini",
        "credentials",
        "secret",
        "priv",
        "service_account",
        "history",
        "bash_",
        "kubeconfig",
        "vault-token",
        "ca-",
        "cert",
        "x",
        "-",
        "\n",
        "\u0130",
        "*",
        "?",
    ]
)


@FAST
@given(st.one_of(st.text(alphabet="abc.*?-_ekyp\n", max_size=12), st.lists(_NAME_PARTS, max_size=5).map("".join)))
def test_secret_level_of_one_name_matches_the_general_path(name: str) -> None:
    """The one-candidate shortcut of ``secret_level`` agrees with the patterns tried in turn."""
    candidates = (
        [name]
        if "*" not in name and "?" not in name
        else [name.replace("*", f).replace("?", "x") for f in ("", "x", ".local", "rsa")]
    )
    want = (
        2
        if any(P._KEY_NAMES.match(c) for c in candidates)
        else 1
        if any(P._SECRET_NAMES.match(c) for c in candidates)
        else 0
    )
    assert P.secret_level(name) == want


_PROD_TEXT = st.lists(
    st.sampled_from(
        [
            "PROD",
            "prod",
            "Prd",
            "production",
            "pre-",
            "non_",
            "RAILS_ENV=",
            "--env ",
            "-n ",
            " ",
            "=",
            "app",
            "_",
            "DISABLE_DATABASE_ENVIRONMENT_CHECK=1",
            "postgres://",
            "db.",
            "\u017f",
            "x",
        ]
    ),
    max_size=8,
).map("".join)


@FAST
@given(_PROD_TEXT)
def test_production_marker_prefilter_never_hides_a_marker(text: str) -> None:
    """The substring test in front of the production patterns skips only texts they cannot match."""
    from guard.static.families import prod

    m = prod._MARKERS.search(text)
    assert prod.marker(text) == (m.group(0).strip() if m else None)
    want = (
        text if len(text) <= 512 and text and not any(c.isspace() for c in text) and prod._WORD.search(text) else None
    )
    assert prod.target([text]) == want
