"""Undoing database migrations asks (G466): a rollback runs the migrations' down steps, which drop
the tables and columns they added with the rows in them. Running migrations forward, their status
and other tasks keep running; a reset of the whole database keeps G163; a production target blocks
(G434). All commands here are data."""

from __future__ import annotations

from pathlib import Path

import pytest

from guard.core import Guard
from tests.conftest import claude_bash_hook
from tests.security.conftest import decide

ASK, ALLOW, BLOCK = "request_confirm", "auto_allow", "block"


@pytest.mark.parametrize(
    "command",
    [
        "bin/rails db:rollback STEP=3",
        "rails db:rollback",
        "rake db:migrate:down VERSION=20240101000000",
        "bin/rails db:migrate:redo",
        "mix ecto.rollback",
        "php artisan migrate:rollback",
        "alembic downgrade -1",
        "npx sequelize db:migrate:undo",
        "knex migrate:rollback",
        "typeorm migration:revert",
        "dbmate rollback",
        "flyway undo",
    ],
)
def test_a_rollback_asks(module_guard: Guard, command: str) -> None:
    assert decide(module_guard, command) == (ASK, {"G466"})


@pytest.mark.parametrize(
    "command",
    [
        "bin/rails db:migrate",
        "bin/rails db:migrate:status",
        "rails db:version",
        "alembic upgrade head",
        "alembic history",
        "flyway migrate",
        "knex migrate:latest",
        "mix ecto.migrate",
    ],
)
def test_forward_migrations_and_reads_still_run(module_guard: Guard, command: str) -> None:
    decision, rules = decide(module_guard, command)
    assert decision == ALLOW and "G466" not in rules


@pytest.mark.parametrize(
    ("command", "rule"),
    [("mix ecto.rollback --all", "G163"), ("alembic downgrade base", "G163"), ("bin/rails db:drop", "G163")],
)
def test_undoing_everything_is_still_a_reset(module_guard: Guard, command: str, rule: str) -> None:
    decision, rules = decide(module_guard, command)
    assert decision == ASK and rule in rules and "G466" not in rules


@pytest.mark.parametrize("command", ["RAILS_ENV=production bin/rails db:rollback", "alembic -x env=prod downgrade -1"])
def test_a_rollback_on_production_blocks(module_guard: Guard, command: str) -> None:
    decision, rules = decide(module_guard, command)
    assert decision == BLOCK and {"G434", "G466"} <= rules


def test_the_claude_code_hook_asks_before_a_rollback(fake_home: Path) -> None:
    asked = claude_bash_hook(fake_home, "bin/rails db:rollback STEP=3", cwd=fake_home / "proj")
    assert asked["permissionDecision"] == "ask"
    assert "migrations" in asked["permissionDecisionReason"]
    kept = claude_bash_hook(fake_home, "bin/rails db:migrate:status", cwd=fake_home / "proj")
    assert kept["permissionDecision"] == "allow"
