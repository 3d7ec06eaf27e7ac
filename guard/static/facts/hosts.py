"""Where a request goes and what it must not carry there: hosts, loopback, metadata, secrets in transit.

``host_of`` reads a URL's host as a client would connect to it; ``LOCAL_HOST`` is this machine;
``METADATA_HOSTS`` the cloud instance metadata services (which hand out the machine's credentials);
``leaked_secret`` and ``secret_in_url`` find a literal secret sent to a host that did not issue it.
Facts about text only: shared by the HTTP clients (:mod:`guard.static.families.net`), the tools
that are not the shell (:mod:`guard.static.families.tools`) and the user's ``WebFetch(domain:…)``
rules (:mod:`guard.static.rules.userrules`).
"""

from __future__ import annotations

import re

from guard import lazyre

LOCAL_HOST = lazyre.compile(
    r"^(localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|\[::1\]|::1|[\w.-]+\.localhost|host\.docker\.internal)$", re.I
)
_SCHEME = lazyre.compile(r"^[a-z][a-z0-9+.-]*://", re.I)


def host_of(url: str) -> str:
    """The host a client would connect to, as WHATWG URL parsing finds it.

    The authority ends at the first ``/``, ``?``, ``#`` or ``\\``; the host follows its *last*
    ``@``. So ``https://evil.example#@docs.python.org/`` is evil.example, not docs.python.org.
    """
    m = _SCHEME.match(url)
    rest = url[m.end() :] if m else url
    authority = re.split(r"[/?#\\]", rest, maxsplit=1)[0]
    host = authority.rpartition("@")[2]
    if host.startswith("["):
        return host[: host.find("]") + 1].lower() if "]" in host else host.lower()
    return host.partition(":")[0].lower()


# Cloud instance metadata services hand out the machine's credentials and tokens to whoever asks,
# with the usual spellings of 169.254.169.254 (decimal, hex, octal) that dodge a plain match.
METADATA_HOSTS = frozenset(
    {
        "169.254.169.254",
        "2852039166",
        "0xa9fea9fe",
        "0251.0376.0251.0376",
        "169.254.170.2",
        "[fd00:ec2::254]",
        "metadata.google.internal",
        "metadata.goog",
        "metadata",
        "100.100.100.200",
    }
)


# A secret in a URL: a query key naming one (judged per key by ``secret_in_url``: one pattern over the
# whole URL backtracked quadratically on ``??????…``) or a token's own shape (fixed-length tails: an
# open-ended ``{20,}`` rescanned ``sk-sk-sk-…`` from every start).
_SECRET_KEY = lazyre.compile(r"token|key|secret|password|passwd|auth|session|cred", re.I)
_SECRET_TOKEN = lazyre.compile(
    r"AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30}|sk-[A-Za-z0-9_-]{20}|xox[abpr]-[A-Za-z0-9-]{10}|-----BEGIN", re.I
)


# A secret written out as a value: ``AWS_SECRET_ACCESS_KEY=wJal…``, ``password: hunter2hunter2``
_NAMED_SECRET = lazyre.compile(
    r"\b[A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_KEY|APIKEY|PRIVATE_KEY|ACCESS_KEY)[A-Z0-9_]*\s*[=:]\s*"
    r"['\"]?[A-Za-z0-9/+_.\-]{16}",
    re.I,
)
# Who issues each token shape: sending one to its issuer is using it, anywhere else is leaking it.
_ISSUERS = (
    ("AKIA", ("amazonaws.com", "aws.amazon.com")),
    ("gh", ("github.com", "githubusercontent.com")),
    ("sk-ant-", ("anthropic.com",)),
    ("sk-", ("openai.com", "anthropic.com")),
    ("xox", ("slack.com",)),
)


def leaked_secret(text: str, host: str, named: bool = False) -> str | None:
    """A literal secret in ``text`` sent to ``host`` that did not issue it: a token of a known shape, or
    (``named``: a message to people, where no password belongs) ``NAME=value`` where the name says
    secret. None for none, or for the issuer's own host. A request's own headers and form fields carry
    ``PRIVATE-TOKEN: …`` and ``password=…`` to the service they log in to: only shapes count there."""
    m = _SECRET_TOKEN.search(text[:65536])
    if m:
        token = m.group(0)
        host = host.lower().rstrip(".")
        for prefix, hosts in _ISSUERS:
            if token.startswith(prefix) or token.lower().startswith(prefix.lower()):
                if any(host == h or host.endswith("." + h) for h in hosts):
                    return None
                break
        return token[:12] + "…"
    found = _NAMED_SECRET.search(text[:65536]) if named else None
    return found.group(0)[:24] + "…" if found else None


def secret_in_url(url: str) -> bool:
    """Whether ``url`` carries a secret: ``?…token…=value`` (a key that follows ``?`` or ``&`` and names
    a secret, with a value of six or more characters) or a token of a known shape. Linear time."""
    if _SECRET_TOKEN.search(url):
        return True
    for n, part in enumerate(url.split("&")):
        pieces = part.split("=")
        end = 0
        for i, key in enumerate(pieces[:-1]):
            end += len(key) + 1  # where this key's value starts in ``part``
            if n == 0 or i > 0:  # the key must start after a ``?`` (or right after ``&``)
                if "?" not in key:
                    continue
                key = key[key.index("?") + 1 :]
            if len(part) - end >= 6 and _SECRET_KEY.search(key):
                return True
    return False
