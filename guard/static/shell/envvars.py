"""What setting a variable does: environment variables that load or run code.

A variable is judged wherever it is set: as a command prefix (``X=v cmd``), a bare assignment,
``export``/``declare -x``/``typeset``/``local`` (see :func:`declared`, which also reads ``export -n``
and a function's locals), ``env X=v cmd``, or by ``read``/``mapfile``/``getopts``/``printf -v`` (a runtime
value: :meth:`Scan.assign`); through a nameref (``declare -n r=X; r=v``) it is X that is set or unset
(:meth:`Scan.referent`). What it makes later programs do:

- a shell command (``GIT_SSH_COMMAND``, ``PAGER``, ``EDITOR``, ``PROMPT_COMMAND`` …): the value is
  judged as the script it is (an unknown program name alone is not evidence: it runs only when asked);
- a library injected into every program (``LD_PRELOAD``, ``LD_AUDIT``, ``DYLD_INSERT_LIBRARIES``):
  G157, and a library search path that leads outside the project and the system dirs: G157;
- code a runtime loads at start (``NODE_OPTIONS=--require``, ``PYTHONSTARTUP``, ``PERL5OPT=-M``,
  ``RUBYOPT=-r``, ``JAVA_TOOL_OPTIONS=-javaagent``, ``BASH_ENV``): G158 when it comes from outside
  the project (or from a place only known at runtime), G159 from the project or an installed package;
- module search paths (``PYTHONPATH``, ``PERL5LIB`` …) leading outside the project and the system
  dirs: G158 (``PYTHONPATH=src`` is ordinary). An element only known at runtime (``$PWD/src``,
  ``$PYTHONPATH``) is not judged: appending to the inherited value is the everyday case;
- ``PATH`` with a temporary directory (where anyone can plant an ``ls``): G158; ``~/.local/bin`` and
  ``node_modules/.bin`` are everyday and pass;
- git configuration from the environment (``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n``,
  ``GIT_CONFIG_PARAMETERS``), judged as ``git -c key=value``.

guard's own settings (``GUARD_HOME``, ``GUARD_<KEY>``) are judged when set and when taken away (``unset``,
``env -u``): for what follows (G444) and for an agent host started with them (G443).

Everything here runs only for assignments and ``unset``, and the first test is one dictionary lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from guard.static.facts import paths as P
from guard.static.reading.text import DYN_OPEN, IFS, tilde, wordset
from guard.static.scan import Scan, display

if TYPE_CHECKING:
    from guard.static.scan import Interpreter

COMMAND_VARS = wordset(
    "GIT_SSH_COMMAND GIT_PAGER PAGER GIT_EDITOR EDITOR VISUAL GIT_EXTERNAL_DIFF GIT_ASKPASS SSH_ASKPASS "
    "GIT_SEQUENCE_EDITOR MANPAGER PROMPT_COMMAND GIT_PROXY_COMMAND SUDO_ASKPASS FCEDIT"
)
_INJECT = frozenset({"LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES"})
_LIBRARY_PATHS = wordset(
    "LD_LIBRARY_PATH DYLD_LIBRARY_PATH DYLD_FALLBACK_LIBRARY_PATH DYLD_FRAMEWORK_PATH DYLD_FALLBACK_FRAMEWORK_PATH"
)
_MODULE_PATHS = wordset("PYTHONPATH PYTHONHOME PERL5LIB PERLLIB RUBYLIB NODE_PATH GIT_EXEC_PATH GIT_TEMPLATE_DIR")
_SCRIPT_FILES = frozenset({"PYTHONSTARTUP", "BASH_ENV", "ENV"})
_GIT_CONFIG_FILES = frozenset({"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG"})
_INSIDE = frozenset({P.PROJECT_ROOT, P.PROJECT, P.GITDIR})
_KNOWN = _INSIDE | {P.SYSTEM, P.DYNAMIC}
# Runtime options that name code to load.
_NODE_LOADS = ("--require", "-r", "--import", "--loader", "--experimental-loader")
_JAVA_AGENTS = ("-javaagent:", "-agentpath:", "-Xbootclasspath/a:", "-Xbootclasspath/p:", "-Xbootclasspath:")


def assigned(engine: Interpreter, key: str, value: str, env: Mapping[str, str]) -> None:
    """Judge ``key=value``; ``env`` holds the other variables set by the same command (prefix or ``env``)."""
    judge = _JUDGES.get(key)
    if judge is not None:
        judge(engine, key, value)
    elif key.startswith("GIT_CONFIG_"):
        _git_config(engine, key, value, env)
    elif key.startswith("GUARD_") and _loosens(key, value):
        engine.scan.hit("G444", f"{key}={display(engine.scan, value)}")


# -- guard's own settings: ``GUARD_HOME`` and ``GUARD_<KEY>`` (guard.config), read by every guard started later
AGENT_HOSTS = wordset("claude codex gemini cursor-agent openclaw")  # the hosts whose hooks run guard
_TRUE = wordset("1 true yes on")


_READ: list[frozenset[str]] = []  # the variables guard reads, worked out on the first ``GUARD_*`` seen


def _loosens(key: str, value: str) -> bool:
    """A variable guard reads (its workspace, a configuration key, the hooks' timeout), but not the log
    level, where a hook decides (its daemon or in process: the same workspace) or the stricter headless
    mode (request_confirm acts as block)."""
    if key.endswith("_HEADLESS"):  # GUARD_HEADLESS, GUARD_HOOKS_HEADLESS, GUARD_GUARD_HEADLESS
        return value.strip().lower() not in _TRUE
    if not _READ:
        from guard.config import SETTINGS  # (only for a GUARD_* variable: rare, off the hot path)

        _READ.append(frozenset({"GUARD_HOME", "GUARD_HOOKS_TIMEOUT_SECONDS", *(s.env for s in SETTINGS)}))
    return key in _READ[0] and key != "GUARD_HOOKS_DAEMON"


def unset(scan: Scan, names: Iterable[str], scoped: bool = False) -> None:
    """``unset GUARD_HOME``, ``env -u GUARD_HOME …``: a variable taken out of the environment. One guard
    reads changes what a guard started later uses, as setting it would (G444; a host started with it
    gone: G443, see :func:`starts_host`). ``scoped``: only for the command ``env`` runs. ``unset -f``
    takes functions away, not variables."""
    words = list(names)
    if any(w.startswith("-") and "f" in w for w in words):
        return
    refs = not scoped and any(w.startswith("-") and "n" in w for w in words)  # ``unset -n r``: the nameref itself
    for word in (w for w in words if not w.startswith("-")):
        name = word if scoped or refs else scan.referent(word)  # ``unset r``: what the nameref ``r`` points at
        if refs:
            scan.refs.pop(name, None)
        if not scoped:
            scan.vars.pop(name, None)
            scan.unset.add(name)
        _taken(scan, name, f"unset {name}")


def _taken(scan: Scan, name: str, shown: str) -> None:
    if name.startswith("GUARD_") and _loosens(name, ""):
        scan.hit("G444", shown)


def declared(
    engine: Interpreter, keyword: str, flags: Sequence[str], entries: Sequence[tuple[str, str | None]]
) -> None:
    """``export``, ``declare``, ``typeset``, ``local`` or ``readonly`` with its options and its names
    (each with the value it is given, or ``None``).

    - a value is judged as any assignment;
    - ``export -n X``, ``declare +x X``, ``typeset +x X``: X stays a shell variable but is no longer
      exported, so what the shell starts after it runs without X, as after ``unset X``;
    - ``local X`` (and ``declare``/``typeset`` in a function, bash's and zsh's locals): X is the
      function's own until it returns (:meth:`Scan.local`), and with no value it is unset for what the
      function starts. (bash refuses ``local`` outside a function; zsh takes it: read as unset there
      too, the stricter reading.)
    """
    scan = engine.scan
    on = "".join(f[1:] for f in flags if f[:1] == "-")
    off = "".join(f[1:] for f in flags if f[:1] == "+")
    names_only = "p" in on or "f" in on or "F" in on  # prints them, or names functions: no variable changes
    local = keyword == "local" or (keyword in ("declare", "typeset") and bool(scan.frames) and "g" not in on)
    hidden = not names_only and ((keyword == "export" and "n" in on) or "x" in off)
    nameref = keyword != "export" and not names_only and "n" in on
    for name, value in entries:
        if not name:
            continue
        if nameref:  # ``declare -n r=GUARD_HOME``: what is done to ``r`` from here on is done to GUARD_HOME
            _nameref(scan, name, value, local)
            continue
        if keyword != "export" and "n" in off:  # ``declare +n r``: ``r`` is a variable of its own again
            scan.refs.pop(name, None)
        name = scan.referent(name)  # ``export r=/tmp/x``, ``declare +x r``: the nameref's target
        if local and not names_only:
            scan.local(name)
        if value is not None:
            scan.assign(name, value)  # ``export LD_PRELOAD=…`` loads code into what runs next
        if hidden:  # (its value stays the shell's: ``$X`` still reads it)
            scan.unset.add(name)
            _taken(scan, name, f"{keyword} {' '.join(flags)} {name}")
        elif value is None and local and not names_only:
            scan.vars.pop(name, None)
            scan.unset.add(name)
            _taken(scan, name, f"{keyword} {name}")


def _nameref(scan: Scan, name: str, target: str | None, local: bool) -> None:
    """``declare -n``/``typeset -n``/``local -n NAME[=TARGET]``. With no target the first value given
    to NAME names it (:meth:`Scan.assign`); a target only known at runtime is no nameref guard can
    follow. (``local -n`` in a function: the ref is kept after it returns, the stricter reading.)"""
    if local:
        scan.local(name)
    if target is None or target == "":
        scan.refs.setdefault(name, "")
    elif DYN_OPEN not in target and target != name:
        scan.refs[name] = target
    else:
        scan.refs.pop(name, None)
    scan.vars.pop(name, None)


def starts_host(scan: Scan, argv: Sequence[str], env: Mapping[str, str], gone: Iterable[str] = ()) -> None:
    """``GUARD_HOME=/tmp/x claude -p …``, ``export GUARD_THRESHOLDS_AUTO_ALLOW=0; codex exec …``, ``env -u
    GUARD_HOME claude …``, ``unset GUARD_HOME; codex exec …``: an agent host started with guard's settings
    changed or taken away (``gone``: for this command only) runs its hooks under a guard the agent
    configured, in another workspace (no history, no rules of the person's) or with lower thresholds: G443."""
    program = argv[0]
    if program.rsplit("/", 1)[-1] not in AGENT_HOSTS:
        return
    moved = _moved_settings(argv)
    if moved:
        scan.hit("G443", f"{program} {moved}")
    removed = {k: "" for k in scan.unset if k.startswith("GUARD_")}  # (an unset variable reads as empty)
    values = {
        **removed,
        **{k: v for k, v in scan.vars.items() if k.startswith("GUARD_") or k in _HOST_HOMES},
        **{k: "" for k in gone if k.startswith("GUARD_")},
        **env,
    }
    changed = [k for k, v in values.items() if (k.startswith("GUARD_") and _loosens(k, v)) or _moves_home(scan, k, v)]
    if changed:
        scan.hit("G443", f"{program} with {', '.join(sorted(changed))} set or unset")


def _moved_settings(argv: Sequence[str]) -> str:
    """``claude --settings '{"disableAllHooks": true}'``, ``claude --setting-sources project``: Claude Code
    told to load other settings, or not the ones guard's hooks are in (all of user, project and local
    is no change). What the option says, or ``""``."""
    if argv[0].rsplit("/", 1)[-1] != "claude":
        return ""
    for i, a in enumerate(argv[1:], start=1):
        key, eq, value = a.partition("=")
        if key not in ("--settings", "--setting-sources"):
            continue
        value = value if eq else (argv[i + 1] if i + 1 < len(argv) else "")
        if key == "--settings" or not {"user", "project", "local"} <= set(value.replace(" ", "").split(",")):
            return f"{key} {value}"[:80]
    return ""


# Where the hosts read the settings that hold guard's hooks: another folder has none of them.
_HOST_HOMES = frozenset({"HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "OPENCLAW_HOME"})


def _moves_home(scan: Scan, key: str, value: str) -> bool:
    """``HOME=/tmp/x claude …``, ``CLAUDE_CONFIG_DIR=/tmp/c claude …``, ``CODEX_HOME=/tmp/c codex …``: the
    host reads its hook settings from another folder, where guard's hooks are not (the home itself is no move)."""
    if key not in _HOST_HOMES:
        return False
    home = scan.resolver.home
    return tilde(value, home, scan.cwd).rstrip("/") not in (home, home + "/.claude", home + "/.codex")


# -- what the value makes run
def _command(engine: Interpreter, key: str, value: str) -> None:
    if not value:
        return
    scan = engine.scan
    before = len(scan.hits)
    engine.script(value)
    ordinary = ("G182", "G149") if key == "GIT_SSH_COMMAND" else ("G182",)  # git adds the host itself
    scan.hits[before:] = [h for h in scan.hits[before:] if h.rule_id not in ordinary]


def _less_filter(engine: Interpreter, key: str, value: str) -> None:
    """``LESSOPEN="|cmd %s"`` (also ``||cmd``, ``|-cmd``, or ``cmd %s`` writing a file): less runs it on open."""
    command = value.lstrip("|").lstrip("-").replace("%s", "FILE")
    _command(engine, key, command)


def _inject(engine: Interpreter, key: str, value: str) -> None:
    if value.strip():
        engine.scan.hit("G157", f"{key}={display(engine.scan, value)}")


def _library_path(engine: Interpreter, key: str, value: str) -> None:
    _search_path(engine.scan, key, value, "G157")


def _module_path(engine: Interpreter, key: str, value: str) -> None:
    _search_path(engine.scan, key, value, "G158")


def _path(engine: Interpreter, key: str, value: str) -> None:
    for element in _elements(value):
        if not element.startswith(DYN_OPEN) and engine.scan.place(element).tier == P.TEMP:
            engine.scan.hit("G158", f"{key}={display(engine.scan, value)}")
            return


def _search_path(scan: Scan, key: str, value: str, rule_id: str) -> None:
    for element in _elements(value):
        if element.startswith(DYN_OPEN):
            continue  # ``$PYTHONPATH``, ``$(pwd)/src``: the inherited or a runtime value, not judged
        if _tier(scan, element) not in _KNOWN:
            scan.hit(rule_id, f"{key}={display(scan, value)}")
            return


def _tier(scan: Scan, element: str) -> str:
    if scan.cwd in (None, scan.resolver.project) and element[:1] not in ("/", "~", ".") and "/." not in element:
        return P.PROJECT  # ``src``, ``lib/python``: in the project (resolving costs more than the rest)
    return scan.place(element).tier


def _elements(value: str) -> Iterable[str]:
    return (e for e in value.replace(IFS, ":").split(":") if e)


def _script_file(engine: Interpreter, key: str, value: str) -> None:
    value = value.strip()
    if not value or (key == "ENV" and "/" not in value and not value.startswith((".", "~")) and ".sh" not in value):
        return  # ``ENV=production`` names a deployment, not the file sh reads at start
    if key != "PYTHONSTARTUP":
        engine.exec_file(value)  # a script written earlier in this call is judged by its content
    _load(engine.scan, key, value, is_path=True)


def _node_options(engine: Interpreter, key: str, value: str) -> None:
    words = _words(value)
    for i, word in enumerate(words):
        name, eq, glued = word.partition("=")
        if name in _NODE_LOADS:
            target = glued if eq else words[i + 1] if i + 1 < len(words) else ""
            _load(engine.scan, key, target, is_path=target.startswith((".", "/", "~", "file:")))


def _perl_ruby_options(engine: Interpreter, key: str, value: str) -> None:
    words = _words(value)
    for i, word in enumerate(words):
        flag, rest = word[:2], word[2:].lstrip(":")
        if flag not in ("-I", "-M", "-m", "-r", "-d") or (flag == "-d" and key != "PERL5OPT"):
            continue  # (ruby's ``-d`` only turns on $DEBUG)
        if not rest and flag != "-d":
            rest = words[i + 1] if i + 1 < len(words) else ""
        module = rest.lstrip("-").split("=", 1)[0]
        if flag in ("-M", "-m") and module.islower() and "::" not in module:
            continue  # a pragma (``-Mstrict``, ``-Mwarnings``), not code from a file
        is_path = flag == "-I" or rest.startswith((".", "/", "~"))
        _load(engine.scan, key, rest or word, is_path=is_path)


def _java_options(engine: Interpreter, key: str, value: str) -> None:
    for word in _words(value):
        for option in _JAVA_AGENTS:
            if word.startswith(option):
                target = word[len(option) :].split("=", 1)[0]
                for element in target.split(":") if "bootclasspath" in option else [target]:
                    _load(engine.scan, key, element, is_path=True)
        if word.startswith("-agentlib:") and not word.startswith("-agentlib:jdwp"):  # jdwp: the debugger
            _load(engine.scan, key, word, is_path=False)


def _load(scan: Scan, key: str, target: str, is_path: bool) -> None:
    """G158 for code from outside the project or a runtime place, G159 from the project or a package."""
    if target.startswith("file:"):
        target = target[5:].removeprefix("//")
    if target.startswith("~"):
        target = tilde(target, scan.resolver.home, scan.cwd)
    if not target:
        return  # ``--require`` with nothing after it: the program refuses to start
    shown = f"{key}: {display(scan, target)}"
    if target.startswith((DYN_OPEN, "data:")) or "://" in target:
        scan.hit("G158", shown)
    elif not is_path:
        scan.hit("G159", shown)
    else:
        scan.hit("G159" if scan.place(target).tier in _INSIDE else "G158", shown)


def _words(value: str) -> list[str]:
    return value.replace(IFS, " ").split()


def _git_config_file(engine: Interpreter, key: str, value: str) -> None:
    if value and not value.startswith(DYN_OPEN) and engine.scan.place(value).tier == P.TEMP:
        engine.scan.hit("G158", f"{key}={display(engine.scan, value)}")


def _git_config(engine: Interpreter, key: str, value: str, env: Mapping[str, str]) -> None:
    """``GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='…' git log`` is ``git -c core.pager='…' log``."""
    from guard.static.families.git import _config as config  # (git imports this module's peers)

    scan = engine.scan
    if key == "GIT_CONFIG_PARAMETERS":
        import shlex  # (loaded for GIT_CONFIG_PARAMETERS only)

        try:
            pairs = shlex.split(value.replace(IFS, " "))
        except ValueError:
            pairs = value.split()
        for pair in pairs:
            config(scan, pair)
        return
    kind, _, n = key[len("GIT_CONFIG_") :].partition("_")
    if kind == "VALUE":  # judged once, with its key from the same command or set earlier
        name = env.get(f"GIT_CONFIG_KEY_{n}", scan.vars.get(f"GIT_CONFIG_KEY_{n}"))
        if name is not None:
            config(scan, f"{name}={value}")
    elif kind == "KEY" and f"GIT_CONFIG_VALUE_{n}" not in env:
        setting = scan.vars.get(f"GIT_CONFIG_VALUE_{n}")
        if setting is not None:
            config(scan, f"{value}={setting}")


_JUDGES: dict[str, Callable[[Interpreter, str, str], None]] = {
    **dict.fromkeys(COMMAND_VARS, _command),
    **dict.fromkeys(_INJECT, _inject),
    **dict.fromkeys(_LIBRARY_PATHS, _library_path),
    **dict.fromkeys(_MODULE_PATHS, _module_path),
    **dict.fromkeys(_SCRIPT_FILES, _script_file),
    **dict.fromkeys(_GIT_CONFIG_FILES, _git_config_file),
    "PATH": _path,
    "LESSOPEN": _less_filter,
    "LESSCLOSE": _less_filter,
    "NODE_OPTIONS": _node_options,
    "PERL5OPT": _perl_ruby_options,
    "RUBYOPT": _perl_ruby_options,
    **dict.fromkeys(("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"), _java_options),
}
