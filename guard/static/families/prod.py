"""Production markers: a destructive data or infrastructure operation aimed at production blocks.

Dropping a database, resetting it through its framework, flushing a store, deleting cluster or cloud
resources and destroying infrastructure ask (G160-G166, G433). When the same call names a production
target, it blocks (G434): an environment variable (``RAILS_ENV=production``, ``MIX_ENV=prod``,
``TF_WORKSPACE=prod``), an option (``--env production``, ``--target prod``, ``--context prod-eu``,
``-n production``, ``--profile prod``, ``--stage prod``, ``--app myapp-prod``), ``terraform workspace
select prod`` earlier in the call, a ``-var env=prod`` or a prod ``.tfvars`` file, or a database URL or
host whose name says prod. ``prod`` and ``production`` count as words (``prod-eu``, ``app_production``,
``db.prod.example.com``); ``preprod``, ``pre-prod``, ``nonprod`` and ``products`` do not.
"""

from __future__ import annotations

from guard import lazyre
from guard.static.scan import Scan

_PROD = r"(?<![A-Za-z0-9])(?<!pre-)(?<!non-)(?<!pre_)(?<!non_)(?:prod|production|prd)(?![A-Za-z0-9])"
_VALUE = r"['\"]?[\w.:/@%+=-]*?" + _PROD
_MARKERS = lazyre.compile(
    r"(?i)(?:"
    r"\b[A-Z_]*(?:ENV|ENVIRONMENT|STAGE|PROFILE|WORKSPACE|SETTINGS_MODULE|CONTEXT|NAMESPACE)=" + _VALUE + r"|"
    r"(?:^|\s)(?:--env|--environment|-e|--target|-t|--context|--kube-context|--kubecontext|--namespace|-n|"
    r"--profile|--stage|-s|--workspace|--project|--settings|--app|-a|--host|-h|--database-url|--url|--db-url|"
    r"--config-env|--cluster|--site)(?:=|\s+)" + _VALUE + r"|"
    r"\bworkspace\s+(?:select|new)\s+" + _VALUE + r"|"
    r"-var(?:-file)?(?:=|\s+)" + _VALUE + r"|"
    r"\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|sqlserver|jdbc:\w+)://[^\s'\"]*?"
    + _PROD
    + r")"
)
# Rules for operations that destroy data or infrastructure (what a production marker raises to block).
DESTRUCTIVE = frozenset({"G160", "G161", "G162", "G163", "G164", "G165", "G166", "G433"})


def marker(text: str) -> str | None:
    """The production marker in ``text``: ``marker("RAILS_ENV=production rails db:drop")`` names it."""
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
    found = marker(text[:65536].replace("\\\n", "")) or next(
        (m for m in (marker(h.detail) for h in destructive) if m), None
    )
    if found:
        scan.hit("G434", f"{destructive[0].detail} on {found}")
