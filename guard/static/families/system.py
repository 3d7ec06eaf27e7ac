"""System control: power, processes, services, firewall, kernel, accounts, scheduling, packages.

Turning the machine off, killing every process or starting a fork bomb blocks; stopping services,
flushing the firewall, changing accounts or kernel settings and scheduling jobs ask; restarting a
service or installing a package is an ordinary-but-contextual change; status queries flow.
"""

from __future__ import annotations

import re

from guard import lazyre
from guard.model import Risk
from guard.static.facts import ondisk
from guard.static.facts import paths as P
from guard.static.families import effects, selfguard
from guard.static.families.base import Handler, only_help, parse_opts
from guard.static.reading.text import wordset
from guard.static.scan import DECODED, EMPTY, REMOTE, Cmd, Flow, Scan, display


def _shown(scan: Scan, cmd: Cmd) -> str:
    return display(scan, " ".join(cmd.argv))


def _power(cmd: Cmd, scan: Scan) -> Flow:
    if only_help(cmd) or (cmd.name == "shutdown" and "-c" in cmd.args):
        scan.hit("G180" if only_help(cmd) else "G177", _shown(scan, cmd))
    elif cmd.name in ("init", "telinit") and not (set(cmd.args) & {"0", "6"}):
        scan.hit("G177", _shown(scan, cmd))
    else:
        scan.hit("G171", _shown(scan, cmd))
    return EMPTY


def _kill(cmd: Cmd, scan: Scan) -> Flow:
    args = list(cmd.args)
    if not args or args[0] in ("-l", "-L", "--list", "--help"):
        scan.hit("G180", "kill -l")
        return EMPTY
    targets, i, seen_signal = [], 0, False
    while i < len(args):
        a = args[i]
        if a == "--":
            targets.extend(args[i + 1 :])
            break
        if a in ("-s", "-n", "--signal") and not seen_signal:
            i, seen_signal = i + 2, True
            continue
        if a.startswith("-") and not seen_signal and not targets:
            seen_signal = True
        else:
            targets.append(a)
        i += 1
    if any(t in ("-1",) for t in targets):
        scan.hit("G172", _shown(scan, cmd))
    elif not selfguard.kills_daemon(scan, cmd):
        scan.hit("G178", _shown(scan, cmd))
    return EMPTY


def _pkill(cmd: Cmd, scan: Scan) -> Flow:
    patterns = [a for a in cmd.args if not a.startswith("-")]
    # ``pkill -u $USER``, ``killall -u me``: a user and no name is every process of that user
    by_user = [i for i, a in enumerate(cmd.args) if a in ("-u", "-U", "--uid", "--euid", "--user")]
    named = [a for i, a in enumerate(cmd.args) if not a.startswith("-") and i - 1 not in by_user]
    if cmd.name == "killall5" or any(p in (".", ".*", "", "^") for p in patterns) or (by_user and not named):
        scan.hit("G172", _shown(scan, cmd))
    elif not selfguard.kills_daemon(scan, cmd):
        scan.hit("G178", _shown(scan, cmd))
    return EMPTY


_SVC_STOP = frozenset({"stop", "disable", "mask", "kill", "isolate"})
_SVC_POWER = wordset("poweroff reboot halt kexec suspend hibernate hybrid-sleep emergency rescue soft-reboot")
_SVC_READ = wordset(
    "status is-active is-enabled is-failed list-units list-unit-files list-timers list-sockets list-jobs "
    "list-dependencies show cat help get-default --version --failed show-environment list-machines"
)


def _systemctl(cmd: Cmd, scan: Scan) -> Flow:
    words = [a for a in cmd.args if not a.startswith("-")]
    verb = words[0] if words else "list-units"
    user = "--user" in cmd.args
    if verb in _SVC_POWER:
        scan.hit("G171", _shown(scan, cmd))
    elif verb in _SVC_STOP:
        scan.hit("G177" if user else "G174", _shown(scan, cmd))
    elif verb in _SVC_READ or not words:
        scan.hit("G180", _shown(scan, cmd))
    elif verb == "enable" and not user:
        scan.hit("G153", _shown(scan, cmd))
    else:
        scan.hit("G177", _shown(scan, cmd))
    return EMPTY


def _service(cmd: Cmd, scan: Scan) -> Flow:
    verb = cmd.args[1] if len(cmd.args) > 1 else (cmd.args[0] if cmd.args else "--status-all")
    rule = "G174" if verb == "stop" else "G180" if verb in ("status", "--status-all") else "G177"
    scan.hit(rule, _shown(scan, cmd))
    return EMPTY


def _launchctl(cmd: Cmd, scan: Scan) -> Flow:
    verb = cmd.args[0] if cmd.args else "list"
    rule = (
        "G174"
        if verb in ("unload", "remove", "bootout", "disable", "kill", "stop")
        else "G153"
        if verb in ("load", "bootstrap", "submit")
        else "G180"
        if verb in ("list", "print", "help", "version")
        else "G177"
    )
    scan.hit(rule, _shown(scan, cmd))
    if verb == "submit" and "--" in cmd.args:  # ``launchctl submit -l x -- cmd``: cmd runs (and keeps running)
        scan.engine.run(cmd.args[cmd.args.index("--") + 1 :])
    return EMPTY


def _firewall(cmd: Cmd, scan: Scan) -> Flow:
    args = cmd.args
    joined = " ".join(args)
    if cmd.name in ("iptables", "ip6tables", "iptables-legacy", "iptables-nft"):
        opts = parse_opts(
            args,
            wordset("-t --table -A -I -D -R -N -E -j -p -s -d -i -o --dport --sport -m"),
        )
        if opts.has("-F", "--flush", "-X", "--delete-chain") or re.search(r"(-P|--policy)\s+\S+\s+ACCEPT", joined):
            rule = "G173"
        elif opts.has("-L", "--list", "-S", "--list-rules", "-C", "--check") and not opts.has("-A", "-I", "-D"):
            rule = "G180"
        else:
            rule = "G177"
    elif cmd.name == "nft":
        rule = (
            "G173"
            if re.search(r"\b(flush|delete)\s+(ruleset|table|chain)", joined)
            else ("G180" if re.search(r"\blist\b", joined) else "G177")
        )
    elif cmd.name == "ufw":
        rule = "G173" if set(args) & {"disable", "reset"} else "G180" if set(args) & {"status", "show"} else "G177"
    elif cmd.name == "pfctl":
        rule = (
            "G173" if "-d" in args or re.search(r"-F\s*(all|rules)", joined) else "G180" if "-s" in joined else "G177"
        )
    else:
        rule = (
            "G180"
            if re.search(r"--(list|get|state|query)", joined)
            else ("G173" if re.search(r"--panic-off|--set-default-zone=trusted|--remove-", joined) else "G177")
        )
    scan.hit(rule, _shown(scan, cmd))
    return EMPTY


def _kernel(cmd: Cmd, scan: Scan) -> Flow:
    name, args = cmd.name, cmd.args
    if name == "sysctl":
        rule = "G176" if "-w" in args or any("=" in a for a in args) or "-p" in args else "G180"
    elif name in ("getenforce", "lsmod", "modinfo"):
        rule = "G180"
    elif name in ("mount", "umount", "swapoff", "swapon"):
        rule = (
            "G180"
            if not args or args in (("-l",), ("--show",), ("-s",))
            else ("G176" if ("-a" in args and name == "umount") or re.search(r"remount", " ".join(args)) else "G177")
        )
        if name == "mount":
            _mount(args, scan)
    elif name == "modprobe" and ("-n" in args or "--dry-run" in args or "-c" in args):
        rule = "G180"
    else:
        rule = "G176"  # setenforce, modprobe, rmmod, insmod, kexec …
    scan.hit(rule, _shown(scan, cmd))
    return EMPTY


_MOUNT_TAKES = wordset("-o --options -t --types -L --label -U --uuid -O --test-opts -N --namespace")


def _mount(args: tuple[str, ...], scan: Scan) -> None:
    """``mount --bind ~/.guard w`` shows guard's files under another name; ``mount … ~/.guard`` hides them."""
    opts = parse_opts(args, _MOUNT_TAKES)
    options = ",".join(opts.all("-o", "--options")).split(",")
    bind = opts.has("--bind", "-B", "--rbind", "-R") or "bind" in options or "rbind" in options
    operands = list(opts.operands)
    if len(operands) < 2:
        return
    source, point = operands[-2], operands[-1]
    if bind:
        effects.link(scan, source, point, symbolic=False)
    place = scan.place(point)
    scan.target(ondisk.WRITE, point)
    if place.tier == P.PROTECTED:
        scan.hit("G156", f"mount over {place.path}")


def _accounts(cmd: Cmd, scan: Scan) -> Flow:
    if only_help(cmd) or (cmd.name == "passwd" and set(cmd.args) & {"-S", "--status"}):
        scan.hit("G180", _shown(scan, cmd))
    elif _opens_an_account(cmd):
        scan.hit("G442", _shown(scan, cmd))
    else:
        scan.hit("G176", _shown(scan, cmd))
    return EMPTY


def _opens_an_account(cmd: Cmd) -> bool:
    """``passwd -d root``, ``usermod -p '' bob``: an account left with no password, open to anyone."""
    args = cmd.args
    if cmd.name == "passwd":
        return any(a in ("-d", "--delete") or (a.startswith("-") and not a.startswith("--") and "d" in a) for a in args)
    if cmd.name == "usermod":
        for i, a in enumerate(args):
            if a in ("-p", "--password") and i + 1 < len(args) and args[i + 1] in ("", "''", '""'):
                return True
            if a.startswith("--password=") and a.split("=", 1)[1] in ("", "''", '""'):
                return True
    return False


_CRON_FIELDS = lazyre.compile(r"^[ \t]*(@\w+|(?:\S+[ \t]+){5})", re.M)  # blanks, not newlines: linear on empty lines


def scheduled_text_rule(scan: Scan, text: str | None, cron: bool, bits: int = 0) -> str:
    """G152 when what gets scheduled would itself be blocked (or was downloaded), else G153."""
    if bits & (REMOTE | DECODED):
        return "G152"
    if text:
        body = _CRON_FIELDS.sub("", text) if cron else text
        if scan.subscan(body) >= Risk.CRITICAL:
            return "G152"
    return "G153"


def _crontab(cmd: Cmd, scan: Scan) -> Flow:
    opts = parse_opts(cmd.args, wordset("-u"))
    if opts.has("-l"):
        scan.hit("G180", "crontab -l")
        return EMPTY
    scan.tag("persistence")
    if opts.has("-r", "-e"):
        scan.hit("G153", _shown(scan, cmd))
        return EMPTY
    source = opts.operands[0] if opts.operands else "-"
    if source == "-":
        content = cmd.stdin
    else:
        effects.read(scan, source)
        content = scan.written.get(scan.place(source).path, EMPTY)
    scan.hit(scheduled_text_rule(scan, content.text, True, content.bits), _shown(scan, cmd))
    return EMPTY


def _at(cmd: Cmd, scan: Scan) -> Flow:
    if set(cmd.args) & {"-l", "-c"} or cmd.name == "atq":
        scan.hit("G180", _shown(scan, cmd))
        return EMPTY
    scan.tag("persistence")
    scan.hit(scheduled_text_rule(scan, cmd.stdin.text, False, cmd.stdin.bits), _shown(scan, cmd))
    return EMPTY


def _network_config(cmd: Cmd, scan: Scan) -> Flow:
    words = [a for a in cmd.args if not a.startswith("-")]
    change = {
        "add",
        "del",
        "delete",
        "set",
        "flush",
        "change",
        "replace",
        "down",
        "up",
        "off",
        "on",
        "modify",
        "set-hostname",
        "set-time",
        "set-timezone",
        "set-ntp",
        "connect",
        "disconnect",
        "reload",
    }
    if (cmd.name == "ifconfig" and len(words) > 1) or set(words) & change:
        scan.hit("G177", _shown(scan, cmd))
    else:
        scan.hit("G180", _shown(scan, cmd))
    return EMPTY


_ESSENTIAL = lazyre.compile(
    r"^(libc6|libc-bin|glibc|systemd|sudo|openssh-server|openssh|bash|coreutils|dpkg|apt|rpm|yum|"
    r"dnf|kernel\S*|linux-image\S*|grub\S*|python3|perl-base|util-linux|login|passwd|base-files|"
    r"init|e2fsprogs|mount|libselinux\S*)$"
)
_PKG_READ = wordset(
    "list show search info policy depends rdepends madison provides whatprovides deps uses leaves doctor config "
    "outdated home cat desc contains check --version -v help query files history repolist list-installed "
    "showpkg -l -L -s --get-selections -q -qa -qi -ql -Q -Qi -Ql -Ss -Si -Qs --list search-all"
)
_PKG_REMOVE = wordset("remove purge erase uninstall autoremove -r -P --remove --purge -e -R -Rs -Rns -Rdd del rm")


def packages(cmd: Cmd, scan: Scan) -> Flow:
    """System package managers: changes ask; removing what the system needs blocks nothing but asks loudly."""
    words = [a for a in cmd.args if a not in ("-y", "--yes", "-q", "--quiet", "--assume-yes", "--noconfirm")]
    shown = _shown(scan, cmd)
    if (
        only_help(cmd)
        or not words
        or words[0] in _PKG_READ
        or (words[0].startswith("-Q") and cmd.name == "pacman")
        or (cmd.name == "brew" and words[0] == "services" and words[1:2] in ([], ["list"], ["info"]))
    ):
        scan.hit("G180", shown)
        return EMPTY
    if set(words) & _PKG_REMOVE and any(_ESSENTIAL.match(w) for w in words):
        scan.hit("G176", shown)
    else:
        scan.hit("G179", shown)
    return EMPTY


HANDLERS: dict[str, Handler] = {
    **dict.fromkeys(("shutdown", "reboot", "halt", "poweroff", "init", "telinit"), _power),
    "kill": _kill,
    **dict.fromkeys(("pkill", "killall", "killall5", "xkill", "skill", "slay"), _pkill),
    "systemctl": _systemctl,
    "service": _service,
    "launchctl": _launchctl,
    **dict.fromkeys(wordset("iptables ip6tables iptables-legacy iptables-nft nft ufw pfctl firewall-cmd"), _firewall),
    **dict.fromkeys(
        wordset(
            "sysctl setenforce getenforce modprobe rmmod insmod modinfo mount umount swapoff swapon kexec "
            "grub-install update-grub efibootmgr"
        ),
        _kernel,
    ),
    **dict.fromkeys(
        wordset(
            "passwd chpasswd usermod userdel useradd adduser deluser groupadd groupdel groupmod gpasswd vipw "
            "vigr visudo chsh chfn chage pwck newusers dscl sysadminctl"
        ),
        _accounts,
    ),
    "crontab": _crontab,
    "at": _at,
    "batch": _at,
    "atq": _at,
    **dict.fromkeys(
        wordset("ip ifconfig route nmcli hostnamectl timedatectl networksetup scutil resolvectl"),
        _network_config,
    ),
}
