"""What ``guard doctor`` checks: each host's hooks, the daemon, the workspace's permissions.

Every check yields a :class:`Finding`: ``ok``, ``info`` (nothing wrong, e.g. a host guard is
not installed for) or ``problem``, with the one command that fixes a problem. Nothing here
changes anything; it reads settings files, pings the daemon's socket, stats the workspace, runs
each installed hook command on two sample calls in a throwaway workspace
(:mod:`guard.integrations.selftest`) and reads Codex's feature switch and hook trust
(:mod:`guard.integrations.codex_trust`).
"""

from __future__ import annotations

import json
import os
import shlex
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from guard.integrations.install import CRASH_GUARD, TARGETS, InstallError, is_ours, python_argv

OK, INFO, PROBLEM = "ok", "info", "problem"

# Files the person writes with their own umask, holding no history or secrets: not flagged.
PERSONS_FILES = frozenset({"guard.toml"})


@attrs.frozen
class Finding:
    check: str
    status: str
    message: str
    fix: str | None = None
    path: str | None = None


# -- hosts ----------------------------------------------------------------------------------------
def hosts(home: Path, cwd: Path, *, self_test: bool = True) -> Iterator[Finding]:
    for host, target in TARGETS.items():
        user, project = home / target.path, cwd / target.path
        yield from _settings(host, user, "", cwd, self_test)
        if project != user and project.exists():
            yield from _settings(host, project, " --project", cwd, self_test)
    codex_config = home / ".codex" / "config.toml"
    if codex_config.exists():
        import tomllib

        try:
            tomllib.loads(codex_config.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            yield Finding("codex", PROBLEM, f"not valid TOML ({exc})", f"fix or move {codex_config}", str(codex_config))
            return
    for hooks_path in dict.fromkeys((home / TARGETS["codex"].path, cwd / TARGETS["codex"].path)):
        yield from codex_enabled(codex_config, hooks_path)


def codex_enabled(config_path: Path, hooks_path: Path) -> Iterator[Finding]:
    """Codex runs guard's hooks only with its hooks feature on and each hook trusted by the person."""
    from guard.integrations import codex_trust

    try:
        doc = json.loads(hooks_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return  # not installed there, or already reported as unreadable
    if not any(codex_trust.handlers(doc)):
        return
    config = codex_trust.read_config(config_path)
    if config is None:
        return  # reported above
    where = str(config_path)
    feature = codex_trust.feature_problem(config)
    if feature:
        yield Finding("codex", PROBLEM, feature, codex_trust.FEATURE_FIX.format(config=config_path), where)
    missing = codex_trust.untrusted(config, hooks_path, doc)
    if missing:
        why = (
            f"guard's {', '.join(missing)} hook(s) in {hooks_path} are not trusted yet: "
            "Codex runs them only once the person trusts them (codex exec silently runs every call unguarded)"
        )
        yield Finding("codex", PROBLEM, why, codex_trust.TRUST_FIX, where)
    if not feature and not missing:
        yield Finding("codex", OK, f"hooks feature on, guard's hooks in {hooks_path} trusted", None, where)


def _settings(host: str, path: Path, where: str, cwd: Path | None = None, self_test: bool = False) -> Iterator[Finding]:
    fix = f"guard install {host}{where}"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        yield Finding(host, INFO, "not installed", fix, str(path))
        return
    except (OSError, UnicodeDecodeError) as exc:
        yield Finding(host, PROBLEM, f"cannot read the settings ({exc})", f"check {path}", str(path))
        return
    try:
        doc = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        why = f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); the host may ignore it"
        yield Finding(host, PROBLEM, why, f"fix or move {path}, then {fix}", str(path))
        return
    handlers = dict(_handlers(doc, host))
    if not handlers:
        yield Finding(host, INFO, "not installed", fix, str(path))
        return
    missing = [event for event, _, _ in TARGETS[host].events if event not in handlers]
    commands = list(dict.fromkeys(handlers.values()))
    fix += _flags_of(commands[0], host)
    if missing:
        yield Finding(host, PROBLEM, f"guard is missing from {', '.join(missing)}", fix, str(path))
    for command in commands:
        trouble = judge_command(command, host)
        if trouble:
            yield Finding(host, PROBLEM, f"{trouble}: {command}", fix, str(path))
    if not missing and not any(judge_command(c, host) for c in commands):
        yield Finding(host, OK, "installed: this guard, by absolute path, isolated", None, str(path))
    if self_test and cwd is not None:
        yield from _self_test(host, path, handlers, cwd, fix)


def _self_test(host: str, path: Path, handlers: dict[str, str], cwd: Path, fix: str) -> Iterator[Finding]:
    """The installed command for a shell call, run as the host runs it: a read allowed, ``rm -rf /`` denied."""
    from guard.integrations import selftest

    event = selftest.DIALECTS[host][0] if host in selftest.DIALECTS else None
    command = handlers.get(event) if event else None
    if command is None:
        return
    outcomes = selftest.self_test(host, command, cwd)
    wrong = [o for o in outcomes if not o.ok]
    if not wrong:
        said = ", ".join(f"{o.command} -> {o.answer}" for o in outcomes)
        yield Finding(host, OK, f"self-test through the installed {event} hook: {said}", None, str(path))
        return
    for o in wrong:
        got = o.answer or "no answer"
        detail = f" ({o.detail})" if o.detail else ""
        why = f"self-test through the installed {event} hook: {o.command} -> {got}, expected {o.expected}{detail}"
        yield Finding(host, PROBLEM, why, fix, str(path))


def _handlers(doc: Any, host: str) -> Iterator[tuple[str, str]]:
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    if not isinstance(hooks, dict):
        return
    for event, entries in hooks.items():
        for entry in entries if isinstance(entries, list) else []:
            inner = entry.get("hooks", [entry]) if isinstance(entry, dict) else []
            for handler in inner if isinstance(inner, list) else []:
                if is_ours(handler, host) and isinstance(handler.get("command"), str):
                    yield event, handler["command"]


def judge_command(command: str, host: str) -> str | None:
    """Why this hook command is not this guard by absolute path with isolated imports, or None."""
    for code in (2, 0):
        command = command.removesuffix(CRASH_GUARD.format(code=code))
    try:
        argv = shlex.split(command)
    except ValueError:
        return "the command does not parse"
    if "hook" not in argv:
        return "the command does not run guard hook"
    head = argv[: argv.index("hook")]
    if not head or not os.path.isabs(head[0]):
        return "runs a guard found on PATH (fails where the host's PATH lacks it; PATH decides which guard)"
    if not os.path.exists(head[0]):
        return f"{head[0]} does not exist"
    try:
        expected = python_argv()
    except InstallError as exc:
        return str(exc)
    if head == expected:
        return None
    if head[-2:] == ["-m", "guard"] and "-I" not in head[1:-2] and not {"-E", "-P"} <= set(head[1:-2]):
        return "not isolated: a guard.py, guard/ or json.py in the agent's project can answer for guard"
    if head[0] != expected[0]:
        return f"runs another interpreter than this guard's ({expected[0]})"
    return "not the command guard install writes"


def _flags_of(command: str, host: str) -> str:
    """The options after ``hook HOST`` (``--headless``, ``--workspace DIR``), kept by the fix."""
    for code in (2, 0):
        command = command.removesuffix(CRASH_GUARD.format(code=code))
    try:
        argv = shlex.split(command)
        rest = argv[argv.index("hook") + 2 :]
    except ValueError:
        return ""
    return "".join(f" {shlex.quote(a)}" for a in rest)


# -- the daemon -----------------------------------------------------------------------------------
def daemon_health(workspace: Path) -> Finding:
    from guard import __version__
    from guard.integrations import daemon

    path = daemon.socket_path(workspace)
    info = daemon.call(workspace, {"v": daemon.PROTOCOL, "op": "ping"}, timeout=2.0)
    if info is None:
        if path.exists():
            fix = f"guard serve --stop --workspace {shlex.quote(str(workspace))}"
            return Finding("daemon", INFO, f"a socket at {path} does not answer; the next hook replaces it", fix)
        return Finding("daemon", INFO, "not running (a hook starts it on demand)")
    if info.get("version") != __version__:
        fix = f"guard serve --stop --workspace {shlex.quote(str(workspace))}"
        return Finding(
            "daemon", PROBLEM, f"pid {info.get('pid')} runs guard {info.get('version')}, not {__version__}", fix
        )
    return Finding("daemon", OK, f"running, pid {info.get('pid')}, guard {__version__}", None, str(path))


# -- the workspace --------------------------------------------------------------------------------
def workspace_permissions(workspace: Path) -> Iterator[Finding]:
    quoted = shlex.quote(str(workspace))
    try:
        st = os.lstat(workspace)
    except FileNotFoundError:
        yield Finding("workspace", INFO, f"{workspace} does not exist yet (guard creates it 0700)")
        return
    if not stat.S_ISDIR(st.st_mode):
        yield Finding("workspace", PROBLEM, f"{workspace} is not a directory", f"mv {quoted} {quoted}.bak")
        return
    if st.st_uid != os.getuid():
        yield Finding("workspace", PROBLEM, f"{workspace} belongs to uid {st.st_uid}", f"chown -R $(id -u) {quoted}")
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o077:
        yield Finding("workspace", PROBLEM, f"{workspace} is {mode:04o}, not 0700", f"chmod 700 {quoted}")
    loose = []
    for entry in sorted(workspace.iterdir()):
        try:
            est = os.lstat(entry)
        except OSError:
            continue
        if stat.S_ISLNK(est.st_mode) or stat.S_ISSOCK(est.st_mode) or entry.name in PERSONS_FILES:
            continue
        if stat.S_IMODE(est.st_mode) & 0o077:
            loose.append(entry)
    if loose:
        names = ", ".join(e.name for e in loose[:5]) + (" …" if len(loose) > 5 else "")
        files = " ".join(shlex.quote(str(e)) for e in loose if not e.is_dir())
        dirs = " ".join(shlex.quote(str(e)) for e in loose if e.is_dir())
        fix = " && ".join(f for f in (f"chmod 600 {files}" if files else "", f"chmod 700 {dirs}" if dirs else "") if f)
        yield Finding("workspace", PROBLEM, f"readable by others: {names}", fix)
    if not mode & 0o077 and not loose and st.st_uid == os.getuid():
        yield Finding("workspace", OK, f"{workspace}: 0700, its files private", None, str(workspace))


def run_all(home: Path, cwd: Path, workspace: Path, *, self_test: bool = True) -> list[Finding]:
    return [*hosts(home, cwd, self_test=self_test), daemon_health(workspace), *workspace_permissions(workspace)]
