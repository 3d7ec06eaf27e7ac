"""The shapes of secrets guard masks before writing anything: rules as data.

Each ``Shape`` has a stable ``kind`` (it names the placeholder, ``[REDACTED:github:1a2b3c4d]``),
one pattern, the lowercase substrings one of which must be in a text for the pattern to be
tried (``()``: always tried), and the groups it masks. A ``pick`` function decides which of
the groups to mask from the match itself (a secret-ish name decides whether its value is
masked always, only when it looks random, or never).

Written for guard from the public descriptions of each format (no other tool's rules are
copied). Every pattern is linear-time: no unbounded quantifier inside another; a scan
between a command word and its flag is bounded (``{0,400}``); names are taken possessively
after a lookahead finds the secret word, so a long run of name characters is read once.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable

from guard import lazyre
from guard.namedtuple import NamedTuple

Pick = Callable[["re.Match[str]"], tuple[int, ...]]


class Shape(NamedTuple):
    kind: str
    pattern: re.Pattern[str]
    triggers: tuple[str, ...]
    groups: tuple[int, ...] = (0,)
    pick: Pick | None = None


# -- values ------------------------------------------------------------------------------
# A value as it follows ``=``, ``:`` or a flag: quoted (the quotes are part of it) or bare.
_DQ = r'"(?:[^"\\\n]|\\.)*"'
_SQ = r"'[^'\n]*'"
# Quotes escaped once (JSON inside a JSON string, an error quoting a dump) and lists
# (``auth: [user, pw]``) come first: read bare, only their first character would be masked.
_ESC = r"""\\"[^"\\\n]*\\"|\\'[^'\\\n]*\\'"""
_LIST = r"\[[^\[\]\n]{0,400}\]"
_VALUE = rf"""({_ESC}|{_DQ}|{_SQ}|{_LIST}|[^\s"'$;&|`{{][^\s"'$;&|`]*)"""
_SHELL_VALUE = rf"""({_ESC}|{_DQ}|{_SQ}|[^\s"'|;&`]+)"""
# What a command may hold between its name and the flag that matters (bounded scan).
_ARGS = r"[^\n|;&]{0,400}?"


# -- names -----------------------------------------------------------------------------
# A name is secret-ish when one of these words stands in it as a part (``DB_PASSWORD``,
# ``authToken``, ``--api-key``, ``client_secret``). The patterns take every name (a flag, an
# assignment, a quoted key) and ``name_strength`` reads it split into parts: strong words mask
# their value always, weak ones (``key``, ``sig``...) only a value that looks random, and a
# name whose last part says what the secret is not (``_FILE``, ``_ID``, ``-stdin``) nothing.
_STRONG_RE = lazyre.compile(
    r"(?:passwords?|passwd|passphrase|secrets?|token|apikeys?|api_keys?|accesskeys?|access_keys?|"
    r"privatekeys?|private_keys?|accountkey|account_key|credentials?|cookie|authorization|"
    r"(?<![a-z])(?:pass|pwd|pw|auth|sshpass|dsn))(?![a-z])"
)
_WEAK_RE = lazyre.compile(r"(?<![a-z])(?:keys?|sig|signature|salt|cred|hmac)(?![a-z])")
_CAMEL = lazyre.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_PARTS = lazyre.compile(r"[^a-z0-9]+")
_NOT_SECRET_WORDS = (
    "file files path dir env id ids name names arn type mode url uri endpoint helper cmd command prompt "
    "stdin fd length len ttl expiry expires expiration count max min limit size format policy rotation "
    "enabled required version header location ref source store provider method kind field prefix label "
    "scope scopes hint chars regex pattern reset change changed hash algorithm algo manager vault backend "
    "server host port user username jar"
)
_NOT_SECRET = frozenset(_NOT_SECRET_WORDS.split())
_SHELL_VARS = frozenset({"pwd", "oldpwd"})


# The parameter names of the hosts' own tools (Claude Code's Bash sends ``command`` and
# ``description`` with every call): none names a secret, and answering them here spares a hook
# process that decides one call the four patterns above (~0.5 ms to compile). A test holds each
# answer equal to the patterns'.
_TOOL_PARAM_WORDS = (
    "command description timeout run_in_background file_path offset limit content old_string "
    "new_string replace_all edits pattern path glob output_mode url prompt query subagent_type "
    "todos notebook_path new_source cell_id cell_type edit_mode workdir directory absolute_path"
)
_TOOL_PARAMS = frozenset(_TOOL_PARAM_WORDS.split())


@functools.lru_cache(maxsize=2048)
def name_strength(name: str) -> int:
    """2 when ``name`` names a secret (``DB_PASSWORD``), 1 when maybe (``SIGNING_KEY``), else 0."""
    return 0 if name in _TOOL_PARAMS else _strength(name)


def _strength(name: str) -> int:
    """:func:`name_strength` read from the patterns."""
    parts = [p for p in _PARTS.split(_CAMEL.sub("_", name).lower()) if p]
    if not parts or parts[-1] in _NOT_SECRET or (len(parts) == 1 and parts[0] in _SHELL_VARS):
        return 0
    joined = "_".join(parts)
    if _STRONG_RE.search(joined):
        return 2
    return 1 if _WEAK_RE.search(joined) else 0


def looks_random(value: str) -> bool:
    """A value that looks generated: 12+ characters, two character classes, spread out."""
    v = value.strip("\"'")
    if len(v) < 12 or v[0] in "/~.$<{[" or " " in v:
        return False
    classes = any(c.islower() for c in v) + any(c.isupper() for c in v) + any(c.isdigit() for c in v)
    if classes < 2:
        return False
    counts: dict[str, int] = {}
    for c in v:
        counts[c] = counts.get(c, 0) + 1
    n = len(v)
    entropy = -sum(k / n * math.log2(k / n) for k in counts.values())
    return entropy >= 3.0


def _by_name(name_group: int, *value_groups: int) -> Pick:
    """Mask the (first present) value when the name is strong, or weak and the value looks random.

    ``Pwd=`` is the shell's ``$PWD`` unless it follows ``;`` (a connection string's password)."""

    def pick(m: re.Match[str]) -> tuple[int, ...]:
        group = next((g for g in value_groups if m.group(g) is not None), 0)
        if not group:
            return ()
        name = m.group(name_group)
        strength = name_strength(name)
        if not strength and name.lower() == "pwd" and m.string[m.start(name_group) - 1 : m.start(name_group)] == ";":
            strength = 2
        value = m.group(group)
        if strength == 2 or (strength == 1 and looks_random(value)):
            return (group,)
        return ()

    return pick


def _unless_variable(group: int) -> Pick:
    """Mask ``group`` unless it is a shell variable (``$TOKEN`` names a secret, it is not one)."""

    def pick(m: re.Match[str]) -> tuple[int, ...]:
        value = m.group(group).strip("\"'")
        return () if not value or value.startswith("$") else (group,)

    return pick


def _scheme_value(m: re.Match[str]) -> tuple[int, ...]:
    """``Bearer x`` masks always; ``token x`` or ``basic x`` only a long or random-looking x."""
    value = m.group(2)
    if m.group(1).lower() == "bearer" or len(value) >= 24 or looks_random(value):
        return (2,)
    return ()


def _userinfo(m: re.Match[str]) -> tuple[int, ...]:
    """``user:pw@`` masks the password; a lone random user (``https://TOKEN@host``) itself."""
    if m.group(2) is not None:
        return (2,)
    return (1,) if looks_random(m.group(1)) else ()


def _first_value(*groups: int) -> Pick:
    def pick(m: re.Match[str]) -> tuple[int, ...]:
        return tuple(g for g in groups if m.group(g) is not None)[:1]

    return pick


def _c(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return lazyre.compile(pattern, flags)


def _token(kind: str, pattern: str, *triggers: str) -> Shape:
    return Shape(kind, _c(pattern), triggers)


_AWS_PREFIXES = ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "APKA")

# Well-known token formats: the whole token is masked.
TOKENS: tuple[Shape, ...] = (
    Shape(
        "pem",
        _c(
            r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.S,
        ),
        ("-----begin",),
    ),
    _token("aws", rf"\b(?:{'|'.join(_AWS_PREFIXES)})[A-Z0-9]{{16}}\b", *(p.lower() for p in _AWS_PREFIXES)),
    _token("github", r"\bg(?:h[pousr]_[A-Za-z0-9]{20,}|ithub_pat_[A-Za-z0-9_]{20,})", "gh", "github_pat_"),
    _token("gitlab", r"\bgl(?:pat|dt|ptt|rt|soat|cbt|ft|imt|oas|agent)-[A-Za-z0-9_\-]{20,}", "gl"),
    _token("slack", r"\b(?:xox[abposre]-[A-Za-z0-9\-]{10,}|xapp-[0-9]-[A-Za-z0-9\-]{10,})", "xox", "xapp-"),
    Shape(
        "slack",
        _c(r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9/_\-]{16,})"),
        ("hooks.slack.com",),
        (1,),
    ),
    _token(
        "stripe", r"\b(?:[srp]k_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{20,})", "_live_", "_test_", "whsec_"
    ),
    _token("anthropic", r"\bsk-ant-[A-Za-z0-9_\-]{20,}", "sk-ant-"),
    _token("openai", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", "sk-"),
    _token(
        "google",
        r"\b(?:AIza[0-9A-Za-z_\-]{35}|ya29\.[0-9A-Za-z_\-]{20,}|GOCSPX-[0-9A-Za-z_\-]{20,})",
        "aiza",
        "ya29.",
        "gocspx-",
    ),
    _token("jwt", r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}", "eyj"),
    _token("npm", r"\bnpm_[A-Za-z0-9]{30,}", "npm_"),
    _token("pypi", r"\bpypi-[A-Za-z0-9_\-]{40,}", "pypi-"),
    _token("huggingface", r"\b(?:hf_[A-Za-z0-9]{30,}|api_org_[A-Za-z0-9]{30,})", "hf_", "api_org_"),
    _token("twilio", r"\bSK[0-9a-fA-F]{32}\b", "sk"),
    _token("sendgrid", r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}", "sg."),
    _token("shopify", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", "shp"),
    _token("databricks", r"\bdapi[a-f0-9]{32}(?:-[0-9])?\b", "dapi"),
    _token("digitalocean", r"\bdo[por]_v1_[a-f0-9]{64}", "_v1_"),
    _token("heroku", r"\bHRKU-[A-Za-z0-9_\-]{20,}", "hrku-"),
    _token("mailgun", r"\bkey-[0-9a-zA-Z]{32}\b", "key-"),
    _token("square", r"\b(?:sq0(?:atp|csp|idp)-[0-9A-Za-z_\-]{20,}|EAAA[0-9A-Za-z_\-]{60,})", "sq0", "eaaa"),
    _token("telegram", r"(?<![0-9])[0-9]{8,10}:AA[0-9A-Za-z_\-]{30,}", ":aa"),
    _token("discord", r"\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}\b", "."),
    Shape("discord", _c(r"discord(?:app)?\.com/api/webhooks/[0-9]+/([A-Za-z0-9_\-]{20,})"), ("webhooks",), (1,)),
    _token(
        "vendor",
        # Vault, Grafana, Postman, Linear, Sentry, Groq, Supabase, Doppler, age, Atlassian, 1Password.
        r"\b(?:hv[sb]\.[A-Za-z0-9_\-]{20,}|gl(?:sa|c)_[A-Za-z0-9_\-]{20,}|PMAK-[A-Za-z0-9\-]{20,}|"
        r"lin_api_[A-Za-z0-9]{20,}|sntr[ysu]s?_[A-Za-z0-9_\-=]{20,}|gsk_[A-Za-z0-9]{20,}|sbp_[a-f0-9]{20,}|"
        r"dp\.(?:pt|st|sa|ct)\.[A-Za-z0-9]{20,}|AGE-SECRET-KEY-1[0-9A-Z]{20,}|ATATT[A-Za-z0-9_\-=]{20,}|"
        r"ops_[A-Za-z0-9_\-]{20,})",
        *("hvs.", "hvb.", "glsa_", "glc_", "pmak-", "lin_api_", "sntr", "gsk_", "sbp_", "dp.", "age-secret"),
        *("atatt", "ops_"),
    ),
)

# Secrets by their place: a URL's userinfo, a header, a flag, an assignment, a command's
# password argument. Only the value is masked; the name and the command stay readable.
PLACES: tuple[Shape, ...] = (
    Shape(
        "url",
        # Anchored on "://" itself: a scheme before it would make every word start rescan a run.
        _c(r"://([^\s:/@'\"]+)(?::([^\s@/'\"]+))?@"),
        ("://",),
        (1, 2),
        _userinfo,
    ),
    Shape(
        "header",
        _c(
            r"(?i)(?<![\w-])((?:proxy-)?authorization|x-api-key|api-key|apikey|x-auth-token|x-access-token|"
            r"private-token|job-token|x-vault-token|x-goog-api-key|x-amz-security-token|"
            r"ocp-apim-subscription-key|(?:set-)?cookie)[ \t]*:[ \t]*([^'\"\n\r]+)"
        ),
        ("authorization", "api-key", "apikey", "token", "cookie", "subscription-key"),
        (2,),
    ),
    Shape(
        "auth-scheme",
        _c(r"(?i)\b(bearer|basic|token|digest)[ \t]+([A-Za-z0-9._~+/\-]{8,}=*)"),
        ("bearer", "basic", "token", "digest"),
        (2,),
        _scheme_value,
    ),
    Shape(  # mysql -pPASSWORD (the password glued to -p; "-p" alone prompts)
        "mysql",
        _c(
            r"(?<![\w-])(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlsh|mariadb|"
            rf"mariadb-dump)\b{_ARGS}[ \t]-p(?![\s-])({_DQ}|{_SQ}|[^\s'\"]+)"
        ),
        ("mysql", "mariadb"),
        (1,),
    ),
    Shape("sshpass", _c(rf"\bsshpass\b{_ARGS}[ \t]-p[ \t]*{_SHELL_VALUE}"), ("sshpass",), (1,)),
    Shape(
        "login",
        _c(
            r"\b(?:docker|podman|nerdctl|buildah|skopeo|helm|oras|crane|finch)(?:[ \t]+registry)?"
            rf"[ \t]+login\b{_ARGS}[ \t]-p[ \t]*{_SHELL_VALUE}"
        ),
        ("login",),
        (1,),
    ),
    Shape(
        "user-password",
        _c(
            rf"\b(?:curl|wget|http|https|xh|httpie|lftp|ftp)\b{_ARGS}[ \t](?:-u|-U|--user|--proxy-user|-a|--auth)"
            r"(?:=|[ \t]*)(?:'[^':\n]*:([^'\n]*)'|\"[^\":\n]*:([^\"\n]*)\"|[^\s:'\"]*:([^\s'\"]+))"
        ),
        ("curl", "wget", "http", "xh", "ftp"),
        (1, 2, 3),
        _first_value(1, 2, 3),
    ),
    Shape(
        "cookie",
        _c(
            rf"\bcurl\b{_ARGS}[ \t](?:-b|--cookie)(?:=|[ \t]+)"
            r"('[^'=\n]*=[^'\n]*'|\"[^\"=\n]*=[^\"\n]*\"|[^\s'\"=]+=[^\s'\"]*)"
        ),
        ("curl",),
        (1,),
    ),
    Shape(  # echo PW | sudo -S, | passwd --stdin, | chpasswd, | docker login --password-stdin
        "stdin",
        _c(
            rf"\b(?:echo|printf)[ \t]+(?:-[neE]{{1,3}}[ \t]+)?({_DQ}|{_SQ}|[^\s|;&'\"]+)[ \t]*\|[ \t]*"
            r"(?=sudo\b[^\n|;&]{0,200}?[ \t]-[A-Za-z]*S\b|[^\n|;&]{0,300}?"
            r"(?:--stdin\b|--password-stdin\b|chpasswd\b|-passin\b|--passphrase-fd\b))"
        ),
        ("sudo", "stdin", "chpasswd", "passin", "passphrase-fd"),
        (1,),
        _unless_variable(1),
    ),
    Shape(  # sudo -S <<< PW
        "stdin",
        _c(rf"\bsudo\b{_ARGS}[ \t]-[A-Za-z]*S\b{_ARGS}<<<[ \t]*{_SHELL_VALUE}"),
        ("<<<",),
        (1,),
        _unless_variable(1),
    ),
    Shape(
        "gh-secret",
        _c(rf"\bgh[ \t]+secret[ \t]+set\b{_ARGS}[ \t](?:-b|--body)(?:=|[ \t]+){_SHELL_VALUE}"),
        ("secret",),
        (1,),
    ),
    Shape(  # aws configure set aws_secret_access_key X, npm config set //r/:_authToken X, git config k v
        "config",
        _c(
            r"(?i)\b(?:configure[ \t]+set|config[ \t]+set|config|set)[ \t]+(?:-{1,2}[\w-]{1,30}[ \t]+){0,2}"
            rf"([\w./:@-]{{1,160}}+)[ \t]+{_SHELL_VALUE}"
        ),
        ("config", "set"),
        (1, 2),
        _by_name(1, 2),
    ),
    Shape(  # --password X, --api-key=X, -token X, --db-password "x": every flag, its name decides
        "flag",
        _c(rf"(?<![\w.\-])(--?[A-Za-z0-9][A-Za-z0-9_\-]{{0,80}}+)(?:=|[ \t]+){_SHELL_VALUE}"),
        ("pass", "pw", "secret", "token", "key", "auth", "credential", "cookie", "sig", "salt", "hmac", "dsn"),
        (1, 2),
        _by_name(1, 2),
    ),
    Shape(  # "password": "x" in JSON, 'api_key': 'x' in a Python repr: every quoted key, its name decides
        "field",
        _c(
            r"""(["'])([^"'\\\n]{1,64}+)\\?\1[ \t]*[:=][ \t]*"""
            r"""(?:\\"([^"\\\n]*)\\"|"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'|"""
            r"""([^\s,}\]{\["'\\][^\s,}\]]*)|(\[[^\[\]\n]{0,400}\]))"""
        ),
        ("pass", "pw", "secret", "token", "key", "auth", "credential", "cookie", "sig", "salt", "hmac", "dsn"),
        (3, 4, 5, 6, 7),
        _by_name(2, 3, 4, 5, 6, 7),
    ),
    Shape(  # DB_PASSWORD=x, export GITHUB_TOKEN="x", password: x, ;AccountKey=x;, _authToken=x
        "assign",
        # ":" separates only with a space after it (YAML, prose): "bash:KEY=x" names no "bash".
        _c(rf"(?<![\w.\-])([\w.\-]{{1,120}}+)([ \t]*=[ \t]*|[ \t]*:[ \t]+){_VALUE}"),
        ("pass", "pw", "secret", "token", "key", "auth", "credential", "cookie", "sig", "salt", "hmac", "dsn"),
        (1, 3),
        _by_name(1, 3),
    ),
)

SHAPES: tuple[Shape, ...] = TOKENS + PLACES
