"""Secrets in a call's parameters never reach a file in the workspace.

Calls carrying AWS keys, GitHub and bearer tokens, passwords in URLs and private-key blocks
go through every way in (``decide``, ``record_result``, ``record_interaction``, ``@guarded``,
``feed`` in process and ``guard feed`` / ``guard check --save`` as commands); then every
byte of every file under the workspace is searched for each secret.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from guard import guarded
from guard.core import Guard
from guard.feed import feed

from .conftest import CONFIG, run_guard

AWS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2 + "kLmN"
GITHUB_PAT = "github_pat_11ABCDEFG0" + "x9Y8z7W6v5" * 7
BEARER = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyMTIzIn0.c2lnbmF0dXJlc2lnbmF0dXJl"
OPAQUE_BEARER = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5"
URL_PASSWORD = "s3cr3t-Pa55w0rd"
KEY_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
PRIVATE_KEY = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY}\nQyNTUxOQAAACDx\n-----END OPENSSH PRIVATE KEY-----\n"
DB_PASSWORD = "hunter2-but-longer"

SECRETS = [AWS_KEY_ID, AWS_SECRET, GITHUB_TOKEN, GITHUB_PAT, BEARER, OPAQUE_BEARER, URL_PASSWORD, KEY_BODY, DB_PASSWORD]

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("bash", {"command": f"AWS_ACCESS_KEY_ID={AWS_KEY_ID} AWS_SECRET_ACCESS_KEY={AWS_SECRET} aws s3 ls"}),
    ("bash", {"command": f"git clone https://alice:{URL_PASSWORD}@github.com/org/repo.git"}),
    ("bash", {"command": f"curl -H 'Authorization: Bearer {BEARER}' https://api.example.com/v1/me"}),
    ("bash", {"command": f"curl -H 'Authorization: Bearer {OPAQUE_BEARER}' https://api.example.com"}),
    ("bash", {"command": f"gh auth login --with-token {GITHUB_TOKEN}"}),
    ("bash", {"command": f"export GITHUB_TOKEN={GITHUB_PAT} && gh pr list"}),
    ("bash", {"command": f"psql postgresql://app:{DB_PASSWORD}@db:5432/app"}),
    ("write", {"file_path": "/home/u/.ssh/id_ed25519", "content": PRIVATE_KEY}),
    ("web_fetch", {"url": "https://api.example.com", "headers": {"Authorization": f"token {GITHUB_TOKEN}"}}),
    ("mcp__db__connect", {"password": DB_PASSWORD, "nested": [{"api_key": AWS_SECRET}, {"note": PRIVATE_KEY}]}),
]


def _leaks(root: Path) -> dict[str, list[str]]:
    """secret -> the files under ``root`` holding it (every file, binary included)."""
    found: dict[str, list[str]] = {}
    files = [p for p in root.rglob("*") if p.is_file()]
    assert files, f"nothing was written under {root}"
    for path in files:
        data = path.read_bytes()
        for secret in SECRETS:
            if secret.encode() in data or json.dumps(secret)[1:-1].encode() in data:
                found.setdefault(secret, []).append(str(path.relative_to(root)))
    return found


def _through_the_api(g: Guard) -> None:
    for i, (tool, params) in enumerate(CALLS):
        sid = f"secret-session-{i}"
        g.decide(tool, params, session_id=sid)
        g.explain(tool, params, session_id=sid)
        g.record_result(
            tool, params, session_id=sid, success=False, error=f"exit 1: bad credentials for {params}", duration_ms=3
        )
        g.record_interaction(tool, params, session_id=sid, approved=i % 2 == 0, satisfaction=4)


class TestNoSecretReachesTheWorkspace:
    def test_decide_record_and_explain(self, tmp_path: Path) -> None:
        ws = tmp_path / "ws"
        with Guard(ws, CONFIG) as g:
            _through_the_api(g)
            g.flush()
        assert _leaks(ws) == {}

    def test_guarded_tools_and_their_errors(self, tmp_path: Path) -> None:
        ws = tmp_path / "ws"
        with Guard(ws, CONFIG) as g:

            @guarded(tool="bash", guard=g, confirm=lambda record: True)
            def bash(command: str) -> None:
                raise RuntimeError(f"auth failed: {command}")

            for _, params in CALLS[:7]:
                with pytest.raises(RuntimeError):
                    bash(params["command"])
        assert _leaks(ws) == {}

    def test_feed_in_process(self, tmp_path: Path) -> None:
        ws = tmp_path / "ws"
        lines = []
        for tool, params in CALLS:
            lines.append(json.dumps({"event": "tool_dispatch", "tool": tool, "params": params, "session_id": "s"}))
            lines.append(
                json.dumps(
                    {"event": "tool_result", "tool": tool, "params": params, "status": "failure", "error": str(params)}
                )
            )
            lines.append(json.dumps({"event": "user_confirmation", "tool": tool, "params": params, "action": "denied"}))
        lines.append("not json " + GITHUB_TOKEN)  # a malformed line echoes its input to stdout, not to a file
        with Guard(ws, CONFIG) as g:
            outs = list(feed(g, lines))
        assert len(outs) == len(CALLS) + 1
        assert _leaks(ws) == {}

    def test_the_commands(self, tmp_path: Path) -> None:
        ws = tmp_path / "ws"
        stream = "".join(json.dumps({"tool": t, "params": p, "session_id": "cli"}) + "\n" for t, p in CALLS)
        assert run_guard("feed", "--workspace", str(ws), stdin=stream.encode()).returncode == 0
        for tool, params in CALLS[:3]:
            proc = run_guard("check", tool, json.dumps(params), "--save", "--workspace", str(ws))
            assert proc.returncode in (0, 10, 20), proc.stderr
        assert _leaks(ws) == {}

    @pytest.mark.lancedb
    def test_with_the_lancedb_memory(self, tmp_path: Path) -> None:
        """The memory store is in the workspace too: it must hold no secret either."""
        if importlib.util.find_spec("guard.memory.lance") is None:
            pytest.skip("guard.memory.lance (the LanceDB memory, issue 5) is not on this branch")
        ws = tmp_path / "ws"
        g = Guard(ws, {"system.health": 90}, memory_backend="lancedb")
        try:
            wait_ready = getattr(g.state.memory, "wait_ready", None)
            if callable(wait_ready):
                assert wait_ready(60)
            _through_the_api(g)
            g.flush()
        finally:
            g.close()
        assert (ws / "memory.lance").exists()
        assert _leaks(ws) == {}

    def test_the_check_is_not_vacuous(self, tmp_path: Path) -> None:
        """The search finds a secret written without redaction (so an empty result means something)."""
        (tmp_path / "raw.jsonl").write_text(json.dumps({"params": CALLS[-1][1]}))
        assert DB_PASSWORD in _leaks(tmp_path)
        assert KEY_BODY in _leaks(tmp_path)
