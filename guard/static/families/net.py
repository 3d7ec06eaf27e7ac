"""Network: downloads bring untrusted content in, uploads send data out, sockets can hand over a shell.

What leaves the machine is judged by where it came from: a credential file uploaded with
``curl -T``, ``rsync``'d to a host, piped into ``nc`` or folded into a DNS name is exfiltration
(block); an ordinary ``POST`` asks; a ``GET`` is a download whose output stays "downloaded"
downstream (``curl … | sh`` is remote code, ``curl -o x.sh … && sh x.sh`` too).
"""

from __future__ import annotations

import re

from guard.static import effects
from guard.static.families.base import Handler, parse_opts
from guard.static.families.secrets import secret_vars
from guard.static.scan import EMPTY, REMOTE, SECRET, Cmd, Flow, Scan, display

SOCKET, SHELL = 16, 32
_LOCAL_HOST = re.compile(
    r"^(localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|\[::1\]|::1|[\w.-]+\.localhost|host\.docker\.internal)$", re.I
)
_URL = re.compile(r"^(?:(?P<scheme>[a-z][a-z0-9+.-]*)://)?(?:[^@/]*@)?(?P<host>\[[^\]]+\]|[^/:?#]+)", re.I)
_REMOTE_SPEC = re.compile(r"^(?:[\w.+-]+@)?[\w.-]+:(?!//)|^rsync://|^[\w.-]+::")
_EGRESS_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def host_of(url: str) -> str:
    m = _URL.match(url)
    return (m.group("host") or "").lower() if m else ""


def _is_local(urls: list[str]) -> bool:
    return bool(urls) and all(_LOCAL_HOST.match(host_of(u)) for u in urls)


def _secrets_in(scan: Scan, cmd: Cmd, words: list[str]) -> None:
    """Secret values or secret-tainted substitutions in what is sent out."""
    if any(scan.flow_of(w).bits & SECRET for w in words):
        scan.hit("G143", display(scan, " ".join(cmd.argv)))
    names = secret_vars(scan, words)
    if names:
        scan.hit("G147", "$" + ", $".join(names))


_CURL_TAKES = frozenset(
    {
        "-d",
        "--data",
        "--data-raw",
        "--data-binary",
        "--data-urlencode",
        "--data-ascii",
        "--json",
        "-F",
        "--form",
        "--form-string",
        "-T",
        "--upload-file",
        "-X",
        "--request",
        "-o",
        "--output",
        "-H",
        "--header",
        "-u",
        "--user",
        "-e",
        "--referer",
        "-A",
        "--user-agent",
        "-b",
        "--cookie",
        "-c",
        "--cookie-jar",
        "-K",
        "--config",
        "-x",
        "--proxy",
        "--url",
        "-w",
        "--write-out",
        "--resolve",
        "--connect-to",
        "-m",
        "--max-time",
        "--retry",
        "--cacert",
        "--cert",
        "-E",
        "--key",
        "--output-dir",
        "-D",
        "--dump-header",
        "--trace",
        "--trace-ascii",
        "-r",
        "--range",
        "-C",
        "--continue-at",
        "-z",
        "--time-cond",
        "-Y",
        "-y",
        "--limit-rate",
        "--interface",
        "--dns-servers",
        "-Q",
        "--quote",
        "--mail-from",
        "--mail-rcpt",
        "--connect-timeout",
        "--retry-delay",
        "--retry-max-time",
        "-U",
        "--proxy-user",
        "--oauth2-bearer",
        "--aws-sigv4",
        "--variable",
        "--expand-url",
        "--unix-socket",
        "--abstract-unix-socket",
    }
)
_CURL_DATA = ("-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii", "--json")


def _curl(cmd: Cmd, scan: Scan) -> Flow:
    opts = parse_opts(cmd.args, _CURL_TAKES)
    urls = list(opts.operands) + opts.all("--url")
    scan.urls.extend(urls)
    scan.tag("network")
    sent: list[str] = []
    flow_out = Flow(0)
    for value in opts.all(*_CURL_DATA):
        sent.append(value)
        if value.startswith("@"):
            flow_out = flow_out | _upload(scan, cmd, value[1:])
    for value in opts.all("-F", "--form"):
        sent.append(value)
        m = re.search(r"=[@<]([^;]+)", value)
        if m:
            flow_out = flow_out | _upload(scan, cmd, m.group(1))
    for value in opts.all("-T", "--upload-file"):
        flow_out = flow_out | _upload(scan, cmd, value)
    method = (opts.value("-X", "--request") or "").upper()
    for url in urls:
        if url.lower().startswith("file://"):
            effects.read(scan, url[7:])
    egress = (
        bool(sent)
        or bool(opts.all("-T", "--upload-file"))
        or method in _EGRESS_METHODS
        or bool(opts.all("--mail-rcpt", "-Q", "--quote"))
    )
    _secrets_in(scan, cmd, sent + urls)
    if flow_out.bits & SECRET:
        scan.hit("G143", display(scan, " ".join(cmd.argv)))
    local = _is_local(urls)
    if egress:
        scan.hit("G148" if local else "G145", display(scan, " ".join(cmd.argv)))
    else:
        scan.hit("G148" if local else "G146", display(scan, " ".join(urls[:2])))
    return _download_output(
        scan, opts.value("-o", "--output"), opts.has("-O", "--remote-name", "--remote-name-all"), urls, local
    )


def _upload(scan: Scan, cmd: Cmd, source: str) -> Flow:
    if source in ("-", "/dev/stdin"):
        return Flow(cmd.stdin.bits)
    return effects.read_flow(scan, source)


def _download_output(scan: Scan, output: str | None, remote_name: bool, urls: list[str], local: bool) -> Flow:
    bits = 0 if local else REMOTE
    if output and output != "-":
        effects.write(scan, output, Flow(bits))
        return EMPTY
    if remote_name and urls:
        name = urls[0].split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1] or "index.html"
        effects.write(scan, name, Flow(bits))
        return EMPTY
    return Flow(bits)


_WGET_TAKES = frozenset(
    {
        "-O",
        "--output-document",
        "-o",
        "--output-file",
        "-P",
        "--directory-prefix",
        "--post-data",
        "--post-file",
        "--method",
        "--body-data",
        "--body-file",
        "-i",
        "--input-file",
        "-e",
        "--execute",
        "-U",
        "--user-agent",
        "--header",
        "-t",
        "--tries",
        "-T",
        "--timeout",
        "-l",
        "--level",
        "-A",
        "-R",
        "--user",
        "--password",
        "--load-cookies",
        "--save-cookies",
        "-w",
        "--wait",
    }
)


def _wget(cmd: Cmd, scan: Scan) -> Flow:
    opts = parse_opts(cmd.args, _WGET_TAKES)
    urls = list(opts.operands)
    scan.urls.extend(urls)
    scan.tag("network")
    sent = opts.all("--post-data", "--body-data")
    flow = Flow(0)
    for f in opts.all("--post-file", "--body-file"):
        flow = flow | _upload(scan, cmd, f)
    method = (opts.value("--method") or "").upper()
    _secrets_in(scan, cmd, sent + urls)
    if flow.bits & SECRET:
        scan.hit("G143", display(scan, " ".join(cmd.argv)))
    local = _is_local(urls)
    if sent or flow.bits or method in _EGRESS_METHODS or opts.has("--post-file", "--body-file"):
        scan.hit("G148" if local else "G145", display(scan, " ".join(cmd.argv)))
    else:
        scan.hit("G148" if local else "G146", display(scan, " ".join(urls[:2])))
    if opts.has("-e", "--execute"):
        scan.hit("G182", "wget --execute")
    output = opts.value("-O", "--output-document")
    if output == "-":
        return Flow(0 if local else REMOTE)
    if output:
        effects.write(scan, output, Flow(0 if local else REMOTE))
        return EMPTY
    prefix = opts.value("-P", "--directory-prefix") or "."
    for url in urls[:4]:
        name = url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1] or "index.html"
        effects.write(scan, f"{prefix.rstrip('/')}/{name}", Flow(0 if local else REMOTE))
    return EMPTY


def _httpie(cmd: Cmd, scan: Scan) -> Flow:
    args = [a for a in cmd.args if not a.startswith("-")]
    method = args[0].upper() if args and args[0].isalpha() and args[0].isupper() else ""
    rest = args[1:] if method else args
    urls, items = rest[:1], rest[1:]
    scan.urls.extend(urls)
    scan.tag("network")
    data = [i for i in items if re.match(r"^[^:=@]+(==|:=|=|@|:=@|=@)", i) and "==" not in i.split("=")[0]]
    flow = Flow(0)
    for item in items:
        m = re.match(r"^[^=@:]+(?:=@|:=@|@)(.+)$", item)
        if m:
            flow = flow | _upload(scan, cmd, m.group(1))
    _secrets_in(scan, cmd, data + urls)
    if flow.bits & SECRET or cmd.stdin.bits & SECRET:
        scan.hit("G143", display(scan, " ".join(cmd.argv)))
    egress = method in _EGRESS_METHODS or bool([d for d in data if "==" not in d]) or cmd.stdin.bits != 0
    local = _is_local(["http://" + u if "://" not in u else u for u in urls])
    scan.hit(("G148" if local else "G145") if egress else ("G148" if local else "G146"), " ".join(cmd.argv))
    return Flow(0 if local else REMOTE)


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
    if cmd.name == "socat":
        for addr in cmd.args:
            m = re.match(r"(?i)^(?:FILE|OPEN|GOPEN|CREATE):([^,]+)", addr)
            if m and effects.read_flow(scan, m.group(1)).bits & SECRET:
                scan.hit("G143", shown)
    if cmd.stdin.bits & SHELL:
        scan.hit("G144", shown)
    elif cmd.stdin.bits & SECRET:
        scan.hit("G143", shown)
    elif "-l" in cmd.args or "--listen" in cmd.args or "-lp" in cmd.args or "-lvp" in cmd.args or "-lnvp" in cmd.args:
        scan.hit("G182", shown)
    else:
        scan.hit("G145", shown)
    return Flow(REMOTE | SOCKET)


_SSH_TAKES = frozenset(
    {
        "-b",
        "-c",
        "-D",
        "-E",
        "-e",
        "-F",
        "-I",
        "-i",
        "-J",
        "-L",
        "-l",
        "-m",
        "-O",
        "-o",
        "-p",
        "-Q",
        "-R",
        "-S",
        "-W",
        "-w",
        "-B",
        "-P",
    }
)


def _proxy_commands(scan: Scan, values: list[str]) -> None:
    for value in values:
        key, _, command = value.partition("=")
        if key.lower() in ("proxycommand", "localcommand", "knownhostscommand", "remotecommand") and command:
            scan.engine.script(command)


def _ssh(cmd: Cmd, scan: Scan) -> Flow:
    opts = parse_opts(cmd.args, _SSH_TAKES, stop_at_operand=True)
    _proxy_commands(scan, opts.all("-o"))
    scan.tag("network")
    operands = list(opts.operands)
    if cmd.stdin.bits & SECRET:
        scan.hit("G143", display(scan, " ".join(cmd.argv)))
    if len(operands) >= 2:
        scan.engine.script(" ".join(operands[1:]))  # the remote command is still a command that runs
    scan.hit("G149", display(scan, " ".join(cmd.argv)))
    return Flow(REMOTE)


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


def _lookup(cmd: Cmd, scan: Scan) -> Flow:
    """dig, ping, whois …: queries that read, unless the query itself carries a secret (DNS exfiltration)."""
    scan.tag("network")
    _secrets_in(scan, cmd, list(cmd.args))
    scan.hit("G180", cmd.name)
    return EMPTY


def _openssl(cmd: Cmd, scan: Scan) -> Flow:
    opts = parse_opts(
        cmd.args[1:],
        frozenset(
            {
                "-in",
                "-out",
                "-connect",
                "-k",
                "-pass",
                "-passin",
                "-key",
                "-inkey",
                "-passout",
                "-config",
                "-CAfile",
                "-servername",
            }
        ),
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


def _aria2c(cmd: Cmd, scan: Scan) -> Flow:
    urls = [a for a in cmd.args if "://" in a]
    scan.urls.extend(urls)
    scan.tag("network")
    scan.hit("G146", " ".join(urls[:2]) or "aria2c")
    return Flow(REMOTE)


HANDLERS: dict[str, Handler] = {
    "curl": _curl,
    "aria2c": _aria2c,
    "iwr": _aria2c,
    "invoke-webrequest": _aria2c,
    "irm": _aria2c,
    "invoke-restmethod": _aria2c,
    "axel": _aria2c,
    "wget": _wget,
    "wget2": _wget,
    "http": _httpie,
    "https": _httpie,
    "xh": _httpie,
    "xhs": _httpie,
    "nc": _socket,
    "ncat": _socket,
    "netcat": _socket,
    "socat": _socket,
    "telnet": _socket,
    "ssh": _ssh,
    "mosh": _ssh,
    "scp": _copy_remote,
    "rsync": _copy_remote,
    "sftp": _copy_remote,
    **dict.fromkeys(("mail", "mailx", "mutt", "sendmail", "msmtp", "swaks", "neomutt"), _mail),
    **dict.fromkeys(
        (
            "dig",
            "nslookup",
            "host",
            "ping",
            "ping6",
            "traceroute",
            "tracepath",
            "mtr",
            "whois",
            "arp",
            "netstat",
            "ss",
            "drill",
            "fping",
            "nmap",
        ),
        _lookup,
    ),
    "openssl": _openssl,
}
