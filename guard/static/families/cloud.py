"""Clouds and forges: looking is free, deleting resources or handing out access asks.

Most cloud CLIs share a grammar (``tool [group …] verb [args]``), so one verb table covers gcloud,
az, doctl, fly, heroku and friends; aws and gsutil object stores, gh and ansible have their own
rows where a verb alone is not enough (``aws s3 cp ~/.aws/credentials s3://…``,
``gh gist create ~/.ssh/id_rsa``, ``ansible all -m shell -a '…'``).
"""

from __future__ import annotations

import re

from guard import lazyre
from guard.static.families import effects
from guard.static.families.base import Handler, only_help, parse_opts
from guard.static.families.secrets import prints_credential
from guard.static.reading.text import wordset
from guard.static.scan import EMPTY, REMOTE, SECRET, Cmd, Flow, Scan, display

_DESTROY = lazyre.compile(
    r"^(delete|destroy|rm|remove|terminate|purge|uninstall|drop|deregister|rb|erase|wipe|nuke|"
    r"teardown|un|del|apps:destroy|addons:destroy|pg:reset|apps:delete|kill)$|^(delete|terminate|"
    r"remove|deregister|purge|destroy|drop)-",
    re.I,
)
_LOOK = lazyre.compile(
    r"^(list|ls|get|describe|show|status|info|logs?|whoami|version|--version|help|explain|inspect|view|"
    r"top|history|search|cat|stat|du|api-resources|api-versions|cluster-info|can-i|diff|events|wait|"
    r"preview|validate|plan|output|providers|graph|lint|template|env|config|current-context|"
    r"get-contexts|get-caller-identity|df|images|ps|port|verify|whoami|auth:whoami)$|^(list|describe|"
    r"get|show)-",
    re.I,
)


_PRIVILEGE = lazyre.compile(
    r"^((attach|put)-[\w-]*policy|create-access-key|create-login-profile|update-assume-role-policy|"
    r"add-user-to-group|add-iam-policy-binding|set-iam-policy|create-for-rbac)$"
)


def _grants(words: list[str]) -> bool:
    """``gcloud … keys create``, ``az role assignment create``: new credentials or roles."""
    return ("keys" in words and "create" in words) or ("assignment" in words and "create" in words)


def _words(args: tuple[str, ...], takes: frozenset[str] = frozenset()) -> list[str]:
    return list(parse_opts(args, takes).operands)


def _by_verb(cmd: Cmd, scan: Scan, destroy_rule: str = "G166") -> Flow:
    """Generic cloud CLI: the first verb-like word decides."""
    shown = display(scan, " ".join(cmd.argv))
    if only_help(cmd):  # ``aws --version``, ``az --help``: the program about itself, no account touched
        scan.hit("G180", shown)
        return EMPTY
    scan.tag("network")
    if prints_credential(cmd, scan):
        return EMPTY
    words = _words(cmd.args)
    if any(_PRIVILEGE.match(w) for w in words[:5]) or _grants(words):
        scan.hit("G176", shown)  # hands out access: policies, roles, new keys
    elif any(_DESTROY.match(w) for w in words[:4]) or "--delete" in cmd.args:
        scan.hit(destroy_rule, shown)
    elif (
        words
        and any(_LOOK.match(w) for w in words[:3])
        and not any(w in ("set", "update", "create", "apply", "deploy", "put", "add") for w in words[:3])
    ):
        scan.hit("G180", shown)
    else:
        scan.hit("G188", shown)
    return EMPTY


def _aws(cmd: Cmd, scan: Scan) -> Flow:
    words = _words(cmd.args, wordset("--profile --region --output --endpoint-url --query"))
    if words[:1] == ["s3"] and len(words) >= 2:
        return _object_store(cmd, scan, words[1], words[2:], "s3://")
    return _by_verb(cmd, scan)


def _gsutil(cmd: Cmd, scan: Scan) -> Flow:
    words = _words(cmd.args)
    if words and words[0] == "-m":
        words = words[1:]
    return _object_store(cmd, scan, words[0] if words else "", words[1:], "gs://")


def _object_store(cmd: Cmd, scan: Scan, verb: str, rest: list[str], scheme: str) -> Flow:
    scan.tag("network")
    shown = display(scan, " ".join(cmd.argv))
    if verb in ("rm", "rb") or (verb in ("sync", "rsync") and ("--delete" in cmd.args or "-d" in cmd.args)):
        scan.hit("G166", shown)
    elif verb in ("cp", "mv", "sync", "rsync") and len(rest) >= 2:
        src, dst = rest[0], rest[-1]
        if dst.startswith(scheme) and not src.startswith(scheme):
            bits = effects.read_flow(scan, src).bits if src != "-" else cmd.stdin.bits
            scan.hit("G143" if bits & SECRET else "G145", shown)
            if verb == "mv":
                effects.delete(scan, src, True)
        elif src.startswith(scheme) and not dst.startswith(scheme):
            effects.write(scan, dst, Flow(REMOTE)) if dst != "-" else None
            scan.hit("G146", shown)
        else:
            scan.hit("G188", shown)
    elif verb in ("ls", "cat", "du", "stat", "presign") or not verb:
        scan.hit("G180", shown)
    else:
        scan.hit("G188", shown)
    return EMPTY


def _gh(cmd: Cmd, scan: Scan) -> Flow:
    scan.tag("network")
    shown = display(scan, " ".join(cmd.argv))
    if prints_credential(cmd, scan):
        return EMPTY
    words = _words(
        cmd.args,
        wordset(
            "-R --repo -b --body -t --title -F --field -f --raw-field -X --method --jq -q -H --header --input "
            "-B --base -l --label --json -L --limit"
        ),
    )
    group, verb = [*words, "", ""][:2]
    if verb in ("delete", "archive") or (group == "api" and _method(cmd.args) == "DELETE"):
        scan.hit("G166", shown)
    elif group == "release" and verb in ("create", "upload", "edit"):
        scan.hit("G170", shown)
    elif group == "gist" and verb in ("create", "edit"):
        bits = 0
        for f in words[2:]:
            bits |= effects.read_flow(scan, f).bits
        scan.hit("G143" if bits & SECRET else "G145", shown)
    elif group == "api":
        writes = _method(cmd.args) in ("POST", "PUT", "PATCH") or any(
            a in ("-f", "-F", "--field", "--raw-field", "--input") for a in cmd.args
        )
        scan.hit("G145" if writes else "G180", shown)
    elif verb in ("view", "list", "status", "checks", "diff", "watch", "ls") or group in ("search", "browse", "status"):
        scan.hit("G180", shown)
    elif verb in ("create", "comment", "review", "edit", "close", "merge", "reopen", "ready", "lock"):
        scan.hit("G145", shown)
    elif group == "repo" and verb in ("clone", "fork"):
        scan.hit("G146", shown)
    elif group == "pr" and verb == "checkout":
        scan.hit("G401", shown)  # like ``git fetch`` + ``git switch``: nothing of it runs
    else:
        scan.hit("G188", shown)
    return EMPTY


def _method(args: tuple[str, ...]) -> str:
    for i, a in enumerate(args):
        if a in ("-X", "--method") and i + 1 < len(args):
            return args[i + 1].upper()
        if a.startswith("--method="):
            return a.split("=", 1)[1].upper()
        if a.startswith("-X") and len(a) > 2:  # ``-XPOST``
            return a[2:].upper()
    return "GET"


def _ansible(cmd: Cmd, scan: Scan) -> Flow:
    opts = parse_opts(
        cmd.args,
        wordset("-m --module-name -a --args -i --inventory -u -e --extra-vars -l --limit -b -K -f --forks"),
    )
    module = opts.value("-m", "--module-name") or ""
    if cmd.name == "ansible-playbook" and opts.has("--syntax-check", "--list-tasks", "--list-tags", "--list-hosts"):
        scan.hit("G181", display(scan, " ".join(cmd.argv)))  # reads the playbook and inventory, runs no task
        return EMPTY
    if module in ("shell", "command", "raw", "ansible.builtin.shell", "ansible.builtin.command") and opts.value(
        "-a", "--args"
    ):
        scan.engine.script(opts.value("-a", "--args") or "")
    scan.tag("network")
    scan.hit("G149" if module else "G188", display(scan, " ".join(cmd.argv)))
    return EMPTY


def _kustomize(cmd: Cmd, scan: Scan) -> Flow:
    """``kustomize build`` renders manifests locally (it applies nothing); other verbs as any cloud CLI."""
    words = _words(cmd.args, wordset("-o --output"))
    if words[:1] in (["build"], ["version"], ["cfg"]) and not any(a in ("-o", "--output") for a in cmd.args):
        scan.hit("G180", display(scan, " ".join(cmd.argv)))
        return EMPTY
    return _by_verb(cmd, scan)


def _supabase(cmd: Cmd, scan: Scan) -> Flow:
    """``supabase db reset`` wipes the local stack (G163, asks); with ``--linked`` or ``--db-url`` it drops
    every user object of the hosted database, and ``projects delete`` removes the project (G435)."""
    words = _words(cmd.args, wordset("--db-url --project-ref --workdir --password -p --schema -s --version"))
    remote = any(a == "--linked" or a == "--db-url" or a.startswith("--db-url=") for a in cmd.args)
    if words[:2] == ["db", "reset"]:
        scan.tag("delete")
        scan.hit("G435" if remote else "G163", display(scan, " ".join(cmd.argv)))
        return EMPTY
    if words[:2] == ["projects", "delete"]:
        scan.tag("network")
        scan.hit("G435", display(scan, " ".join(cmd.argv)))
        return EMPTY
    return _by_verb(cmd, scan)


def _wrangler(cmd: Cmd, scan: Scan) -> Flow:
    """``wrangler d1 execute DB --command SQL``: the statement is judged as SQL (G160/G161)."""
    from guard.static.families.db import sql_rule

    words = _words(cmd.args, wordset("--command --file --env -e --config -c --persist-to"))
    if words[:2] == ["d1", "execute"]:
        opts = parse_opts(cmd.args, wordset("--command --file --env -e --config -c --persist-to"))
        rule = sql_rule(opts.value("--command") or "")
        if rule:
            scan.tag("network")
            scan.hit(rule, display(scan, " ".join(cmd.argv)))
            return EMPTY
    return _by_verb(cmd, scan)


_GENERIC = (
    "gcloud az doctl flyctl fly heroku vercel netlify firebase wrangler railway eksctl vagrant minikube kind linode-cli "
    "hcloud scw oci ibmcloud aliyun rclone turso neonctl planetscale pscale render cf openstack glab tea argocd flux "
    "istioctl kustomize k9s skaffold tilt nomad consul packer"
)

HANDLERS: dict[str, Handler] = {
    "aws": _aws,
    "gsutil": _gsutil,
    "gh": _gh,
    "ansible": _ansible,
    "ansible-playbook": _ansible,
    **dict.fromkeys(_GENERIC.split(), _by_verb),
    "kustomize": _kustomize,
    "supabase": _supabase,
    "wrangler": _wrangler,
}
