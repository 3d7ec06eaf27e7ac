"""Layered configuration: ``guard.toml`` in the workspace, then ``GUARD_*`` variables, then defaults.

Each key is decided on its own (seed ``memory-tidy-config``): a bad value in the file or the
environment is ignored with a warning that names the key and falls through to the next
layer, never a crash; an explicit ``0`` is a value, not "unset". Values given in code
(``Guard(config={...})``) win over everything.

Keys are dotted (``weights.memory``); the file spells them as TOML tables
(``[weights] memory = 0.4``) and the environment as ``GUARD_WEIGHTS_MEMORY``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from guard.docsites import DOCS_HOSTS
from guard.log import logger
from guard.namedtuple import NamedTuple

CONFIG_FILENAME = "guard.toml"

Parser = Callable[[Any], Any]


def _float(lo: float | None = None, hi: float | None = None) -> Parser:
    def parse(raw: Any) -> float:
        if isinstance(raw, bool):
            raise ValueError("expected a number, got a boolean")
        value = float(raw)
        if value != value:  # NaN
            raise ValueError("NaN is not a value")
        if lo is not None and value < lo:
            raise ValueError(f"must be >= {lo}")
        if hi is not None and value > hi:
            raise ValueError(f"must be <= {hi}")
        return value

    return parse


def _int(lo: int | None = None, hi: int | None = None) -> Parser:
    def parse(raw: Any) -> int:
        if isinstance(raw, bool):
            raise ValueError("expected an integer, got a boolean")
        if isinstance(raw, float) and not raw.is_integer():
            raise ValueError("expected an integer")
        value = int(str(raw).strip()) if isinstance(raw, str) else int(raw)
        if lo is not None and value < lo:
            raise ValueError(f"must be >= {lo}")
        if hi is not None and value > hi:
            raise ValueError(f"must be <= {hi}")
        return value

    return parse


def _bool(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off"}:
        return False
    raise ValueError("expected true/false")


def _choice(*options: str) -> Parser:
    def parse(raw: Any) -> str:
        text = str(raw).strip().lower()
        if text not in options:
            raise ValueError(f"expected one of {', '.join(options)}")
        return text

    return parse


def _str(raw: Any) -> str:
    if not isinstance(raw, str):
        raise ValueError("expected a string")
    return raw


def _str_list(raw: Any) -> tuple[str, ...]:
    if isinstance(raw, str):
        text = raw.strip()
        if text.startswith("["):
            raw = json.loads(text)
        else:
            raw = [p.strip() for p in text.split(",") if p.strip()]
    if not isinstance(raw, (list, tuple)) or not all(isinstance(x, str) for x in raw):
        raise ValueError("expected a list of strings")
    return tuple(raw)


def _hhmm(raw: Any) -> str:
    text = str(raw).strip()
    hh, sep, mm = text.partition(":")
    if not sep or not (0 <= int(hh) <= 23 and 0 <= int(mm) <= 59) or len(mm) != 2:
        raise ValueError("expected HH:MM")
    return f"{int(hh):02d}:{mm}"


class Setting(NamedTuple):  # (a named tuple: a table of rows, read only)
    key: str
    default: Any
    parse: Parser
    help: str

    @property
    def env(self) -> str:
        return "GUARD_" + self.key.upper().replace(".", "_")


# One table of every key guard reads. Areas keep to their own block.
SETTINGS: tuple[Setting, ...] = (
    # -- fusion (guard/layers/fusion.py)
    Setting("weights.memory", 0.30, _float(0, 1), "weight of memory relevance"),
    Setting("weights.cmd_success", 0.30, _float(0, 1), "weight of the tool's success rate"),
    Setting("weights.user_pref", 0.25, _float(0, 1), "weight of the user's approvals"),
    Setting("weights.system", 0.15, _float(0, 1), "weight of system health"),
    Setting(
        "thresholds.auto_allow", 75.0, _float(0, 101), "score at or above which a call runs (101: nothing auto-allowed)"
    ),
    Setting(
        "thresholds.request_confirm",
        50.0,
        _float(0, 100),
        "score at or above which a call is confirmed, below it blocked",
    ),
    Setting(
        "fusion.mode",
        "guard",
        _choice("guard", "seed"),
        "'seed' reproduces the spec's formulas exactly; 'guard' adds priors, decay and smoothing",
    ),
    Setting(
        "fusion.prior_strength",
        4.0,
        _float(0, 1000),
        "pseudo-counts of the prior that small samples are shrunk towards",
    ),
    Setting("fusion.tool_half_life_days", 7.0, _float(0, 3650), "half-life of a tool's success history (0 = no decay)"),
    Setting("fusion.user_half_life_days", 21.0, _float(0, 3650), "half-life of the user's approvals (0 = no decay)"),
    Setting(
        "fusion.static_floor",
        True,
        _bool,
        "a safe read-only call the fused score would confirm runs anyway (never above a threshold you set)",
    ),
    Setting("fusion.low_health", 40.0, _float(0, 100), "session health below which the seed's weight change applies"),
    Setting("fusion.low_health_user_pref", 0.10, _float(0, 1), "user_pref weight in an unhealthy session"),
    Setting("fusion.low_health_memory", 0.20, _float(0, 1), "memory weight in an unhealthy session"),
    Setting("system.health", None, _float(0, 100), "pin system health (0-100) instead of sampling psutil"),
    Setting("system.cache_seconds", 2.0, _float(0, 3600), "how long a system-health sample is reused"),
    Setting("system.smoothing", 0.3, _float(0, 1), "EWMA factor for new system samples (1 = no smoothing)"),
    Setting("system.disk_path", "/", _str, "filesystem whose usage counts towards system health"),
    Setting("guard.headless", False, _bool, "no human can answer: request_confirm acts as block"),
    Setting(
        "decision.budget_ms",
        200.0,
        _float(0, 600_000),
        "time one decision may take (garbage collections and a thread not running cannot use up more than half); past it the "
        "call is 'too complex to check in time' and asked "
        "(never allowed; a block found by then stays); keep it well under the host's hook timeout (0 = no limit)",
    ),
    Setting(
        "guard.clock_skew_seconds",
        300.0,
        _float(0, 86_400),
        "timestamps from events, files and other writers later than now plus this are taken as now plus this",
    ),
    # -- static layer (guard/static)
    Setting(
        "static.max_command_bytes",
        65536,
        _int(1024, 16 * 1024 * 1024),
        "calls larger than this are never judged safe (request_confirm)",
    ),
    Setting(
        "static.max_depth",
        10,
        _int(1, 64),
        "how deep wrappers, nested shells and substitutions are unwrapped; deeper asks",
    ),
    Setting(
        "static.max_steps",
        100_000,
        _int(0, 100_000_000),
        "statements, commands and word parts one analysis may walk before it asks (0 = no limit); "
        "unlike decision.budget_ms it gives the same answer on every machine",
    ),
    Setting(
        "static.cache_size",
        4096,
        _int(0, 1_000_000),
        "static analyses kept in memory for repeated calls (0 = no cache)",
    ),
    Setting(
        "static.project_rules",
        True,
        _bool,
        "read deny/ask rules from a project's .guard.toml (its allow entries are always ignored)",
    ),
    # -- documentation reading (guard/docsites.py)
    Setting(
        "network.docs_hosts",
        DOCS_HOSTS,
        _str_list,
        "documentation and package-index hosts whose pages are ordinary reading (subdomains included)",
    ),
    Setting("network.extra_docs_hosts", (), _str_list, "more docs hosts, added to network.docs_hosts"),
    # -- behavior layer (guard/behavior)
    Setting(
        "behavior.window", 200, _int(10, 10_000), "events kept per session (persisted under <workspace>/sessions/)"
    ),
    Setting("behavior.session_ttl_hours", 24.0, _float(0, 8760), "a session idle this long starts afresh (0 = never)"),
    Setting("behavior.flush_seconds", 300.0, _float(0, 3600), "longest a long-lived process keeps dispatches unsaved"),
    Setting("behavior.half_life_minutes", 10.0, _float(0, 10_080), "half-life of a session's failure history"),
    Setting(
        "behavior.failure_prior", 4.0, _float(0, 1000), "pseudo-results (at 10% failure) one failure is weighed against"
    ),
    Setting(
        "behavior.loop_repeats", 3, _int(2, 1000), "the same call this many times in a row (or a cycle 3x) is a loop"
    ),
    Setting(
        "behavior.denial_streak",
        3,
        _int(1, 1000),
        "denials in a row (one or two approvals do not break it) that stop auto-allowing",
    ),
    Setting("behavior.denial_recent", 10, _int(1, 50), "denials among the last 50 answers that stop auto-allowing"),
    Setting("behavior.denial_total", 20, _int(1, 100_000), "denials in a session that stop auto-allowing for good"),
    Setting("behavior.burst_calls", 20, _int(2, 100_000), "calls within 10 s that can count as a burst"),
    Setting(
        "behavior.burst_factor", 4.0, _float(1, 1000), "a burst must also be this many times the session's own rate"
    ),
    Setting(
        "behavior.confirm_below", 60.0, _float(0, 100), "session health below which every call needs a confirmation"
    ),
    Setting(
        "behavior.breaker_failures", 5, _int(1, 1000), "failures in a row of one task that open its circuit breaker"
    ),
    Setting(
        "behavior.breaker_base_seconds", 300.0, _float(0, 604_800), "first wait before an open breaker allows a trial"
    ),
    Setting(
        "behavior.breaker_max_seconds", 3600.0, _float(0, 604_800), "longest wait (the wait doubles per reopening)"
    ),
    Setting(
        "behavior.breaker_human_after",
        3,
        _int(0, 1000),
        "openings after which only 'guard reset' closes it (0 = never)",
    ),
    Setting("behavior.tiers", True, _bool, "enforce trust-tier limits (lines per write, files per task, risky paths)"),
    Setting(
        "behavior.double_reward_cooldown_minutes",
        60.0,
        _float(0, 100_000),
        "cooldown of the success-after-failure double reward",
    ),
    # -- memory (guard/memory)
    Setting(
        "memory.backend",
        "auto",
        _choice("auto", "lancedb", "snapshot", "history", "off"),
        "where memory relevance comes from: 'auto' reads the snapshot guard serve/guard tidy publish "
        "(LanceDB in the daemon, for s3:// and with memory.write_in_process) and the history files in per-call processes",
    ),
    Setting(
        "memory.write_in_process",
        False,
        _bool,
        "an embedding process loads LanceDB (+~125 MB) and stores its own outcomes instead of queuing them for the daemon",
    ),
    Setting("memory.uri", None, _str, "LanceDB URI for memory (default: <workspace>/memory.lance); may be s3://..."),
    Setting(
        "memory.similarity",
        0.80,
        _float(0, 1),
        "cosine similarity at or above which a past operation of the same tool counts as similar",
    ),
    Setting("memory.top_k", 20, _int(1, 10_000), "at most this many of the most similar past operations count"),
    Setting(
        "memory.dim",
        256,
        _int(8, 4096),
        "dimension of the feature-hashing embedding (a table keeps the dimension it was created with)",
    ),
    Setting(
        "memory.flush_seconds", 2.0, _float(0, 3600), "the background writer stores queued outcomes at least this often"
    ),
    Setting("memory.batch_rows", 100, _int(1, 1_000_000), "... or as soon as this many outcomes are queued"),
    Setting(
        "memory.query_timeout_ms",
        50,
        _int(1, 600_000),
        "timeout of a LanceDB query on the hot path (used only when the table is too big for the in-process snapshot)",
    ),
    Setting(
        "memory.cache_size",
        4096,
        _int(0, 10_000_000),
        "relevance results cached per (tool, signature); 0 disables the cache",
    ),
    Setting(
        "memory.cache_seconds",
        30.0,
        _float(0, 86_400),
        "how long a cached relevance result is reused (an outcome with the same signature evicts it at once)",
    ),
    Setting(
        "memory.snapshot_seconds",
        30.0,
        _float(0, 86_400),
        "how often the in-process snapshot looks for rows other processes or hosts stored (0 = never)",
    ),
    Setting(
        "memory.snapshot_max_rows",
        250_000,
        _int(0, 100_000_000),
        "largest table kept as an in-process numpy snapshot; above it relevance queries LanceDB with a timeout",
    ),
    Setting("memory.tidy", True, _bool, "run memory maintenance in the background of long-lived processes"),
    Setting(
        "memory.tidy_day_minutes", 30.0, _float(1, 10_080), "minutes between maintenance runs outside the quiet window"
    ),
    Setting(
        "memory.tidy_quiet_minutes",
        180.0,
        _float(1, 10_080),
        "minutes between maintenance runs inside the quiet window",
    ),
    Setting(
        "memory.quiet_start",
        "23:00",
        _hhmm,
        "start of the quiet window (local time; may cross midnight; equal ends disable it)",
    ),
    Setting("memory.quiet_end", "07:00", _hhmm, "end of the quiet window (local time)"),
    Setting("memory.retention_days", 365, _int(1, 36_500), "maintenance deletes memories older than this"),
    Setting(
        "memory.max_rows",
        200_000,
        _int(1, 1_000_000_000),
        "maintenance keeps at most this many rows (least important, then oldest, go first)",
    ),
    Setting(
        "memory.max_mb",
        None,
        _float(0.001, 10_000_000),
        "maintenance keeps the table's data under this many MB (unset = no size limit)",
    ),
    Setting(
        "memory.version_retention_minutes",
        60.0,
        _float(0, 5_256_000),
        "maintenance removes table versions older than this (0 = keep only the latest: safe only when one process uses the table)",
    ),
    Setting(
        "memory.merge_similarity",
        0.95,
        _float(0, 1),
        "rows of the same tool and outcome at least this similar are merged into one",
    ),
    Setting(
        "memory.tidy_max_merge",
        1000,
        _int(0, 100_000_000),
        "at most this many rows are merged away per maintenance run (the rest is reported)",
    ),
    Setting(
        "memory.tidy_max_delete",
        10_000,
        _int(0, 1_000_000_000),
        "at most this many rows are deleted by retention per maintenance run (the rest is reported)",
    ),
    Setting(
        "memory.tidy_scan_limit",
        5000,
        _int(0, 1_000_000),
        "distinct signatures per tool and outcome compared pairwise for near-duplicates per run, newest first",
    ),
    Setting("memory.s3_endpoint", None, _str, "object-store endpoint for an s3:// memory.uri (else $AWS_ENDPOINT_URL)"),
    Setting("memory.s3_region", None, _str, "object-store region for an s3:// memory.uri (else $AWS_REGION)"),
    Setting(
        "memory.s3_allow_http", False, _bool, "allow a plain-http object-store endpoint (local S3-compatible servers)"
    ),
    Setting(
        "memory.storage_options",
        (),
        _str_list,
        "extra LanceDB storage options as key=value items; they win over everything else",
    ),
    # -- hooks and integrations (integrations/)
    Setting(
        "hooks.headless",
        False,
        _bool,
        "agent hosts run with nobody to answer a prompt: a hook never asks, it denies with the reason",
    ),
    Setting(
        "hooks.daemon",
        "auto",
        _choice("auto", "off"),
        "'auto': hooks ask a running 'guard serve' and start one when absent (deciding in-process meanwhile); "
        "'off': every hook decides in its own process",
    ),
    Setting(
        "hooks.timeout_seconds",
        10.0,
        _float(0.05, 3600),
        "a hook answers within this long whatever happens (past it: a refusal, never an allow); keep it under "
        "the host's own hook timeout (guard installs 30 s; a host that times out a hook lets the call through)",
    ),
    Setting(
        "hooks.daemon_idle_seconds",
        900.0,
        _float(0, 7 * 86_400),
        "a 'guard serve' started by a hook exits after this long without a request (0 = never)",
    ),
    Setting(
        "hooks.pending_ttl_seconds",
        3600.0,
        _float(1, 30 * 86_400),
        "how long a hook's open question (an ask awaiting its tool result, an approval awaiting its retry) stays valid",
    ),
    Setting(
        "hooks.block_prompt_secrets",
        False,
        _bool,
        "prompt hooks (UserPromptSubmit, BeforeAgent, beforeSubmitPrompt) block a prompt that holds a secret",
    ),
    # -- policy (guard/policy)
    Setting(
        "policy.min_observations",
        3,
        _int(1, 10_000),
        "verified answers the same way before guard rules suggest suggests an allow or deny rule",
    ),
    Setting("policy.min_sessions", 2, _int(1, 10_000), "distinct sessions those answers must come from"),
    Setting("policy.max_suggestions", 20, _int(1, 10_000), "cap on rules suggested by one guard rules suggest run"),
)

_BY_KEY = {s.key: s for s in SETTINGS}


@attrs.frozen
class Config:
    """Effective configuration: ``config.get("weights.memory")``, ``config.source(key)``."""

    values: Mapping[str, Any]
    sources: Mapping[str, str]
    file: Path | None = None
    raw_file: Mapping[str, Any] = attrs.field(factory=dict)
    warnings: tuple[str, ...] = ()
    # ``path:line:col: message`` when the file does not parse: its last good copy stands in
    # (guard.configfile) and every call that is not a safe read is confirmed until it is fixed.
    error: str | None = None

    def get(self, key: str) -> Any:
        try:
            return self.values[key]
        except KeyError:
            raise KeyError(f"unknown configuration key {key!r}") from None

    def __getitem__(self, key: str) -> Any:
        return self.get(key)

    def source(self, key: str) -> str:
        return self.sources[key]

    def section(self, name: str) -> dict[str, Any]:
        """The raw TOML table ``[name]`` of the workspace file (for list-shaped sections)."""
        value = self.raw_file.get(name, {})
        return dict(value) if isinstance(value, Mapping) else {}

    @property
    def weights(self) -> dict[str, float]:
        return {k: self.values[f"weights.{k}"] for k in ("memory", "cmd_success", "user_pref", "system")}

    @property
    def thresholds(self) -> dict[str, float]:
        return {
            "auto_allow": self.values["thresholds.auto_allow"],
            "request_confirm": self.values["thresholds.request_confirm"],
            "block": 0.0,
        }

    def with_overrides(self, overrides: Mapping[str, Any]) -> Config:
        values = dict(self.values)
        sources = dict(self.sources)
        warnings = list(self.warnings)
        for key, raw in _flatten(overrides).items():
            setting = _BY_KEY.get(key)
            if setting is None:
                warnings.append(_warn(f"unknown configuration key {key!r} (from code) ignored"))
                continue
            try:
                values[key] = None if raw is None else setting.parse(raw)
                sources[key] = "code"
            except (ValueError, TypeError) as exc:
                warnings.append(_warn(f"{key}: bad value {raw!r} from code ({exc}); keeping {values[key]!r}"))
        if values["thresholds.request_confirm"] > values["thresholds.auto_allow"]:
            for key in ("thresholds.auto_allow", "thresholds.request_confirm"):
                values[key], sources[key] = self.values[key], self.sources[key]
            warnings.append(
                _warn("thresholds.request_confirm is above thresholds.auto_allow (from code); both kept as they were")
            )
        return attrs.evolve(self, values=values, sources=sources, warnings=tuple(warnings))

    @classmethod
    def load(
        cls,
        workspace: Path | None = None,
        env: Mapping[str, str] | None = None,
        overrides: Mapping[str, Any] | None = None,
    ) -> Config:
        env = os.environ if env is None else env
        warnings: list[str] = []
        path = workspace / CONFIG_FILENAME if workspace is not None else None
        raw_file: dict[str, Any] = {}
        error: str | None = None
        if path is not None and path.is_file():
            from guard import configfile  # only when there is a file: a per-call hook without one skips tomllib

            raw_file, problem, note = configfile.load(path)
            if problem is not None:
                error = f"{problem.path}:{problem.line}:{problem.col}: {problem.message}"
                warnings.append(
                    _warn(
                        f"{error}: cannot read configuration; {note}; "
                        "calls that are not safe reads are confirmed until the file parses"
                    )
                )
        flat = _flatten(raw_file)
        known_sections = {k.split(".")[0] for k in _BY_KEY}
        for key in flat:
            if key not in _BY_KEY and key.split(".")[0] in known_sections and key.split(".")[0] not in _LIST_SECTIONS:
                warnings.append(_warn(f"{path}: unknown key {key!r} ignored"))
        values: dict[str, Any] = {}
        sources: dict[str, str] = {}
        for s in SETTINGS:
            values[s.key], sources[s.key] = s.default, "default"
            for origin, raw in (("file", flat.get(s.key, _MISSING)), ("env", env.get(s.env, _MISSING))):
                if raw is _MISSING:
                    continue
                if origin == "env" and sources[s.key] == "file":
                    break  # file wins over the environment, per key
                try:
                    values[s.key], sources[s.key] = s.parse(raw), origin
                except (ValueError, TypeError, json.JSONDecodeError) as exc:
                    where = str(path) if origin == "file" else f"${s.env}"
                    warnings.append(_warn(f"{s.key}: bad value {raw!r} in {where} ({exc}); ignored"))
        config = cls(
            values=values, sources=sources, file=path, raw_file=raw_file, warnings=tuple(warnings), error=error
        )
        if (disorder := thresholds_problem(values)) is not None:
            fixed = {k: _BY_KEY[k].default for k in THRESHOLD_KEYS}
            config = attrs.evolve(
                config,
                values={**values, **fixed},
                sources={**sources, **dict.fromkeys(fixed, "default")},
                warnings=(*config.warnings, _warn(f"{disorder}; both reset to defaults")),
            )
        config = _check_weights(config)
        return config.with_overrides(overrides) if overrides else config


WEIGHT_KEYS = ("weights.memory", "weights.cmd_success", "weights.user_pref", "weights.system")
THRESHOLD_KEYS = ("thresholds.auto_allow", "thresholds.request_confirm")


def weights_problem(values: Mapping[str, Any]) -> str | None:
    """Why the four weights cannot be used (they must sum to 1, ±0.001), or None. The loader
    and ``guard config --check`` both ask this."""
    total = sum(float(values[k]) for k in WEIGHT_KEYS)
    return None if abs(total - 1.0) <= 0.001 else f"weights sum to {total:.3f}, not 1"


def thresholds_problem(values: Mapping[str, Any]) -> str | None:
    """Why the two thresholds cannot be used (out of order), or None."""
    if values["thresholds.request_confirm"] > values["thresholds.auto_allow"]:
        return "thresholds.request_confirm is above thresholds.auto_allow"
    return None


def _check_weights(config: Config) -> Config:
    """Weights from the file or the environment must sum to 1 (±0.001), else all four reset.

    (Code may assign one weight at a time, as the seed's ``engine.weights["memory"] = 0.4``
    does; the session layer's low-health weights do not sum to 1 on purpose.)
    """
    values = config.values
    problem = weights_problem(values)
    if problem is None:
        return config
    named = [f"{k}={values[k]} ({config.sources[k]})" for k in WEIGHT_KEYS if config.sources[k] != "default"]
    return attrs.evolve(
        config,
        values={**values, **{k: _BY_KEY[k].default for k in WEIGHT_KEYS}},
        sources={**config.sources, **dict.fromkeys(WEIGHT_KEYS, "default")},
        warnings=(*config.warnings, _warn(f"{problem} ({', '.join(named)}); all weights reset to defaults")),
    )


# Sections whose keys are free-form lists (permission rules), not settings.
_LIST_SECTIONS = frozenset({"rules", "permissions"})

_MISSING = object()


def _flatten(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in tree.items():
        full = f"{prefix}{key}"
        if isinstance(value, Mapping) and f"{full}" not in _BY_KEY:
            out.update(_flatten(value, full + "."))
        else:
            out[full] = value
    return out


def _warn(message: str) -> str:
    logger.warning(message)
    return message


def describe(config: Config) -> list[dict[str, Any]]:
    """Every key with its effective value, where it came from, and what it does."""
    return [
        {"key": s.key, "value": config.values[s.key], "source": config.sources[s.key], "env": s.env, "help": s.help}
        for s in SETTINGS
    ]
