"""``guard hook HOST``'s first stop: ask a running ``guard serve``, importing next to nothing.

A hook runs once per tool call, so with the daemon up the process should cost about what Python
costs to start. ``python -m guard hook …`` (``guard/__main__.py``) and the ``guard`` command
(``guard.cli.main``) hand the arguments here before anything else is imported. This module and
the daemon client it uses (``guard.integrations.daemon``) import only ``os``, ``sys``, ``json`` and
``socket`` (``tomllib`` when ``guard.toml`` has hook settings): no typing, pathlib, argparse,
attrs, loguru, psutil or numpy.

``main`` returns None, before reading standard input, whenever the full path should answer:
``--help`` or a typo (the parser explains), an unknown host (the host-specific refusal),
``--no-daemon`` or ``hooks.daemon = "off"``.

When no daemon answers, ``main`` returns the event it read and its caller (``guard/__main__.py``,
``guard.cli.main``) hands it to :func:`guard.cli.hook.program`, which decides it in this process
and starts the daemon for the next call; this module never imports the decision side (no import
cycle). Either way the process ends with :func:`finish`, not the interpreter's teardown.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # (typing itself costs ~2 ms)
if TYPE_CHECKING:
    from typing import Any, NoReturn

FLAGS = frozenset({"--headless", "--no-ask", "--no-daemon"})
HOOK_TIMEOUT = 10.0  # seconds: under every hook timeout guard installs (30 s) or that a host defaults to
# Host names and aliases, as ``guard.integrations.hosts`` knows them (a test keeps the two equal).
HOST_NAMES = frozenset({"claude-code", "codex", "gemini", "cursor", "openclaw"})
ALIASES = {"claude": "claude-code", "claude_code": "claude-code", "gemini-cli": "gemini", "gemini_cli": "gemini"}


def refusal(host: str, message: str) -> tuple[dict[str, Any], int]:
    """What ``host`` reads as a refusal of a call guard could not judge, and the exit code.

    The one declaration of each host's refusal shape: the hosts' ``unreadable`` replies and the
    hook's last resort (which must answer even when ``guard.integrations.hosts`` fails to import) are
    both built here. A host guard cannot name gets Claude Code's shape and exit 2, which most
    hosts read as "blocked, stderr says why".
    """
    pre_deny = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": message,
        }
    }
    if host == "codex":  # an exit code other than 0 reaches Codex as a failed hook
        return pre_deny, 0
    if host == "gemini":
        return {"decision": "deny", "reason": message}, 2
    if host == "cursor":
        return {"permission": "deny", "continue": False, "user_message": message, "agent_message": message}, 0
    if host == "openclaw":
        return {"block": True, "blockReason": message}, 0
    return {"decision": "block", "reason": message, **pre_deny}, 2


def parse(argv: list[str]) -> tuple[str, str | None, set[str]] | None:
    """``HOST [--workspace DIR] [--headless] [--no-ask] [--no-daemon]``; None: the full parser's job."""
    host: str | None = None
    workspace: str | None = None
    flags: set[str] = set()
    it = iter(argv)
    for arg in it:
        if arg in FLAGS:
            flags.add(arg)
        elif arg == "--workspace":
            workspace = next(it, None)
            if workspace is None:
                return None
        elif arg.startswith("--workspace="):
            workspace = arg.partition("=")[2]
        elif arg in ("-h", "--help") or arg.startswith("-") or host is not None:
            return None
        else:
            host = arg
    return None if host is None else (host, workspace, flags)


def canonical_host(name: str) -> str | None:
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    return key if key in HOST_NAMES else None


def workspace_of(arg: str | None) -> str:
    """``guard.workspace.resolve`` on strings: explicit, else $GUARD_HOME, else ~/.guard, made absolute."""
    raw = arg or os.environ.get("GUARD_HOME") or "~/.guard"
    return os.path.join(os.getcwd(), os.path.expanduser(raw))


def hooks_table(workspace: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``[hooks]`` table of ``guard.toml``; tomllib is loaded only when the file mentions hooks."""
    try:
        with open(os.path.join(workspace, "guard.toml"), "rb") as f:
            raw = f.read()
    except OSError:
        return {}
    if b"hooks" not in raw:
        return {}
    import tomllib

    try:
        table = tomllib.loads(raw.decode("utf-8")).get("hooks", {})
    except (ValueError, AttributeError):
        return {}
    return table if isinstance(table, dict) else {}


def daemon_mode(hooks: dict[str, Any]) -> str:
    """``hooks.daemon``: the file, then the env."""
    value = hooks.get("daemon")
    if value in ("auto", "off"):
        return str(value)
    value = os.environ.get("GUARD_HOOKS_DAEMON", "").strip().lower()
    return value if value in ("auto", "off") else "auto"


def hook_timeout(hooks: dict[str, Any]) -> float:
    """``hooks.timeout_seconds``: the file, then the env, then 10 s (a bad value falls through)."""
    for raw in (hooks.get("timeout_seconds"), os.environ.get("GUARD_HOOKS_TIMEOUT_SECONDS")):
        if raw is None or isinstance(raw, bool):
            continue
        try:
            value = float(raw)
        except (TypeError, ValueError):
            continue
        if 0.05 <= value <= 3600:
            return value
    return HOOK_TIMEOUT


def ask_daemon(
    workspace: str | os.PathLike[str], host: str, data: bytes, *, headless: bool, may_ask: bool, limit: float
) -> tuple[str, int, str] | str | None:
    """The daemon's answer; None when no daemon answered (decide here); a refusal message when a
    live daemon went silent (deciding again here could outlast the host's own timeout)."""
    from guard import __version__
    from guard.integrations import daemon

    answer: tuple[str, int, str] | None
    try:
        answer = daemon.hook(
            workspace,
            host,
            data,
            headless=headless,
            may_ask=may_ask,
            version=__version__,
            timeout=min(daemon.ANSWER_TIMEOUT, limit / 2),
        )
    except daemon.Unanswered as exc:
        return f"guard: {exc}; the call is refused, retry it."
    return answer


def emit(out: str, code: int, err: str) -> int:
    try:
        sys.stdout.write(out)
        sys.stdout.flush()
        if err:
            sys.stderr.write(err)
    except BrokenPipeError:
        pass
    return code


def finish(code: int) -> NoReturn:
    """End a hook process whose answer is out: flush, run the ``atexit`` handlers, then exit
    without the interpreter's teardown (freeing every module and object of one decision costs
    ~15 ms, and this process has nothing left to do). A non-daemon thread still running gets the
    ordinary exit, which waits for it."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a host that closed the pipe has its answer or none
        pass
    threading = sys.modules.get("threading")
    if threading is not None and any(
        t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()
    ):
        sys.exit(code)
    import atexit

    atexit._run_exitfuncs()
    os._exit(code)


def main(argv: list[str]) -> int | bytes | None:
    """The daemon's answer, printed: its exit code. The event read (bytes) when no daemon answered:
    the caller decides it in-process (``guard.cli.hook.main``). None, before reading standard input,
    when the full path should answer."""
    parsed = parse(argv)
    if parsed is None:
        return None
    host_arg, workspace_arg, flags = parsed
    host = canonical_host(host_arg)
    if host is None or "--no-daemon" in flags:
        return None
    workspace = workspace_of(workspace_arg)
    hooks = hooks_table(workspace)
    if daemon_mode(hooks) == "off":
        return None
    data = sys.stdin.buffer.read()
    headless, may_ask = "--headless" in flags, "--no-ask" not in flags
    try:
        answered = ask_daemon(workspace, host, data, headless=headless, may_ask=may_ask, limit=hook_timeout(hooks))
    except Exception:  # the client failing is no answer: decide in-process
        answered = None
    if isinstance(answered, tuple):
        return emit(*answered)
    if isinstance(answered, str):
        return emit(*last_resort(host, answered))
    return data


def last_resort(host: str, message: str) -> tuple[str, int, str]:
    """A refusal in ``host``'s own format (stdout, exit code, stderr), for when even
    ``guard.integrations.hosts`` may be what failed."""
    import json

    output, code = refusal(canonical_host(host) or host, message)
    return json.dumps(output) + "\n", code, message + "\n"
