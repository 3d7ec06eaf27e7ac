"""guard's exceptions.

GuardError
 ├── ToolBlocked (also PermissionError)          a call was blocked; carries the record
 │    └── ConfirmationRequired                    needs a human and none can answer
 ├── ConfigError (also ValueError)               a configuration value is unusable
 ├── InputError (also ValueError)                a tool call or event is malformed
 └── DuplicateCommand (also ValueError)          two static families claim one command name
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from guard.model import DecisionRecord


class GuardError(Exception):
    """Root of every exception guard raises on purpose."""


class ToolBlocked(GuardError, PermissionError):
    """The call was not allowed to run. ``record`` says why."""

    def __init__(self, record: DecisionRecord, message: str | None = None) -> None:
        self.record = record
        super().__init__(message or f"guard blocked {record.tool}: {record.summary()}. {_instead(record)}")


class ConfirmationRequired(ToolBlocked):
    """The call needs a person's confirmation and no confirm callback was given (``@guarded(confirm=...)``)."""

    def __init__(self, record: DecisionRecord) -> None:
        super().__init__(
            record,
            f"guard needs a confirmation for {record.tool} and nobody can answer here: {record.summary()}. "
            "Do not retry it or work around it; tell the person which call needs their approval.",
        )


def _instead(record: DecisionRecord) -> str:
    """What the agent reading the exception should do: the rule's safer alternative, else stop and say so.

    It names no way to switch guard off (no command, setting or environment variable): the
    exception text reaches the agent as the tool's error.
    """
    alternative = next((r.alternative for r in record.reasons if r.alternative), None)
    if alternative:
        return f"Instead: {alternative}"
    return "Do not retry it or work around it; tell the person what you wanted to do, and they can approve it."


class ConfigError(GuardError, ValueError):
    """A configuration value cannot be used."""


class InputError(GuardError, ValueError):
    """A tool call, hook event or parameter is malformed."""


class DuplicateCommand(GuardError, ValueError):
    """Two static rule families register a handler for the same command name (raised at import)."""
