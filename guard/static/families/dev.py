"""Ordinary development: builds, tests, formatters, package managers, and publishing.

Building and testing in the project is low risk and flows. Installing dependencies downloads and
runs package code (medium: worth a look on a cold start, learned later). Publishing to a registry
is irreversible and public (high: always asks). ``uv run``, ``poetry run``, ``bundle exec`` and
friends run their inner command, which is judged as itself.
"""

from __future__ import annotations

from guard import lazyre
from guard.static.facts import paths as P
from guard.static.families import deps, effects, embedded, selfguard, unpack
from guard.static.families.base import Handler, only_help, parse_opts, table
from guard.static.families.db import database_rule
from guard.static.reading.text import wordset
from guard.static.scan import BUILT, EMPTY, Cmd, Flow, Scan, display

# (read-only subcommands, install-like subcommands, publish-like subcommands, runner subcommands)
_MANAGERS: dict[str, tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]] = {}


def _m(names: str, ro: str, install: str, publish: str, runner: str = "") -> None:
    spec = (frozenset(ro.split()), frozenset(install.split()), frozenset(publish.split()), frozenset(runner.split()))
    for n in names.split():
        _MANAGERS[n] = spec


_m(
    "npm",
    "ls list ll la view info show v outdated search help config get prefix root bin why explain audit doctor "
    "ping whoami query fund docs home repo",
    "install i ci add update up upgrade uninstall remove rm un link ln rebuild dedupe",
    "publish unpublish deprecate dist-tag",
    "exec x",
)
_m(
    "pnpm",
    "ls list ll view info outdated why audit help root bin config store",
    "install i add update up upgrade remove rm un uninstall link rebuild dedupe fetch import",
    "publish",
    "exec dlx",
)
_m(
    "yarn",
    "list info why outdated help config versions bin audit workspaces",
    "install add upgrade up remove link dedupe import",
    "publish npm",
    "exec dlx",
)
_m("bun", "pm outdated --help", "install i add remove rm update upgrade link", "publish", "x exec")
_m(
    "cargo",
    "tree metadata search locate-project pkgid verify-project version help read-manifest",
    "add remove rm update fetch install uninstall generate-lockfile vendor",
    "publish yank owner",
)
_m("go", "version env list doc help", "get install mod", "")
_m(
    " ".join(deps.PIP_NAMES),
    "list show freeze check help config debug inspect index cache",
    "install uninstall download wheel",
    "",
)
_m("uv", "tree version help", "sync add remove lock tool python venv-install", "publish", "run")
_m(
    "poetry",
    "show check version env about search config list",
    "install add update lock remove sync self",
    "publish",
    "run",
)
_m("pipenv", "graph check --venv --where --py", "install sync update uninstall lock", "", "run")
_m("pdm hatch rye pixi", "list show info tree version config", "add install sync lock update remove", "publish", "run")
_m("conda mamba micromamba", "list info search config", "install create update remove uninstall upgrade", "", "run")
_m("gem", "list search info env which contents specification query", "install update uninstall", "push yank", "")
_m("bundle bundler", "list show info outdated check config platform", "install update add remove", "", "exec")
_m(
    "composer",
    "show outdated validate diagnose licenses depends why",
    "install update require remove create-project global",
    "",
    "run run-script exec",
)
_m("dotnet", "--info --version list --list-sdks --list-runtimes", "restore add", "nuget", "")
_m("deno", "info doc types --version", "install add cache", "publish", "")
_m("swift", "--version", "package", "", "")
_SWIFT_PACKAGE_READ = wordset("describe dump-package show-dependencies show-executables dump-symbol-graph")
_m("mix", "help deps.tree hex.info", "deps.get deps.update archive.install", "hex.publish", "")
_m(
    "gradle gradlew mvn mvnw",
    "tasks dependencies help dependency:tree",
    "",
    "publish deploy uploadArchives release publishToMavenCentral publishToSonatype",
    "",
)
_m("lerna changeset", "list ls info changed diff", "bootstrap add", "publish version", "exec run")

_DEV_TOOLS = (
    "make gmake cmake ninja meson bazel bazelisk buck buck2 gcc g++ cc c++ clang clang++ rustc javac kotlinc scalac tsc "
    "eslint prettier black isort ruff mypy pyright pyre flake8 pylint pytest py.test tox nox jest vitest mocha ava karma "
    "cypress webpack vite esbuild rollup parcel next nuxt astro ng turbo nx rustfmt gofmt goimports golangci-lint "
    "shellcheck shfmt hadolint markdownlint stylelint biome swiftc xcodebuild ant sbt lein rebar3 cabal stack dune zig "
    "nim crystal ghc hugo jekyll mkdocs sphinx-build doxygen pandoc latexmk pdflatex xelatex protoc buf sqlc air "
    "pre-commit husky lefthook cucumber behave rspec phpunit pest codecept ctest gcov lcov coverage nyc c8 tsx ts-node "
    "storybook expo react-native flutter dart pod maturin cibuildwheel wasm-pack trunk cargo-watch "
    "vim vi nvim view gvim vimdiff nano emacs code subl micro hx helix kak ed delta diff-so-fancy meld kdiff3 opendiff "
    "just task mage invoke doit scons premake autoreconf autoconf automake configure libtool pkg-config strip "
    "ex objcopy ar ld as nasm yasm gdb lldb perf tokei cloc scc sccache ccache java kotlin scala clojure "
    "jshell erl elixirc iex crystal julia-build "
    "mypyc cython f2py npm-check-updates ncu depcheck knip madge jscpd license-checker snyk trivy grype "
    "syft semgrep bandit safety pip-audit cargo-audit gosec tfsec checkov kubeval kubeconform conftest opa "
    "flask uvicorn gunicorn hypercorn daphne fastapi autopep8 yapf pyupgrade docformatter mdformat codespell vulture "
    "pydocstyle pycodestyle pyflakes yamllint actionlint sqlfluff staticcheck govulncheck gofumpt revive errcheck "
    "ktlint detekt rubocop standardrb erb_lint erblint brakeman reek phpstan psalm php-cs-fixer phpcs phpcbf "
    "cppcheck cpplint clang-format clang-tidy swiftlint swift-format swiftformat tflint stylua luacheck buildifier "
    "cmake-format oxlint dprint typos hlint ormolu scalafmt jar ctags uctags etags"
)

# Formatters and fixers rewrite the files they are given: with these flags ("" = always, unless a
# check flag says only look), each file operand is judged as an edit, so ``black src`` flows and
# ``black ~/.bashrc`` is a write to a shell start-up file.
_IN_PLACE = {
    **dict.fromkeys(("black", "isort", "pyupgrade", "mdformat", "rustfmt", "php-cs-fixer", "phpcbf"), ""),
    **dict.fromkeys(("swiftformat", "stylua", "buildifier", "ormolu"), ""),
    **dict.fromkeys(
        ("autopep8", "yapf", "docformatter", "swift-format", "clang-format", "cmake-format"), "-i --in-place"
    ),
    **dict.fromkeys(("gofmt", "gofumpt", "goimports", "shfmt"), "-w --write"),
    "prettier": "-w --write",
    "eslint": "--fix",
    "biome": "--write --apply --fix",
    "oxlint": "--fix",
    "rubocop": "-a -A -x --autocorrect --autocorrect-all --fix-layout",
    "standardrb": "--fix",
    "ktlint": "-F --format",
    "clang-tidy": "--fix --fix-errors",
    "ruff": "--fix format",
}
_CHECK_ONLY = wordset("--check --diff --dry-run --check-only")
_VALUE_FLAGS = wordset(
    "--config --config-path --settings --ignore-path --style --assume-filename --stdin-filepath --rulesdir "
    "--resolve-plugins-relative-to --cache-location --plugin -c --line-length --target-version --profile --exclude"
)


# Compilers, linkers and index generators write the file their output option names (``-`` is
# stdout): that file is judged as a write, so ``gcc -o ~/.bashrc x.c`` changes a start-up file. A
# program compiled from project sources only is marked BUILT: running it later in the same call is
# running project code (``gcc -o /tmp/t src/t.c && /tmp/t``), like ``go run ./cmd/app``.
_OUTPUT_OPTS = {
    **dict.fromkeys(
        wordset("gcc g++ cc c++ clang clang++ rustc swiftc kotlinc ghc nim ld as nasm yasm objcopy go"), ("-o",)
    ),
    **dict.fromkeys(("ctags", "uctags", "etags"), ("-f", "-o")),
}
_SOURCE = lazyre.compile(r"\.(?:c|cc|cpp|cxx|c\+\+|m|mm|rs|go|swift|kt|hs|nim|s|S|asm|o|a)$")
# gcc/clang options that take the next word as their value (so it is not read as a source file).
_CC_VALUE = wordset("-I -L -l -D -U -include -isystem -x -MF -MT -MQ -target --target -std -arch -framework")
_GO_VALUE = wordset(
    "-tags -ldflags -gcflags -asmflags -mod -modfile -C -p -pkgdir -overlay -buildmode -compiler -toolexec "
    "-installsuffix -run -count -timeout -coverprofile -covermode -coverpkg"
)


def _outputs(cmd: Cmd, scan: Scan, args: tuple[str, ...] | list[str]) -> None:
    """The files a compiler's ``-o``/``-oFILE`` (ctags ``-f``) writes, judged as writes."""
    names = _OUTPUT_OPTS[cmd.name]
    outs: list[str] = []
    sources: list[str] = []
    skip = False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a in names:
            outs.append(args[i + 1] if i + 1 < len(args) else "")
            skip = True
        elif a[:2] in names and len(a) > 2 and cmd.name != "go" and not a.startswith("--"):
            outs.append(a[2:])
        elif a in (_GO_VALUE if cmd.name == "go" else _CC_VALUE):
            skip = True
        elif not a.startswith("-") and (cmd.name == "go" or _SOURCE.search(a)):
            sources.append(a)  # for go every operand is a package: ``./cmd/app`` or a module path
    if not outs:
        return
    ours = (cmd.name == "go" or bool(sources)) and all(
        (cmd.name != "go" or s.startswith(".")) and scan.place(s).tier in (P.PROJECT, P.PROJECT_ROOT) for s in sources
    )
    for out in outs:
        if out and out != "-":
            effects.write(scan, out, Flow(BUILT) if ours and cmd.name not in ("ctags", "uctags", "etags") else EMPTY)


def _apply_patch(cmd: Cmd, scan: Scan) -> Flow | None:
    """Codex's ``apply_patch '*** Begin Patch …'`` (the patch as argument or on stdin): an edit of the
    files the patch names, judged like the ``apply_patch`` tool. A patch guard cannot read is unknown."""
    from guard.static.families import tools

    patch = next((a for a in cmd.args if "*** Begin Patch" in a), None) or cmd.stdin.text
    if not patch or "*** Begin Patch" not in patch:
        scan.hit("G182", display(scan, " ".join(cmd.argv))[:80])
        return None
    tools.judge_write(scan, {"input": patch})
    return EMPTY


def _rewrites(cmd: Cmd, scan: Scan) -> None:
    """The file operands of a formatter that rewrites them in place, judged as edits."""
    args = cmd.args
    keys = {a.split("=", 1)[0] for a in args}
    flags = _IN_PLACE[cmd.name].split()
    if cmd.name == "ruff":
        writes = "--fix" in keys or ("format" in args and not keys & _CHECK_ONLY)
    else:
        writes = bool(keys & set(flags)) if flags else not keys & _CHECK_ONLY
    if not writes:
        return
    for i, a in enumerate(args):
        if (
            a.startswith("-")
            or (i and args[i - 1] in _VALUE_FLAGS)
            or (cmd.name == "ruff" and a in ("check", "format"))
        ):
            continue
        effects.write(scan, a, EMPTY, "edit")


_LOCAL_BINS = frozenset(_DEV_TOOLS.split()) | {
    "groovy",  # (an interpreter, handled in guard.static.families.interp, but also a project's local bin)
    "tsc",
    "jest",
    "eslint",
    "prettier",
    "vitest",
    "playwright",
    "next",
    "vite",
    "ts-node",
    "tsx",
    "nodemon",
    "concurrently",
    "rimraf",
    "cross-env",
}


# Project-local CLIs with a handler of their own (which knows their destructive verbs).
_JUDGED_BINS = frozenset({"prisma", "sequelize", "sequelize-cli", "knex", "typeorm", "supabase", "wrangler"})

_EDITOR_COMMAND = lazyre.compile(r"^[+:]*!(.+)$")


# Options whose folder the tool deletes with everything in it before it starts.
_EMPTIES_DIR = {"pytest": ("--basetemp",), "py.test": ("--basetemp",)}


def _values(args: tuple[str, ...], option: str) -> list[str]:
    """The values of ``option`` in ``args``: ``--opt VALUE`` and ``--opt=VALUE``."""
    out = []
    for i, a in enumerate(args):
        if a == option and i + 1 < len(args):
            out.append(args[i + 1])
        elif a.startswith(option + "="):
            out.append(a[len(option) + 1 :])
    return out


def _tool(cmd: Cmd, scan: Scan) -> Flow | None:
    if only_help(cmd):
        scan.hit("G180", cmd.name)
        return EMPTY
    embedded.judge(cmd, scan)  # make -f -/--eval, gdb -ex 'shell …', vim system(…), emacs --eval …
    if cmd.name in embedded.VIM:  # ``vim -c '!cmd'`` / ``+'!cmd'``: the editor runs a shell command
        for i, arg in enumerate(cmd.args):
            value = (
                cmd.args[i + 1]
                if arg in ("-c", "--cmd") and i + 1 < len(cmd.args)
                else arg[1:]
                if arg.startswith("+")
                else ""
            )
            m = _EDITOR_COMMAND.match(value.strip())
            if m:
                scan.engine.script(m.group(1))
    if cmd.name in _IN_PLACE:
        _rewrites(cmd, scan)
    for option in _EMPTIES_DIR.get(cmd.name, ()):
        for folder in _values(cmd.args, option):  # ``pytest --basetemp=$HOME`` empties the folder first
            effects.delete(scan, folder, True, f"{cmd.name} {option}={folder}")
    if cmd.name in _OUTPUT_OPTS:
        _outputs(cmd, scan, cmd.args)
    if cmd.name in ("jar", "ar") and (into := unpack.unpacked_into(cmd)) is not None:
        # ``jar xf x.jar`` in ``~/.claude``: a member can be its settings.json; a jar is a zip, whose
        # members are read (an ar archive's names are bare: only the folder tells)
        effects.unpack(scan, into, unpack.jar_file(cmd) if cmd.name == "jar" else None)
    scan.tag("execute")
    scan.hit("G181", display(scan, " ".join(cmd.argv))[:80])
    return None


def _manager(cmd: Cmd, scan: Scan) -> Flow | None:
    ro, install, publish, runner = _MANAGERS[cmd.name]
    shown = display(scan, " ".join(cmd.argv))
    if selfguard.replaces_guard(cmd, scan):  # ``pip uninstall guard-preflight``: switching guard off
        return None
    rule = database_rule(cmd.name, cmd.args)  # ``mix ecto.reset``, ``mix ecto.rollback``
    if rule is not None:
        scan.hit(rule, shown)
        return None
    opts = parse_opts(
        cmd.args,
        wordset(
            "-C --prefix --cwd -w --workspace --filter -F -p --package --manifest-path --dir -n --name -e --env "
            "--python --project --directory"
        ),
        stop_at_operand=True,
    )
    words = list(opts.operands)
    sub = words[0] if words else ""
    if only_help(cmd) or (not sub and opts.has("--version", "-V", "-v", "--help", "-h")):
        scan.hit("G180", shown)
        return EMPTY
    dry = opts.has("--dry-run", "-n") or "--dry-run" in cmd.args
    inline = opts.value("-e") or (words[1] if sub == "eval" and len(words) > 1 else None)
    if cmd.name in ("bun", "deno") and inline:  # ``bun -e``/``deno eval``: JavaScript one-liners
        return scan.engine.run(("node", "-e", inline))
    if cmd.name == "go" and sub == "run" and any("@" in w for w in words[1:2]):
        scan.hit("G117", shown)  # ``go run module@version`` downloads and runs it
        return None
    if sub == "config" and words[1:2] and words[1] in ("set", "delete", "rm", "unset", "edit", "add"):
        scan.hit("G185", shown)  # user-wide settings such as the package registry
    elif sub in publish and not dry:
        scan.hit("G170", shown)
    elif sub in runner:
        return _runner(cmd, scan, words[1:], shown)
    elif cmd.name == "uv" and sub == "pip":
        return scan.engine.run(("pip", *words[1:]))  # ``uv pip list`` is ``pip list``
    elif (
        sub in ro
        or (cmd.name == "go" and sub == "mod" and words[1:2] in (["graph"], ["why"], ["verify"]))
        or (cmd.name == "cargo" and sub == "update" and dry)
        or (cmd.name == "swift" and sub == "package" and words[1:2] and words[1] in _SWIFT_PACKAGE_READ)
    ):
        scan.hit("G180", shown)
    elif sub in install or (
        not sub and cmd.name in ("yarn", "bun", "pnpm", "bundle", "composer", "poetry", "pipenv") and not opts.flags
    ):
        declared = deps.classify(cmd.name, sub or "install", [*opts.flags, *words[1:]])
        if declared == deps.LOCKED:
            scan.hit("G450", shown)  # the project's own manifest or lockfile
        else:
            scan.hit("G183", shown)
            if isinstance(declared, tuple):
                scan.installs.append(declared)  # checked against the manifest when decided
    elif cmd.name in ("gradle", "gradlew", "mvn", "mvnw") and set(words) & publish:
        scan.hit("G170", shown)
    else:
        if cmd.name == "go" and sub in ("build", "test"):  # ``go build -o /tmp/app ./cmd/app``
            _outputs(cmd, scan, words[1:])
        scan.tag("execute")
        scan.hit("G181", shown[:80])
    return None


def _runner(cmd: Cmd, scan: Scan, inner: list[str], shown: str) -> Flow | None:
    while inner and inner[0].startswith("-"):  # runner options, then ``--``, then the command
        stop = inner[0] == "--"
        inner = inner[1:]
        if stop:
            break
    if not inner:
        scan.hit("G181", shown)
        return None
    if cmd.name in ("npm", "pnpm", "yarn", "bun") and inner[0] not in _LOCAL_BINS:
        scan.hit("G117", shown)
        return None
    return scan.engine.run(inner)


def _npx(cmd: Cmd, scan: Scan) -> Flow | None:
    opts = parse_opts(cmd.args, wordset("-p --package --from --with -c --call"), stop_at_operand=True)
    package = opts.operands[0] if opts.operands else ""
    shown = display(scan, " ".join(cmd.argv))
    if cmd.name == "pipx" and selfguard.replaces_guard(cmd, scan):
        return None
    if cmd.name == "pipx" and package != "run":
        scan.hit("G180" if package in ("list", "environment", "--version") else "G183", shown)
        return None
    if opts.value("-c", "--call"):
        scan.engine.script(opts.value("-c", "--call") or "")
    local = not opts.has("-y", "--yes") and cmd.name in ("npx", "pnpx", "bunx")
    if local and package in _JUDGED_BINS:  # ``npx prisma migrate reset``: the local CLI, judged as itself
        return scan.engine.run(opts.operands)
    if package in _LOCAL_BINS and local:
        scan.hit("G181", shown)
        scan.tag("execute")
        return None
    scan.hit("G117", shown)
    return None


def _publisher(cmd: Cmd, scan: Scan) -> Flow | None:
    shown = display(scan, " ".join(cmd.argv))
    words = [a for a in cmd.args if not a.startswith("-")]
    publishing = {
        "twine": {"upload"},
        "flit": {"publish"},
        "vsce": {"publish"},
        "ovsx": {"publish"},
        "goreleaser": {"release"},
        "semantic-release": {""},
        "release-it": {""},
        "np": {""},
        "jreleaser": {"release", "deploy", "full-release"},
        "pod": {"trunk"},
    }.get(cmd.name, set())
    if ("" in publishing or set(words) & publishing) and "--dry-run" not in cmd.args and "--snapshot" not in cmd.args:
        scan.hit("G170", shown)
    else:
        scan.hit("G181", shown)
    return None


def _system_packages(cmd: Cmd, scan: Scan) -> Flow | None:
    from guard.static.families.system import packages

    return packages(cmd, scan)


def _framework_cli(cmd: Cmd, scan: Scan) -> Flow | None:
    """``php artisan …``-style entry points that can reset a database."""
    rule = database_rule("artisan", cmd.args)
    if rule is not None:
        scan.hit(rule, display(scan, " ".join(cmd.argv)))
    else:
        scan.hit("G181", cmd.name)
    return None


_VERSION_MANAGERS = {
    "read": wordset(
        "ls list ls-remote list-remote current which version versions show home root help --version doctor "
        "whence plugin-list info"
    ),
    "install": wordset("install uninstall update upgrade self-update add remove rehash plugin-add"),
}


def _version_manager(cmd: Cmd, scan: Scan) -> Flow | None:
    """rustup, nvm, pyenv, asdf, rbenv, fnm, volta, sdk: list freely, install with a look."""
    words = [a for a in cmd.args if not a.startswith("-")]
    sub = words[0] if words else ""
    shown = display(scan, " ".join(cmd.argv))
    if not sub or sub in _VERSION_MANAGERS["read"] or only_help(cmd):
        scan.hit("G180", shown)
        return EMPTY
    if sub in _VERSION_MANAGERS["install"] or (
        cmd.name == "rustup"
        and sub in ("toolchain", "target", "component")
        and words[1:2] in (["install"], ["add"], ["remove"], ["uninstall"])
    ):
        scan.hit("G183", shown)
        return None
    if cmd.name in ("rustup", "sdk") and sub == "run" and len(words) > 2:
        return scan.engine.run(tuple(words[2:]))
    scan.hit("G181", shown)
    return None


def _pm2(cmd: Cmd, scan: Scan) -> Flow | None:
    sub = cmd.args[0] if cmd.args else ""
    rule = {
        "delete": "G178",
        "kill": "G178",
        "stop": "G178",
        "list": "G180",
        "ls": "G180",
        "status": "G180",
        "logs": "G180",
        "show": "G180",
        "describe": "G180",
        "monit": "G180",
    }.get(sub, "G181")
    scan.hit(rule, " ".join(cmd.argv))
    return None


_JUPYTER_READ = wordset("kernelspec --version --paths --runtime-dir --config-dir --data-dir troubleshoot")
_JUPYTER_INSTALL = wordset("labextension nbextension serverextension")


def _jupyter(cmd: Cmd, scan: Scan) -> Flow | None:
    """``jupyter nbconvert`` runs the project's notebooks, ``lab``/``notebook`` serve them; extensions install."""
    opts = parse_opts(cmd.args, wordset("--to --output --output-dir --template --ExecutePreprocessor.timeout"))
    words = list(opts.operands)
    sub = words[0] if words else ""
    shown = display(scan, " ".join(cmd.argv))
    if (sub == "kernelspec" and words[1:2] in ([], ["list"])) or (sub in _JUPYTER_READ and sub != "kernelspec"):
        scan.hit("G180", shown)
    elif sub in _JUPYTER_INSTALL or sub == "kernelspec":
        scan.hit("G183", shown)
    else:
        for out in opts.all("--output-dir"):
            effects.write(scan, out + "/", EMPTY)
        scan.tag("execute")
        scan.hit("G181", shown[:80])
    return None


def _patch(cmd: Cmd, scan: Scan) -> Flow | None:
    """``patch -p1 < fix.patch`` edits the files the patch names, under the current (or ``-d``) directory."""
    opts = parse_opts(
        cmd.args,
        wordset(
            "-p --strip -i --input -o --output -d --directory -r --reject-file -D --ifdef -B --prefix -z --suffix -F"
        ),
    )
    patch_files = opts.all("-i", "--input") + list(opts.operands[1:2])
    for patch_file in patch_files:
        effects.read(scan, patch_file)
    base = (opts.value("-d", "--directory") or ".").rstrip("/") or "/"
    strip = opts.value("-p", "--strip")
    # the names the patch changes, read when the call is decided (``patch -p1 < x.diff``: from stdin's file)
    effects.patch(
        scan,
        (patch_files or [cmd.stdin.file])[-1],
        int(strip) if strip and strip.isdigit() else -1,
        (base,),
    )
    targets = opts.all("-o", "--output") + opts.all("-r", "--reject-file") + list(opts.operands[:1])
    for target in targets or [f"{base}/match".replace("//", "/")]:
        if target != "-":
            effects.write(scan, target, EMPTY, "edit")
    return None


_VIEWABLE = wordset(".html .htm .pdf .png .jpg .jpeg .gif .svg .webp .md .txt .csv .json .log")


def _opener(cmd: Cmd, scan: Scan) -> Flow | None:
    """``open coverage/index.html``, ``xdg-open http://localhost:3000``: a report or a local page in a viewer.

    Anything else (an application, a script, a remote page) is judged as unknown: opening runs it.
    """
    from guard.static.families.net import _is_local

    shown = display(scan, " ".join(cmd.argv))
    operands = [a for a in cmd.args if not a.startswith("-")]
    plain = len(operands) == len(cmd.args) == 1
    target = operands[0] if plain else ""
    if "://" in target and target.split("://", 1)[0] in ("http", "https") and _is_local([target]):
        scan.hit("G148", shown)
    elif plain and "://" not in target and "." + target.rsplit(".", 1)[-1].lower() in _VIEWABLE:
        place = effects.read(scan, target, content=False)
        scan.hit("G181" if place.tier in (P.PROJECT, P.PROJECT_ROOT, P.TEMP) else "G182", shown)
    else:
        scan.hit("G182", shown)
    return None


HANDLERS: dict[str, Handler] = {
    **table(_DEV_TOOLS, _tool),
    "open": _opener,
    "xdg-open": _opener,
    "jupyter": _jupyter,
    "patch": _patch,
    "apply_patch": _apply_patch,
    **dict.fromkeys(_MANAGERS, _manager),
    **table("npx pnpx bunx uvx pipx", _npx),
    **table("twine flit vsce ovsx goreleaser semantic-release release-it np jreleaser pod", _publisher),
    "artisan": _framework_cli,
    "pm2": _pm2,
    **table("rustup nvm pyenv asdf rbenv fnm volta sdk goenv nodenv jenv tfenv mise rtx", _version_manager),
    "playwright": _tool,
    "nodemon": _tool,
    "watchexec": _tool,
    "node-gyp": _tool,
    **table(
        "apt apt-get aptitude yum dnf zypper pacman apk snap flatpak port nix-env emerge pkg xbps-install "
        "winget choco scoop brew yay paru dpkg rpm",
        _system_packages,
    ),
}
