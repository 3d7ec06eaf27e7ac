"""Unpackers beside tar and unzip: cpio, pax, and the archive modes of jar and ar.

Each one that unpacks goes through :func:`guard.static.families.effects.unpack`, as ``tar -C`` and
``unzip -d`` do: into a folder that holds a host's hook settings (``cd ~/.claude && cpio -idm < x``,
``jar xf x.jar`` there) one member can be ``settings.json``, so that file is written (G156); elsewhere
the folder is created. An archive named on the command line (``cpio -i -F x.cpio``, ``pax -r -f x.tar``,
``jar xf x.jar``) has its members' names read when the call is decided, as tar's and unzip's are: one
that lands on a protected file blocks (G156), with pax's ``-s`` rewrites followed. cpio and pax keep a member's absolute name by default (``/home/u/.bashrc``
lands there, wherever they run), as ``tar -P`` does: G126 unless the option that strips it is given.
Listings (``cpio -t``, ``pax`` without ``-r``/``-w``, ``jar tf``, ``ar t``) only read the archive.

cpio and pax are the filesystem family's (``HANDLERS`` here is merged into :mod:`fs`'s); jar and ar
stay development tools, whose handler asks :func:`unpacked_into` where their extract mode unpacks.
"""

from __future__ import annotations

from guard.static.families import effects
from guard.static.families.base import Handler, parse_opts
from guard.static.reading.text import wordset
from guard.static.scan import EMPTY, Cmd, Flow, Scan

_CPIO_TAKES = wordset(
    "-D --directory -F --file -I -O -E --pattern-file -H --format -M --message -R --owner -C --io-size "
    "--block-size --rsh-command"
)


def _cpio(cmd: Cmd, scan: Scan) -> Flow | None:
    """``cpio -i`` (copy-in: unpacks into ``-D DIR`` or the working folder), ``cpio -p DEST`` (pass-through:
    the names on stdin copied into DEST), ``cpio -o`` (copy-out: writes the archive), ``cpio -it`` lists."""
    opts = parse_opts(cmd.args, _CPIO_TAKES)
    archive = opts.value("-F", "--file", "-I")
    if opts.has("-t", "--list"):
        if archive:
            effects.read(scan, archive, content=False)
        scan.hit("G180", cmd.name)
        return EMPTY
    if opts.has("-i", "--extract", "-p", "--pass-through"):
        passing = opts.has("-p", "--pass-through")  # (copies the names it reads: no archive's names)
        if not passing and not opts.has("--no-absolute-filenames"):
            scan.hit(
                "G126", f"{cmd.name} restores absolute names from the archive (--no-absolute-filenames strips them)"
            )
        into = opts.operands[0] if passing and opts.operands else opts.value("-D", "--directory") or "."
        if passing:
            effects.extract(scan, into)
        else:  # (an archive named by -F/-I is read for its members' names; from stdin, only the folder tells)
            source = archive or cmd.stdin.file or None  # (``cpio -i < x.cpio``: the file it is redirected from)
            effects.unpack(scan, into, source, absolute=not opts.has("--no-absolute-filenames"))
        if archive and not passing:
            effects.read(scan, archive)
        return EMPTY
    if opts.has("-o", "--create"):
        out = opts.value("-O", "-F", "--file")
        if out:
            effects.write(scan, out, cmd.stdin)
        else:
            scan.hit("G184", f"{cmd.name} to stdout")
        return EMPTY
    scan.hit("G182", cmd.name)  # no mode: cpio refuses, or a spelling guard does not read
    return None


_PAX_TAKES = wordset("-f -s -x -o -b -p -U -G -T -E -B")


def _pax(cmd: Cmd, scan: Scan) -> Flow:
    """``pax -r`` unpacks into the working folder, ``pax -rw SOURCES DEST`` copies into DEST, ``pax -w``
    writes an archive (``-f FILE`` or stdout); neither ``-r`` nor ``-w`` lists it."""
    opts = parse_opts(cmd.args, _PAX_TAKES)
    archive = opts.value("-f")
    reading, writing = opts.has("-r"), opts.has("-w")
    if reading:
        copying = writing and opts.operands  # ``pax -rw SOURCES DEST``: the sources' names, no archive's
        if not copying and not opts.value("-s"):
            scan.hit("G126", f"{cmd.name} restores absolute names from the archive (-s ',^/,,' strips them)")
        if copying:
            effects.extract(scan, opts.operands[-1])
        else:  # absolute names kept unless an ``-s /old/new/`` rewrites them (sed's ``s`` without the
            # ``s``; the first that matches is the last)
            renames = tuple("s" + e for e in opts.all("-s"))
            source = archive or cmd.stdin.file or None
            effects.unpack(scan, ".", source, absolute=True, renames=renames, first_only=True)
        if archive and not writing:
            effects.read(scan, archive)
        for source in opts.operands[:-1] if copying else ():
            effects.read(scan, source, content=False)
    elif writing:
        flow = effects.read_flows(scan, opts.operands)
        if archive:
            effects.write(scan, archive, flow)
        else:
            scan.hit("G184", f"{cmd.name} to stdout")
    else:
        if archive:
            effects.read(scan, archive, content=False)
        scan.hit("G180", cmd.name)
    return EMPTY


def unpacked_into(cmd: Cmd) -> str | None:
    """Where ``jar x`` / ``ar x`` unpack their members (None: not an extract): the working folder, or
    ``jar``'s ``-C DIR``/``--dir DIR`` and ``ar``'s ``--output DIR``. Their members' names are relative
    (jar strips ``/`` and ``..`` unless ``-P``; ar's are bare names)."""
    args = list(cmd.args)
    mode = args[0].lstrip("-") if args else ""
    if not (mode.startswith("x") or "--extract" in args):
        return None
    option = ("-C", "--dir") if cmd.name == "jar" else ("--output",)
    for i, arg in enumerate(args):
        key, eq, value = arg.partition("=")
        if key in option:
            return value if eq else (args[i + 1] if i + 1 < len(args) else ".")
    return "."


def jar_file(cmd: Cmd) -> str | None:
    """The archive ``jar x`` reads: ``--file=X``/``--file X``, or the word after a mode holding ``f``
    (``jar xf x.jar``, ``jar -xvf x.jar``); None when it reads stdin."""
    args = list(cmd.args)
    for i, arg in enumerate(args):
        key, eq, value = arg.partition("=")
        if key in ("--file", "-f"):
            return value if eq else (args[i + 1] if i + 1 < len(args) else None)
    mode = args[0].lstrip("-") if args else ""
    return args[1] if "f" in mode and not args[0].startswith("--") and len(args) > 1 else None


HANDLERS: dict[str, Handler] = {"cpio": _cpio, "bsdcpio": _cpio, "pax": _pax}
