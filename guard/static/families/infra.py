"""Clusters, infrastructure, clouds and containers: looking is free, deleting or destroying asks.

Most cloud CLIs share a grammar (``tool [group …] verb [args]``), so one verb table covers
aws, gcloud, az, doctl, fly, heroku and friends; kubectl, helm, terraform, pulumi, docker and gh
have their own rows where a verb alone is not enough (``terraform apply -auto-approve``,
``docker run --privileged -v /:/host``, ``gh gist create ~/.ssh/id_rsa``).
"""

from __future__ import annotations

import re

from guard.static import effects
from guard.static import paths as P
from guard.static.families.base import Handler, parse_opts
from guard.static.families.secrets import prints_credential
from guard.static.scan import EMPTY, REMOTE, SECRET, Cmd, Flow, Scan, display

_DESTROY = re.compile(
    r"^(delete|destroy|rm|remove|terminate|purge|uninstall|drop|deregister|rb|erase|wipe|nuke|"
    r"teardown|un|del|apps:destroy|addons:destroy|pg:reset|apps:delete|kill)$|^(delete|terminate|"
    r"remove|deregister|purge|destroy|drop)-",
    re.I,
)
_LOOK = re.compile(
    r"^(list|ls|get|describe|show|status|info|logs?|whoami|version|--version|help|explain|inspect|view|"
    r"top|history|search|cat|stat|du|api-resources|api-versions|cluster-info|can-i|diff|events|wait|"
    r"preview|validate|plan|output|providers|graph|lint|template|env|config|current-context|"
    r"get-contexts|get-caller-identity|df|images|ps|port|verify|whoami|auth:whoami)$|^(list|describe|"
    r"get|show)-",
    re.I,
)


_PRIVILEGE = re.compile(
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
    scan.tag("network")
    shown = display(scan, " ".join(cmd.argv))
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
    words = _words(cmd.args, frozenset({"--profile", "--region", "--output", "--endpoint-url", "--query"}))
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


def _kubectl(cmd: Cmd, scan: Scan) -> Flow:
    scan.tag("network")
    shown = display(scan, " ".join(cmd.argv))
    words = _words(
        cmd.args,
        frozenset(
            {
                "-n",
                "--namespace",
                "--context",
                "-o",
                "--output",
                "-l",
                "--selector",
                "-f",
                "--filename",
                "-c",
                "--container",
                "--kubeconfig",
                "--cluster",
                "--user",
            }
        ),
    )
    verb = words[0] if words else ""
    if verb == "exec" or verb == "debug":
        inner = list(cmd.args[cmd.args.index("--") + 1 :]) if "--" in cmd.args else []
        if inner:
            scan.engine.run(inner)
        scan.hit("G188", shown)
    elif prints_credential(cmd, scan):
        pass
    elif verb in ("delete", "drain") or (verb == "replace" and "--force" in cmd.args):
        scan.hit("G164", shown)
    elif verb in (
        "get",
        "describe",
        "logs",
        "top",
        "explain",
        "version",
        "cluster-info",
        "api-resources",
        "api-versions",
        "diff",
        "events",
        "wait",
        "auth",
    ) or (
        verb == "config"
        and words[1:2] in (["view"], ["get-contexts"], ["current-context"], ["get-clusters"], ["get-users"])
    ):
        scan.hit("G180", shown)
    else:
        scan.hit("G188", shown)
    return EMPTY


def _helm(cmd: Cmd, scan: Scan) -> Flow:
    words = _words(cmd.args, frozenset({"-n", "--namespace", "--kube-context", "-f", "--values", "--set", "--version"}))
    verb = words[0] if words else ""
    scan.tag("network")
    shown = display(scan, " ".join(cmd.argv))
    if verb in ("uninstall", "delete", "del", "un"):
        scan.hit("G164", shown)
    elif verb == "push":
        scan.hit("G170", shown)
    elif verb in (
        "list",
        "ls",
        "status",
        "get",
        "history",
        "show",
        "template",
        "lint",
        "search",
        "version",
        "env",
        "verify",
        "inspect",
    ) or (verb in ("repo", "dependency", "plugin") and words[1:2] == ["list"]):
        scan.hit("G180", shown)
    else:
        scan.hit("G188", shown)
    return EMPTY


def _terraform(cmd: Cmd, scan: Scan) -> Flow:
    words = _words(cmd.args, frozenset({"-var", "-var-file", "-target", "-chdir", "-out", "-state"}))
    verb = words[0] if words else ""
    shown = display(scan, " ".join(cmd.argv))
    auto = any(a.split("=", 1)[0].lstrip("-") == "auto-approve" and not a.endswith("=false") for a in cmd.args)
    scan.tag("network")
    if (
        verb == "destroy"
        or (verb == "apply" and ("-destroy" in cmd.args or auto))
        or (
            verb in ("state", "workspace")
            and words[1:2] in (["rm"], ["mv"], ["push"], ["delete"], ["replace-provider"])
        )
        or (verb == "force-unlock")
    ):
        scan.hit("G165", shown)
    elif verb in (
        "plan",
        "validate",
        "show",
        "output",
        "providers",
        "version",
        "graph",
        "console",
        "state",
        "workspace",
        "test",
        "modules",
        "metadata",
        "-version",
        "--version",
        "-help",
        "--help",
    ):
        scan.hit("G180", shown)
    elif verb in ("fmt",):
        scan.hit("G184" if "-check" not in cmd.args else "G180", shown)
    elif verb in ("init", "get"):
        scan.hit("G183", shown)
    else:
        scan.hit("G188", shown)
    return EMPTY


def _pulumi(cmd: Cmd, scan: Scan) -> Flow:
    words = _words(cmd.args, frozenset({"-s", "--stack", "-C", "--cwd"}))
    verb = words[0] if words else ""
    shown = display(scan, " ".join(cmd.argv))
    scan.tag("network")
    yes = any(a in ("--yes", "-y", "-f", "--force") for a in cmd.args)
    if (
        verb == "destroy"
        or (verb in ("stack", "state") and words[1:2] in (["rm"], ["delete"]))
        or (verb in ("up", "update") and yes)
    ):
        scan.hit("G165", shown)
    elif verb in ("preview", "whoami", "version", "about", "logs", "about") or (
        verb in ("stack", "config") and words[1:2] in (["ls"], ["output"], ["get"], ["select"], [])
    ):
        scan.hit("G180", shown)
    else:
        scan.hit("G188", shown)
    return EMPTY


_DOCKER_RO = frozenset(
    {
        "ps",
        "images",
        "inspect",
        "logs",
        "version",
        "info",
        "stats",
        "top",
        "port",
        "diff",
        "history",
        "search",
        "events",
        "df",
        "ls",
        "config",
        "manifest",
    }
)
_SENSITIVE_MOUNTS = re.compile(
    r"^(/|/etc|/root|/home|/Users|/var/run/docker\.sock|/run/docker\.sock|/proc|/sys|/dev|"
    r"/boot|/usr|/var|/var/lib/docker)(/)?$"
)


def _docker(cmd: Cmd, scan: Scan) -> Flow:
    args = list(cmd.args)
    words = _words(tuple(args), frozenset({"-H", "--host", "--context", "-c", "--config", "-l", "--log-level"}))
    shown = display(scan, " ".join(cmd.argv))
    if cmd.name in ("docker-compose", "podman-compose") or words[:1] == ["compose"]:
        return _compose(words[1:] if words[:1] == ["compose"] else words, cmd, scan, shown)
    verb = words[0] if words else ""
    if (
        verb in ("container", "image", "volume", "network", "system", "builder", "buildx", "context", "plugin")
        and len(words) > 1
    ):
        group, verb = verb, words[1]
        if verb in ("prune", "rm", "remove") and group in ("volume", "system"):
            scan.hit("G167", shown)
            return EMPTY
    if verb == "prune":
        scan.hit("G167", shown)
    elif verb in _DOCKER_RO or verb == "":
        scan.hit("G180", shown)
    elif verb in ("run", "create"):
        _docker_run(args, scan, shown)
    elif verb == "exec":
        _docker_exec(args, scan, shown)
    elif verb == "push":
        scan.hit("G170", shown)
    elif verb == "pull":
        scan.hit("G146", shown)
    elif verb in ("build", "tag", "start", "restart", "stop", "wait", "attach", "rename", "commit"):
        scan.hit("G181", shown)
    elif verb == "cp" and len(words) >= 3:
        src, dst = words[-2], words[-1]
        flow = effects.read_flow(scan, src) if ":" not in src else Flow(0)  # copying a key into a container
        if ":" not in dst:
            effects.write(scan, dst, flow)
        scan.hit("G188", shown)
    else:
        scan.hit("G188", shown)
    return EMPTY


def _docker_run(args: list[str], scan: Scan, shown: str) -> None:
    privileged = (
        "--privileged" in args
        or any(
            a.startswith(
                (
                    "--pid=host",
                    "--cap-add=ALL",
                    "--cap-add=SYS_ADMIN",
                    "--security-opt=apparmor=unconfined",
                    "--userns=host",
                    "--ipc=host",
                )
            )
            for a in args
        )
        or "--device" in " ".join(args)
    )
    root_mount = sensitive = False
    for i, a in enumerate(args):
        value = None
        if a in ("-v", "--volume", "--mount") and i + 1 < len(args):
            value = args[i + 1]
        elif a.startswith(("-v", "--volume=", "--mount=")) and a not in ("-v", "--version"):
            value = a.split("=", 1)[1] if "=" in a and a.startswith("--") else a[2:]
        if value:
            source = value.split(":", 1)[0] if "source=" not in value else re.sub(r".*source=([^,]+).*", r"\1", value)
            place = scan.place(source)
            if place.tier == P.ROOT:
                root_mount = True
            if _SENSITIVE_MOUNTS.match(place.path) or place.tier in (P.HOME, P.CREDENTIAL, P.ROOT, P.PROTECTED):
                sensitive = True
    if privileged and root_mount:
        scan.hit("G168", shown)
    elif privileged or sensitive:
        scan.hit("G169", shown)
    else:
        scan.hit("G188", shown)


def _docker_exec(args: list[str], scan: Scan, shown: str) -> None:
    i = args.index("exec") + 1 if "exec" in args else 1
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-e", "--env", "-u", "--user", "-w", "--workdir", "--env-file", "--detach-keys") else 1
    inner = args[i + 1 :]  # after the container name
    if inner:
        scan.engine.run(inner)
    scan.hit("G188", shown)


def _compose(words: list[str], cmd: Cmd, scan: Scan, shown: str) -> Flow:
    verb = next((w for w in words if not w.startswith("-")), "")
    if verb == "down" and any(a in ("-v", "--volumes") for a in cmd.args):
        scan.hit("G167", shown)
    elif verb in ("ps", "logs", "config", "ls", "images", "top", "version", "port", "events"):
        scan.hit("G180", shown)
    elif verb == "push":
        scan.hit("G170", shown)
    elif verb == "pull":
        scan.hit("G146", shown)
    elif verb == "rm":
        scan.hit("G188", shown)
    elif verb in ("exec", "run") and len(words) >= 3:
        scan.engine.run(words[words.index(verb) + 2 :])
        scan.hit("G181", shown)
    else:
        scan.hit("G181", shown)
    return EMPTY


def _gh(cmd: Cmd, scan: Scan) -> Flow:
    scan.tag("network")
    shown = display(scan, " ".join(cmd.argv))
    if prints_credential(cmd, scan):
        return EMPTY
    words = _words(
        cmd.args,
        frozenset(
            {
                "-R",
                "--repo",
                "-b",
                "--body",
                "-t",
                "--title",
                "-F",
                "--field",
                "-f",
                "--raw-field",
                "-X",
                "--method",
                "--jq",
                "-q",
                "-H",
                "--header",
                "--input",
                "-B",
                "--base",
                "-l",
                "--label",
                "--json",
                "-L",
                "--limit",
            }
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
    else:
        scan.hit("G188", shown)
    return EMPTY


def _method(args: tuple[str, ...]) -> str:
    for i, a in enumerate(args):
        if a in ("-X", "--method") and i + 1 < len(args):
            return args[i + 1].upper()
        if a.startswith("--method="):
            return a.split("=", 1)[1].upper()
    return "GET"


def _ansible(cmd: Cmd, scan: Scan) -> Flow:
    opts = parse_opts(
        cmd.args,
        frozenset(
            {
                "-m",
                "--module-name",
                "-a",
                "--args",
                "-i",
                "--inventory",
                "-u",
                "-e",
                "--extra-vars",
                "-l",
                "--limit",
                "-b",
                "-K",
                "-f",
                "--forks",
            }
        ),
    )
    module = opts.value("-m", "--module-name") or ""
    if module in ("shell", "command", "raw", "ansible.builtin.shell", "ansible.builtin.command") and opts.value(
        "-a", "--args"
    ):
        scan.engine.script(opts.value("-a", "--args") or "")
    scan.tag("network")
    scan.hit("G149" if module else "G188", display(scan, " ".join(cmd.argv)))
    return EMPTY


HANDLERS: dict[str, Handler] = {
    "aws": _aws,
    "gsutil": _gsutil,
    "kubectl": _kubectl,
    "oc": _kubectl,
    "k3s": _kubectl,
    "helm": _helm,
    "terraform": _terraform,
    "tofu": _terraform,
    "terragrunt": _terraform,
    "pulumi": _pulumi,
    "docker": _docker,
    "podman": _docker,
    "nerdctl": _docker,
    "docker-compose": _docker,
    "podman-compose": _docker,
    "gh": _gh,
    "ansible": _ansible,
    "ansible-playbook": _ansible,
    **dict.fromkeys(
        (
            "gcloud",
            "az",
            "doctl",
            "flyctl",
            "fly",
            "heroku",
            "vercel",
            "netlify",
            "firebase",
            "wrangler",
            "railway",
            "eksctl",
            "vagrant",
            "minikube",
            "kind",
            "linode-cli",
            "hcloud",
            "scw",
            "oci",
            "ibmcloud",
            "aliyun",
            "rclone",
            "supabase",
            "neonctl",
            "planetscale",
            "pscale",
            "render",
            "cf",
            "openstack",
            "glab",
            "tea",
            "argocd",
            "flux",
            "istioctl",
            "kustomize",
            "k9s",
            "skaffold",
            "tilt",
            "nomad",
            "consul",
            "packer",
        ),
        _by_verb,
    ),
}
