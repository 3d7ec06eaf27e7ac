"""Clusters and infrastructure as code: kubectl, helm, terraform, pulumi.

Looking (get, describe, plan, status) flows; deleting resources, destroying infrastructure or
applying without review asks; ``kubectl exec … -- cmd`` runs ``cmd``, which is judged as itself.
"""

from __future__ import annotations

from guard.static.families.base import Handler
from guard.static.families.cloud import _words
from guard.static.families.secrets import prints_credential
from guard.static.reading.text import wordset
from guard.static.scan import EMPTY, Cmd, Flow, Scan, display


def _kubectl(cmd: Cmd, scan: Scan) -> Flow:
    scan.tag("network")
    shown = display(scan, " ".join(cmd.argv))
    words = _words(
        cmd.args,
        wordset(
            "-n --namespace --context -o --output -l --selector -f --filename -c --container --kubeconfig "
            "--cluster --user"
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
    elif (
        verb
        in (
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
            "kustomize",
        )
        or (verb == "rollout" and words[1:2] in (["status"], ["history"]))
        or (
            verb == "config"
            and words[1:2] in (["view"], ["get-contexts"], ["current-context"], ["get-clusters"], ["get-users"])
        )
    ):
        scan.hit("G180", shown)
    else:
        scan.hit("G188", shown)
    return EMPTY


def _helm(cmd: Cmd, scan: Scan) -> Flow:
    words = _words(cmd.args, wordset("-n --namespace --kube-context -f --values --set --version"))
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
    words = _words(cmd.args, wordset("-var -var-file -target -chdir -out -state"))
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
    words = _words(cmd.args, wordset("-s --stack -C --cwd"))
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


HANDLERS: dict[str, Handler] = {
    "kubectl": _kubectl,
    "oc": _kubectl,
    "k3s": _kubectl,
    "helm": _helm,
    "terraform": _terraform,
    "tofu": _terraform,
    "terragrunt": _terraform,
    "pulumi": _pulumi,
}
