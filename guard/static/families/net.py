"""HTTP clients: downloads bring untrusted content in, requests with a body send data out.

What is sent is judged by where it came from: a credential uploaded with ``curl -T``/``-F @…``/
``-d @…`` or folded into a URL or a DNS name is exfiltration (block); an ordinary ``POST`` asks; a
``GET`` is a download whose output stays "downloaded" downstream (``curl … | sh`` is remote code,
``curl -o x.sh … && sh x.sh`` too). Raw sockets, ssh and copies across hosts: :mod:`.remote`.
"""

from __future__ import annotations

import re

from guard import docsites
from guard.static.facts.hosts import LOCAL_HOST, METADATA_HOSTS, host_of, leaked_secret
from guard.static.families import effects
from guard.static.families.base import Handler, parse_opts
from guard.static.families.secrets import secret_vars
from guard.static.reading.text import wordset
from guard.static.scan import EMPTY, REMOTE, SECRET, Cmd, Flow, Scan, display

_EGRESS_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def metadata_urls(scan: Scan, urls: list[str]) -> bool:
    """Hit G140 for a cloud metadata address among ``urls`` and mark the output secret."""
    for url in urls:
        if host_of(url) in METADATA_HOSTS:
            scan.hit("G140", f"cloud instance metadata: {display(scan, url)[:100]}")
            scan.cmd_secret = True
            return True
    return False


def _fetch_rule(scan: Scan, urls: list[str]) -> str:
    """G465 for a GET of documentation or package-index pages only, else G146 (a download)."""
    return "G465" if docsites.only_docs(urls, scan.docs_hosts) else "G146"


def _is_local(urls: list[str]) -> bool:
    return bool(urls) and all(LOCAL_HOST.match(host_of(u)) for u in urls)


def _secrets_in(scan: Scan, cmd: Cmd, words: list[str], urls: list[str] | tuple[str, ...] = ()) -> None:
    """Secret values or secret-tainted substitutions in what is sent out (to ``urls``)."""
    if any(scan.flow_of(w).bits & SECRET for w in words):
        scan.hit("G143", display(scan, " ".join(cmd.argv)))
    host = host_of(urls[0]) if urls else ""
    if not (urls and _is_local(list(urls))):
        leaked = next((found for w in words if (found := leaked_secret(w, host))), None)
        if leaked:
            scan.hit("G440", f"{leaked} to {host or 'the network'}")
    names = secret_vars(scan, words)
    if names:
        scan.hit("G147", "$" + ", $".join(names))
        if not (urls and _is_local(list(urls))):
            leaked_var = next((n for n in names if not _issued_by(n, host)), None)
            if leaked_var:
                scan.hit("G440", f"${leaked_var} to {host or 'the network'}")


# Secrets whose variable says who issued them, sent anywhere else: an AWS secret key or session
# token is never sent in the clear, not even to AWS (requests are signed), and a GitHub token
# belongs to a GitHub host (github.com, or an Enterprise server named for it). Other names
# (``$CODEATLAS_API_KEY``) may go to their own service: those ask (G147).
_NEVER_SENT = frozenset({"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECRET_KEY"})
_GITHUB_VARS = frozenset({"GITHUB_TOKEN", "GH_TOKEN", "GITHUB_PAT", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"})


def _issued_by(name: str, host: str) -> bool:
    """Whether sending ``$name`` to ``host`` can be its ordinary use (True for names guard has no issuer for)."""
    upper = name.upper()
    if upper in _NEVER_SENT:
        return False
    if upper in _GITHUB_VARS:
        return "github" in host.lower() or host.lower().startswith("ghe.")
    return True


_CURL_TAKES = wordset(
    "-d --data --data-raw --data-binary --data-urlencode --data-ascii --json -F --form --form-string -T "
    "--upload-file -X --request -o --output -H --header -u --user -e --referer -A --user-agent -b --cookie -c "
    "--cookie-jar -K --config -x --proxy --url -w --write-out --resolve --connect-to -m --max-time --retry "
    "--cacert --cert -E --key --output-dir -D --dump-header --trace --trace-ascii -r --range -C --continue-at "
    "-z --time-cond -Y -y --limit-rate --interface --dns-servers -Q --quote --mail-from --mail-rcpt "
    "--connect-timeout --retry-delay --retry-max-time -U --proxy-user --oauth2-bearer --aws-sigv4 --variable "
    "--expand-url --unix-socket --abstract-unix-socket"
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
    _secrets_in(scan, cmd, sent + urls + opts.all("-H", "--header", "-u", "--user", "--oauth2-bearer"), urls)
    metadata_urls(scan, urls)
    if flow_out.bits & SECRET:
        scan.hit("G143", display(scan, " ".join(cmd.argv)))
    local = _is_local(urls)
    if method == "DELETE":
        scan.hit("G436", display(scan, " ".join(cmd.argv)))
    if egress:
        scan.hit("G148" if local else "G145", display(scan, " ".join(cmd.argv)))
    else:
        scan.hit("G148" if local else _fetch_rule(scan, urls), display(scan, " ".join(urls[:2])))
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


_WGET_TAKES = wordset(
    "-O --output-document -o --output-file -P --directory-prefix --post-data --post-file --method --body-data "
    "--body-file -i --input-file -e --execute -U --user-agent --header -t --tries -T --timeout -l --level -A -R "
    "--user --password --load-cookies --save-cookies -w --wait"
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
    metadata_urls(scan, urls)
    if flow.bits & SECRET:
        scan.hit("G143", display(scan, " ".join(cmd.argv)))
    local = _is_local(urls)
    if method == "DELETE":
        scan.hit("G436", display(scan, " ".join(cmd.argv)))
    if sent or flow.bits or method in _EGRESS_METHODS or opts.has("--post-file", "--body-file"):
        scan.hit("G148" if local else "G145", display(scan, " ".join(cmd.argv)))
    else:
        scan.hit("G148" if local else _fetch_rule(scan, urls), display(scan, " ".join(urls[:2])))
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
    local = _is_local(
        ["http://localhost" + u if u.startswith(":") else "http://" + u if "://" not in u else u for u in urls]
    )
    if method == "DELETE":
        scan.hit("G436", " ".join(cmd.argv))
    scan.hit(("G148" if local else "G145") if egress else ("G148" if local else "G146"), " ".join(cmd.argv))
    return Flow(0 if local else REMOTE)


def _lookup(cmd: Cmd, scan: Scan) -> Flow:
    """dig, ping, whois …: queries that read, unless the query itself carries a secret (DNS exfiltration)."""
    scan.tag("network")
    _secrets_in(scan, cmd, list(cmd.args))
    scan.hit("G180", cmd.name)
    return EMPTY


def _aria2c(cmd: Cmd, scan: Scan) -> Flow:
    urls = [a for a in cmd.args if "://" in a]
    scan.urls.extend(urls)
    scan.tag("network")
    scan.hit("G146", " ".join(urls[:2]) or "aria2c")
    return Flow(REMOTE)


_LOOKUPS = "dig nslookup host ping ping6 traceroute tracepath mtr whois arp netstat ss drill fping nmap"

HANDLERS: dict[str, Handler] = {
    "curl": _curl,
    "wget": _wget,
    "wget2": _wget,
    **dict.fromkeys(("aria2c", "axel", "iwr", "invoke-webrequest", "irm", "invoke-restmethod"), _aria2c),
    **dict.fromkeys(("http", "https", "xh", "xhs"), _httpie),
    **dict.fromkeys(_LOOKUPS.split(), _lookup),
}
