"""Secret reads that are not file reads: environment dumps, ``$*_TOKEN`` values, credential CLIs.

File-based secrets (``~/.ssh``, ``~/.aws/credentials``, ``.env`` …) are a path tier and handled
by :mod:`guard.static.families.effects` for every command and tool alike. What marks a command here also
sets the scan's ``cmd_secret`` flag, so its output is tainted: ``env | curl -d @- …`` and
``gh auth token | nc …`` are exfiltration, not two unrelated commands.

The shell's variable builtins (``set``, ``export``/``declare``, ``unset``, ``shift``) live here because
they can dump the environment, and so does what ``set --`` and ``shift`` do to the positional
parameters; what setting a variable does is :mod:`guard.static.shell.envvars`.
"""

from __future__ import annotations

from collections.abc import Iterable

from guard import lazyre
from guard.static.families.base import Handler, parse_opts
from guard.static.reading.text import IFS, marker_ids
from guard.static.scan import EMPTY, Cmd, Flow, Scan, display

_SECRET_VAR = lazyre.compile(
    r"(?i)(?:^|_)(?:TOKEN|SECRET|PASSWORD|PASSWD|PASS|PASSPHRASE|API_?KEY|ACCESS_?KEY|SECRET_?KEY|PRIVATE_?KEY|KEY"
    r"|CREDENTIALS?|AUTH|PAT|DSN|COOKIE|SESSION_?ID|SIGNING_?KEY)(?:_|$)|DATABASE_URL|CONNECTION_STRING|WEBHOOK_URL"
)
_NOT_SECRET = frozenset({"SSH_AUTH_SOCK", "GPG_AGENT_INFO", "KEYBOARD", "XAUTHORITY", "AUTH_SOCK"})
_VAR_NAME = lazyre.compile(r"^\$\{?#?!?([A-Za-z_][A-Za-z0-9_]*)")


def is_secret_var(name: str) -> bool:
    """``is_secret_var("GITHUB_TOKEN")`` is true; ``PATH`` and ``SSH_AUTH_SOCK`` are not secrets."""
    return name not in _NOT_SECRET and bool(_SECRET_VAR.search(name))


def secret_vars(scan: Scan, words: tuple[str, ...] | list[str]) -> list[str]:
    """Names of secret-looking variables whose values appear in ``words``."""
    found = []
    tick = scan.budget.tick
    for word in words:
        for i in marker_ids(word):
            tick()
            if i < len(scan.substs):
                m = _VAR_NAME.match(scan.substs[i].display)
                if m and is_secret_var(m.group(1)):
                    found.append(m.group(1))
    return found


def secret_words(cmd: Cmd, scan: Scan) -> None:
    """``echo $GITHUB_TOKEN``: printing a secret puts it in the agent's transcript."""
    names = secret_vars(scan, cmd.args)
    if names:
        scan.hit("G142", "$" + ", $".join(names))
        scan.cmd_secret = True


def _dump(cmd: Cmd, scan: Scan, what: str) -> Flow:
    scan.hit("G142", what)
    scan.cmd_secret = True
    return EMPTY


def _printenv(cmd: Cmd, scan: Scan) -> Flow:
    args = [a for a in cmd.args if a not in ("-0", "--null", "-i", "--ignore-environment")]
    if any(a in ("--help", "--version") for a in args):
        scan.hit("G180", cmd.name)
        return EMPTY
    names = [a for a in args if not a.startswith("-")]
    if not names:
        return _dump(cmd, scan, f"{cmd.name}: the whole environment")
    secret = [n for n in names if is_secret_var(n)]
    if secret:
        return _dump(cmd, scan, "$" + ", $".join(secret))
    scan.hit("G180", cmd.name)
    return Flow(0, None)


# -- positional parameters: ``set -- a b``, ``shift``
def set_positional(scan: Scan, words: Iterable[str]) -> None:
    """``set -- rm -rf /`` makes ``"$@"`` (and ``$1`` …) those words for the rest of the script."""
    values = list(words)
    for i in range(1, 10):
        scan.vars.pop(str(i), None)
    scan.vars["@"] = scan.vars["*"] = IFS.join(values)
    for i, value in enumerate(values[:9], start=1):
        scan.vars[str(i)] = value
    scan.vars["#"] = str(len(values))


def positional_words(args: tuple[str, ...]) -> list[str] | None:
    """The words ``set args`` makes positional (``None``: ``set`` only changes options)."""
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--", "-"):
            return list(args[i + 1 :])
        if a[:1] not in ("-", "+") or len(a) < 2:
            return list(args[i:])
        i += 2 if "o" in a[1:] else 1  # ``-o pipefail``, ``-euo pipefail``: the option takes a name
    return None


def shift(scan: Scan, args: tuple[str, ...]) -> None:
    """``shift [n]`` drops known positional words; an unknown count makes them all unknown."""
    if "@" not in scan.vars:
        return
    count = args[0] if args else "1"
    if not count.isdigit():
        for name in ("@", "*", "#", *map(str, range(1, 10))):
            scan.vars.pop(name, None)
        return
    values = [v for v in scan.vars["@"].split(IFS) if v] if scan.vars["@"] else []
    set_positional(scan, values[int(count) :])


def _set(cmd: Cmd, scan: Scan) -> Flow:
    if not cmd.args:
        return _dump(cmd, scan, "set: every shell variable")
    words = positional_words(cmd.args)
    if words is not None:  # ``set -- rm -rf /; "$@"`` runs those words
        set_positional(scan, words)
    scan.hit("G180", "set")
    return EMPTY


def _shift(cmd: Cmd, scan: Scan) -> Flow:
    shift(scan, cmd.args)
    scan.hit("G180", "shift")
    return EMPTY


def _unset(cmd: Cmd, scan: Scan) -> Flow:
    scan.engine.env_unset(cmd.args)
    scan.hit("G180", "unset")
    return EMPTY


def _declare(cmd: Cmd, scan: Scan) -> Flow:
    flags = [a for a in cmd.args if len(a) > 1 and a[0] in "-+"]  # (``+x``: the attribute taken off)
    names = [a for a in cmd.args if not (len(a) > 1 and a[0] in "-+")]
    if not names and (not flags or any(f[0] == "-" and ("p" in f or "x" in f) for f in flags)):
        return _dump(cmd, scan, f"{cmd.name}: the exported environment")
    # ``export NODE_OPTIONS=--require=…``, ``export -n GUARD_HOME``, ``local X`` (the walker hands over
    # the parsed form itself)
    entries = [(key, value if eq else None) for key, eq, value in (n.partition("=") for n in names)]
    scan.engine.declare(cmd.name, flags, entries)
    secret = [n for n in names if is_secret_var(n.split("=")[0])]
    if secret and any("p" in f for f in flags):
        return _dump(cmd, scan, "$" + ", $".join(secret))
    scan.hit("G180", cmd.name)
    return EMPTY


def _compgen(cmd: Cmd, scan: Scan) -> Flow:
    if "-v" in cmd.args or "-e" in cmd.args:
        return _dump(cmd, scan, "compgen: variable names")
    scan.hit("G180", "compgen")
    return EMPTY


# Credential managers and vaults: what they print is the secret itself.
_VAULT_READS = {
    "security": ("find-generic-password", "find-internet-password", "dump-keychain", "export"),
    "pass": ("show", "", "otp"),
    "gopass": ("show", "cat", "otp"),
    "op": ("read", "item", "inject"),
    "bw": ("get", "export"),
    "lpass": ("show", "export"),
    "vault": ("read", "kv", "token"),
    "keyring": ("get",),
    "secret-tool": ("lookup",),
    "doppler": ("secrets",),
    "sops": ("-d", "--decrypt", "decrypt", "exec-env"),
    "age": ("-d", "--decrypt"),
    "gpg": ("-d", "--decrypt", "--export-secret-keys", "--export-secret-subkeys"),
}


def _vault(cmd: Cmd, scan: Scan) -> Flow:
    reads = _VAULT_READS.get(cmd.name, ())
    args = cmd.args
    hit = (
        (not args and "" in reads)
        or any(a in reads for a in args)
        or (
            cmd.name in ("pass", "gopass")
            and args
            and not args[0].startswith("-")
            and args[0] not in ("ls", "list", "find", "grep", "init", "git")
        )
    )
    if hit:
        return _dump(cmd, scan, display(scan, " ".join(cmd.argv)))
    if cmd.name == "gpg" and parse_opts(args).has(
        "--list-keys",
        "-k",
        "--list-secret-keys",
        "-K",
        "--fingerprint",
        "--verify",
        "--import",
        "--recv-keys",
        "--search-keys",
    ):
        scan.hit("G180", "gpg")
        return EMPTY
    scan.hit("G182", display(scan, " ".join(cmd.argv)))
    return None  # type: ignore[return-value]


def _docker_credential(cmd: Cmd, scan: Scan) -> Flow:
    if "get" in cmd.args or "list" in cmd.args:
        return _dump(cmd, scan, " ".join(cmd.argv))
    scan.hit("G182", " ".join(cmd.argv))
    return EMPTY


# Subcommands of cloud and developer CLIs that print a credential (checked by those families).
CREDENTIAL_SUBCOMMANDS: dict[str, tuple[tuple[str, ...], ...]] = {
    "gh": (("auth", "token"),),
    "gcloud": (
        ("auth", "print-access-token"),
        ("auth", "print-identity-token"),
        ("auth", "application-default", "print-access-token"),
    ),
    "aws": (
        ("configure", "get"),
        ("configure", "export-credentials"),
        ("sts", "get-session-token"),
        ("ecr", "get-login-password"),
        ("secretsmanager", "get-secret-value"),
        ("iam", "create-access-key"),
    ),
    "az": (("account", "get-access-token"), ("keyvault", "secret", "show")),
    "heroku": (("auth:token",),),
    "kubectl": (("config", "view", "--raw"), ("get", "secret"), ("get", "secrets")),
    "git": (("credential", "fill"),),
}


def prints_credential(cmd: Cmd, scan: Scan) -> bool:
    """``gh auth token`` and friends: a credential on stdout. Records the finding when so."""
    words = [a for a in cmd.args if not a.startswith("-") or a == "--raw"]
    for path in CREDENTIAL_SUBCOMMANDS.get(cmd.name, ()):
        it = iter(words)
        if all(any(w == p for w in it) for p in path):
            _dump(cmd, scan, " ".join(cmd.argv))
            return True
    if cmd.name == "gh" and "auth" in words and ("--show-token" in cmd.args or "-t" in cmd.args):
        _dump(cmd, scan, " ".join(cmd.argv))
        return True
    return False


HANDLERS: dict[str, Handler] = {
    "printenv": _printenv,
    "env": _printenv,
    "set": _set,
    "shift": _shift,
    "unset": _unset,
    "export": _declare,
    "declare": _declare,
    "typeset": _declare,
    "local": _declare,
    "readonly": _declare,
    "compgen": _compgen,
    "docker-credential-desktop": _docker_credential,
    "docker-credential-osxkeychain": _docker_credential,
    "docker-credential-secretservice": _docker_credential,
    "docker-credential-pass": _docker_credential,
    "docker-credential-ecr-login": _docker_credential,
    **dict.fromkeys(_VAULT_READS, _vault),
}
