"""What every host dialect shares: the event a hook delivers and the reply it prints.

A host class knows two things about its agent host: how to read a hook payload into an
``Event`` and how to shape each answer (allow, ask, deny, ...) into the JSON the host
expects. What the answer *is* comes from ``Guard.decide`` via ``guard.integrations.hosts.flow``.

Kinds of event:

- ``pre``: a tool is about to run (PreToolUse, BeforeTool, beforeShellExecution, before_tool_call)
- ``permission``: the host is about to show its own approval dialog (PermissionRequest)
- ``post``: a tool ran (PostToolUse, PostToolUseFailure, AfterTool, after_tool_call, ...)
- ``prompt``: the person sent a new prompt (UserPromptSubmit, BeforeAgent, beforeSubmitPrompt)
- ``stop``: the agent's turn ended
- ``resolution``: the person answered an approval (OpenClaw ``onResolution``)
- ``other``: an event guard has nothing to say about
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from guard import hookclient, lazyre
from guard.errors import InputError
from guard.namedtuple import NamedTuple

if TYPE_CHECKING:
    from guard.integrations.hosts.host_rule_files import RuleFile

PRE = "pre"
PERMISSION = "permission"
POST = "post"
PROMPT = "prompt"
STOP = "stop"
RESOLUTION = "resolution"
OTHER = "other"

ALLOW = "allow"
DENY = "deny"


@attrs.frozen
class Event:
    """One hook event, in guard's terms."""

    host: str
    name: str
    kind: str
    tool: str | None = None
    params: Mapping[str, Any] = attrs.field(factory=dict)
    session_id: str | None = None
    cwd: str | None = None
    agent_id: str | None = None
    call_id: str | None = None
    success: bool | None = None  # post: None when the host does not say how the call went
    error: str | None = None
    duration_ms: float | None = None
    interrupted: bool = False
    refused: bool = False  # post: the host says the call did not run (guard refused it, or nobody approved it)
    prompt: str | None = None
    answer: bool | None = None  # resolution: approved / denied / no answer
    headless: bool = False  # the payload says nobody can answer a prompt
    declared: str | None = None  # the kind the application declared its tool (framework adapters only)
    via: str = "hook"  # who decided: the hook process itself or ``guard serve`` (the decision log says)


class Reply(NamedTuple):
    """What the hook process prints and how it exits. ``output=None`` prints nothing."""

    output: Mapping[str, Any] | None
    exit_code: int = 0
    stderr: str = ""

    @property
    def stdout(self) -> str:
        if self.output is None:
            return ""
        return json.dumps(self.output, ensure_ascii=False) + "\n"


class Host:
    """A host's dialect. Subclasses set ``name`` and ``events`` and shape the replies."""

    name = "host"
    event_key = "hook_event_name"
    events: ClassVar[Mapping[str, str]] = {}
    # PermissionRequest: may guard answer "allow" for a call it would auto-allow? (Codex: it is the approver)
    permission_allows = False

    def kind_of(self, payload: Mapping[str, Any]) -> str | None:
        """The event's kind, ``other`` for events guard ignores, None when the payload names none."""
        name = payload.get(self.event_key)
        if not isinstance(name, str) or not name:
            return None
        return self.events.get(name, OTHER)

    def parse(self, payload: Mapping[str, Any], env: Mapping[str, str]) -> Event:
        raise NotImplementedError

    def can_ask(self, event: Event) -> bool:
        return True

    def rule_files(self, event: Event, home: str) -> Sequence[RuleFile]:
        """The host's own permission-rule files for this event, most general first (none by default;
        see :mod:`guard.integrations.hosts.host_rules`)."""
        return ()

    # -- replies ------------------------------------------------------------------------
    def allow(self, event: Event, reason: str) -> Reply:
        raise NotImplementedError

    def ask(self, event: Event, reason: str, risk: str | None = None) -> Reply:
        raise NotImplementedError

    def deny(self, event: Event, why: str, instead: str) -> Reply:
        raise NotImplementedError

    def permission(self, event: Event, behavior: str | None, reason: str) -> Reply:
        """Answer a host's approval dialog: ``allow``, ``deny``, or None to let the person answer."""
        return self.quiet(event)

    def block_prompt(self, event: Event, reason: str) -> Reply:
        raise NotImplementedError

    def quiet(self, event: Event) -> Reply:
        """Nothing to say: the host carries on as it would without guard."""
        return Reply({})

    def warn(self, event: Event, message: str) -> Reply:
        """guard failed on an event where refusing makes no sense (a result, a prompt): say so."""
        return Reply({"systemMessage": message})

    def unreadable(self, message: str) -> Reply:
        """Input guard cannot even classify: refuse on every channel the host reads (the shape
        is declared once, in ``guard.hookclient.refusal``, which the hook's last resort shares)."""
        output, code = hookclient.refusal(self.name, message)
        return Reply(output, exit_code=code, stderr=message + "\n")

    def failed(self, event: Event, message: str, *, may_ask: bool) -> Reply:
        """Fail closed: a tool call guard could not judge is asked about (when someone can answer) or denied."""
        if event.kind == PRE:
            if may_ask and self.can_ask(event):
                return self.ask(event, f"{message} Confirm only if you expected this call.")
            return self.deny(event, message, "Do not retry it now; tell the user that guard could not check this call.")
        if event.kind == PERMISSION:
            return self.permission(event, DENY, message)
        return self.warn(event, message)


# -- reading payloads ----------------------------------------------------------------------
def opt_str(payload: Mapping[str, Any], key: str) -> str | None:
    value = payload.get(key)
    if value is None:
        return None
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return str(value)
    raise InputError(f"'{key}' must be a string, got {type(value).__name__}")


def req_str(payload: Mapping[str, Any], key: str) -> str:
    value = payload.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"'{key}' must be a non-empty string, got {_describe(value)}")
    return value


def req_obj(payload: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = payload.get(key)
    if isinstance(value, str):  # some hosts send tool input as a JSON string
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise InputError(f"'{key}' is a string but not JSON: {value[:80]!r}") from None
    if not isinstance(value, dict):
        raise InputError(f"'{key}' must be a JSON object, got {_describe(value)}")
    return value


def opt_number(payload: Mapping[str, Any], key: str) -> float | None:
    value = payload.get(key)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def _describe(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__


# How shells report their exit status in a tool's text output: Claude Code's ``Exit code 2``, Codex's
# ``Exit code: 1`` / ``Process exited with code 1`` header lines, Gemini CLI's ``Exit Code: 2`` line.
_EXIT_LINE = lazyre.compile(r"^[ \t]*(?:exit[ _]code|process exited with code)\b[ \t:=]*(-?\d+)[ \t]*$", re.I | re.M)
_HEADER_END = lazyre.compile(r"^Output:", re.M)
_TAIL = 2048


def exit_code_in(text: str, *, tail: bool = False) -> int | None:
    """The exit status a shell tool's output text reports, else None.

    Only where a host puts it, so a command that *prints* ``Exit code: 1`` is not misread: the
    header before the ``Output:`` line (Claude Code, Codex), or with ``tail`` the last such line
    of the text (Gemini CLI writes ``Exit Code: N`` after the output).
    """
    if tail:
        found = list(_EXIT_LINE.finditer(text[-_TAIL:]))
        return int(found[-1].group(1)) if found else None
    end = _HEADER_END.search(text, 0, 4096)
    header = text[: end.start()] if end else text.split("\n", 3)[0] if "\n" in text else text
    match = _EXIT_LINE.search(header[:4096])
    return int(match.group(1)) if match else None


def outcome_of(response: Any) -> tuple[bool | None, str | None]:
    """How a call went, from a host's tool response: (success, error); success None = unknown.

    Understands ``success``/``ok`` flags, ``exit_code``/``exitCode`` (also under ``details`` or
    ``metadata``), MCP's ``isError``, an ``error`` field, a user interrupt (unknown, not a
    failure), output text whose header reports ``Exit code N`` (also inside ``output``), and a
    response that is itself JSON text (Codex). Any other response means the tool ran and
    returned: success.
    """
    if response is None:
        return None, None
    if isinstance(response, str) and response.lstrip().startswith("{"):
        try:
            decoded = json.loads(response)
        except ValueError:
            decoded = None
        if isinstance(decoded, Mapping):
            response = decoded
    if isinstance(response, Mapping):
        for key in ("success", "ok"):
            if isinstance(response.get(key), bool):
                ok = response[key]
                return ok, None if ok else _error_text(response.get("error")) or f"{key}: false"
        nested = [response.get(k) for k in ("details", "metadata")]
        for where in (response, *(n for n in nested if isinstance(n, Mapping))):
            for key in ("exit_code", "exitCode", "returncode"):
                code = where.get(key)
                if isinstance(code, int) and not isinstance(code, bool):
                    return code == 0, None if code == 0 else f"Exit code {code}"
        if response.get("isError") is True or response.get("is_error") is True:
            return False, _error_text(response.get("content")) or "the tool reported an error"
        if response.get("error"):
            return False, _error_text(response.get("error"))
        if response.get("interrupted") is True:
            return None, None
        output = response.get("output")
        if isinstance(output, str):
            code = exit_code_in(output)
            if code is not None:
                return code == 0, None if code == 0 else f"Exit code {code}"
        return True, None
    if isinstance(response, str):
        code = exit_code_in(response)
        if code is not None:
            line = next((m.group(0).strip() for m in _EXIT_LINE.finditer(response, 0, 4096)), "")
            return code == 0, None if code == 0 else line or f"Exit code {code}"
    return True, None


def _error_text(value: Any) -> str | None:
    if value is None or value is False:
        return None
    if isinstance(value, str):
        return value[:500]
    if isinstance(value, Mapping) and isinstance(value.get("message"), str):
        return str(value["message"])[:500]
    try:
        return json.dumps(value, ensure_ascii=False, default=str)[:500]
    except (TypeError, ValueError):
        return repr(value)[:500]
