"""What every family module shares: the handler shape and a small getopt for flag-aware rules.

A handler is ``(cmd, scan) -> Flow | None``: it names rule ids on the scan (at least one: the
command's level) and returns what the command writes to stdout (``None``: unknown output).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from guard.namedtuple import NamedTuple
from guard.static.reading.text import wordset
from guard.static.scan import EMPTY, Cmd, Flow, Scan

Handler = Callable[[Cmd, Scan], Flow | None]


class Opts(NamedTuple):
    """Parsed command line: ``flags`` as ``-x``/``--long``, option ``values``, and ``operands``."""

    flags: frozenset[str]
    values: dict[str, list[str]]
    operands: tuple[str, ...]

    def has(self, *names: str) -> bool:
        return not self.flags.isdisjoint(names)

    def value(self, *names: str) -> str | None:
        for n in names:
            if n in self.values:
                return self.values[n][-1]
        return None

    def all(self, *names: str) -> list[str]:
        return [v for n in names for v in self.values.get(n, ())]


def parse_opts(
    args: Iterable[str], takes: frozenset[str] | set[str] = frozenset(), stop_at_operand: bool = False
) -> Opts:
    """``parse_opts(["-rf", "--", "-x"]).operands == ("-x",)``; ``takes`` lists options with a value."""
    flags: set[str] = set()
    values: dict[str, list[str]] = {}
    operands: list[str] = []
    it = iter(args)
    for a in it:
        if a == "--":
            operands.extend(it)
            break
        if len(a) > 1 and a[0] == "-" and not (stop_at_operand and operands):
            if a in takes and not a.startswith("--") and len(a) > 2:  # ``-in file`` (openssl, find style)
                flags.add(a)
                values.setdefault(a, []).append(next(it, ""))
                continue
            if a.startswith("--"):
                key, eq, val = a.partition("=")
                flags.add(key)
                if eq:
                    values.setdefault(key, []).append(val)
                elif key in takes:
                    values.setdefault(key, []).append(next(it, ""))
                continue
            for j in range(1, len(a)):
                flag = "-" + a[j]
                flags.add(flag)
                if flag in takes:
                    rest = a[j + 1 :]
                    values.setdefault(flag, []).append(rest if rest else next(it, ""))
                    break
            continue
        operands.append(a)
    return Opts(frozenset(flags), values, tuple(operands))


def level(scan: Scan, rule_id: str, cmd: Cmd) -> None:
    scan.hit(rule_id, " ".join(cmd.argv))


def read_only(cmd: Cmd, scan: Scan) -> Flow:
    scan.hit("G180", cmd.name)
    return EMPTY


def table(names: str, handler: Handler) -> dict[str, Handler]:
    return dict.fromkeys(names.split(), handler)


HELP_FLAGS = wordset("--help -h --version -version -V -v version help --usage")


def only_help(cmd: Cmd) -> bool:
    """``tool --help`` / ``tool --version``: asking a known program about itself."""
    return len(cmd.argv) == 2 and cmd.argv[1] in HELP_FLAGS
