"""One policy for what touching a path means, shared by every command and tool.

``rm``, ``unlink``, ``find -delete``, ``shutil.rmtree`` and the ``Write`` tool all end here, so a
target in the same tier gets the same rule whichever way it was reached. Each function also
records the effect (for user path rules such as ``Edit(~/.ssh/**)``) and returns the place.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator

from guard import lazyre
from guard.model import Risk
from guard.static.facts import ondisk, places
from guard.static.facts import paths as P
from guard.static.facts.landmines import (
    PROJECT_PROGRAM,
    autorun_commands,
    blocked_if_run,
    commands_in,
    redirects_packages,
    unquoted,
)
from guard.static.facts.paths import Place
from guard.static.families.guardfiles import is_guard_install, is_guard_program
from guard.static.reading.text import wordset
from guard.static.rules.catalog import CATALOG
from guard.static.scan import DECODED, EMPTY, ENDLESS, GUARD_CODE, PACKED, REMOTE, SECRET, Flow, Scan, display

_FOREIGN = frozenset({P.HOME_OTHER, P.OTHER, P.OUTSIDE})
_NAMES_GUARD_CODE = lazyre.compile(r"(?<![\w.])(?:guard|integrations)(?![\w-])")  # a .pth that imports or patches guard
_PERSIST_RULE = {
    "rc": "G151",
    "ssh_config": "G151",
    "cron": "G153",
    "service": "G153",
    "git_hook": "G155",
    "git_config": "G155",
    "sudoers": "G154",
    "authorized_keys": "G150",
    "host_hook": "G408",
    "path_bin": "G408",
    "python_startup": "G151",
}
_GIT_EXEC_LINE = lazyre.compile(
    r"(?im)(?:^|[\s\]])(hookspath|fsmonitor|pager|editor|sshcommand|askpass|gitproxy|textconv|external"
    r"|program|driver|clean|smudge|process|path)\s*=|=\s*['\"]?!"
)
_CRON = lazyre.compile(r"^[ \t]*(@\w+|(?:\S+[ \t]+){5})", re.M)
_CRON_USER = lazyre.compile(r"^[ \t]*(@\w+[ \t]+\S+|(?:\S+[ \t]+){6})", re.M)
_UNIT_EXEC = lazyre.compile(r"(?m)^[ \t]*Exec\w*[ \t]*=[ \t]*[-@+!:]*(.+)$")
_PLIST_STRING = lazyre.compile(r"<string>([^<]*)</string>")
_GIT_VALUE = lazyre.compile(r"(?m)^[^=\n\[#;]*=\s*(.+)$")
_GIT_ALIASES = lazyre.compile(r"(?im)^[ \t]*\[alias\][^\[]*")
_SSH_VALUE = lazyre.compile(
    r"(?im)^[ \t]*(?:proxycommand|localcommand|knownhostscommand|match\s.*?\bexec)[ \t]*=?[ \t]*(.+)$"
)


def read(scan: Scan, word: str, content: bool = True) -> Place:
    """A command reads ``word`` (``content=False``: only lists or stats it)."""
    place = scan.place(word)
    scan.effect("read", place.path)
    if not content:
        return place
    if place.secret >= 2 or place.tier == P.CREDENTIAL:
        scan.hit("G140", place.path)
        scan.cmd_secret = True
    elif place.secret == 1:
        scan.hit("G141", place.path)
        scan.cmd_secret = True
    elif (place.tier in _FOREIGN or place.tier == P.TEMP) and not _own_file(scan, place):
        scan.tag("untrusted_input")
    return place


# Places in the person's home that hold what others sent: downloads, mail, browser and chat data.
_RECEIVED = lazyre.compile(
    r"(?i)^(?:downloads?|mail|maildir|\.mail|\.thunderbird|\.mozilla|\.config/(?:discord|slack|signal))(?:/|$)"
)


def _own_file(scan: Scan, place: Place) -> bool:
    """A file the person keeps in their own home (notes, other projects) is as trusted as the
    project (issue 14): what taints a session is content someone else wrote — a temporary
    folder anyone can write, another user's home, a download, mail, a cache of fetched pages."""
    home = scan.resolver.home
    if place.tier != P.HOME_OTHER or place.kind == "cache" or not place.path.startswith(home + "/"):
        return False
    return not _RECEIVED.match(place.path[len(home) + 1 :])


def read_flow(scan: Scan, word: str) -> Flow:
    """What reading ``word`` feeds downstream: a file downloaded earlier stays "downloaded"."""
    place = read(scan, word)
    earlier = scan.written.get(place.path)
    bits = (earlier.bits if earlier else 0) | (SECRET if place.secret or place.tier == P.CREDENTIAL else 0)
    if place.path in ENDLESS_DEVICES:
        bits |= ENDLESS
    if is_guard_program(scan, word, place):
        bits |= GUARD_CODE
    return Flow(bits, earlier.text if earlier else None)


def read_flows(scan: Scan, words: Iterable[str]) -> Flow:
    """:func:`read_flow` of each word, together: what an archive made of them carries."""
    flow = EMPTY
    for word in words:
        flow = flow | read_flow(scan, word)
    return flow


ENDLESS_DEVICES = frozenset({"/dev/zero", "/dev/urandom", "/dev/random"})


def delete(scan: Scan, word: str, recursive: bool, detail: str = "") -> Place:
    place = scan.place(word)
    scan.effect("write", place.path)
    scan.target(_removal(word, place), word)
    scan.tag("delete")
    shown = detail or place.path
    linked = _linked(scan, word, place) if scan.links else None
    if linked is not None:  # through a symbolic link made earlier: the files it points at go
        scan.hit(_delete_rule(linked, recursive), f"{shown} (a link to {linked.path})")
        return place
    origin = _moved_from(scan, place.path)
    if origin is not None:  # judged by where the data came from, not where it sits now
        rule_id = _delete_rule(origin, recursive)
        if CATALOG[rule_id].risk >= Risk.HIGH:
            scan.hit(
                "G109" if CATALOG[rule_id].risk is Risk.CRITICAL else rule_id, f"{shown} (moved from {origin.path})"
            )
            return place
    if is_guard_program(scan, word, place) or is_guard_install(place):  # ``rm $(which guard)``: guard switched off
        scan.hit("G418", shown)
    rule_id = _delete_rule(place, recursive, _in_output_dir(scan, word, place))
    if (
        rule_id == "G184"
        and place.tier in (P.PROJECT, P.PROJECT_ROOT)
        and mass_pattern(word)
        and not _in_output_dir(scan, word, place)
        and not any(p in _REGENERATED for p in word.replace("\\", "/").split("/")[:-1])  # ``build\\*.obj``
    ):
        rule_id = "G432"  # ``rm src/*.py``: many project files at once, as ``rm -rf src`` asks
    scan.hit(rule_id, shown)
    return place


# Files a build or a tool writes again (compiled objects, logs, editor and patch leftovers): deleting
# them by pattern is tidying, not a mass deletion.
_DISPOSABLE = lazyre.compile(
    r"^\*(?:\.(?:pyc|pyo|pyd|o|obj|a|so|dylib|dll|class|log|tmp|temp|bak|orig|rej|swp|swo|gcda|gcno|"
    r"coverage|egg-info|tsbuildinfo|lcov|out|map|cache|d)|~)$|^\.DS_Store$|^Thumbs\.db$|^\*\.py[co]$|^__pycache__$"
)


def mass_pattern(word: str) -> bool:
    """``src/*.py``, ``./*``, ``*.ts``: a pattern over project files (not build leftovers like ``*.pyc``)."""
    last = word.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    return any(c in last for c in "*?[") and not _DISPOSABLE.match(last)


def _removal(word: str, place: Place) -> str:
    """Removing ``x`` takes the link ``x``; removing ``x/``, ``x/.`` or ``x/*`` takes what it points at."""
    return ondisk.DELETE_IN if place.contents or word.endswith(("/", "/.")) else ondisk.DELETE


def link(scan: Scan, source: str, dest: str | None, symbolic: bool = True) -> Place:
    """A link (``ln``, ``cp -s``/``-l``, ``os.symlink``, ``mount --bind``) at ``dest`` onto ``source``.

    A link onto guard's own files or a host's hook settings is refused however it is spelled: once
    it exists, a write to an ordinary-looking name changes them. A relative symbolic link is read
    from the link's own folder, and from the working directory too (either may be meant).
    """
    place = scan.place(source)
    if is_guard_program(scan, source, place):
        scan.hit("G414", f"{dest or '.'} -> {display(scan, source)}")
    spellings = [source]
    if symbolic and dest and not source.startswith("/"):
        folder = dest if dest.endswith("/") else posixpath.dirname(dest)
        spellings += [posixpath.join(folder, source), posixpath.join(dest, source)]
    for spelling in spellings:
        there = place if spelling is source else scan.place(spelling)
        if there.tier == P.PROTECTED:
            scan.hit("G416", f"{dest or '.'} -> {there.path}")
            break
    for spelling in spellings:
        scan.target(ondisk.LINK, spelling)
    return place


def _in_output_dir(scan: Scan, word: str, place: Place) -> bool:
    """``target/debug/incremental``: inside build output, counted from the project root (or the word)."""
    root = (scan.resolver.project or "").rstrip("/") + "/"
    if root != "/" and place.path.startswith(root):
        rel = place.path[len(root) :]
    elif not word.startswith(("/", "~", "$", "-")) and ".." not in word:
        rel = word
    else:
        return False
    return any(p in _REGENERATED for p in rel.strip("/").split("/")[:-1])


def _delete_rule(place: Place, recursive: bool, in_output: bool = False) -> str:
    tier, broad = place.tier, recursive or place.contents
    if tier == P.PROTECTED:
        return "G156"
    if place.dynamic:
        if recursive and tier in (P.ROOT, P.HOME) and place.contents:
            return "G439"  # ``rm -rf ~/$dir``: empty, it is ``rm -rf ~/``
        return "G106" if recursive else "G126"
    if place.kind == "user_data" and broad:
        return "G438"  # ``rm -rf ~/Documents``, ``rm -rf ~/Desktop/*``
    if tier in (P.ROOT, P.HOME):
        return "G101" if recursive else "G104"
    if tier == P.SYSTEM:
        if recursive and place.critical:
            return "G102"
        return "G122" if place.kind == "critical" else "G123"
    if tier in (P.DEVICE, P.SPECIAL, P.NETDEV):
        return "G123"
    if tier == P.CREDENTIAL:
        return "G103" if recursive and (place.critical or place.contents) else "G124"
    if tier == P.PERSIST:
        return "G124" if place.kind == "authorized_keys" else _PERSIST_RULE.get(place.kind, "G151")
    if tier == P.PROJECT_ROOT:
        return "G105" if recursive else ("G107" if place.contents else "G184")
    if tier == P.GITDIR:
        return (
            "G105" if (broad and place.path.rstrip("/").endswith(".git")) or (recursive and place.contents) else "G184"
        )
    if tier == P.PROJECT:
        if recursive and (in_output or _regenerated(place.path)):
            return "G400"
        return "G107" if recursive else "G184"
    if tier == P.TEMP:
        return "G104" if place.kind == "temp_root" and broad else "G186"
    if tier == P.DYNAMIC:
        return "G106" if recursive else "G126"
    if place.kind == "cache":
        return "G125"  # caches in home are re-created on demand
    return "G104" if recursive else "G125"


# Build output, caches and installed dependencies a project re-creates with one command.
_REGENERATED = wordset(
    "build dist out target node_modules __pycache__ .pytest_cache .mypy_cache .ruff_cache .hypothesis .tox .nox "
    ".next .nuxt .svelte-kit .parcel-cache .turbo .angular .docusaurus .expo storybook-static coverage htmlcov "
    ".gradle .eggs .venv _build .cache .sass-cache bower_components .terraform .serverless elm-stuff zig-cache "
    "zig-out .dart_tool .build DerivedData .nyc_output tmp .tmp .vite .ipynb_checkpoints .vercel .wrangler"
)


def _regenerated(path: str) -> bool:
    """``build/``, ``web/node_modules``, ``pkg.egg-info``, ``cmake-build-debug``: nothing lost for good."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return name in _REGENERATED or name.endswith(".egg-info") or name.startswith("cmake-build-")


def move_away(scan: Scan, word: str, dest: str | None) -> Place:
    """``mv SRC DEST``: the source disappears from where it was."""
    place = scan.place(word)
    scan.effect("write", place.path)
    scan.target(_removal(word, place), word)
    moved = f"{display(scan, word)} -> {display(scan, dest) if dest else '?'}"
    if is_guard_program(scan, word, place):
        scan.hit("G414", moved)
    elif is_guard_install(place):  # ``mv …/__editable__.guard_preflight-0.1.pth /tmp``: guard uninstalled
        scan.hit("G418", display(scan, word))
    if place.tier == P.PROTECTED:
        scan.hit("G156", place.path)
    elif (
        place.tier in (P.ROOT, P.HOME)
        or (place.tier == P.SYSTEM and place.critical)
        or (place.tier == P.CREDENTIAL and place.critical)
    ):
        scan.hit("G108", place.path)
    elif place.tier == P.SYSTEM:
        scan.hit("G122" if place.kind == "critical" else "G123", place.path)
    elif place.tier in (P.CREDENTIAL, P.PERSIST):
        scan.hit(_delete_rule(place, False), place.path)
    elif place.tier == P.PROJECT_ROOT or (place.tier == P.GITDIR and place.path.endswith(".git")):
        scan.hit("G105", place.path)
    elif place.tier in _FOREIGN:  # gone from outside the project, as ``rm`` of it would be (asked)
        scan.hit("G125", "mv " + moved)
    if dest is not None and place.tier not in (P.TEMP, P.PROJECT, P.SPECIAL, P.DYNAMIC):
        target = scan.place(dest)
        scan.moved[target.path] = place
        scan.moved[_join(target.path, place.path.rsplit("/", 1)[-1])] = place
    return place


def write(scan: Scan, word: str, flow: Flow = EMPTY, how: str = "write") -> Place:
    """A command writes ``word``. ``how``: ``write`` (overwrite), ``append``, ``create`` (touch, mkdir)."""
    if flow.bits & PACKED:  # compressed bytes are not the text they hold
        flow = Flow(flow.bits & ~PACKED)
    place = scan.place(word)
    tier = place.tier
    if tier == P.SPECIAL:
        return place
    if tier == P.NETDEV:
        scan.netdev = True
        scan.tag("network", "egress")
        shell = flow.bits & 32  # an interactive shell's output sent to a socket
        scan.hit("G144" if shell else "G143" if flow.bits & SECRET or scan.cmd_secret else "G145", place.path)
        return place
    scan.effect("write", place.path)
    scan.target(ondisk.CREATE if how == "create" else ondisk.WRITE, word)
    scan.tag("write")
    if how != "create" or place.path not in scan.written:
        # (a file copied whole keeps the file on disk it holds: ``cp x.tar y.tar``, ``cat x.tar > y.tar``;
        # appended to, it holds more than that file)
        whole = origin(scan, flow.file) if flow.file and how == "write" else None
        scan.written[place.path] = flow._replace(file=whole or "") if flow.file else flow
    scan.hit(_write_rule(scan, place, flow, how), place.path)
    if flow.bits & ENDLESS and tier != P.DEVICE:
        scan.hit("G009", place.path)
    if flow.bits & GUARD_CODE:  # guard's own program copied under another name
        scan.hit("G414", place.path)
    if place.kind == "python_startup" and flow.text and _NAMES_GUARD_CODE.search(flow.text):
        scan.hit("G418", f"{place.path}: code every Python there runs first, guard's hook too, names guard")
    if how != "create" and (is_guard_program(scan, word, place) or is_guard_install(place)):  # ``> $(which guard)``
        scan.hit("G418", display(scan, word))
    return place


def extract(scan: Scan, folder: str) -> Place:
    """An archive unpacked into ``folder`` (``unzip -d``, ``tar -C``, ``7z -o``, ``python -m zipfile -e``):
    the folder is created, and its members' names are only known on disk. Into a folder that holds a
    host's hook settings, a member can be ``settings.json``: that file is written (G156), as ``cp -r
    x/.claude ~/`` writes it; a folder that holds none (``~/.claude/skills``, ``build/``) is only created."""
    entry = P.settings_entry(scan.place(folder).path)
    return write(scan, folder, EMPTY, "create") if entry is None else write(scan, entry, EMPTY, "write")


def unpack(
    scan: Scan,
    folder: str,
    archive: str | None,
    strip: int = 0,
    absolute: bool = False,
    renames: tuple[str, ...] = (),
    first_only: bool = False,
    members: tuple[str, ...] = (),
) -> Place:
    """:func:`extract`, and the archive's members looked at when the call is decided: one that lands
    on a protected file (``.claude/settings.json`` in ``x.tar`` unpacked in the project) is written
    (G156). ``strip`` leading components are cut from each name (``tar --strip-components``);
    ``absolute`` keeps a leading ``/`` (``tar -P``); ``renames`` are sed expressions that rewrite
    each name (``tar --transform``, ``pax -s``, with ``first_only``: :mod:`guard.static.facts.renames`);
    ``members`` names the only members unpacked (``tar -xf x.tar src/``).
    An archive not read keeps :func:`extract`'s answer. Expressions guard cannot read exactly leave
    where members land unknown: asked (G126), whatever the archive holds; so does an archive this
    call makes before it unpacks it (``curl -o x.tar … && tar -xf x.tar``: what is on disk now is not
    what is unpacked), unless it is a copy of a file on disk, whose members are read."""
    place = extract(scan, folder)
    if renames and _unread(renames, first_only):
        scan.hit("G126", f"member names rewritten by {renames[0]!r}, which guard does not read exactly")
        return place
    if archive and archive != "-":
        source = origin(scan, archive)
        if source is None:
            scan.hit("G126", f"{display(scan, archive)} is made by this call: what it holds is not known yet")
            return place
        archive = source
    spelled_folder = ondisk.spelled(scan.resolver, folder, scan.cwd)
    if archive and archive != "-" and spelled_folder is not None:
        scan.target(ondisk.unpack_op(spelled_folder, strip, absolute, renames, first_only, members), archive)
    return place


def patch(scan: Scan, patch_file: str | None, strip: int, folders: tuple[str, ...]) -> None:
    """A patch applied under ``folders`` (``git apply x.diff``, ``patch -p1 < x.diff``): the names it
    changes are read when the call is decided, and one on a protected file is written (G156). ``strip``
    leading components are cut from each name (-1: GNU patch with no ``-p``). A patch this call makes
    first holds what is not on disk yet: asked (G126); one not on disk or not read keeps the answer."""
    if not patch_file or patch_file == "-":
        return
    source = origin(scan, patch_file)
    if source is None:
        scan.hit("G126", f"{display(scan, patch_file)} is made by this call: what it changes is not known yet")
        return
    spelled = tuple(f for f in (ondisk.spelled(scan.resolver, d, scan.cwd) for d in folders) if f is not None)
    if spelled:
        scan.target(ondisk.patch_op(strip, spelled), source)


def origin(scan: Scan, word: str) -> str | None:
    """The file on disk whose bytes ``word`` holds at this point of the call: ``word`` itself (joined
    to the working folder), or the file this call copied into it whole (``cp x.tar y.tar``, ``cat x.tar >
    y.tar``, ``mv``, or a folder copied with it in); None when this call wrote it otherwise (what it holds
    is not on disk yet)."""
    path = scan.place(word).path
    made = scan.written.get(path)
    if made is not None:
        return made.file or None
    for probe in _folders_above(path):  # (in a folder this call copied: ``cp -r . /tmp/c && tar -xf /tmp/c/x.tar``)
        folder = scan.written.get(probe)
        if folder is not None and folder.file:
            return folder.file.rstrip("/") + path[len(probe) :]
    return ondisk.spelled(scan.resolver, word, scan.cwd) or word


def _unread(renames: tuple[str, ...], first_only: bool) -> bool:
    """Are the sed expressions ``renames`` beyond what guard reads exactly?"""
    from guard.static.facts import renames as renaming  # (only a call that renames members reads them)

    return renaming.parse(renames, first_only) is None


# Names of storage and memory devices under /dev (one level; deeper paths such as /dev/mapper/root,
# /dev/disk/by-id/… or an LVM /dev/vg/lv are all devices).
_DISK = lazyre.compile(
    r"^(?:[shvx]?vd[a-z]+\d*|[sh]d[a-z]+\d*|nvme\d+(?:n\d+(?:p\d+)?)?|mmcblk\d+(?:p\d+)?|r?disk\d+(?:s\d+)*|"
    r"loop\d+|md\d+|md_?\w*|dm-\d+|sr\d+|[nr]?st\d+|fd\d+|mtd(?:block)?\d+|nbd\d+|zram\d+|rbd\d+|pmem\d+|"
    r"ada?\d+\w*|da\d+\w*|xvd[a-z]+\d*|ubd\w*|mem|kmem|port|nvram|root|cdrom|dvd\w*|hidraw\d+|sg\d+|bsg\w*|"
    r"mapper|disk|block)$"
)


def _disk_name(path: str) -> bool:
    """``/dev/sda1``, ``/dev/nvme0n1``, ``/dev/mapper/root``: a disk or memory; ``/dev/nul`` is not."""
    rest = path[len("/dev/") :] if path.startswith("/dev/") else path.rsplit("/", 1)[-1]
    return "/" in rest.strip("/") or bool(_DISK.match(rest.strip("/")))


def _write_rule(scan: Scan, place: Place, flow: Flow, how: str) -> str:
    tier, create = place.tier, how == "create"
    if tier == P.PROTECTED:
        return "G156" if place.kind != "holds_guard" or not create else "G185"
    if tier == P.DEVICE:
        return "G120" if _disk_name(place.path) else "G123"  # ``> /dev/nul``: a typo makes a file in /dev
    if not create and shadows_command(scan, place.path):  # ``cp x ~/bin/git``: runs instead of the real git
        return "G152" if _program_dangerous(scan, place.path, flow) else "G408"
    if tier == P.SYSTEM:
        return "G122" if place.kind in ("critical", "secret") and not create else "G123"
    if tier == P.PERSIST:
        if create:
            return "G125"
        if place.kind in ("rc", "cron", "service", "git_hook", "git_config", "ssh_config") and _dangerous_content(
            scan, flow, place.kind
        ):
            return "G152"
        if place.kind in ("host_hook", "path_bin") and _program_dangerous(scan, place.path, flow):
            return "G152"
        if place.kind == "git_config" and flow.text is not None and not _GIT_EXEC_LINE.search(flow.text):
            return "G185"  # names and aliases, nothing git would run
        return _PERSIST_RULE.get(place.kind, "G151")
    if tier == P.CREDENTIAL:
        return "G125" if create else "G124"
    if tier == P.DYNAMIC or place.dynamic:
        return "G126"
    if tier in _FOREIGN or tier in (P.ROOT, P.HOME):
        return "G185"
    if tier == P.TEMP:
        return "G186"
    auto = autorun_commands(place.path, flow.text) if tier in (P.PROJECT, P.PROJECT_ROOT) else None
    if auto is not None:  # a project file that runs by itself (husky hook, task on folder open …)
        if flow.bits & (REMOTE | DECODED) or any(scan.subscan(c) >= Risk.CRITICAL for c in auto[:64]):
            return "G152"
        if _asks_always(place.path, flow.text):
            return "G404"
    if not create and redirects_packages(place.path, flow.text):
        return "G405"
    if flow.text and blocked_if_run(place.path, flow.text, scan.subscan, scan.subcode):
        return "G127"  # (a download saved as a script is judged when it runs, not here)
    return "G184"


def shadows_command(scan: Scan, path: str) -> bool:
    """``path`` is a common command's name in a folder on the usual PATH other than ~/.local/bin."""
    folder, _, name = path.rpartition("/")
    if name not in places.COMMON_COMMANDS:
        return False
    home = scan.resolver.home
    if folder in places.SYSTEM_PATH_DIRS:
        return True
    return folder.startswith(home + "/") and folder[len(home) + 1 :] in places.HOME_PATH_DIRS


def _asks_always(path: str, text: str | None) -> bool:
    """Autorun files whose every change asks: git hooks and editor tasks run without anyone reviewing them."""
    return "/.husky/" in "/" + path or path.endswith("tasks.json") or PROJECT_PROGRAM.search("/" + path) is not None


def _program_dangerous(scan: Scan, path: str, flow: Flow) -> bool:
    """A program that runs by itself (host hook script, command on PATH): judged in its language,
    as shell when it names none (a file without ``#!`` is run by the shell)."""
    if flow.bits & (REMOTE | DECODED):
        return True
    if not flow.text:
        return False
    text = flow.text[:65536]
    snippets, lang = commands_in(path, text)
    if lang is None and not snippets and text.startswith("#!"):
        lang = _shebang_language(text)
    if lang is not None:
        return scan.subcode(text, lang) >= Risk.CRITICAL
    return any(scan.subscan(s) >= Risk.CRITICAL for s in (snippets or [text])[:64])


def _shebang_language(text: str) -> str | None:
    first = text.split("\n", 1)[0]
    for word, lang in (("python", "python"), ("node", "js"), ("ruby", "ruby"), ("perl", "perl"), ("php", "php")):
        if word in first:
            return lang
    return None


def _dangerous_content(scan: Scan, flow: Flow, kind: str = "") -> bool:
    if flow.bits & (REMOTE | DECODED):
        return True
    if not flow.text:
        return False
    if kind == "cron":  # judge the command, not the schedule; system crontabs also name a user
        return any(scan.subscan(pattern.sub("", flow.text)) >= Risk.CRITICAL for pattern in (_CRON, _CRON_USER))
    if kind in ("git_config", "ssh_config"):  # the values git or ssh would run (pager, filters, ProxyCommand …)
        # (git aliases run only when someone types them: not automatic, G155 asks for those)
        text = _GIT_ALIASES.sub("", flow.text) if kind == "git_config" else flow.text
        values = (_GIT_VALUE if kind == "git_config" else _SSH_VALUE).findall(text)
        return any(scan.subscan(unquoted(v.strip())) >= Risk.CRITICAL for v in values[:64])
    # systemd units and desktop entries (``Exec…=``), launchd property lists (``<string>``): what runs
    import html  # (1 ms of entity tables, for the rare unit file: not at every hook's import)

    programs = _UNIT_EXEC.findall(flow.text) + [html.unescape(p) for p in _PLIST_STRING.findall(flow.text)]
    if programs and any(scan.subscan(p) >= Risk.CRITICAL for p in programs[:64]):
        return True
    return scan.subscan(flow.text) >= Risk.CRITICAL


def _linked(scan: Scan, word: str, place: Place) -> Place | None:
    """The place a delete reaches through a link: ``x/``, ``x/.``, ``x/*`` or ``x/sub`` (``x`` alone is the link)."""
    for link, target in scan.links.items():
        if place.path == link and (place.contents or word.endswith(("/", "/."))):
            return target
        if place.path.startswith(link.rstrip("/") + "/"):
            rest = place.path[len(link.rstrip("/")) + 1 :]
            return scan.place(target.path.rstrip("/") + "/" + rest)
    return None


def _moved_from(scan: Scan, path: str) -> Place | None:
    """What this call moved to ``path`` or to a folder above it."""
    if not scan.moved or path in ("", "/", "."):
        return None
    moved = scan.moved
    return next((moved[p] for p in (path, *_folders_above(path)) if p in moved), None)


def _folders_above(path: str) -> Iterator[str]:
    """The folders above ``path``, nearest first, short of the root: ``/a/b/c`` gives ``/a/b``, ``/a``.
    Each step cuts a component, so a name with no ``/`` (a runtime value such as ``$Z``) ends the walk
    (two walks written here before looped on one)."""
    probe = path
    while "/" in probe.strip("/"):
        probe = probe.rstrip("/").rsplit("/", 1)[0]
        yield probe


def _join(a: str, b: str) -> str:
    return a.rstrip("/") + "/" + b if a != "/" else "/" + b
