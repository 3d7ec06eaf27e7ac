"""Containers: docker, podman, nerdctl and compose.

Inspecting flows; pruning volumes or system data asks; a privileged container with the host's root
mounted blocks (it is root on the host); ``docker exec c cmd`` runs ``cmd``, judged as itself.
"""

from __future__ import annotations

import re

from guard import lazyre
from guard.static.facts import paths as P
from guard.static.families import effects
from guard.static.families.base import Handler
from guard.static.families.cloud import _words
from guard.static.reading.text import wordset
from guard.static.scan import EMPTY, Cmd, Flow, Scan, display

_DOCKER_RO = wordset(
    "ps images inspect logs version info stats top port diff history search events df ls config manifest"
)


_SENSITIVE_MOUNTS = lazyre.compile(
    r"^(/|/etc|/root|/home|/Users|/var/run/docker\.sock|/run/docker\.sock|/proc|/sys|/dev|"
    r"/boot|/usr|/var|/var/lib/docker)(/)?$"
)


def _docker(cmd: Cmd, scan: Scan) -> Flow:
    args = list(cmd.args)
    words = _words(tuple(args), wordset("-H --host --context -c --config -l --log-level"))
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
        if ":" not in src or ":" in dst or dst == "-":  # out of a container into a folder here is that write
            scan.hit("G188", shown)  # into a container (a key copied in), between containers, a tar stream
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
    mounts: list[tuple[str, str]] = []  # (container path, host path) of host places that matter
    for i, a in enumerate(args):
        value = None
        if a in ("-v", "--volume", "--mount") and i + 1 < len(args):
            value = args[i + 1]
        elif a.startswith(("-v", "--volume=", "--mount=")) and a not in ("-v", "--version"):
            value = a.split("=", 1)[1] if "=" in a and a.startswith("--") else a[2:]
        if value:
            source = value.split(":", 1)[0] if "source=" not in value else re.sub(r".*source=([^,]+).*", r"\1", value)
            place = scan.place(source)
            if place.tier == P.ROOT and not re.search(r":(?:ro|readonly)(?:,|$)|[,=]readonly(?:,|$)|,ro(?:,|$)", value):
                root_mount = True  # the host's / writable in the container: its root is the host's root
            if _SENSITIVE_MOUNTS.match(place.path) or place.tier in (P.HOME, P.CREDENTIAL, P.ROOT, P.PROTECTED):
                sensitive = True
            if place.tier not in _CONTAINED and place.path.startswith("/"):
                dest = _mount_target(value)
                if dest and dest.startswith("/") and dest != "/":
                    mounts.append((dest.rstrip("/"), place.path))
    before = len(scan.hits)
    if mounts:
        _inner_on_host(args, mounts, scan)
    # a shell on the host's writable root (``-v /:/mnt … chroot /mnt sh``) or in its process namespace
    # (``--privileged --pid=host … nsenter -t 1``): what is typed next runs as root on the host
    host_shell = any(h.rule_id == "G425" for h in scan.hits[before:]) or "chroot" in args or "nsenter" in args
    host_pid = "--privileged" in args and "--pid=host" in args
    if (privileged and root_mount) or (root_mount and host_shell) or (host_pid and host_shell):
        scan.hit("G168", shown)
    elif privileged or sensitive:
        scan.hit("G169", shown)
    else:
        scan.hit("G188", shown)


_CONTAINED = frozenset({P.PROJECT, P.PROJECT_ROOT, P.GITDIR, P.TEMP, P.SPECIAL, P.DYNAMIC})
_RUN_TAKES = wordset(
    "-v --volume --mount -e --env --env-file -w --workdir -u --user --name -p --publish --network --net -h "
    "--hostname --entrypoint -m --memory --platform -l --label --label-file --restart --add-host --cap-add --cap-drop "
    "--device --security-opt --tmpfs --ulimit --gpus --pull --shm-size --runtime --ipc --pid --cidfile --dns "
    "--expose --log-driver --log-opt --link --cpus --stop-signal --health-cmd --group-add --userns --uts "
    "--volumes-from --mac-address --ip --ip6 --cgroupns --init-path --isolation --storage-opt --sysctl --cpu-shares "
    "-c --memory-swap --attach -a"
)


def _mount_target(value: str) -> str | None:
    """The container side of ``-v SRC:DEST[:ro]`` or ``--mount type=bind,source=S,target=D``."""
    if "=" in value:
        m = re.search(r"(?:^|,)(?:target|destination|dst)=([^,]+)", value)
        return m.group(1) if m else None
    parts = value.split(":")
    return parts[1] if len(parts) > 1 else None


def _inner_on_host(args: list[str], mounts: list[tuple[str, str]], scan: Scan) -> None:
    """The container's command, with paths inside host mounts mapped back to the host (judged as itself).

    ``docker run -v /:/host alpine rm -rf /host`` deletes the host's root; commands that touch only the
    container's own filesystem are not judged (``rm -rf /`` there removes the container's files).
    """
    i = args.index("run") + 1 if "run" in args else args.index("create") + 1 if "create" in args else 1
    entrypoint = None
    while i < len(args) and args[i].startswith("-"):
        key = args[i].split("=", 1)[0]
        if key == "--entrypoint":
            entrypoint = args[i].split("=", 1)[1] if "=" in args[i] else args[i + 1] if i + 1 < len(args) else None
        i += 2 if args[i] in _RUN_TAKES else 1
    inner = ([entrypoint] if entrypoint else []) + args[i + 1 :]
    mapped, changed = [], False
    for word in inner:
        new = word
        for dest, host in sorted(mounts, key=lambda m: -len(m[0])):
            new = re.sub(rf"(?<![\w.~/-]){re.escape(dest)}(?=/|$|[\s'\";|&)<>])", host.rstrip("/") or "/", new)
        changed = changed or new != word
        mapped.append(new.replace("//", "/"))
    if changed:
        scan.engine.run(mapped)


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


HANDLERS: dict[str, Handler] = dict.fromkeys(
    ("docker", "podman", "nerdctl", "docker-compose", "podman-compose"), _docker
)
