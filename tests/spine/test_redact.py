"""Secrets in parameters never reach the workspace."""

from __future__ import annotations

import pytest

from guard.redact import MASK, redact, redact_text

SECRETS = [
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
    "xoxb-123456789012-abcdefghij",
    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
]


@pytest.mark.parametrize("secret", SECRETS)
def test_token_shapes_are_masked(secret: str) -> None:
    out = redact_text(f"export X={secret} && run")
    assert secret not in out and MASK in out


def test_password_in_url_bearer_and_flags() -> None:
    text = (
        "curl https://bob:hunter2@example.com -H 'Authorization: Bearer abcdefghijklmnop1234' "
        "--password=swordfish mysql -p --token s3cr3tvalue"
    )
    out = redact_text(text)
    for secret in ("hunter2", "abcdefghijklmnop1234", "swordfish", "s3cr3tvalue"):
        assert secret not in out
    assert "example.com" in out and "curl" in out


def test_private_key_block() -> None:
    key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----"
    assert "b3BlbnNzaC1rZXktdjEAAAA" not in redact_text(f"echo '{key}' > k")


def test_secret_named_keys_and_env_assignments() -> None:
    out = redact(
        {
            "password": "pw123",
            "nested": {"api_key": "k"},
            "command": "DB_PASSWORD=abc make",
            "n": 3,
            "ok": True,
            "list": ["TOKEN=zzz"],
        }
    )
    assert out["password"].startswith(MASK) and out["nested"]["api_key"].startswith(MASK)
    assert "abc" not in out["command"] and "zzz" not in out["list"][0]
    assert out["n"] == 3 and out["ok"] is True


def test_ordinary_text_is_unchanged() -> None:
    for text in ("git status", "ls -la ~/projects", "grep -r token src/", "echo password"):
        assert redact_text(text) == text


def test_no_secret_reaches_any_workspace_file(make_guard, workspace) -> None:  # type: ignore[no-untyped-def]
    g = make_guard()
    cmd = f"curl -H 'Authorization: Bearer {SECRETS[1]}' https://u:pw9999@h/x?k={SECRETS[0]}"
    g.decide("bash", {"command": cmd, "api_key": "plainsecret"}, session_id="s")
    g.record_result("bash", {"command": cmd}, success=False, error=f"failed with {SECRETS[0]}")
    g.record_interaction("bash", {"command": cmd}, approved=True)
    g.flush()
    blob = b"".join(f.read_bytes() for f in workspace.rglob("*") if f.is_file())
    for secret in (SECRETS[0], SECRETS[1], "pw9999", "plainsecret"):
        assert secret.encode() not in blob
