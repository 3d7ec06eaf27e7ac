"""Production markers: a destructive data or infrastructure operation aimed at production blocks.

Dropping a database, resetting it through its framework, flushing a store, deleting cluster or cloud
resources and destroying infrastructure ask (G160-G166, G433). When the same call names a production
target, it blocks (G434): an environment variable (``RAILS_ENV=production``, ``MIX_ENV=prod``,
``TF_WORKSPACE=prod``), an option (``--env production``, ``--target prod``, ``--context prod-eu``,
``-n production``, ``--profile prod``, ``--stage prod``, ``--app myapp-prod``), ``terraform workspace
select prod`` earlier in the call, a ``-var env=prod`` or a prod ``.tfvars`` file, or a database URL or
host whose name says prod. ``prod`` and ``production`` count as words (``prod-eu``, ``app_production``,
``db.prod.example.com``); ``preprod``, ``pre-prod``, ``nonprod`` and ``products`` do not.

The destructive command's own arguments count too (G434): a target named as an operand
(``dropdb app_production``, ``kubectl delete namespace production``, ``aws s3 rb s3://prod-backups``,
``fly apps destroy my-app-prod``), a variable that says prod (``psql "$PROD_DATABASE_URL"``,
``DATABASE_URL=$PROD_DB_URL``), and switching off a framework's own production check
(``DISABLE_DATABASE_ENVIRONMENT_CHECK=1``). A word with spaces in it (an SQL statement, a message)
is text, not a target: ``psql -c 'DROP TABLE production_runs'`` on a dev host still asks. Tools that
are not the shell (an MCP server's ``execute_sql``, ``drop-collection``) are judged on their
parameters the same way (:func:`raise_on_params`): ``{"project_id": "shop-prod", "query": "DROP
TABLE …"}`` blocks.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from guard import lazyre
from guard.static.scan import Scan, display

_PROD = r"(?<![A-Za-z0-9])(?<!pre-)(?<!non-)(?<!pre_)(?<!non_)(?:prod|production|prd)(?![A-Za-z0-9])"
_VALUE = r"['\"]?[\w.:/@%+=${-]*?" + _PROD
_MARKERS = lazyre.compile(
    r"(?i)(?:"
    r"\b[A-Z_]*(?:ENV|ENVIRONMENT|STAGE|PROFILE|WORKSPACE|SETTINGS_MODULE|CONTEXT|NAMESPACE|URL|URI|DSN|HOST)="
    + _VALUE
    + r"|"
    r"\bDISABLE_DATABASE_ENVIRONMENT_CHECK=['\"]?(?:1|true|yes)\b|"
    r"(?:^|\s)(?:--env|--environment|-e|--target|-t|--context|--kube-context|--kubecontext|--namespace|-n|"
    r"--profile|--stage|-s|--workspace|--project|--settings|--app|-a|--host|-h|--database-url|--url|--db-url|"
    r"--config-env|--cluster|--site)(?:=|\s+)" + _VALUE + r"|"
    r"\bworkspace\s+(?:select|new)\s+" + _VALUE + r"|"
    r"-var(?:-file)?(?:=|\s+)" + _VALUE + r"|"
    r"\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|sqlserver|jdbc:\w+)://[^\s'\"]*?"
    + _PROD
    + r")"
)
_WORD = lazyre.compile(r"(?i)" + _PROD)
# Rules for operations that destroy data or infrastructure (what a production marker raises to block).
DESTRUCTIVE = frozenset({"G160", "G161", "G162", "G163", "G164", "G165", "G166", "G433", "G436", "G437", "G466"})


def _may_name_prod(text: str) -> bool:
    """False only when no marker can be in ``text``: every one spells ``prod``/``prd`` but the
    framework switch (a substring test, where the patterns cost tens of microseconds per call;
    text that is not ASCII always goes to the patterns, whose case folding is wider)."""
    if not text.isascii():
        return True
    low = text.lower()
    return "prod" in low or "prd" in low or "disable_database_environment_check" in low


def marker(text: str) -> str | None:
    """The production marker in ``text``: ``marker("RAILS_ENV=production rails db:drop")`` names it."""
    if not _may_name_prod(text):
        return None
    m = _MARKERS.search(text)
    return m.group(0).strip() if m else None


def raise_on_production(scan: Scan, text: str) -> None:
    """A destructive operation in this call, and a production marker in it: block (G434)."""
    destructive = [h for h in scan.hits if h.rule_id in DESTRUCTIVE]
    if not destructive:
        return
    # The raw text (for markers set before the command: ``RAILS_ENV=production …``, an earlier
    # ``terraform workspace select prod``), with bash's line continuations joined, then the
    # destructive commands as guard read them (quotes and escapes undone).
    found = (
        marker(text[:65536].replace("\\\n", ""))
        or next((m for m in (marker(h.detail) for h in destructive) if m), None)
        or next((m for m in (target(display(scan, w) for w in h.words[1:]) for h in destructive) if m), None)
    )
    if found:
        scan.hit("G434", f"{destructive[0].detail} on {found}")


def target(words: Iterable[str]) -> str | None:
    """The first word that names a production target: ``app_production``, ``$PROD_DATABASE_URL``,
    ``s3://prod-backups``; a word with whitespace in it (a statement, a message) is not a target."""
    for word in words:
        if len(word) <= 512 and word.split() == [word] and _may_name_prod(word) and _WORD.search(word):
            return word
    return None


def raise_on_params(scan: Scan, params: Mapping[str, Any]) -> None:
    """A tool that is not the shell: a destructive hit and a parameter naming prod block (G434).

    Every string value counts (``{"environment": "production"}``); one level of nesting is read."""
    destructive = [h for h in scan.hits if h.rule_id in DESTRUCTIVE]
    if not destructive:
        return
    found = target(_strings(params))
    if found:
        scan.hit("G434", f"{destructive[0].detail} on {found}")


def _strings(params: Mapping[str, Any], depth: int = 0) -> Iterator[str]:
    for value in list(params.values())[:64]:
        if isinstance(value, str):
            yield value
        elif isinstance(value, Mapping) and depth == 0:
            yield from _strings(value, 1)
        elif isinstance(value, list) and depth == 0:
            yield from (v for v in value[:64] if isinstance(v, str))
