"""Commands that run their arguments as another command, and how to find that command.

Each wrapper is a row: the options that take a value (so ``sudo -u root rm`` unwraps to ``rm``,
not ``root``), how many fixed operands come before the command (``timeout 5``, ``flock FILE``),
options that mean "no command follows" (``sudo -l``, ``command -v``), and options whose value is
itself a shell script (``su -c '…'``, ``flock -c``). ``watch`` and ``script`` join the rest into a
script, as they hand it to ``sh -c``.
"""

from __future__ import annotations

from guard.namedtuple import NamedTuple
from guard.static.reading.text import wordset


class Wrapper(NamedTuple):  # (a named tuple: a table of rows, read only)
    takes_value: frozenset[str] = frozenset()
    operands: int = 0  # fixed operands before the command
    no_command: frozenset[str] = frozenset()  # with these the wrapper only queries
    script_option: frozenset[str] = frozenset()  # the option's value is a shell script
    privileged: bool = False
    joins: bool = False  # the command words are joined into one shell script
    assignments: bool = False  # NAME=VALUE words before the command (env)


def _w(
    takes: str = "",
    operands: int = 0,
    no_command: str = "",
    script: str = "",
    privileged: bool = False,
    joins: bool = False,
    assignments: bool = False,
) -> Wrapper:
    return Wrapper(
        frozenset(takes.split()),
        operands,
        frozenset(no_command.split()),
        frozenset(script.split()),
        privileged,
        joins,
        assignments,
    )


WRAPPERS: dict[str, Wrapper] = {
    "sudo": _w(
        "-u -g -h -p -C -D -r -t -T -U -R --user --group --host --prompt --close-from --chdir --role --type "
        "--command-timeout --other-user --chroot",
        no_command="-l --list -v --validate -k -K -V --version --reset-timestamp --remove-timestamp",
        privileged=True,
    ),
    "doas": _w("-u -C", no_command="-C", privileged=True),
    "pkexec": _w("--user", privileged=True),
    "run0": _w("--user -u --chdir --setenv --unit --property --description", privileged=True),
    "env": _w("-u --unset -C --chdir -S --split-string -P -a --argv0", no_command="--help --version", assignments=True),
    "command": _w(no_command="-v -V"),
    "builtin": _w(),
    "exec": _w("-a"),
    "nice": _w("-n --adjustment"),
    "ionice": _w("-c -n --class --classdata", no_command="-p --pid -P --pgid -u --uid"),
    "nohup": _w(),
    "time": _w("-f -o --format --output"),
    "timeout": _w("-s -k --signal --kill-after", operands=1),
    "gtimeout": _w("-s -k --signal --kill-after", operands=1),
    "watch": _w("-n --interval -d --differences -q --equexit", joins=True),
    "stdbuf": _w("-i -o -e --input --output --error"),
    "chrt": _w(operands=1, no_command="-p --pid -m --max"),
    "taskset": _w(operands=1, no_command="-p --pid"),
    "setsid": _w(),
    "unbuffer": _w(),
    "caffeinate": _w("-t -w"),
    "flock": _w("-w -E --timeout --conflict-exit-code", operands=1, script="-c --command"),
    "chroot": _w("--userspec --groups", operands=1, privileged=True),
    "su": _w(
        "-s --shell -g --group -G --supp-group -w --whitelist-environment",
        script="-c --command --session-command",
        privileged=True,
    ),
    "runuser": _w("-u --user -s --shell -g --group -G --supp-group -w", script="-c --command", privileged=True),
    "sg": _w(operands=1, script="-c"),
    "systemd-run": _w(
        "-u --unit -p --property -E --setenv --uid --gid --slice -M --machine -H --host "
        "--working-directory --description -D",
        privileged=True,
    ),
    "xvfb-run": _w("-n --server-num -s --server-args -f --auth-file -e --error-file -w --wait -p --xauth-protocol"),
    "dbus-run-session": _w("--config-file --dbus-daemon"),
    "strace": _w("-o -e -s -u -E -a -b -I -O -P -S -X", no_command="-p"),
    "ltrace": _w("-o -e -s -u -a -l -n", no_command="-p"),
    "valgrind": _w(),
    "nsenter": _w("-t --target -S --setuid -G --setgid --wd -r --root -w", privileged=True),
    "unshare": _w("--propagation --setgroups --map-user --map-group -S --setuid -G --setgid -R --root -w --wd"),
    "firejail": _w(),
    "bwrap": _w(
        "--chdir --uid --gid --hostname --tmpfs --proc --dev --dir --remount-ro --unsetenv --lock-file --sync-fd "
        "--info-fd --seccomp --exec-label --file-label --argv0 --perms --size --userns --pidns --cap-add --cap-drop "
        "--block-fd --json-status-fd --userns-block-fd --add-seccomp-fd --args --overlay-src --tmp-overlay"
    ),
    "proot": _w("-r -b -m -q -w -k -i -R -S --rootfs --bind --mount --qemu --cwd --kernel-release"),
    "coproc": _w(),
    "proxychains": _w("-f"),
    "proxychains4": _w("-f"),
    "torsocks": _w("-u -p -a -P"),
    "numactl": _w("-N -m -C -i -p --cpunodebind --membind --physcpubind --interleave --preferred"),
    "rlwrap": _w("-f -H -p -s"),
    "catchsegv": _w(),
    "entr": _w(),
    "script": _w(operands=0, script="-c --command", no_command=""),
    "busybox": _w(),
    "toybox": _w(),
    "ssh-agent": _w("-a -E -t -P", no_command="-k -s -c -l -D -d"),
    "direnv": _w(),
    "dotenv": _w("-e -f -c -v"),
    "faketime": _w(operands=1),
    "xcrun": _w("--sdk --toolchain", no_command="--find -f --show-sdk-path --show-sdk-version -h --help"),
    "arch": _w(),
    "op": _w(),
    "doppler": _w(),
    "aws-vault": _w(),
}
# Options that take two values (bwrap's mounts and files).
_TWO_VALUES = wordset(
    "--bind --ro-bind --dev-bind --bind-try --ro-bind-try --dev-bind-try --symlink --setenv --file --bind-data "
    "--ro-bind-data --chmod"
)
# Wrappers that only wrap after a subcommand: ``direnv exec DIR cmd``, ``op run -- cmd``.
SUBCOMMAND = {"direnv": ("exec", 1), "op": ("run", 0), "doppler": ("run", 0), "aws-vault": ("exec", 1), "arch": ("", 0)}


class Unwrapped(NamedTuple):
    """The command a wrapper runs: ``argv``, or a ``script`` for a shell; neither when it only queries."""

    argv: tuple[str, ...] = ()
    script: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    unset: tuple[str, ...] = ()  # ``env -u NAME``
    clean: bool = False  # ``env -i``: none of the caller's variables, guard's workspace among them
    chdir: str | None = None
    privileged: bool = False
    query: bool = False
    not_a_wrapper: bool = False  # ``op read …``: the name wraps only with its subcommand


def unwrap(name: str, argv: tuple[str, ...]) -> Unwrapped:
    """``unwrap("sudo", ("sudo", "-u", "root", "rm", "-rf", "/")).argv == ("rm", "-rf", "/")``."""
    w = WRAPPERS[name]
    i, n = 1, len(argv)
    if name in SUBCOMMAND:
        sub, operands = SUBCOMMAND[name]
        if sub:
            if n < 2 or argv[1] != sub:
                return Unwrapped(query=True, not_a_wrapper=True)
            i = 2
        w = w._replace(operands=operands)
    env: list[tuple[str, str]] = []
    unset: list[str] = []
    clean = False
    chdir: str | None = None
    while i < n:
        a = argv[i]
        if a == "--":
            i += 1
            break
        if len(a) < 2 or a[0] != "-":
            if w.assignments and "=" in a and a.split("=", 1)[0].replace("_", "a").isalnum():
                env.append(tuple(a.split("=", 1)))  # type: ignore[arg-type]
                i += 1
                continue
            break
        if name == "nice" and a[1:].isdigit():
            i += 1  # ``nice -10 cmd``: the niceness, not an option cluster
            continue
        if a.startswith("--"):
            key, eq, val = a.partition("=")
            value = val if eq else (argv[i + 1] if i + 1 < n else "")
            if key in w.no_command:
                return Unwrapped(query=True, privileged=w.privileged)
            if key in w.script_option:
                return Unwrapped(script=value, privileged=w.privileged)
            if name == "env" and key == "--split-string":
                return _split_string(value, argv[i + (1 if eq else 2) :], env)
            if name == "env" and key == "--chdir":
                chdir = value
            if name == "env" and key in ("--unset", "--ignore-environment"):
                clean = clean or key == "--ignore-environment"
                unset.extend([value] if key == "--unset" else [])
            if name == "bwrap" and key in _TWO_VALUES:  # ``bwrap --bind SRC DEST cmd``
                i += 3
                continue
            i += 1 if eq or key not in w.takes_value else 2
            continue
        step = 1
        for j in range(1, len(a)):
            flag, glued = "-" + a[j], a[j + 1 :]
            value = glued or (argv[i + 1] if i + 1 < n else "")
            if flag in w.no_command:
                return Unwrapped(query=True, privileged=w.privileged)
            if flag in w.script_option:
                return Unwrapped(script=value, privileged=w.privileged)
            if name == "env" and flag == "-S":
                return _split_string(value, argv[i + (1 if glued else 2) :], env)
            clean = clean or (name == "env" and flag == "-i")
            if flag in w.takes_value:
                if name == "env" and flag == "-C":
                    chdir = value
                if name == "env" and flag == "-u":
                    unset.append(value)
                step = 1 if glued else 2
                break
        i += step
    i += w.operands
    for j in range(i, n if w.script_option else i):  # ``flock FILE -c CMD``, ``su root -c CMD``
        if argv[j] in w.script_option:
            return Unwrapped(script=argv[j + 1] if j + 1 < n else "", privileged=w.privileged)
    rest = tuple(argv[i:])
    if name in ("sudo", "doas", "su", "runuser", "sg") and not rest:
        return Unwrapped(query=True, privileged=w.privileged)  # an interactive root shell: judged by the caller
    if w.joins and rest:
        return Unwrapped(script=" ".join(rest), privileged=w.privileged)
    if name in ("su", "sg"):
        return Unwrapped(query=True, privileged=True)  # without -c: an interactive shell as someone else
    return Unwrapped(
        argv=rest,
        env=tuple(env),
        unset=tuple(unset),
        clean=clean,
        chdir=chdir,
        privileged=w.privileged,
        query=not rest,
    )


def _split_string(value: str, rest: tuple[str, ...], env: list[tuple[str, str]]) -> Unwrapped:
    """``env -S 'cmd args'``: judged as a script (conservatively: ``~`` and ``$HOME`` as the shell reads them)."""
    import shlex  # (loaded for ``env -S`` only)

    return Unwrapped(script=" ".join([value, *(shlex.quote(r) for r in rest)]), env=tuple(env))
