"""Databases: statements that drop or empty data ask, whichever client or framework sends them.

SQL handed to ``psql -c``, ``mysql -e``, ``sqlite3 db "…"``, a heredoc or a pipe is read for
``DROP``, ``TRUNCATE`` and ``DELETE``/``UPDATE`` without ``WHERE`` (string literals and comments
removed first, so ``INSERT INTO log VALUES ('drop table x')`` is data). Redis ``FLUSHALL``, Mongo
``dropDatabase()``, and framework resets (``rails db:drop``, ``prisma migrate reset``) too.
"""

from __future__ import annotations

import re

from guard import lazyre
from guard.static.families import effects
from guard.static.families.base import Handler, parse_opts
from guard.static.reading.text import wordset
from guard.static.scan import EMPTY, Cmd, Flow, Scan, display, interactive_shell

_STRINGS = lazyre.compile(r"'(?:[^']|'')*'|\"(?:[^\"\\]|\\.)*\"|--[^\n]*|/\*.*?\*/|\$\$.*?\$\$", re.S)
_DROP = lazyre.compile(r"\bDROP\s+(DATABASE|SCHEMA|TABLE|COLLECTION|KEYSPACE|USER|ROLE|OWNED)\b", re.I)
_TRUNCATE = lazyre.compile(r"\bTRUNCATE\b", re.I)
_DELETE = lazyre.compile(r"\bDELETE\s+FROM\s+[^;]*", re.I)
_UPDATE = lazyre.compile(r"\bUPDATE\s+\S+\s+SET\s+[^;]*", re.I)
_MONGO_DROP = lazyre.compile(
    r"\.(dropDatabase|drop|dropCollection)\s*\(|\.(deleteMany|remove)\s*\(\s*\{\s*\}\s*\)", re.I
)
_REDIS_FLUSH = frozenset({"flushall", "flushdb"})


def sql_rule(sql: str) -> str | None:
    """The rule a SQL text triggers: ``sql_rule("DROP TABLE x") == "G160"``."""
    text = _STRINGS.sub("''", sql)
    if _DROP.search(text):
        return "G160"
    if _TRUNCATE.search(text):
        return "G161"
    for pattern in (_DELETE, _UPDATE):
        for m in pattern.finditer(text):
            if not re.search(r"\bWHERE\b", m.group(0), re.I):
                return "G161"
    return None


def _judge_sql(scan: Scan, cmd: Cmd, texts: list[str]) -> None:
    shown = display(scan, " ".join(cmd.argv))
    for text in texts:
        rule = sql_rule(text)
        if rule:
            scan.hit(rule, shown)
    scan.tag("network")
    scan.hit("G188", shown)


_SQL_CLIENTS = {
    "psql": ("-c", "--command"),
    "mysql": ("-e", "--execute"),
    "mariadb": ("-e", "--execute"),
    "clickhouse-client": ("-q", "--query"),
    "clickhouse": ("-q", "--query"),
    "cqlsh": ("-e", "--execute"),
    "sqlcmd": ("-Q", "-q"),
    "duckdb": ("-c",),
    "cockroach": ("-e", "--execute"),
    "snowsql": ("-q", "--query"),
    "bq": (),
    "vsql": ("-c",),
    "usql": ("-c", "--command"),
    "pgcli": (),
    "mycli": ("-e", "--execute"),
    "litecli": ("-e",),
    "trino": ("--execute",),
    "presto": ("--execute",),
}
_CLIENT_TAKES = wordset(
    "-h --host -p --port -U --username -u --user -d --dbname -D --database -f --file -P --pset -v --variable -S "
    "-W -o --output -A -F -R -t --init-command"
)


def _sql_client(cmd: Cmd, scan: Scan) -> Flow:
    flags = _SQL_CLIENTS.get(cmd.name, ())
    opts = parse_opts(cmd.args, _CLIENT_TAKES | set(flags))
    texts = opts.all(*flags) if flags else []
    if cmd.name == "bq" and opts.operands[:1] == ("query",):
        texts = list(opts.operands[1:])
    if cmd.name in ("sqlite3", "duckdb") and len(opts.operands) >= 2:
        texts += list(opts.operands[1:])
    for f in opts.all("-f", "--file"):
        effects.read(scan, f)
    if cmd.stdin.text:
        texts.append(cmd.stdin.text)
    elif not texts and not opts.all("-f", "--file") and _console(cmd, opts.flags):
        interactive_shell(scan, f"{cmd.name} console")
    _judge_sql(scan, cmd, texts)
    return None  # type: ignore[return-value]


_NOT_CONSOLE = wordset("-l --list -V --version --help -? -h")


def _console(cmd: Cmd, flags: frozenset[str]) -> bool:
    """A database client with no statement, file or piped input: it waits for what is typed next."""
    return cmd.stdin == EMPTY and not flags & _NOT_CONSOLE  # (``< x.sql``: a file, not EMPTY)


_SQLITE_SHELL = lazyre.compile(r"(?m)^\s*\.(?:shell|system)\b[ \t]*(.*)$")


def _sqlite(cmd: Cmd, scan: Scan) -> Flow:
    opts = parse_opts(cmd.args, wordset("-cmd -separator -newline -nullvalue"))
    texts = list(opts.operands[1:]) + opts.all("-cmd")
    if cmd.stdin.text:
        texts.append(cmd.stdin.text)
    shown = display(scan, " ".join(cmd.argv))
    for text in texts:
        rule = sql_rule(text)
        if rule:
            scan.hit(rule, shown)
        for m in _SQLITE_SHELL.finditer(text):  # ``.shell CMD``, ``.system CMD``: sqlite runs it
            if m.group(1).strip():
                scan.engine.script(m.group(1))
            else:
                interactive_shell(scan, ".shell")
    if not texts and not cmd.stdin.text and _console(cmd, opts.flags):
        interactive_shell(scan, f"{cmd.name} console")  # its dot-commands include .shell and .system
    scan.hit("G181", shown)  # a local file database in the project
    return None  # type: ignore[return-value]


def _redis(cmd: Cmd, scan: Scan) -> Flow:
    opts = parse_opts(cmd.args, wordset("-h -p -a -n -u --user --pass -s -r -i"))
    words = [w.lower() for w in opts.operands]
    texts = [cmd.stdin.text.lower()] if cmd.stdin.text else []
    shown = display(scan, " ".join(cmd.argv))
    scan.tag("network")
    if (words[:1] and words[0] in _REDIS_FLUSH) or any(re.search(r"\bflush(all|db)\b", t) for t in texts):
        scan.hit("G162", shown)
    elif words[:1] and words[0] in (
        "get",
        "keys",
        "scan",
        "info",
        "ping",
        "ttl",
        "type",
        "exists",
        "dbsize",
        "hgetall",
        "lrange",
        "smembers",
        "monitor",
        "--scan",
        "strlen",
        "mget",
        "hget",
    ):
        scan.hit("G180", shown)
    else:
        scan.hit("G188", shown)
    return None  # type: ignore[return-value]


def _mongo(cmd: Cmd, scan: Scan) -> Flow:
    opts = parse_opts(
        cmd.args,
        wordset("--eval --host --port -u -p --username --password --authenticationDatabase -f --file"),
    )
    texts = opts.all("--eval") + ([cmd.stdin.text] if cmd.stdin.text else [])
    shown = display(scan, " ".join(cmd.argv))
    if any(_MONGO_DROP.search(t) for t in texts):
        scan.hit("G160", shown)
    scan.tag("network")
    scan.hit("G188", shown)
    return None  # type: ignore[return-value]


def _drop_tools(cmd: Cmd, scan: Scan) -> Flow:
    shown = display(scan, " ".join(cmd.argv))
    if (
        cmd.name in ("dropdb", "dropuser")
        or (cmd.name == "mysqladmin" and any(w in ("drop", "DROP") for w in cmd.args))
        or (cmd.name == "pg_restore" and any(a in ("-c", "--clean") for a in cmd.args))
    ):
        scan.hit("G160", shown)  # ``pg_restore --clean``: drops every object it restores first
    else:
        scan.hit("G188", shown)
    return EMPTY


# Framework tasks that reset or drop the application's database: (command, trigger words).
_RESETS = {
    "rails": {
        "db:drop",
        "db:reset",
        "db:purge",
        "db:schema:load",
        "db:setup",
        "db:seed:replant",
        "db:truncate_all",
        "db:migrate:reset",
        "db:fixtures:load",
    },
    "rake": {
        "db:drop",
        "db:reset",
        "db:purge",
        "db:schema:load",
        "db:seed:replant",
        "db:truncate_all",
        "db:migrate:reset",
        "db:fixtures:load",
    },
    "prisma": {"reset", "--force-reset", "--accept-data-loss"},
    "drizzle-kit": {"drop", "push --force"},
    "mix": {"ecto.drop", "ecto.reset", "ecto.rollback --all"},
    "artisan": {"migrate:fresh", "migrate:reset", "db:wipe", "migrate:refresh"},
    "manage.py": {"flush", "reset_db", "sqlflush"},
    "django-admin": {"flush", "reset_db"},
    "sequelize": {"db:drop", "db:migrate:undo:all", "db:seed:undo:all"},
    "sequelize-cli": {"db:drop", "db:migrate:undo:all", "db:seed:undo:all"},
    "knex": {"migrate:rollback --all"},
    "alembic": {"base"},
    "typeorm": {"schema:drop", "schema:sync"},
    "dbt": {"--full-refresh"},
    "dbmate": {"drop"},
    "flyway": {"clean"},
    "liquibase": {"dropAll", "drop-all"},
}


# Framework tasks that undo migrations: a rollback runs their down steps, which drop the tables
# and columns they added with the rows in them (G466, asked; the whole database reset is G163).
_RAILS_ROLLBACKS = wordset("db:rollback db:migrate:down db:migrate:redo")
_ROLLBACKS = {
    "rails": _RAILS_ROLLBACKS,
    "rake": _RAILS_ROLLBACKS,
    "mix": wordset("ecto.rollback"),
    "artisan": wordset("migrate:rollback"),
    "sequelize": wordset("db:migrate:undo db:seed:undo"),
    "sequelize-cli": wordset("db:migrate:undo db:seed:undo"),
    "knex": wordset("migrate:rollback migrate:down"),
    "alembic": wordset("downgrade"),
    "typeorm": wordset("migration:revert"),
    "dbmate": wordset("rollback down"),
    "flyway": wordset("undo"),
}


def database_rule(tool: str, args: tuple[str, ...] | list[str]) -> str | None:
    """The rule a framework task on the application's database meets: G163 when it resets or drops
    the database, G466 when it undoes migrations, None otherwise (``rails db:migrate`` runs)."""
    if resets_database(tool, args):
        return "G163"
    undo = _ROLLBACKS.get(tool)
    if undo is not None and not undo.isdisjoint(args):
        return "G466"
    return None


def resets_database(tool: str, args: tuple[str, ...] | list[str]) -> bool:
    triggers = _RESETS.get(tool)
    if not triggers:
        return False
    joined = " ".join(args)
    if tool in ("manage.py", "django-admin") and "migrate" in args and "zero" in args:
        return True  # ``manage.py migrate app zero``: every migration of the app undone, its tables dropped
    return any(t in args or (" " in t and t in joined) for t in triggers) and not (
        tool == "alembic" and "downgrade" not in args
    )


_DBT_READS = wordset("compile parse ls list docs deps debug init clean source --version --help -h")
_BROKER_PURGE = {
    "rabbitmqctl": wordset("purge_queue delete_queue reset force_reset delete_vhost"),
    "rabbitmqadmin": wordset("purge delete"),
    "kafka-topics": wordset("--delete"),
    "kafka-topics.sh": wordset("--delete"),
    "kafka-delete-records": wordset("--offset-json-file"),
    "kafka-delete-records.sh": wordset("--offset-json-file"),
    "memcflush": frozenset(),
}


def _dbt(cmd: Cmd, scan: Scan) -> Flow:
    """``dbt run --full-refresh`` drops and rebuilds incremental models; ``dbt compile`` only reads."""
    shown = display(scan, " ".join(cmd.argv))
    sub = next((a for a in cmd.args if not a.startswith("-")), "")
    if resets_database("dbt", cmd.args):
        scan.hit("G163", shown)
    elif sub in _DBT_READS or (not sub and all(a in _DBT_READS for a in cmd.args)):
        scan.hit("G181", shown)
    else:
        scan.tag("network")
        scan.hit("G188", shown)  # run, build, seed, snapshot: writes to the warehouse
    return None  # type: ignore[return-value]


def _broker(cmd: Cmd, scan: Scan) -> Flow:
    """Message brokers and caches: purging a queue, deleting a topic, flushing memcached lose data."""
    shown = display(scan, " ".join(cmd.argv))
    purge = _BROKER_PURGE[cmd.name]
    scan.tag("network")
    if not purge or any(a in purge or a.split("=", 1)[0] in purge for a in cmd.args):
        scan.hit("G433", shown)
    else:
        scan.hit("G188", shown)
    return None  # type: ignore[return-value]


def _framework(cmd: Cmd, scan: Scan) -> Flow:
    rule = database_rule(cmd.name, cmd.args)
    if rule is not None:
        scan.hit(rule, display(scan, " ".join(cmd.argv)))
    else:
        scan.hit("G181", cmd.name)
    scan.tag("execute")
    return None  # type: ignore[return-value]


HANDLERS: dict[str, Handler] = {
    **dict.fromkeys(_SQL_CLIENTS, _sql_client),
    "sqlite3": _sqlite,
    "sqlite": _sqlite,
    "redis-cli": _redis,
    "valkey-cli": _redis,
    "keydb-cli": _redis,
    "mongo": _mongo,
    "mongosh": _mongo,
    "dropdb": _drop_tools,
    "dropuser": _drop_tools,
    "mysqladmin": _drop_tools,
    "createdb": _drop_tools,
    "pg_dump": _drop_tools,
    "pg_restore": _drop_tools,
    "mysqldump": _drop_tools,
    **dict.fromkeys(
        wordset(
            "rails rake prisma sequelize sequelize-cli knex alembic typeorm dbmate flyway liquibase django-admin "
            "drizzle-kit"
        ),
        _framework,
    ),
    "dbt": _dbt,
    **dict.fromkeys(_BROKER_PURGE, _broker),
}
