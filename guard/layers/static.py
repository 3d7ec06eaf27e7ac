"""Static risk layer (spine version): a small, real classifier of the call alone.

Replaced by the full parser-based classifier in ``guard/static``; this version knows a
read-only allowlist, a handful of destructive and remote-code shapes, and treats
anything it cannot tokenise as unknown (never safe).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from guard.config import Config
from guard.layers.base import Context
from guard.model import AUTO_ALLOW, BLOCK, REQUEST_CONFIRM, Reason, Risk, ToolCall, Verdict

_READ_ONLY = frozenset(
    [
        "ls",
        "cat",
        "head",
        "tail",
        "less",
        "wc",
        "grep",
        "rg",
        "pwd",
        "whoami",
        "id",
        "hostname",
        "uptime",
        "date",
        "echo",
        "stat",
        "du",
        "df",
        "ps",
    ]
)
_CRITICAL = (
    (
        re.compile(r"\brm\s+-[a-zA-Z]*[rR][a-zA-Z]*\s+(/|~|\$HOME)\S*\s*$"),
        "G101",
        "recursive delete of the root or home directory",
    ),
    (
        re.compile(r"\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b"),
        "G110",
        "runs code downloaded from the internet",
    ),
)


# shlex and the critical patterns are quadratic on some long inputs (a 1 MB single word: ~25 s);
# longer commands are not parsed and can never be auto-allowed.
MAX_PARSED = 16_384


def classify(call: ToolCall, workspace: Path | None = None) -> Verdict:
    kind = call.kind
    if kind == "bash":
        command = call.params.get("command")
        if not isinstance(command, str):
            return Verdict(
                "static", Risk.MEDIUM, ceiling=REQUEST_CONFIRM, reasons=[Reason("G001", "no command text to judge")]
            )
        if len(command) > MAX_PARSED:
            return Verdict(
                "static",
                Risk.MEDIUM,
                ceiling=REQUEST_CONFIRM,
                reasons=[Reason("G002", f"the command is too long to parse ({len(command):,} characters)")],
            )
        for pattern, rule, why in _CRITICAL:
            if pattern.search(command):
                return Verdict("static", Risk.CRITICAL, decision=BLOCK, reasons=[Reason(rule, why)])
        try:
            words = shlex.split(command)
        except ValueError:
            return Verdict(
                "static", Risk.MEDIUM, ceiling=REQUEST_CONFIRM, reasons=[Reason("G002", "the command cannot be parsed")]
            )
        if words and words[0] in _READ_ONLY and not re.search(r"[>|;&`$]", command):
            return Verdict(
                "static",
                Risk.SAFE,
                floor=AUTO_ALLOW,
                tags={"read_only"},
                reasons=[Reason("G150", f"{words[0]} only reads")],
            )
        return Verdict(
            "static", Risk.MEDIUM, reasons=[Reason("G199", "an ordinary command; outcome depends on context")]
        )
    if kind in ("read", "glob", "grep"):
        return Verdict(
            "static", Risk.SAFE, floor=AUTO_ALLOW, tags={"read_only"}, reasons=[Reason("G150", f"{kind} only reads")]
        )
    if kind in ("write", "edit"):
        return Verdict("static", Risk.LOW, tags={"write"}, reasons=[Reason("G160", "a file edit")])
    return Verdict(
        "static", Risk.MEDIUM, tags={"unknown_tool"}, reasons=[Reason("G198", f"unknown tool {call.tool!r}")]
    )


class StaticLayer:
    name = "static"

    def __init__(self, config: Config, workspace: Path | None = None, home: str | None = None) -> None:
        self.workspace = workspace

    def __call__(self, call: ToolCall, ctx: Context) -> Verdict:
        return classify(call, self.workspace)

    def explain(self, call: ToolCall) -> dict[str, Any]:
        return classify(call, self.workspace).to_dict()
