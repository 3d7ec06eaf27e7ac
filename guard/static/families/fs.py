"""Filesystem destruction and ordinary file changes: rm, shred, truncate, dd, mkfs, mv, cp, ln, tee, tar …

Every target goes through :mod:`guard.static.families.effects`, so severity comes from *where* the path
points (root, home, system, credentials, project, temp), not from how the command was spelled.
Disk tools are judged on their device operands; their listing forms are read-only.
"""

from __future__ import annotations

import re

from guard import lazyre
from guard.static.facts import ondisk
from guard.static.facts import paths as P
from guard.static.families import effects, unpack
from guard.static.families.base import Handler, Opts, parse_opts, table
from guard.static.families.perms import setuid
from guard.static.reading import filters
from guard.static.reading.text import DYN_OPEN, wordset
from guard.static.scan import EMPTY, ENDLESS, PACKED, Cmd, Flow, Scan, display

_RM_TAKES = frozenset({"--interactive"})


def _rm(cmd: Cmd, scan: Scan) -> Flow:
    opts = parse_opts(cmd.args, _RM_TAKES)
    recursive = opts.has("-r", "-R", "--recursive")
    if not opts.operands:
        scan.hit("G184", "rm without operands")
    shown = display(scan, f"rm {' '.join(cmd.args)}") if opts.operands else ""  # once, not per operand
    for target in opts.operands:
        effects.delete(scan, target, recursive, shown)
    return EMPTY


def _trash(cmd: Cmd, scan: Scan) -> Flow:
    """``trash ~`` (trash-cli, macOS trash, ``gio trash``): what goes to the trash is gone from its place."""
    args = cmd.args[1:] if cmd.name == "gio" else cmd.args
    if cmd.name == "gio" and cmd.args[:1] != ("trash",):
        scan.hit("G182", " ".join(cmd.argv))
        return EMPTY
    operands = [a for a in args if not a.startswith("-")]
    shown = display(scan, " ".join(cmd.argv)) if operands else ""
    for target in operands:
        effects.delete(scan, target, True, shown)
    if not operands:
        scan.hit("G184", cmd.name)
    return EMPTY


def _rmdir(cmd: Cmd, scan: Scan) -> Flow:
    for target in parse_opts(cmd.args).operands:
        place = scan.place(target)
        scan.effect("write", place.path)
        scan.target(ondisk.DELETE, target)
        scan.hit("G156" if place.tier == P.PROTECTED else "G184", place.path)  # only empty directories go
    if not cmd.args:
        scan.hit("G184", "rmdir")
    return EMPTY


def _unlink(cmd: Cmd, scan: Scan) -> Flow:
    for target in parse_opts(cmd.args).operands:
        effects.delete(scan, target, False)
    if not cmd.args:
        scan.hit("G184", "unlink")
    return EMPTY


def _shred(cmd: Cmd, scan: Scan) -> Flow:
    opts = parse_opts(cmd.args, wordset("-n -s --iterations --size --random-source"))
    recursive = cmd.name != "shred" and opts.has("-r", "-R", "--recursive")  # ``srm -r``, ``wipe -r``
    for target in opts.operands:
        place = scan.place(target)
        if place.tier == P.DEVICE:
            scan.hit("G120", place.path)
        elif place.tier == P.CREDENTIAL:  # a key wiped on purpose: no backup, no undelete brings it back
            scan.tag("delete")
            scan.hit("G441", f"{cmd.name} {place.path}")
        elif place.secret:  # ``shred secrets/prod.key``: a project's secret file, overwritten in place
            scan.tag("delete")
            scan.hit("G124", f"{cmd.name} {place.path}")
        else:
            effects.delete(scan, target, recursive, f"{cmd.name} {place.path}")
    if not opts.operands:
        scan.hit("G184", "shred")
    return EMPTY


def _truncate(cmd: Cmd, scan: Scan) -> Flow:
    opts = parse_opts(cmd.args, wordset("-s --size -r --reference"))
    big = _fills_disk(opts.value("-s", "--size"))
    for target in opts.operands:
        place = effects.write(scan, target, EMPTY, "write")
        if big:
            scan.hit("G009", f"truncate -s {opts.value('-s', '--size')} {target}")
        if place.tier in (P.PROJECT, P.PROJECT_ROOT) and effects.mass_pattern(target):
            scan.hit("G432", f"truncate {place.path}")  # ``truncate -s 0 src/*.py`` empties them all
    if not opts.operands:
        scan.hit("G184", "truncate")
    return EMPTY


def _dd(cmd: Cmd, scan: Scan) -> Flow:
    params = dict(a.split("=", 1) for a in cmd.args if "=" in a)
    flow = cmd.stdin
    if "if" in params:
        flow = effects.read_flow(scan, params["if"])
    if flow.bits & ENDLESS and "count" in params:  # ``bs=32 count=1`` of /dev/urandom is a key, not a fill
        block, count = filters.size_bytes(params.get("bs", "512")), filters.size_bytes(params["count"])
        if block is not None and count is not None and block * count < filters.FILL_BYTES:
            flow = Flow(flow.bits & ~ENDLESS, flow.text, flow.paths)
    if "of" in params:
        effects.write(scan, params["of"], flow)
        return EMPTY
    scan.hit("G184", "dd to stdout")
    return flow


def _fallocate(cmd: Cmd, scan: Scan) -> Flow:
    opts = parse_opts(cmd.args, wordset("-l --length -o --offset"))
    length = opts.value("-l", "--length")
    for target in opts.operands:
        effects.write(scan, target, EMPTY, "write")
        if _fills_disk(length):
            scan.hit("G009", f"fallocate -l {length} {target}")
    if not opts.operands:
        scan.hit("G184", "fallocate")
    return EMPTY


def _fills_disk(size: str | None) -> bool:
    value = filters.size_bytes(size) if size else None
    return value is not None and value >= filters.FILL_BYTES


# Disk tools: (query flags/subcommands that only read) -> everything else writes the device.
_DISK_QUERIES = {
    "fdisk": {"-l", "--list", "-s", "--getsz"},
    "sfdisk": {"-l", "--list", "-d", "--dump", "-s", "--show-size", "-V", "--verify", "-J", "--json"},
    "parted": {"-l", "--list", "print", "p"},
    "gdisk": {"-l"},
    "sgdisk": {"-p", "--print", "-v", "--verify", "-i", "--info"},
    "wipefs": {"-n", "--no-act"},
    "cfdisk": set(),
    "blkdiscard": set(),
    "badblocks": set(),
    "hdparm": {"-I", "-i", "-t", "-T"},
    "cryptsetup": {"status", "luksDump", "isLuks", "open", "luksOpen", "close", "luksClose"},
    "zpool": {"status", "list", "iostat", "get", "history"},
    "zfs": {"list", "get", "snapshot"},
    "lvremove": set(),
    "vgremove": set(),
    "pvremove": set(),
    "lvreduce": set(),
    "nvme": {"list", "id-ctrl", "smart-log"},
    "diskutil": {"list", "info", "activity"},
    "mkswap": set(),
    "e2fsck": {"-n"},
    "fsck": {"-n", "-N"},
    "tune2fs": {"-l"},
    "resize2fs": {"-P"},
    "debugfs": set(),
}
_DESTRUCTIVE_SUB = {
    "wipefs": ("-a", "--all", "-o", "--offset"),
    "badblocks": ("-w",),
    "hdparm": ("--security-erase", "--security-erase-enhanced", "--trim-sector-ranges", "--dco-restore"),
    "cryptsetup": ("luksFormat", "erase", "luksErase", "reencrypt", "luksKillSlot"),
    "zpool": ("destroy", "labelclear", "create"),
    "zfs": ("destroy", "rollback"),
    "nvme": ("format", "sanitize"),
    "diskutil": ("eraseDisk", "eraseVolume", "partitionDisk", "zeroDisk", "secureErase", "reformat", "deleteContainer"),
}
_DEVICE_NAME = lazyre.compile(r"^(/dev/|disk\d|sd[a-z]|nvme\d|hd[a-z]|vd[a-z]|xvd[a-z]|mmcblk\d|md\d)")


def _disk(cmd: Cmd, scan: Scan) -> Flow:
    name, args = cmd.name, cmd.args
    base = "mkfs" if name.startswith(("mkfs", "mke2fs", "mkdosfs", "mkntfs", "newfs", "mkswap")) else name
    queries = _DISK_QUERIES.get(base, set())
    if args and (set(args) & queries) and not set(args) & set(_DESTRUCTIVE_SUB.get(base, ())):
        scan.hit("G180", " ".join(cmd.argv))
        return EMPTY
    if base in ("wipefs",) and not set(args) & set(_DESTRUCTIVE_SUB["wipefs"]):
        scan.hit("G180", " ".join(cmd.argv))  # without -a wipefs only lists signatures
        return EMPTY
    devices = [a for a in args if not a.startswith("-") and (_DEVICE_NAME.match(a) or scan.place(a).tier == P.DEVICE)]
    destructive = base in _DESTRUCTIVE_SUB and set(args) & set(_DESTRUCTIVE_SUB[base])
    if devices or (destructive and base in ("zpool", "zfs", "diskutil", "cryptsetup", "nvme")):
        scan.hit("G121", display(scan, " ".join(cmd.argv)))
    else:
        scan.hit("G177", display(scan, " ".join(cmd.argv)))
    scan.tag("write")
    return EMPTY


def _sources_dest(cmd: Cmd, takes: frozenset[str]) -> tuple[list[str], str | None, bool]:
    opts = parse_opts(cmd.args, takes | {"-t", "--target-directory"})
    operands = list(opts.operands)
    dest = opts.value("-t", "--target-directory")
    if dest is None and len(operands) >= 2:
        dest = operands.pop()
    elif dest is None and cmd.name == "ln" and operands:
        dest = "./" + operands[0].rstrip("/").rsplit("/", 1)[-1]
    return operands, dest, opts.has("-r", "-R", "-a", "--recursive", "--archive")


def _name(src: str) -> str:
    """The last component of a source (``a/b/`` → ``b``): what it is called inside a destination folder."""
    return src.rstrip("/").rsplit("/", 1)[-1]


def _inside(folder: str, name: str) -> str:
    return folder.rstrip("/") + "/" + name


def _no_target_directory(cmd: Cmd) -> bool:
    """``-T`` (``--no-target-directory``, or in a cluster such as ``-rT``): the destination itself is written."""
    return any(a in ("-T", "--no-target-directory") or (a[:2] != "--" and a[:1] == "-" and "T" in a) for a in cmd.args)


def _landing(cmd: Cmd, scan: Scan, src: str, dest: str) -> str:
    """Where ``src`` lands when ``dest`` is a folder that holds guard's files further down (``/tmp``
    with guard's workspace in ``/tmp/x/.guard``): beside them, ``dest/NAME``. The folder itself is
    only replaced with ``-T``, and a source named ``.``, a glob or a runtime value keeps the folder."""
    name = _name(src)
    if (
        scan.place(dest).kind != "holds_guard"
        or not name
        or name in (".", "..")
        or "*" in name
        or "?" in name
        or "[" in name
        or DYN_OPEN in name
        or _no_target_directory(cmd)
    ):
        return dest
    return _inside(dest, name)


def _mv(cmd: Cmd, scan: Scan) -> Flow:
    sources, dest, _ = _sources_dest(cmd, wordset("-S --suffix -b"))
    dest_place = scan.place(dest) if dest else None
    for src in sources:
        if dest_place is not None and dest_place.tier == P.SPECIAL:
            effects.delete(scan, src, True, f"mv {src} {dest}")  # moved into /dev/null: gone
            continue
        effects.move_away(scan, src, dest)
        if dest:  # (what it held goes with it: written by this call, or the file on disk)
            carried = scan.written.get(scan.place(src).path) or Flow(file=src)
            effects.write(scan, _landing(cmd, scan, src, dest), carried)
    if not sources:
        scan.hit("G184", "mv")
    return EMPTY


def _cp(cmd: Cmd, scan: Scan) -> Flow:
    sources, dest, _ = _sources_dest(cmd, wordset("-S --suffix -m --mode -o -g --owner --group"))
    flows = [effects.read_flow(scan, src)._replace(file=src) for src in sources]  # (each a file's bytes)
    flow = flows[0] if len(flows) == 1 else EMPTY
    for each in flows if len(flows) > 1 else ():
        flow = flow | each
    linking = cmd.name == "cp" and any(
        a in ("--link", "--symbolic-link") or (a[:1] == "-" and a[1:2] != "-" and ("s" in a or "l" in a))
        for a in cmd.args
    )
    if linking and dest:  # ``cp -s``, ``cp -l``: links, not copies
        for src in sources:
            effects.link(scan, src, dest)
    if dest and not (cmd.name == "install" and "-d" in cmd.args):
        if _into_folder(cmd, scan, sources, dest):  # ``cp -r /tmp/x/.claude ~/``: each source lands at dest/NAME
            for src, each in zip(sources, flows, strict=True):
                effects.write(scan, _inside(dest, _name(src) or "."), each)
        else:  # (``cp x /tmp`` with guard's workspace below /tmp: beside it, not over it)
            for target in dict.fromkeys(_landing(cmd, scan, src, dest) for src in sources or [""]):
                effects.write(scan, target, flow)
        if cmd.name == "install" and any(setuid(m) for m in _modes(cmd.args)):
            scan.hit("G132", f"install -m … {dest}")  # ``install -m 4755 /bin/sh /tmp/sh``: a setuid copy
    elif cmd.name == "install":
        for d in sources:
            effects.write(scan, d, EMPTY, "create")
    if not sources and not dest:
        scan.hit("G184", cmd.name)
    return EMPTY


def _into_folder(cmd: Cmd, scan: Scan, sources: list[str], dest: str) -> bool:
    """A copy's destination that is a folder: ``-t DIR``, ``DIR/``, several sources, or a home or the
    project root (always folders). A plain ``cp a b`` writes ``b`` itself."""
    if not sources or cmd.name != "cp" or any(DYN_OPEN in s for s in sources):
        return False
    if _no_target_directory(cmd):
        return False  # ``cp -T SRC DIR``: DIR itself is written
    if (
        dest.endswith("/")
        or len(sources) > 1
        or any(a in ("-t", "--target-directory") or a.startswith("--target-directory=") for a in cmd.args)
    ):
        return True
    return scan.place(dest).tier in (P.HOME, P.PROJECT_ROOT)


def _ln(cmd: Cmd, scan: Scan) -> Flow:
    sources, dest, _ = _sources_dest(cmd, wordset("-S --suffix"))
    if dest:
        effects.write(scan, dest, EMPTY, "write")
        symbolic = any(a == "--symbolic" or (a[:1] == "-" and a[1:2] != "-" and "s" in a) for a in cmd.args)
        for src in sources:
            effects.link(scan, src, dest, symbolic)
        if symbolic and len(sources) == 1:  # ``ln -s ~ x && rm -rf x/`` deletes what x points at
            link = scan.place(dest).path
            scan.links[link] = scan.place(sources[0])
            scan.links[link.rstrip("/") + "/" + sources[0].rstrip("/").rsplit("/", 1)[-1]] = scan.links[link]
    else:
        scan.hit("G184", "ln")
    return EMPTY


def _tee(cmd: Cmd, scan: Scan) -> Flow:
    opts = parse_opts(cmd.args, wordset("--output-error"))
    how = "append" if opts.has("-a", "--append") else "write"
    for target in opts.operands:
        effects.write(scan, target, cmd.stdin, how)
    if not opts.operands:
        scan.hit("G180", "tee")
    return cmd.stdin


def _line_endings(cmd: Cmd, scan: Scan) -> Flow:
    """``dos2unix FILE…`` (``unix2dos``, ``mac2unix``…) rewrites each file in place (``-n IN OUT``
    writes OUT from IN: every file named is taken as written, the cautious reading); ``-i`` only
    reports. Each write is judged where it lands (``dos2unix script.sh`` runs, ``dos2unix ~/.bashrc``
    asks as any change of it does)."""
    args = cmd.args
    if any(a in ("-h", "--help", "-V", "--version", "-L", "--license") or _eol_info(a) for a in args):
        scan.hit("G180", " ".join(cmd.argv))
        return EMPTY
    files = [a for a in parse_opts(args, wordset("-c --convmode")).operands if a != "-"]
    for word in files:
        effects.write(scan, word, effects.read_flow(scan, word))
    if not files:
        scan.hit("G180", cmd.name)  # a filter: standard input to standard output
    return EMPTY


def _eol_info(arg: str) -> bool:
    """``-i``, ``-ic``, ``--info=u``: report line breaks, change nothing (``-iso`` is a code page)."""
    return arg.startswith("--info") or (arg.startswith("-i") and arg != "-iso")


def _sponge(cmd: Cmd, scan: Scan) -> Flow:
    """``jq … f | sponge f``: moreutils' sponge soaks up its input, then writes (``-a`` appends) the file."""
    opts = parse_opts(cmd.args)
    for target in opts.operands[:1]:
        effects.write(scan, target, cmd.stdin, "append" if opts.has("-a") else "write")
        return EMPTY
    scan.hit("G180", "sponge")
    return cmd.stdin


_SPLIT_TAKES = wordset(
    "-a --suffix-length --additional-suffix -b --bytes -C --line-bytes -l --lines -n --number -t --separator --filter"
)  # (``-d``/``-x`` take none; ``--numeric-suffixes=FROM`` only after "=")
_SPLIT_FLAGS = wordset(
    "-d --numeric-suffixes -x --hex-suffixes -e --elide-empty-files -u --unbuffered --verbose --help --version"
)
_CSPLIT_TAKES = wordset("-f --prefix -b --suffix-format -n --digits")
_CSPLIT_FLAGS = wordset(
    "-k --keep-files --suppress-matched -s --quiet --silent -z --elide-empty-files --help --version"
)


def _split(cmd: Cmd, scan: Scan) -> Flow:
    """``split [FILE [PREFIX]]``, ``csplit FILE PATTERN…``: reads FILE (``-``: standard input) and
    writes ``PREFIX`` followed by a suffix (``xaa`` …) for each piece. The names are not known
    ahead (a suffix may complete a name such as ``.bash`` + ``rc``), so the write is judged as
    ``PREFIX*SUFFIX``, a glob that reads as the sensitive names it can make. ``--filter`` runs its
    command for each piece instead."""
    csplit = cmd.name == "csplit"
    takes = _CSPLIT_TAKES if csplit else _SPLIT_TAKES
    opts = parse_opts(cmd.args, takes)
    known = (_CSPLIT_FLAGS if csplit else _SPLIT_FLAGS) | takes
    # an option guard does not know may change what is written or run (GNU's ``--filter`` runs a
    # command): asked, as an unknown command is; ``split -1000 f`` is the old spelling of ``-l 1000``
    unknown = [f for f in opts.flags if f not in known and not (not csplit and f[1:].isdigit())]
    if unknown or (csplit and len(opts.operands) < 2):  # (csplit needs a file and a pattern)
        scan.hit("G182", display(scan, " ".join(cmd.argv)))
        return EMPTY
    source = opts.operands[0] if opts.operands else "-"
    if csplit:
        prefix, suffix = opts.value("-f", "--prefix") or "xx", ""
    else:
        prefix = opts.operands[1] if len(opts.operands) > 1 else "x"
        suffix = opts.value("--additional-suffix") or ""
    flow = cmd.stdin if source == "-" else effects.read_flow(scan, source)
    command = None if csplit else opts.value("--filter")
    if command is not None:
        scan.engine.script(command, flow)
        return EMPTY
    effects.write(scan, f"{prefix}*{suffix}", flow, "write")
    return EMPTY


def _create(cmd: Cmd, scan: Scan) -> Flow:
    opts = parse_opts(cmd.args, wordset("-m --mode -t -d -r --reference --date -Z --context"))
    for target in opts.operands:
        effects.write(scan, target, EMPTY, "create")
    if not opts.operands:
        scan.hit("G184", cmd.name)
    return EMPTY


def _mktemp(cmd: Cmd, scan: Scan) -> Flow:
    """A fresh temporary path: ``d=$(mktemp -d) … rm -rf "$d"`` is cleanup, not a blind delete."""
    opts = parse_opts(cmd.args, wordset("-p --tmpdir --suffix -t"))
    base = opts.value("-p", "--tmpdir") or "/tmp"
    template = opts.operands[0] if opts.operands else "tmp.guard"
    path = template if "/" in template else f"{base.rstrip('/')}/{template}"
    place = effects.write(scan, path, EMPTY, "create")
    return Flow(0, place.path + "\n")


_TAR_TAKES = wordset(
    "-f --file -C --directory -T --files-from -X --exclude-from -I --use-compress-program --to-command -b -N "
    "--newer --exclude -H --format -V --label -g --listed-incremental --transform --xform --owner --group "
    "--strip-components"
)


def _tar(cmd: Cmd, scan: Scan) -> Flow:
    args = list(cmd.args)
    if args and not args[0].startswith("-") and re.fullmatch(r"[A-Za-z]+", args[0]):
        args[0] = "-" + args[0]  # old-style ``tar xzf f.tgz``
    opts = parse_opts(args, _TAR_TAKES)
    for program in opts.all("-I", "--use-compress-program", "--to-command") + [
        a.split("exec=", 1)[1] for a in cmd.args if "--checkpoint-action=exec=" in a
    ]:
        scan.engine.script(program)
        scan.hit("G118", f"tar runs {program}")
    archive = opts.value("-f", "--file")
    if opts.has("-x", "--extract", "--get") and opts.has("-O", "--to-stdout"):  # printed, not written
        if archive and archive != "-":
            effects.read(scan, archive)
        scan.hit("G180", "tar to stdout")
        return Flow(cmd.stdin.bits)
    if opts.has("-x", "--extract", "--get"):
        target = opts.value("-C", "--directory") or "."
        place = scan.place(target)
        if place.tier == P.ROOT:
            scan.hit("G123", f"extracts into {place.path}")
        absolute = opts.has("-P", "--absolute-names")
        if absolute:  # members named /home/u/.bashrc land there, wherever -C points
            scan.hit("G126", "tar extracts absolute paths from the archive")
        strip = opts.value("--strip-components") or "0"
        if strip.isdigit():  # (from stdin, GNU tar's default: the file it was redirected from or cat printed)
            source = archive if archive and archive != "-" else cmd.stdin.file or None
            renames = tuple(opts.all("--transform", "--xform"))
            # the members named (``tar -xf x.tar src/``), unless a list comes from a file (-T: all of them)
            members = () if opts.value("-T", "--files-from") else tuple(opts.operands)
            effects.unpack(scan, target, source, int(strip), absolute, renames, members=members)
        else:
            effects.extract(scan, target)
        if archive and archive != "-":
            effects.read(scan, archive)
    elif opts.has("-c", "--create", "-r", "--append", "-u", "--update"):
        flow = effects.read_flows(scan, opts.operands)
        if opts.has("--remove-files"):
            for src in opts.operands:
                effects.delete(scan, src, True, f"tar --remove-files {src}")
        if archive and archive != "-":
            effects.write(scan, archive, flow)
        else:
            scan.hit("G184", "tar to stdout")
        return flow
    else:
        if archive and archive != "-":
            effects.read(scan, archive, content=False)
        scan.hit("G180", "tar")
    return EMPTY


_ARCHIVE_TAKES = wordset("-d -x -o -P --password -TT --unzip-command -O -S")
_UNZIP_TAKES = _ARCHIVE_TAKES - {"-o"}  # (unzip's ``-o`` overwrites without asking; 7z's ``-oDIR`` is a folder)
_COMPRESSORS = frozenset(
    ["gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4", "brotli", "compress"]
)  # (``gzip -dc``: -d is a flag here, not unzip's folder)
_COMPRESS_TAKES = wordset("-S --suffix -T --threads -o --output")


def _archive(cmd: Cmd, scan: Scan) -> Flow:
    """zip/unzip/7z/gzip family: reading sources, writing archives or extracted files."""
    name = cmd.name
    opts = parse_opts(
        cmd.args, _UNZIP_TAKES if name == "unzip" else _COMPRESS_TAKES if name in _COMPRESSORS else _ARCHIVE_TAKES
    )
    if name in ("unzip",) and opts.has("-l", "-v", "-t", "-Z", "-p"):
        scan.hit("G180", name)
        return EMPTY
    for test_command in opts.all("-TT", "--unzip-command"):  # zip tests the archive with this command
        scan.engine.script(test_command)
    if name in _COMPRESSORS:
        if not opts.operands or opts.has("-c", "--stdout", "-l", "--list", "-t", "--test"):
            scan.hit("G180", name)
            flow = cmd.stdin
            for f in opts.operands:
                flow = flow | effects.read_flow(scan, f)
            unpacks = name.startswith(("un", "gun", "bun")) or opts.has("-d", "--decompress", "--uncompress")
            if not opts.operands and flow.text is not None:  # ``echo … | gzip -c | gunzip``: the same text back
                if unpacks == bool(flow.bits & PACKED):
                    return Flow(flow.bits ^ PACKED, flow.text)
            # a filter keeps the taint (``curl … | gunzip | sh`` is still a download), and ``gzip -dc
            # x.tgz |`` the file it unpacks (a tar read from it is that archive: its members are read)
            whole = opts.operands[0] if len(opts.operands) == 1 else cmd.stdin.file if not opts.operands else ""
            return Flow(flow.bits, file=whole if unpacks else "")
        for f in opts.operands:
            effects.write(scan, f, EMPTY, "write")
        return EMPTY
    if name in ("unzip", "7z", "7za", "unrar") and (
        name == "unzip" or (opts.operands and opts.operands[0] in ("x", "e"))
    ):
        into = _unpacked_into(cmd, opts) or "."
        if name == "unzip" and opts.operands:  # (``-j`` junks folders: a member's name is not where it lands)
            effects.unpack(scan, into, None if opts.has("-j") else opts.operands[0])
        elif "-so" in cmd.args:  # ``7z x -so x.zip``: printed, not written
            for archive in opts.operands[1:2]:
                effects.read(scan, archive)
            scan.hit("G180", f"{name} to stdout")
            return Flow(cmd.stdin.bits)
        elif name in ("7z", "7za") and opts.operands[0] == "x" and len(opts.operands) > 1:  # (``e``: no folders)
            effects.unpack(scan, into, opts.operands[1])  # (7z reads zip and tar too; absolute names cut)
        else:
            effects.extract(scan, into)
        return EMPTY
    sources = list(opts.operands)
    if sources:
        archive, sources = sources[0], sources[1:]
        if name in ("7z", "7za") and sources:
            archive, sources = sources[0], sources[1:]
        flow = effects.read_flows(scan, sources)
        effects.write(scan, archive, flow)
        return flow
    scan.hit("G184", name)
    return EMPTY


def _unpacked_into(cmd: Cmd, opts: Opts) -> str | None:
    """Where an unpacker puts the members: ``unzip -d DIR`` (``-o`` only overwrites), ``7z x -oDIR``
    (glued, as 7z wants it), ``unrar x ARCHIVE DIR/`` (a last operand ending in ``/``)."""
    if cmd.name == "unzip":
        return opts.value("-d")
    if cmd.name == "unrar":
        rest = opts.operands[2:]
        return rest[-1] if rest and rest[-1].endswith("/") else None
    return next((a[2:] for a in cmd.args if a.startswith("-o") and len(a) > 2), None)


def _modes(args: tuple[str, ...]) -> list[str]:
    """``install -m MODE`` / ``--mode=MODE`` / ``-mMODE``."""
    out = []
    for i, a in enumerate(args):
        if a in ("-m", "--mode") and i + 1 < len(args):
            out.append(args[i + 1])
        elif a.startswith("--mode="):
            out.append(a[7:])
        elif a.startswith("-m") and len(a) > 2:
            out.append(a[2:])
    return out


HANDLERS: dict[str, Handler] = {
    "rm": _rm,
    "rmdir": _rmdir,
    "unlink": _unlink,
    **table("trash trash-put rmtrash gtrash gio", _trash),
    "shred": _shred,
    "srm": _shred,
    "wipe": _shred,
    "truncate": _truncate,
    "dd": _dd,
    "fallocate": _fallocate,
    **table(
        "mkfs mkfs.ext2 mkfs.ext3 mkfs.ext4 mkfs.xfs mkfs.btrfs mkfs.vfat mkfs.fat mkfs.ntfs mkfs.exfat mkfs.f2fs "
        "mke2fs mkdosfs mkntfs newfs newfs_apfs mkswap wipefs fdisk sfdisk cfdisk parted gdisk sgdisk blkdiscard "
        "badblocks hdparm cryptsetup zpool zfs lvremove vgremove pvremove lvreduce nvme diskutil e2fsck fsck tune2fs "
        "resize2fs debugfs",
        _disk,
    ),
    "mv": _mv,
    "cp": _cp,
    "install": _cp,
    "ditto": _cp,
    "ln": _ln,
    "tee": _tee,
    **table("dos2unix unix2dos mac2unix unix2mac", _line_endings),
    "sponge": _sponge,
    "split": _split,
    "csplit": _split,
    "touch": _create,
    "mkdir": _create,
    "mkfifo": _create,
    "mktemp": _mktemp,
    "tar": _tar,
    "gtar": _tar,
    "bsdtar": _tar,
    **table("zip unzip 7z 7za unrar gzip gunzip bzip2 bunzip2 xz unxz zstd unzstd lz4 brotli compress", _archive),
    **unpack.HANDLERS,
}
