"""Well-known documentation and package-index hosts: reading them is ordinary work.

A fetch of such a page is low risk and does not by itself mark the session as having read
untrusted content (the lethal-trifecta taint, G220). Any other page still does. The list
is the config's ``network.docs_hosts`` (these defaults) plus ``network.extra_docs_hosts``;
a listed name covers its subdomains (``readthedocs.io`` covers ``httpx.readthedocs.io``).

Deliberately absent: ``github.com`` and ``gitlab.com`` (issues, pull requests and READMEs
are anyone's text: the classic place for a prompt injection), paste sites, and any host
that serves user uploads as pages. Only plain ``https`` (or ``http``) URLs on the default
port count; a URL with credentials, another port or an IP address is not a docs page.

    >>> is_docs_url("https://docs.python.org/3/library/asyncio.html")
    True
    >>> is_docs_url("https://pastebin.example.net/raw/x")
    False
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from guard import lazyre

DOCS_HOSTS: tuple[str, ...] = (
    "docs.python.org",
    "peps.python.org",
    "packaging.python.org",
    "pypi.org",
    "readthedocs.io",
    "readthedocs.org",
    "developer.mozilla.org",
    "nodejs.org",
    "npmjs.com",
    "registry.npmjs.org",
    "typescriptlang.org",
    "docs.rs",
    "crates.io",
    "doc.rust-lang.org",
    "pkg.go.dev",
    "go.dev",
    "learn.microsoft.com",
    "docs.github.com",
    "docs.docker.com",
    "kubernetes.io",
    "docs.djangoproject.com",
    "docs.pytest.org",
    "numpy.org",
    "pandas.pydata.org",
    "docs.scipy.org",
    "scikit-learn.org",
    "matplotlib.org",
    "docs.pydantic.dev",
    "fastapi.tiangolo.com",
    "docs.astral.sh",
    "react.dev",
    "en.cppreference.com",
    "docs.oracle.com",
    "man7.org",
)
_URL = lazyre.compile(r"""(?i)\bhttps?://[^\s'"`<>|;&)]+""")


def hosts_of(config: object | None) -> frozenset[str]:
    """The configured docs hosts (``network.docs_hosts`` + ``network.extra_docs_hosts``)."""
    get = getattr(config, "get", None)
    if get is None:
        return _DEFAULT
    try:
        base = get("network.docs_hosts")
        extra = get("network.extra_docs_hosts")
    except KeyError:
        return _DEFAULT
    return frozenset(h.lower().strip(".") for h in (*base, *extra) if h)


def is_docs_url(url: str, hosts: Iterable[str] | None = None) -> bool:
    """Is ``url`` a page on a documentation or package-index host?"""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return False
    if parts.scheme.lower() not in ("https", "http") or parts.username or parts.password or port is not None:
        return False
    host = (parts.hostname or "").lower().rstrip(".")
    if not host or host.replace(".", "").isdigit() or ":" in host:
        return False
    known = _DEFAULT if hosts is None else hosts
    return any(host == h or host.endswith("." + h) for h in known)


def urls_in(text: str) -> list[str]:
    """The http(s) URLs written in a command."""
    return _URL.findall(text)


def only_docs(urls: Iterable[str], hosts: Iterable[str] | None = None) -> bool:
    """True when there is at least one URL and every one is a docs page."""
    seen = False
    for url in urls:
        if not is_docs_url(url, hosts):
            return False
        seen = True
    return seen


_DEFAULT = frozenset(DOCS_HOSTS)
