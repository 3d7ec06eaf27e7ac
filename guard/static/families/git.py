"""git: read-only inspection flows; history and work destruction asks; force-pushing shared branches blocks.

Read-only subcommands (status, log, diff, show, branch listing …) are allowlisted unless an option
or ``-c key=value`` makes git run a program (``core.pager``, ``alias.x=!…``, ``core.fsmonitor``,
``core.hooksPath``, ``--ext-diff``, ``--exec-path``); such a program is itself parsed and judged.
Destruction is graded: discarding uncommitted work or deleting branches asks, force-pushing over
(or deleting) ``main``/``master`` blocks, ``--force-with-lease`` to one's own branch is an
ordinary push.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from guard import lazyre
from guard.model import Risk
from guard.static.facts import ondisk
from guard.static.facts import paths as P
from guard.static.families import effects
from guard.static.families.base import Handler, parse_opts
from guard.static.families.git_history import _checkout, _clean, _history, _push, _reset, _restore, _rm, over_protected
from guard.static.families.secrets import prints_credential
from guard.static.reading.text import wordset
from guard.static.rules.catalog import CATALOG
from guard.static.scan import EMPTY, Cmd, Flow, Scan, display

# A git subcommand's handler: (subcommand, its arguments, scan).
Sub = Callable[[str, tuple[str, ...], Scan], Flow | None]

_EXEC_KEY = lazyre.compile(
    r"^(core\.(pager|editor|sshcommand|fsmonitor|hookspath|askpass|gitproxy)|pager\..+|alias\..+|diff\.external"
    r"|diff\..+\.(textconv|command)|merge\..+\.driver|filter\..+\.(clean|smudge|process)|credential(\..+)?\.helper"
    r"|gpg(\..+)?\.program|sequence\.editor|(difftool|mergetool|browser|man)\..+\.(cmd|path)|include\.path"
    r"|includeif\..+\.path|remote\..+\.(uploadpack|receivepack)|uploadpack\.packobjectshook|protocol\.ext\.allow)$",
    re.I,
)
_HELPERS = wordset("store cache osxkeychain manager manager-core libsecret wincred gnome-keyring")
_NOT_COMMAND = lazyre.compile(r"^(core\.hookspath|include\.path|includeif\..+\.path|protocol\.ext\.allow)$", re.I)
_READ_ONLY = wordset(
    "status log show diff blame annotate shortlog describe rev-parse rev-list ls-files ls-tree cat-file grep "
    "whatchanged name-rev merge-base for-each-ref show-ref show-branch count-objects var help version "
    "check-ignore check-attr check-ref-format diff-tree diff-files diff-index range-diff cherry verify-commit "
    "verify-tag fsck request-pull check-mailmap get-tar-commit-id ls-remote show-index verify-pack"
)
_LOCAL_CHANGE = wordset(
    "add commit init merge cherry-pick revert am apply format-patch notes mv sparse-checkout mergetool difftool "
    "stage citool gui maintenance commit-graph multi-pack-index repack pack-refs rerere bundle archive replace "
    "restore-staged stash-push worktree-add"
)
_NETWORK = wordset("fetch pull clone remote-update lfs svn p4 fetch-pack")


def _global_options(args: tuple[str, ...], scan: Scan) -> tuple[int, str | None, str | None]:
    """Where the global options end, the ``-C`` directory and the ``--work-tree``."""
    i, workdir, worktree = 0, None, None
    while i < len(args):
        a = args[i]
        if a == "-C" and i + 1 < len(args):
            workdir = args[i + 1] if workdir is None else f"{workdir}/{args[i + 1]}"
            i += 2
        elif a == "--work-tree" and i + 1 < len(args):
            worktree, i = args[i + 1], i + 2
        elif a.startswith("--work-tree="):
            worktree, i = a.split("=", 1)[1], i + 1
        elif a == "-c" and i + 1 < len(args):
            _config(scan, args[i + 1])
            i += 2
        elif a.startswith("--config-env") or (a.startswith("--exec-path") and ("=" in a or i + 1 < len(args))):
            scan.hit("G139", a)
            i += 1 if "=" in a else 2
        elif a in ("--git-dir", "--work-tree", "--namespace", "--super-prefix"):
            i += 2
        elif a in ("-p", "--paginate"):
            scan.hit("G181", "git --paginate runs the configured pager")
            i += 1
        elif a.startswith("-"):
            i += 1
        else:
            break
    return i, workdir, worktree


def _program(key: str, value: str) -> str | None:
    """The shell command a configuration value makes git run (``None``: none, or one guard cannot see)."""
    lowered = key.lower()
    if lowered.startswith("alias.") and not value.startswith("!"):
        return ""  # an alias for another git subcommand runs nothing new
    if lowered.startswith("credential") and value in _HELPERS:
        return ""  # git's own credential helpers
    if _NOT_COMMAND.match(key) or not value or value.lower() in ("true", "false", "0", "1"):
        return None  # hooksPath, include.path: programs in files guard does not read
    return value[1:] if value.startswith("!") else value


def _config(scan: Scan, pair: str) -> None:
    """``git -c key=value``: the program it names runs now, and is judged as itself."""
    key, _, value = pair.partition("=")
    if _ADDRESS_KEY.match(key):
        scan.hit("G453", f"git -c {key}=…")  # ``git -c remote.origin.url=… push origin feature``
        return
    if not _EXEC_KEY.match(key):
        return
    program = _program(key, value)
    if program == "":
        return
    if program is None:
        scan.tag("execute")
        scan.hit("G139", display(scan, f"-c {pair}"))
        return
    before = len(scan.hits)
    scan.engine.script(program)
    if any(CATALOG[h.rule_id].risk >= Risk.MEDIUM for h in scan.hits[before:]):
        scan.tag("execute")
        scan.hit("G139", display(scan, f"-c {pair}"))  # not a pager or editor guard knows


def _git(cmd: Cmd, scan: Scan) -> Flow:
    args = cmd.args
    i, workdir, worktree = _global_options(args, scan)
    if i >= len(args):
        scan.hit("G180", "git")
        return EMPTY
    sub, rest = args[i], args[i + 1 :]
    if prints_credential(cmd, scan):
        return EMPTY
    saved, before = scan.cwd, len(scan.hits)
    if workdir is not None:
        scan.chdir(workdir)  # ``git -C dir``: git runs, and reads its paths, in dir
    try:
        out = _subcommand(sub, rest, scan)
        if sub in ("apply", "am"):
            _patches(sub, rest, scan, cmd.stdin.file)
        for rev in _switched_to(sub, rest):  # (read from git's objects when the call is decided: G445)
            scan.target(ondisk.gitrev_op(rev), ".")
        over_protected(sub, rest, scan, worktree)
        if any(h.rule_id == "G137" for h in scan.hits[before:]):
            place = scan.place(
                worktree or scan.vars.get("GIT_WORK_TREE") or "."
            )  # ``git -C ~ clean -fdx``: a whole home
            if place.tier in (P.ROOT, P.HOME) or (place.tier == P.SYSTEM and place.critical):
                scan.hit("G407", f"git {sub} in {place.path}")
    finally:
        scan.cwd = saved
    return out


_APPLY_TAKES = wordset("-p -C --directory --exclude --include --whitespace --build-fake-ancestor --patch-format")
_NOT_APPLIED = wordset("--check --stat --numstat --summary --abort --skip --quit --continue --show-current-patch")


def _patches(sub: str, rest: tuple[str, ...], scan: Scan, stdin_file: str) -> None:
    """``git apply x.diff``, ``git am x.mbox`` (or from stdin): the names the patches change are read when
    the call is decided, from the working folder and the project's top (git reads them from the top),
    with ``-pN`` (1 by default) and ``--directory=DIR``. ``--check``/``--stat`` only read them."""
    opts = parse_opts(rest, _APPLY_TAKES)
    if opts.has(*_NOT_APPLIED) and not opts.has("--apply"):
        return
    strip = opts.value("-p") or "1"
    folders: tuple[str, ...] = (".", scan.resolver.project or ".")
    directory = opts.value("--directory")
    if directory:
        folders = tuple(f"{f.rstrip('/')}/{directory}" for f in folders)
    for patch_file in list(opts.operands) or [stdin_file]:
        effects.patch(scan, patch_file, int(strip) if strip.isdigit() else 1, folders)


_SWITCH_TAKES = wordset("-b -B --orphan --conflict --pathspec-from-file -c -C --create --force-create -m -s -X")


def _switched_to(sub: str, rest: tuple[str, ...]) -> list[str]:
    """The revisions a subcommand puts the work tree at, or merges into it: ``git checkout BRANCH``,
    ``git switch X`` (or the start point of ``-b NEW X``), ``git merge X…``, ``git reset --hard X``,
    ``git stash pop``/``apply`` (the stash). Paths (``checkout X -- f``) are the pathspec rules' own."""
    if "--" in rest:
        return []
    opts = parse_opts(rest, _SWITCH_TAKES)
    operands = list(opts.operands)
    if sub in ("checkout", "switch"):
        if opts.has("-b", "-B", "--orphan", "-c", "-C", "--create", "--force-create"):
            return operands[:1]  # (the start point; none: a new branch at HEAD)
        return operands[:1] if len(operands) == 1 else []
    if sub == "merge" and not opts.has("--abort", "--quit", "--continue"):
        return operands
    if sub == "reset" and opts.has("--hard", "--merge", "--keep"):
        return operands[:1]
    if sub == "stash" and operands[:1] in (["pop"], ["apply"]):
        return ["refs/stash"] if len(operands) == 1 else []
    return []


def _subcommand(sub: str, rest: tuple[str, ...], scan: Scan) -> Flow:
    handler = _SUBCOMMANDS.get(sub)
    if handler is not None:
        return handler(sub, rest, scan) or EMPTY
    if sub in _READ_ONLY:
        return _read_only(sub, rest, scan)
    if sub in _LOCAL_CHANGE:
        scan.hit("G189", f"git {sub}")
        return EMPTY
    if sub in _NETWORK:
        return _network(sub, rest, scan)
    scan.hit("G182", f"git {sub} (unknown subcommand or alias)")
    return EMPTY


_PROGRAM_OPTS = ("--upload-pack", "--receive-pack", "--exec")
_LFS_LOCAL = wordset("ls-files status env version logs pointer fsck")  # (``git lfs track`` alone lists)


def _network(sub: str, rest: tuple[str, ...], scan: Scan) -> Flow:
    """``git fetch``/``pull`` from the repository's own remotes is low; a URL or a path is a download."""
    opts = parse_opts(rest, wordset("--upload-pack --depth -j --jobs -o --server-option -s"))
    for program in opts.all(*_PROGRAM_OPTS):  # runs that program (locally, for a path remote)
        scan.engine.script(program)
    if opts.has(*_PROGRAM_OPTS):
        return EMPTY
    operands = opts.operands
    if sub == "lfs":  # ``git lfs ls-files``: local; ``git lfs pull``: the objects of the project's own remote
        lfs = operands[0] if operands else ""
        if lfs in _LFS_LOCAL or opts.has("--version") or (lfs == "track" and len(operands) == 1):
            scan.hit("G180", f"git lfs {lfs}".rstrip())
            return EMPTY
        sub, operands = ("lfs " + lfs if lfs in ("pull", "fetch") else sub), operands[1:]
    remote = operands[0] if operands else ""
    named = not remote or (not any(c in remote for c in ":/@\\") and remote not in (".", ".."))
    if sub in ("fetch", "pull", "remote-update", "lfs pull", "lfs fetch") and named:
        scan.hit("G401", f"git {sub} {remote}".rstrip())
    else:
        scan.hit("G146", f"git {sub}")
    return EMPTY


def _read_only(sub: str, rest: tuple[str, ...], scan: Scan) -> Flow:
    opts = parse_opts(rest, wordset("-O --open-files-in-pager"))
    if opts.has("--ext-diff", "-O", "--open-files-in-pager"):
        scan.hit("G181", f"git {sub} runs an external program")
    for out in opts.all("--output"):
        effects.write(scan, out)
    if sub == "ls-remote":
        scan.tag("network")
        for program in parse_opts(rest, wordset("--upload-pack -u")).all("--upload-pack", "-u"):
            scan.engine.script(program)  # runs that program (locally, for a path remote)
    scan.hit("G180", f"git {sub}")
    if sub == "ls-files" or (sub in ("diff", "show", "log") and opts.has("--name-only")):
        # Paths in the work tree, what ``| xargs cmd`` then works on: any of its files (``./*``), or
        # those an ``ls-files`` pathspec names (``'*.py'``).
        spec = [p for p in opts.operands if not p.startswith(":")] if sub == "ls-files" else []
        return Flow(0, None, tuple(spec) or ("./*",))
    return EMPTY


def _branch(sub: str, rest: tuple[str, ...], scan: Scan) -> None:
    opts = parse_opts(
        rest,
        wordset(
            "--sort --format --contains --no-contains --merged --no-merged --points-at -u --set-upstream-to "
            "--color --column"
        ),
    )
    force_delete = opts.has("-D") or (opts.has("-d", "--delete") and opts.has("-f", "--force"))
    if force_delete:
        scan.hit("G138", f"git branch -D {' '.join(opts.operands)}")
    elif opts.operands or opts.has(
        "-d",
        "--delete",
        "-m",
        "-M",
        "-c",
        "-C",
        "--move",
        "--copy",
        "-u",
        "--set-upstream-to",
        "--unset-upstream",
        "--edit-description",
        "-f",
        "--force",
    ):
        scan.hit("G189", f"git branch {' '.join(rest)}")
    else:
        scan.hit("G180", "git branch")


def _tag(sub: str, rest: tuple[str, ...], scan: Scan) -> None:
    opts = parse_opts(rest, wordset("-m -F --sort --format --contains --points-at -u --color"))
    listing = opts.has("-l", "--list", "-v", "--verify") or not (
        opts.operands or opts.has("-d", "--delete", "-a", "-s", "-f")
    )
    scan.hit("G180" if listing and not opts.has("-d", "--delete") else "G189", f"git tag {' '.join(rest)}")


def _simple_list(read_words: set[str]) -> Sub:
    def handler(sub: str, rest: tuple[str, ...], scan: Scan) -> None:
        first = next((a for a in rest if not a.startswith("-")), "")
        scan.hit("G180" if first in read_words or (not first and "" in read_words) else "G189", f"git {sub} {first}")

    return handler


# Keys that decide where git sends a push or fetches from: ``remote.X.url``, ``remote.X.pushurl``,
# ``url.BASE.insteadOf`` / ``pushInsteadOf``. Changing one re-points "the project's own remote".
_ADDRESS_KEY = lazyre.compile(r"^(remote\..+\.(url|pushurl)|url\..+\.(insteadof|pushinsteadof))$", re.I)
_REMOTE_READ = frozenset({"", "-v", "show", "get-url"})


def _remote(sub: str, rest: tuple[str, ...], scan: Scan) -> None:
    """``git remote``: listing is read-only; adding or re-pointing a remote changes where a later
    ``git push origin feature`` (G452, low) sends the project's code, so a person sees it (G453)."""
    first = next((a for a in rest if not a.startswith("-")), "")
    if first in ("add", "set-url"):
        scan.hit("G453", f"git remote {' '.join(rest)}")
    else:
        scan.hit("G180" if first in _REMOTE_READ else "G189", f"git {sub} {first}")


def _config_sub(sub: str, rest: tuple[str, ...], scan: Scan) -> None:
    opts = parse_opts(rest, wordset("--file -f --blob --type --default"))
    if opts.has(
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "-l",
        "--list",
        "--show-origin",
        "--show-scope",
        "-e",
        "--edit",
    ) or (len(opts.operands) <= 1 and not opts.has("--unset", "--unset-all", "--remove-section", "--rename-section")):
        if opts.has("-e", "--edit"):
            scan.hit("G189", "git config --edit")
        elif opts.operands and opts.operands[0].lower().startswith("credential"):
            scan.hit("G142", "git config credential")
        else:
            scan.hit("G180", "git config")
        return
    if len(opts.operands) >= 2 and _ADDRESS_KEY.match(opts.operands[0]):
        scan.hit("G453", f"git config {' '.join(opts.operands[:2])}")
        return
    if len(opts.operands) >= 2:
        key, value = opts.operands[0], opts.operands[1]
        program = _program(key, value) if _EXEC_KEY.match(key) else ""
        if program != "":
            risk = scan.subscan(program) if program else Risk.HIGH
            scope = opts.has("--global", "--system")
            rule = "G152" if risk >= Risk.CRITICAL else "G155" if risk >= Risk.MEDIUM else "G185" if scope else "G189"
            scan.tag("persistence")
            scan.hit(rule, display(scan, f"git config {key} {value}"))
            return
    scan.hit("G185" if opts.has("--global", "--system") else "G189", f"git config {' '.join(rest)}")


def _stash(sub: str, rest: tuple[str, ...], scan: Scan) -> None:
    action = next((a for a in rest if not a.startswith("-")), "push")
    if action in ("list", "show"):
        scan.hit("G180", f"git stash {action}")
    elif action in ("drop", "clear"):
        scan.hit("G138", f"git stash {action}")
    else:
        scan.hit("G189", f"git stash {action}")


def _runs_command(sub: str, rest: tuple[str, ...], scan: Scan) -> None:
    words = [a for a in rest if not a.startswith("-")]
    if sub == "submodule" and words[:1] == ["foreach"]:
        scan.engine.script(" ".join(words[1:]))
        scan.hit("G189", "git submodule foreach")
    elif sub == "submodule":
        scan.hit(
            "G180" if words[:1] in (["status"], ["summary"], []) else "G146", f"git submodule {' '.join(words[:1])}"
        )
    elif sub == "bisect" and words[:1] == ["run"]:
        scan.engine.run(tuple(words[1:]))
        scan.hit("G189", "git bisect run")
    elif sub == "bisect":
        scan.hit(
            "G180" if words[:1] in (["log"], ["visualize"], ["view"]) else "G189", f"git bisect {' '.join(words[:1])}"
        )
    elif sub == "worktree":
        forced = words[:1] == ["remove"] and any(a in ("-f", "--force") for a in rest)
        scan.hit(
            "G137" if forced else "G180" if words[:1] == ["list"] else "G189", f"git worktree {' '.join(words[:1])}"
        )
    elif sub == "hook":
        scan.hit("G115", "git hook run")
    elif sub in ("send-email", "daemon", "instaweb", "http-backend"):
        scan.hit("G145" if sub == "send-email" else "G182", f"git {sub}")


def _clone(sub: str, rest: tuple[str, ...], scan: Scan) -> None:
    opts = parse_opts(
        rest,
        wordset(
            "-b --branch -o --origin --depth -c --config --reference --template -u --upload-pack "
            "--separate-git-dir -j --jobs --filter"
        ),
    )
    for pair in opts.all("-c", "--config"):
        _config(scan, pair)
    if opts.has("-u", "--upload-pack", "--template"):
        scan.hit("G139", f"git clone {' '.join(rest)}")
    if len(opts.operands) >= 2:
        effects.write(scan, opts.operands[1], EMPTY, "create")
    scan.hit("G146", f"git clone {' '.join(opts.operands[:1])}")


_SUBCOMMANDS: dict[str, Sub] = {
    "branch": _branch,
    "tag": _tag,
    "config": _config_sub,
    "stash": _stash,
    "reset": _reset,
    "clean": _clean,
    "checkout": _checkout,
    "switch": _checkout,
    "restore": _restore,
    "rm": _rm,
    "push": _push,
    "reflog": _history,
    "gc": _history,
    "filter-branch": _history,
    "filter-repo": _history,
    "prune": _history,
    "update-ref": _history,
    "rebase": _history,
    "commit": _history,
    "submodule": _runs_command,
    "bisect": _runs_command,
    "worktree": _runs_command,
    "hook": _runs_command,
    "send-email": _runs_command,
    "daemon": _runs_command,
    "instaweb": _runs_command,
    "clone": _clone,
    "remote": _remote,
    "symbolic-ref": _simple_list({"HEAD"}),
    "notes": _simple_list({"", "list", "show"}),
}

HANDLERS: dict[str, Handler] = {"git": _git}
