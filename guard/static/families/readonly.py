"""The allow side: read-only commands, flag-aware, so ordinary looking-around never asks.

A command is read-only only with the flags that keep it so: ``sort`` but not ``sort -o f``,
``sed -n`` but not ``sed -i`` or a script with ``e``/``w``, ``awk`` without ``system()`` or
pipes, ``rg`` without ``--pre``. Read-only is still judged on *what* it reads: ``cat .env`` or
``head ~/.ssh/id_ed25519`` are secret reads, not allowlisted reads. Data is not execution: the
words of ``echo "rm -rf /"`` or ``grep -r "rm -rf"`` are only text.
"""

from __future__ import annotations

import re

from guard import lazyre
from guard.static.families import effects, guardfiles, pagers
from guard.static.families.base import Handler, Opts, parse_opts, read_only, table
from guard.static.reading import filters
from guard.static.reading.text import decode_ansi_c, wordset
from guard.static.scan import (
    DECODED,
    EMPTY,
    ENDLESS,
    OPAQUE,
    OPAQUE_FLOW,
    PACKED,
    SECRET,
    SPELLED,
    Cmd,
    Flow,
    Scan,
)

_LISTERS = (
    "eza exa lsd dust duf procs ncdu lsb_release bc dc units "
    "ls ll dir vdir tree stat file du df pwd whoami id groups uname uptime free ps pgrep pidof lsof who w last lastlog "
    "lscpu lsblk lsusb lspci lsmod nproc locale tty which whereis type realpath readlink basename dirname true false "
    "test [ [[ seq sleep cal getconf tput clear jobs bg fg disown help man info apropos whatis tldr yes logname users vmstat iostat "
    "mpstat sar top htop btop glances dmesg journalctl loginctl getent numfmt expr factor ulimit umask wait hash "
    "times exit return let read : fc history dirs nvidia-smi sw_vers system_profiler ioreg mdfind mdls locate plocate mlocate apt-cache lshw "
    "dmidecode hwinfo inxi neofetch fastfetch screenfetch pstree uuidgen break continue deactivate"
)
_READERS = (
    "hexyl difft colordiff icdiff xq dasel "
    "cat tac head tail less more most bat batcat nl wc md5sum md5 sha1sum sha224sum sha256sum sha384sum sha512sum "
    "shasum b2sum cksum sum hexdump hd od strings cut column fold fmt paste join comm diff cmp diff3 sdiff iconv "
    "expand unexpand rev look zcat zless zmore zgrep bzcat xzcat zstdcat lz4cat readelf objdump nm ldd size otool "
    "jq gron pr tr csvlook xmllint zipinfo identify ffprobe pdfinfo mediainfo"
)
_WRITE_OPTS = {"sort": ("-o", "--output"), "shuf": ("-o", "--output"), "tree": ("-o",)}


def _lister(cmd: Cmd, scan: Scan) -> Flow:
    if cmd.name == "hostname" and any(not a.startswith("-") for a in cmd.args):
        scan.hit("G177", " ".join(cmd.argv))
        return EMPTY
    for a in cmd.args:
        if not a.startswith("-") and ("/" in a or a.startswith((".", "~"))):
            effects.read(scan, a, content=False)
    scan.hit("G180", cmd.name)
    if cmd.name in _PATH_PRINTERS:
        return _path_printed(cmd, scan)
    if cmd.name == "pwd":
        cwd = scan.cwd
        known = cwd if cwd and cwd.startswith("/") else scan.resolver.project or (cwd or ".")
        return Flow(0, known + "\n") if "\ue007" not in known else EMPTY
    if cmd.name == "yes":
        return Flow(ENDLESS)
    if cmd.name in ("which", "whereis", "type"):
        return guardfiles.located(cmd.argv)  # ``which guard | xargs cp …``: guard's program, by its path
    if cmd.name in ("ps", "pgrep", "pidof"):
        from guard.static.families import selfguard  # (self-protection's helpers: loaded where they are asked)

        return selfguard.listed(cmd)  # process ids a ``kill`` may get: marked when they are guard's
    return EMPTY


def _read(cmd: Cmd, scan: Scan) -> Flow:
    """``read x <<< /``: the names hold the words of the first line, when guard knows the input; else
    each (``REPLY`` with none, the array of ``-a``) holds a runtime value carrying what the input carries
    (``pgrep guard | while read p; do kill $p; done``: guard's ids), set as any assignment: ``read
    GUARD_HOME < /tmp/v; claude`` starts the host in another workspace."""
    opts = parse_opts(cmd.args, wordset("-a -d -i -n -N -p -t -u"))
    names = list(opts.operands)
    text = cmd.stdin.text
    if names and text is not None and not opts.has("-a", "-d", "-n", "-N", "-u"):
        fields = text.split("\n", 1)[0].split(None, len(names) - 1)
        for name, field in zip(names, fields + [""] * (len(names) - len(fields)), strict=False):
            scan.assign(name, field)
    else:
        _runtime_values(scan, cmd, [*opts.all("-a"), *names] or ["REPLY"])
    scan.hit("G180", "read")
    return EMPTY


def _runtime_values(scan: Scan, cmd: Cmd, names: list[str]) -> None:
    for name in names:
        if name:
            scan.assign(name, scan.dynamic("$" + name, Flow(cmd.stdin.bits | OPAQUE)))


def _mapfile(cmd: Cmd, scan: Scan) -> Flow:
    """``mapfile -t LINES < f`` (``readarray``): the array holds the lines read (``MAPFILE`` with no
    name); ``-C CALLBACK`` is shell code run every ``-c`` lines."""
    opts = parse_opts(cmd.args, wordset("-d -n -O -s -u -C -c"))
    _runtime_values(scan, cmd, list(opts.operands[:1]) or ["MAPFILE"])
    for callback in opts.all("-C"):
        scan.engine.script(callback, inline=True)
    scan.hit("G180", cmd.name)
    return EMPTY


def _getopts(cmd: Cmd, scan: Scan) -> Flow:
    """``getopts OPTSTRING NAME [ARGS]``: NAME holds the option found (and ``OPTARG`` its value)."""
    if len(cmd.args) >= 2:
        _runtime_values(scan, cmd, [cmd.args[1], "OPTARG"])
    scan.hit("G180", "getopts")
    return EMPTY


_PATH_PRINTERS = wordset("dirname basename realpath readlink")


def _path_printed(cmd: Cmd, scan: Scan) -> Flow:
    """``$(dirname ~/x)``, ``$(realpath ~)``: the path they print, when the operands are known."""
    operands = [a for a in cmd.args if not a.startswith("-")]
    if cmd.name == "readlink" and not any(a in ("-f", "-e", "-m") for a in cmd.args):
        return EMPTY  # a link's target: only known on disk
    if not operands or any("\ue000" in a for a in operands):
        return EMPTY
    if cmd.name == "basename":
        return Flow(0, operands[0].rstrip("/").rsplit("/", 1)[-1] + "\n")
    out = []
    for a in operands:
        if cmd.name == "dirname":
            head = a.rstrip("/").rpartition("/")[0] if "/" in a.rstrip("/") else "."
            out.append(head or "/")
        else:
            path = scan.resolver.absolute(a, scan.cwd)
            if path is None or not path.startswith("/"):
                return EMPTY
            out.append(path)
    return Flow(0, "\n".join(out) + "\n")


def _cd(cmd: Cmd, scan: Scan) -> Flow:
    args = [a for a in cmd.args if a not in ("-L", "-P", "-e", "-@", "--")]
    cdpath = scan.vars.get("CDPATH", "").split(":")[0]
    old = scan.cwd or scan.resolver.project
    if cmd.name == "popd" or (cmd.name == "pushd" and not args):
        scan.chdir("-")
    elif args[:1] == ["-"] and scan.vars.get("OLDPWD", "").startswith("/"):
        scan.chdir(scan.vars["OLDPWD"])  # ``cd -``: back where the script was
    elif cdpath and args and not args[0].startswith(("/", "./", "../", "~")) and args[0] not in (".", ".."):
        scan.chdir(cdpath.rstrip("/") + "/" + args[0])  # ``CDPATH=/; cd etc`` goes to /etc (first entry: the worst)
    else:
        scan.chdir(args[0] if args else None)
    if old and old.startswith("/") and old != scan.cwd:
        scan.vars["OLDPWD"] = old
    scan.hit("G180", cmd.name)
    return EMPTY


def _date(cmd: Cmd, scan: Scan) -> Flow:
    opts = parse_opts(cmd.args, wordset("-d --date -f --file -r --reference -I"))
    flow = EMPTY
    for f in opts.all("-f", "--file"):  # each line is a date to print, and a line that is none is
        flow = flow | effects.read_flow(scan, f)  # printed in the error: the file's text comes out
    for f in opts.all("-r", "--reference"):
        effects.read(scan, f, content=False)  # only its time
    if opts.has("-s", "--set") or any(not o.startswith("+") for o in opts.operands):
        scan.hit("G177", " ".join(cmd.argv))  # sets the clock
    else:
        scan.hit("G180", "date")
    return flow


_READER_TAKES = frozenset(
    {
        "-n",
        "-c",
        "-f",
        "-d",
        "-s",
        "-w",
        "-t",
        "-k",
        "-o",
        "-e",
        "--lines",
        "--bytes",
        "--output",
        "-N",
        "-j",
        "-l",
        "-L",
        "-b",
        "-C",
        "-A",
        "-B",
        "--arg",
        "--argjson",
        "--indent",
        "-i",
        "-T",
        "-F",
        "-S",
        "-x",
        "-X",
        "-I",
    }
)
_JQ_TAKES = frozenset({"-L", "--indent", "-f", "--from-file"})


def _reader(cmd: Cmd, scan: Scan) -> Flow:
    takes = _READER_TAKES
    args = cmd.args
    if cmd.name == "jq":  # its own options: ``-n`` is a flag, ``--arg``/``--rawfile`` take two values
        takes = _JQ_TAKES
        args = _jq_files(args)
    opts = parse_opts(args, takes)
    files = list(opts.operands)
    if cmd.name in ("jq", "gron") and files:
        files = files[1:] if cmd.name == "jq" and not opts.has("-f", "--from-file") else files
    if opts.values:
        files += opts.all("--rawfile", "--slurpfile")
    if cmd.name == "tr":
        files = []
    if cmd.name in ("rev", "tr") and not files and cmd.stdin.text is not None:
        from guard.static.families import spelled as spelled_text

        spelled = spelled_text.rev(cmd.stdin.text) if cmd.name == "rev" else spelled_text.tr(cmd.args, cmd.stdin.text)
        scan.hit("G180", cmd.name)
        if spelled is None:
            return Flow(cmd.stdin.bits | OPAQUE)
        return Flow(cmd.stdin.bits | SPELLED, spelled)
    stdin_only = cmd.stdin.text is not None and all(f == "-" for f in files)
    flow = Flow(cmd.stdin.bits, _filtered(cmd) if stdin_only else None)
    for f in files:
        if f == "-":
            continue
        flow = flow | effects.read_flow(scan, f)
    for opt in _WRITE_OPTS.get(cmd.name, ()):
        if opt in opts.values:
            effects.write(scan, opts.values[opt][-1], flow)
    scan.hit("G180", cmd.name)
    bits = flow.bits & ~PACKED if cmd.name in ("zcat", "gzcat") else flow.bits
    if bits & ENDLESS and cmd.name == "head" and filters.head_bounded(cmd.args):
        bits &= ~ENDLESS
    return Flow(bits, flow.text, file=_whole_file(cmd, files))


_WHOLE = frozenset({"cat", "zcat", "gzcat", "bzcat", "xzcat", "zstdcat"})


def _whole_file(cmd: Cmd, files: list[str]) -> str:
    """The one file ``cat F`` (or ``zcat F``…) prints whole, or ``cat``'s own stdin's; "" otherwise."""
    if cmd.name not in _WHOLE or cmd.args != tuple(files):  # (options: ``cat -n`` changes the bytes)
        return ""
    if not files or files == ["-"]:
        return cmd.stdin.file
    return files[0] if len(files) == 1 and files[0] != "-" else ""


def _filtered(cmd: Cmd) -> str | None:
    """What a simple filter prints of known stdin (``cat``, ``head -1``, ``cut -d: -f2``); ``None``: unknown."""
    text = cmd.stdin.text or ""
    if cmd.name in ("zcat", "gzcat") and cmd.stdin.bits & PACKED:
        return text if not cmd.args else None
    if cmd.name == "cat":
        return text if all(a in ("-", "--") for a in cmd.args) else None
    if cmd.name == "tac":
        return "".join(reversed(text.splitlines(keepends=True))) if not cmd.args and text.endswith("\n") else None
    if cmd.name in ("head", "tail"):
        return filters.head_tail(cmd.name, cmd.args, text)
    if cmd.name == "cut":
        return filters.cut(cmd.args, text)
    return None


def _jq_files(args: tuple[str, ...]) -> tuple[str, ...]:
    """``--rawfile NAME FILE`` as ``--rawfile=FILE`` (FILE is read, not taken for the filter); ``--arg N V`` dropped."""
    out, i = [], 0
    while i < len(args):
        if args[i] in ("--rawfile", "--slurpfile", "--arg", "--argjson") and i + 2 < len(args):
            if args[i] in ("--rawfile", "--slurpfile"):
                out.append(f"{args[i]}={args[i + 2]}")
            i += 3
            continue
        out.append(args[i])
        i += 1
    return tuple(out)


def _writer_reader(cmd: Cmd, scan: Scan) -> Flow:
    """``sort``/``uniq``/``shuf``/``xxd``/``base64``: read-only unless an output file is named."""
    name = cmd.name
    opts = parse_opts(
        cmd.args,
        wordset("-o --output -k -t -S -T -n -s -w -f -c -l -g -i -b -e -D --key --field-separator"),
    )
    files = list(opts.operands)
    decoded = (name in ("base64", "base32", "basenc") and opts.has("-d", "--decode", "-D")) or (
        name == "xxd" and opts.has("-r", "--revert")
    )
    out_file = opts.value("-o", "--output") if name in ("sort", "shuf", "base64") else None
    if name in ("uniq", "xxd") and len(files) >= 2:
        out_file, files = files[1], files[:1]
    flow = Flow(cmd.stdin.bits)
    for f in files:
        if f != "-":
            flow = flow | effects.read_flow(scan, f)
    bits = flow.bits | (DECODED if decoded else 0)
    if out_file:
        effects.write(scan, out_file, Flow(bits))
    else:
        scan.hit("G180", name)
    if name in ("sort", "uniq") and not files and not out_file and cmd.stdin.text is not None:
        return Flow(bits, filters.sort_uniq(name, cmd.args, cmd.stdin.text))
    return Flow(bits)


def _echo(cmd: Cmd, scan: Scan) -> Flow:
    args = list(cmd.args)
    escapes = cmd.name == "printf"
    while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
        escapes = escapes or "e" in args.pop(0)
    from guard.static.families.secrets import secret_words  # (the secrets family's helpers, where asked)

    secret_words(cmd, scan)
    scan.hit("G180", cmd.name)
    text = " ".join(args)
    if cmd.name == "printf" and args:
        if cmd.args[:1] == ("-v",):
            if len(args) >= 3:  # ``printf -v x '%s' /``: x holds what it would print
                fmt, rest = args[2], args[3:]
                value = " ".join(rest) if rest and "%" in fmt else fmt
                scan.assign(args[1], decode_ansi_c(value) if "\\" in value else value)
            return EMPTY
        fmt, rest = args[0], args[1:]
        text = " ".join(rest) if rest and "%" in fmt else fmt
        escapes = True
    if escapes and "\\" in text:  # ``printf '\x72\x6d'`` and ``echo -e`` print what the escapes spell
        text = decode_ansi_c(text)
    return Flow(scan.flow_of(text).bits, text + "\n")


_GREP_TAKES = wordset(
    "-e -f -m -A -B -C -d -D --regexp --file --max-count --context -g --glob -t --type -T --type-not --pre "
    "--pre-glob -j --threads -M --max-columns -E --encoding -r --replace --ignore-file --color --colors --sort "
    "--sortr --max-depth --path-separator --include --exclude --exclude-dir --label --binary-files --devices "
    "--directories --hostname-bin"
)


def _grep(cmd: Cmd, scan: Scan) -> Flow:
    takes = _GREP_TAKES - ({"-r", "-E"} if cmd.name != "rg" else set())
    opts = parse_opts(cmd.args, takes)
    operands = list(opts.operands)
    if not opts.has("-e", "--regexp", "-f", "--file", "--files") and operands:
        operands = operands[1:]  # the pattern is data, not a path
    for f in opts.all("-f", "--file"):
        effects.read(scan, f)
    pre = opts.value("--pre", "--hostname-bin")
    if pre:
        scan.engine.run([pre])
        scan.hit("G181", f"{cmd.name} --pre {pre}")
    flow = Flow(cmd.stdin.bits)
    recursive = cmd.name in ("rg", "ag", "ack") or opts.has("-r", "-R", "--recursive", "--dereference-recursive")
    for f in operands:
        place = scan.place(f)
        if recursive and place.search_reads_keys:
            scan.hit("G140", f"{cmd.name} -r over {place.path}")
            scan.cmd_secret = True
        flow = flow | effects.read_flow(scan, f)
    scan.hit("G180", cmd.name)
    searched = opts.all("-e", "--regexp") or list(opts.operands[:1])
    from guard.static.families import selfguard

    bits = flow.bits | (OPAQUE if operands else 0) | selfguard.picked(cmd, searched, cmd.stdin)
    return Flow(bits, None, _listed(cmd, opts, operands, recursive))


_LISTS_FILES = wordset("-l -L --files-with-matches --files-without-match --files")


def _listed(cmd: Cmd, opts: Opts, operands: list[str], recursive: bool) -> tuple[str, ...]:
    """``grep -rl foo src`` prints paths under ``src``: what ``| xargs sed -i`` then edits (``src/match``)."""
    if not opts.has(*_LISTS_FILES) or (opts.has("--files") and cmd.name != "rg"):
        return ()
    if not operands:
        return ("./match",) if recursive else ()  # a grep of stdin prints "(standard input)"
    return tuple(f"{f.rstrip('/') or '/'}/match".replace("//", "/") if recursive else f for f in operands)


_SED_EXEC = lazyre.compile(r"(^|[;{}\n][ \t]*|\d[ \t]*|/[ \t]*)e(\s|$|;)")
# ``s/regex/replacement/flags`` with any delimiter: the ``e`` flag runs the result as a command
_SED_SUBST = lazyre.compile(r"(?:^|[;{}\n\s\d$/!])s([^\w\s\\])((?:\\.|(?!\1).)*)\1((?:\\.|(?!\1).)*)\1(\w*)", re.S)
_SED_BACKREF = lazyre.compile(r"(?<!\\)(?:\\\\)*(?:&|\\\d)")
_SED_E_COMMAND = lazyre.compile(r"(?:^|[;{}\n]|\d)[ \t]*e\s+([^;\n}]+)")
_SED_WRITE = lazyre.compile(r"(?:^|[;{}\n]|/[gpI0-9]*)[ \t]*[wW]\s+(\S+)")


def _sed(cmd: Cmd, scan: Scan) -> Flow:
    opts = parse_opts(cmd.args, wordset("-e -f --expression --file -l --line-length"))
    operands = list(opts.operands)
    scripts = opts.all("-e", "--expression")
    if not scripts and not opts.has("-f", "--file") and operands:
        scripts, operands = [operands[0]], operands[1:]
    in_place = any(f == "-i" or f.startswith("--in-place") for f in opts.flags) or opts.has("-I")
    for script in scripts:
        if _SED_EXEC.search(script):
            scan.hit("G118", f"sed script runs commands: {script[:60]}")
            for command in _SED_E_COMMAND.findall(script):  # ``1e rm -rf ~``: the rest of the line is a command
                scan.engine.script(command)
        for _delim, _regex, replacement, flags in _SED_SUBST.findall(script):
            if "e" in flags:  # ``s/.*/rm -rf ~/e``: the substituted line runs; a literal replacement is judged
                scan.hit("G118", f"sed s///e runs the result: {script[:60]}")
                if not _SED_BACKREF.search(replacement):
                    scan.engine.script(re.sub(r"\\(.)", r"\1", replacement))
        for target in _SED_WRITE.findall(script):
            effects.write(scan, target, EMPTY)
    flow = _read_or_edit(scan, cmd, operands, in_place)
    scan.hit("G180", "sed")
    return Flow(flow.bits, _sed_text(cmd, opts, scripts) if not operands and not in_place else None)


def _sed_text(cmd: Cmd, opts: Opts, scripts: list[str]) -> str | None:
    """``echo 'rm -rf X' | sed 's/X/~/'``: literal substitutions applied to known stdin (``None`` otherwise)."""
    text = cmd.stdin.text
    if text is None or opts.flags - {"-e", "--expression"} or not scripts:
        return None
    for script in scripts:
        for part in script.split(";"):
            m = _SED_SUBST.fullmatch(part.strip()) if part.strip().startswith("s") else None  # no addresses
            text = filters.sed_subst(m[1], m[2], m[3], m[4], text) if m and text is not None else None
    return text


def _read_or_edit(scan: Scan, cmd: Cmd, files: list[str], in_place: bool) -> Flow:
    flow = Flow(cmd.stdin.bits)
    for f in files:
        if in_place:
            effects.write(scan, f, EMPTY, "edit")
        else:
            flow = flow | effects.read_flow(scan, f)
    return flow


_AWK_DANGER = lazyre.compile(r"\bsystem\s*\(|\|\s*getline|\bprint[f]?\b[^;}]*\|\s*\"|\"\s*\|\s*getline")
_AWK_SYSTEM = lazyre.compile(r"system\s*\(\s*\"((?:[^\"\\]|\\.)*)\"")
# ``print "rm -rf ~" | "sh"``: the printed text is the piped command's input; ``"cmd" | getline`` runs cmd
_AWK_PIPE = lazyre.compile(r"\bprint[f]?\b([^;}|]*+)\|\s*\"((?:[^\"\\]|\\.)*)\"")
# (what print sends to a pipe is taken whole and unparenthesised by ``_unparen``: a lazy group between
# optional parentheses and blanks backtracked cubically on a long ``print`` without a pipe)
_AWK_GETLINE = lazyre.compile(r"\"((?:[^\"\\]|\\.)*)\"\s*\|\s*getline")
_AWK_STRING = lazyre.compile(r"\s*\"((?:[^\"\\]|\\.)*)\"\s*")


def _unparen(printed: str) -> str:
    """``print ("x") | "cmd"``: what is printed, without its blanks and one pair of parentheses."""
    printed = printed.strip()
    if printed.startswith("("):
        printed = printed[1:]
    if printed.endswith(")"):
        printed = printed[:-1]
    return printed


_AWK_FILE = lazyre.compile(r"\bprint[f]?\b[^;}|]*>>?\s*\"([^\"]+)\"")


def _awk(cmd: Cmd, scan: Scan) -> Flow:
    opts = parse_opts(cmd.args, wordset("-F -v -f --field-separator --assign --file -i --include"))
    operands = list(opts.operands)
    program = ""
    if not opts.has("-f", "--file") and operands:
        program, operands = operands[0], operands[1:]
    for f in opts.all("-f", "--file"):
        effects.read(scan, f)
    if "/inet/" in program:
        scan.hit("G144", "awk opens a network socket")
    if _AWK_DANGER.search(program):
        scan.tag("execute")
        scan.hit("G118", f"awk runs commands: {program[:60]}")
        for inner in _AWK_SYSTEM.findall(program):
            scan.engine.script(inner.replace('\\"', '"'))
        for printed, command in _AWK_PIPE.findall(program):
            literal = _AWK_STRING.fullmatch(_unparen(printed))
            text = literal.group(1).replace('\\"', '"').replace("\\n", "\n") + "\n" if literal else None
            scan.engine.script(command.replace('\\"', '"'), Flow(0, text) if text is not None else OPAQUE_FLOW)
        for command in _AWK_GETLINE.findall(program):
            scan.engine.script(command.replace('\\"', '"'))
    for target in _AWK_FILE.findall(program):
        effects.write(scan, target, EMPTY)
    in_place = "inplace" in opts.all("-i", "--include")
    files = [f for f in operands if "=" not in f or f.startswith(("/", "."))]  # var=value operands are not files
    flow = _read_or_edit(scan, cmd, files, in_place)
    scan.hit("G180", cmd.name)
    from guard.static.families import selfguard

    flow = Flow(flow.bits | selfguard.picked(cmd, [program], cmd.stdin), flow.text)
    text = cmd.stdin.text
    if text is None or files or opts.has("-v", "--assign", "-f", "--file") or in_place:
        return Flow(flow.bits)
    return Flow(flow.bits, filters.awk_print(program, opts.value("-F", "--field-separator"), text))


def _yq(cmd: Cmd, scan: Scan) -> Flow:
    """yq: a jq for YAML, which can also edit files in place (``-i``)."""
    opts = parse_opts(cmd.args, wordset("-o --output-format -p --input-format -I --indent --from-file"))
    operands = list(opts.operands)
    files = operands[1:] if operands and not opts.has("--from-file") else operands
    flow = _read_or_edit(scan, cmd, files, opts.has("-i", "--inplace"))
    scan.hit("G180", "yq")
    return Flow(flow.bits)


def _pager(cmd: Cmd, scan: Scan) -> Flow:
    """``less``/``more``: a reader once its escapes (``+!cmd``, ``-o FILE``) are judged."""
    return _reader(pagers.without_escapes(cmd, scan), scan)


def _trap(cmd: Cmd, scan: Scan) -> Flow:
    """``trap 'cleanup' EXIT``: the handler is a script that runs later, judged now."""
    args = [a for a in cmd.args if a != "--"]
    if args and not args[0].startswith("-") and len(args) > 1 and args[0]:
        scan.engine.script(args[0])
    scan.hit("G180", "trap")
    return EMPTY


_SHELL_VAR = lazyre.compile(r"\$\{?(\w+)")


def _envsubst(cmd: Cmd, scan: Scan) -> Flow:
    """``envsubst < app.tmpl > app.conf``: fills a template from the environment, which may hold secrets.

    Its output carries the values of the variables named in ``SHELL-FORMAT`` (all of them without
    one), so it is secret-tainted unless those names are ordinary: writing it flows, sending it asks.
    """
    names = [n for a in cmd.args if not a.startswith("-") for n in _SHELL_VAR.findall(a)]
    from guard.static.families.secrets import is_secret_var

    secret = not names or any(is_secret_var(n) for n in names)
    scan.hit("G180", "envsubst")
    return Flow(cmd.stdin.bits | (SECRET if secret else 0))


def _fuser(cmd: Cmd, scan: Scan) -> Flow:
    """``fuser 3000/tcp`` names the processes using a port or file; ``-k`` kills them."""
    if any(a.startswith("-") and not a.startswith("--") and "k" in a for a in cmd.args) or "--kill" in cmd.args:
        from guard.static.families import selfguard

        if not selfguard.daemon_socket(scan, cmd):
            scan.hit("G178", " ".join(cmd.argv))
    else:
        scan.hit("G180", "fuser")
    return EMPTY


HANDLERS: dict[str, Handler] = {
    "yq": _yq,
    "trap": _trap,
    "fuser": _fuser,
    "envsubst": _envsubst,
    **table(_LISTERS, _lister),
    **table(_READERS, _reader),
    **table("sort shuf uniq xxd base64 base32 basenc", _writer_reader),
    **table("grep egrep fgrep rg ag ack ugrep", _grep),
    **table("awk gawk mawk nawk", _awk),
    "echo": _echo,
    "printf": _echo,
    "sed": _sed,
    "gsed": _sed,
    "date": _date,
    "cd": _cd,
    "read": _read,
    "mapfile": _mapfile,
    "readarray": _mapfile,
    "getopts": _getopts,
    "pushd": _cd,
    "popd": _cd,
    "chdir": _cd,
    "hostname": _lister,
    "noop": read_only,
    **table(pagers.PAGERS, _pager),
    "man": pagers.man,
}
