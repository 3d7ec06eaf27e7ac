"""Other machines: raw sockets, ssh, copies across hosts, mail, TLS clients.

A socket wired to a shell is a remote shell (block); a credential piped into ``nc``, copied with
``scp``/``rsync`` or attached to a mail is exfiltration (block); an ordinary upload asks; the
command given to ``ssh host '…'`` is still a command and is judged as one.
"""

from __future__ import annotations

import re

from guard import lazyre
from guard.static.families import effects, selfguard
from guard.static.families.base import Handler, Opts, parse_opts
from guard.static.families.net import _is_local
from guard.static.reading.text import wordset
from guard.static.scan import EMPTY, REMOTE, SECRET, Cmd, Flow, Scan, display, interactive_shell

SOCKET, SHELL = 16, 32


_REMOTE_SPEC = lazyre.compile(r"^(?:[\w.+-]+@)?[\w.-]+:(?!//)|^rsync://|^[\w.-]+::")


def _socket(cmd: Cmd, scan: Scan) -> Flow:
    """nc, ncat, socat, telnet: raw sockets."""
    scan.tag("network")
    args = " ".join(cmd.args)
    shown = display(scan, " ".join(cmd.argv))
    executes = (cmd.name != "socat" and re.search(r"(^|\s)(-e|-c|--exec|--sh-exec|--lua-exec)(\s|$)", args)) or (
        cmd.name == "socat" and re.search(r"\b(EXEC|SYSTEM):", args, re.I)
    )
    if executes:
        scan.hit("G144", shown)
        return Flow(REMOTE | SOCKET)
    if selfguard.daemon_socket(scan, cmd):
        return Flow(REMOTE | SOCKET)
    if cmd.name == "socat":
        for addr in cmd.args:
            m = re.match(r"(?i)^(?:FILE|OPEN|GOPEN|CREATE):([^,]+)", addr)
            if m and effects.read_flow(scan, m.group(1)).bits & SECRET:
                scan.hit("G143", shown)
    if cmd.stdin.bits & SHELL:
        scan.hit("G144", shown)
    elif cmd.stdin.bits & SECRET:
        scan.hit("G143", shown)
    elif _probes_local_port(cmd):
        scan.hit("G148", shown)  # ``nc -z localhost 5432``: is the port open? (nothing is sent)
    elif "-l" in cmd.args or "--listen" in cmd.args or "-lp" in cmd.args or "-lvp" in cmd.args or "-lnvp" in cmd.args:
        scan.hit("G182", shown)
    else:
        scan.hit("G145", shown)
    return Flow(REMOTE | SOCKET)


def _probes_local_port(cmd: Cmd) -> bool:
    if cmd.name not in ("nc", "ncat", "netcat"):
        return False
    opts = parse_opts(cmd.args, wordset("-w -p -s -i -q -W -x -X -T -I -O -V"))
    zero_io = any(f in ("-z", "--zero") for f in opts.flags)
    return zero_io and bool(opts.operands) and _is_local([f"http://{opts.operands[0]}"])


_SSH_TAKES = wordset("-b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w -B -P")


def _proxy_commands(scan: Scan, values: list[str]) -> None:
    for value in values:
        key, _, command = value.partition("=")
        if key.lower() in ("proxycommand", "localcommand", "knownhostscommand", "remotecommand") and command:
            scan.engine.script(command)


def _ssh(cmd: Cmd, scan: Scan) -> Flow:
    opts = parse_opts(cmd.args, _SSH_TAKES, stop_at_operand=True)
    _proxy_commands(scan, opts.all("-o"))
    if cmd.name == "ssh" and opts.has("-V") and not cmd.stdin.bits:  # prints its version and exits while
        scan.hit("G180", display(scan, " ".join(cmd.argv)))  # it reads its options: nothing connects
        return EMPTY
    scan.tag("network")
    operands = list(opts.operands)
    if cmd.stdin.bits & SECRET:
        scan.hit("G143", display(scan, " ".join(cmd.argv)))
    if len(operands) >= 2:
        scan.engine.script(" ".join(operands[1:]))  # the remote command is still a command that runs
    elif operands and cmd.stdin == EMPTY and not _no_shell(opts):
        interactive_shell(scan, f"{cmd.name} {operands[0]} logs in with no command")
    scan.hit("G149", display(scan, " ".join(cmd.argv)))
    return Flow(REMOTE)


def _no_shell(opts: Opts) -> bool:
    """``ssh -N`` (forwarding only), ``-W host:port`` (a pipe), ``-O check`` (the control master)."""
    return opts.has("-N", "-W", "-O") or bool(opts.all("-W", "-O"))


def _copy_remote(cmd: Cmd, scan: Scan) -> Flow:
    """scp, rsync, sftp: copies across machines, or (rsync) locally with --delete."""
    takes = _SSH_TAKES | {
        "-e",
        "--rsh",
        "--rsync-path",
        "--exclude",
        "--include",
        "--filter",
        "-f",
        "--files-from",
        "--exclude-from",
        "--include-from",
        "--chmod",
        "--chown",
        "--log-file",
        "--partial-dir",
        "--backup-dir",
        "--suffix",
        "--timeout",
        "--port",
        "--password-file",
        "-T",
        "--temp-dir",
        "--compare-dest",
        "--link-dest",
        "--copy-dest",
        "--bwlimit",
        "--max-size",
        "--min-size",
    }
    opts = parse_opts(cmd.args, frozenset(takes))
    _proxy_commands(scan, opts.all("-o"))
    for shell in opts.all("-e", "--rsh") if cmd.name == "rsync" else []:
        scan.engine.script(shell + " host true")
    operands = list(opts.operands)
    shown = display(scan, " ".join(cmd.argv))
    if len(operands) < 2:
        scan.hit("G149" if cmd.name == "sftp" else "G182", shown)
        scan.tag("network")
        return EMPTY
    *sources, dest = operands
    if _REMOTE_SPEC.match(dest):
        scan.tag("network")
        flow = EMPTY
        for src in sources:
            if not _REMOTE_SPEC.match(src):
                flow = flow | effects.read_flow(scan, src)
        scan.hit("G143" if flow.bits & SECRET else "G145", shown)
        return EMPTY
    if any(_REMOTE_SPEC.match(s) for s in sources):
        scan.tag("network")
        scan.hit("G146", shown)
        effects.write(scan, dest, Flow(REMOTE))
        return EMPTY
    flow = EMPTY
    for src in sources:
        flow = flow | effects.read_flow(scan, src)
    effects.write(scan, dest, flow)
    if any(f.startswith("--delete") or f == "--del" for f in opts.flags):
        effects.delete(scan, dest.rstrip("/") + "/*", True, f"rsync --delete into {dest}")
    if opts.has("--remove-source-files"):
        for src in sources:
            effects.delete(scan, src, False, "rsync --remove-source-files")
    return EMPTY


def _mail(cmd: Cmd, scan: Scan) -> Flow:
    scan.tag("network", "egress")
    flow = Flow(cmd.stdin.bits)
    for i, a in enumerate(cmd.args):
        if a in ("-a", "-A", "--attach", "--attach-body") and i + 1 < len(cmd.args):
            flow = flow | effects.read_flow(scan, cmd.args[i + 1].lstrip("@"))
    scan.hit("G143" if flow.bits & SECRET else "G145", display(scan, " ".join(cmd.argv)))
    return EMPTY


def _openssl(cmd: Cmd, scan: Scan) -> Flow:
    opts = parse_opts(
        cmd.args[1:],
        wordset("-in -out -connect -k -pass -passin -key -inkey -passout -config -CAfile -servername"),
    )
    sub = cmd.args[0] if cmd.args else ""
    for f in opts.all("-in"):
        effects.read(scan, f)
    for f in opts.all("-key", "-inkey"):
        effects.read(scan, f)
    for f in opts.all("-out"):
        effects.write(scan, f)
    if sub in ("s_client", "s_server"):
        scan.tag("network")
        if cmd.stdin.bits & SECRET:
            scan.hit("G143", " ".join(cmd.argv))
        scan.hit("G145" if sub == "s_client" else "G182", " ".join(cmd.argv))
        return Flow(REMOTE | SOCKET)
    decode = sub in ("base64", "enc") and "-d" in cmd.args
    if not scan.hits or scan.hits[-1].rule_id not in ("G140", "G141"):
        scan.hit(
            "G180"
            if sub in ("version", "x509", "dgst", "rand", "list", "ciphers", "verify", "help") or decode
            else "G181",
            " ".join(cmd.argv),
        )
    return Flow(cmd.stdin.bits | (2 if decode else 0))


def _ztcp(cmd: Cmd, scan: Scan) -> Flow:
    """zsh's ``ztcp HOST PORT`` (after ``zmodload zsh/net/tcp``) opens a TCP connection on a new
    descriptor and names it in ``$REPLY``; ``ztcp -l PORT`` listens, ``-a FD`` accepts. A shell
    whose input is that descriptor (``zsh >&$REPLY 0>&$REPLY``) is a remote shell, as one reading
    a ``/dev/tcp`` descriptor is (G144 at the end of the analysis); alone it sends data out (G145)
    or, listening, waits for someone (G182). ``ztcp -c`` closes, ``ztcp``/``-L`` lists."""
    opts = parse_opts(cmd.args, wordset("-a -d"))
    if opts.has("-c") or (not opts.operands and not opts.has("-a")):  # close, or list
        scan.hit("G180", display(scan, " ".join(cmd.argv)))
        return EMPTY
    scan.tag("network", "egress")
    scan.netdev = True  # a descriptor wired to a socket
    scan.vars["REPLY"] = opts.value("-d") or "10"  # (zsh's first free descriptor from 10)
    listens = opts.has("-l", "-a")
    scan.hit("G182" if listens else "G145", display(scan, " ".join(cmd.argv)))
    return EMPTY


def _zmodload(cmd: Cmd, scan: Scan) -> Flow:
    """``zmodload zsh/net/tcp``: loading a zsh module runs nothing; the builtins it adds are
    judged where they are used (``ztcp``), or asked as unknown commands."""
    scan.hit("G180", display(scan, " ".join(cmd.argv)))
    return EMPTY


_KEYGEN_TAKES = wordset("-f -F -b -C -N -P -t -m -O -n -I -V -z -s -D -E -Z -a -r -R -w -Y -h")


def _ssh_keygen(cmd: Cmd, scan: Scan) -> Flow | None:
    """``ssh-keygen -l -f key.pub`` (a fingerprint), ``-F host`` (a known_hosts search), ``-L -f cert``:
    reads only. Making, changing or removing keys and known hosts is not modelled: asked as unknown."""
    opts = parse_opts(cmd.args, _KEYGEN_TAKES)
    changes = (
        "-t",
        "-R",
        "-p",
        "-c",
        "-N",
        "-P",
        "-s",
        "-A",
        "-i",
        "-e",
        "-y",
        "-H",
        "-k",
        "-u",
        "-G",
        "-T",
        "-M",
        "-Y",
    )
    if not opts.has("-l", "-F", "-L") or opts.has(*changes):
        return None
    for file in opts.all("-f"):
        effects.read(scan, file, content=False)
    scan.hit("G180", display(scan, " ".join(cmd.argv)))
    return EMPTY


HANDLERS: dict[str, Handler] = {
    "ssh-keygen": _ssh_keygen,
    **dict.fromkeys(("nc", "ncat", "netcat", "socat", "telnet"), _socket),
    "ztcp": _ztcp,
    "zmodload": _zmodload,
    "ssh": _ssh,
    "mosh": _ssh,
    **dict.fromkeys(("scp", "rsync", "sftp"), _copy_remote),
    **dict.fromkeys(("mail", "mailx", "mutt", "sendmail", "msmtp", "swaks", "neomutt"), _mail),
    "openssl": _openssl,
}
