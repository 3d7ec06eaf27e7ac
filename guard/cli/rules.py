"""guard rules suggest|apply|revert|list: allow and deny rules learned from the user's answers;
guard rules builtin: every rule guard itself can cite."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from guard.cli import add_workspace
from guard.cli.common import error, open_guard, print_json, table
from guard.errors import ConfigError, InputError

if TYPE_CHECKING:
    from guard.policy.rules import EditResult

HELP = """\
Learn permission rules from what you keep approving or refusing.

  guard rules suggest            candidates from the history, with their evidence
  guard rules apply --dry-run    show what would change in guard.toml
  guard rules apply [ID ...]     write candidates (or exactly these ids) into [permissions]
  guard rules revert ID          take one rule out again; it will not be suggested again
  guard rules list               learned rules and their state, and hand-written ones
  guard rules builtin [--json]   every built-in rule: id, name, family, risk, an example

A rule is suggested only when the same answer was given, and verified (an approved call
then succeeded), at least policy.min_observations times across policy.min_sessions
sessions; never when the pattern was also answered the other way (held for you); never an
allow rule for anything the static layer rates high or critical (rejected). A shell allow
rule is exact, Bash(pip install requests): it covers that command with no other arguments,
so no --index-url, git+URL, -f FILE, remote or host can be added under it. Each suggestion
shows what it covers and a replay of the past calls it would have allowed.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "rules",
        help="suggest, apply and revert rules learned from your answers",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    s = actions.add_parser("suggest", help="candidate rules from the history")
    s.add_argument("--limit", type=int, help="at most this many suggestions (default: policy.max_suggestions)")
    s.add_argument("--json", action="store_true")
    add_workspace(s)
    s.set_defaults(func=run_suggest)
    a = actions.add_parser("apply", help="write candidate rules into guard.toml [permissions]")
    a.add_argument("ids", nargs="*", metavar="ID", help="apply exactly these (default: every candidate)")
    a.add_argument("--dry-run", action="store_true", help="show the change, write nothing")
    a.add_argument("--json", action="store_true")
    add_workspace(a)
    a.set_defaults(func=run_apply)
    r = actions.add_parser("revert", help="remove one learned rule from guard.toml")
    r.add_argument("id", metavar="ID")
    r.add_argument("--dry-run", action="store_true", help="show the change, write nothing")
    r.add_argument("--json", action="store_true")
    add_workspace(r)
    r.set_defaults(func=run_revert)
    lst = actions.add_parser("list", help="learned and hand-written rules")
    lst.add_argument("--json", action="store_true")
    add_workspace(lst)
    lst.set_defaults(func=run_list)
    b = actions.add_parser("builtin", help="every built-in rule guard can cite (static, behavior, fusion)")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=run_builtin)


def run_builtin(args: argparse.Namespace) -> int:
    from guard.rulebook import builtin_rules

    rules = builtin_rules()
    if args.json:
        print_json({"rules": [r.to_dict() for r in rules]})
        return 0
    print(
        table(
            [
                [r.id, _clip(r.name, 60), r.layer, r.family, r.risk or "-", r.effect, _clip(r.example or "-", 60)]
                for r in rules
            ],
            ["id", "name", "layer", "family", "risk", "effect", "example"],
        )
    )
    return 0


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def run_suggest(args: argparse.Namespace) -> int:
    from guard.chain import STATIC
    from guard.policy import rules
    from guard.policy.suggest import Policy, suggest

    if args.limit is not None and args.limit < 1:
        return error("--limit must be at least 1")
    with open_guard(args) as g:
        static = g.chain.layer(STATIC)
        if static is None:
            return error("this Guard has no static layer in its chain; rules need its risk check")
        policy = Policy.from_config(g.config)
        if args.limit is not None:
            policy = attrs.evolve(policy, max_suggestions=args.limit)
        try:
            result = suggest(
                g.workspace,
                static,
                g.config,
                policy=policy,
                configured=rules.configured_rules(g.workspace),
                skip=rules.skip_states(g.workspace),
            )
            rules.record(g.workspace, result)
        except (InputError, ConfigError) as exc:
            return error(str(exc))
    if args.json:
        print_json(result.to_dict())
        return 0
    for title, items in (
        ("suggested", result.suggested),
        ("held for you (contradicted)", result.held),
        ("rejected", result.rejected),
    ):
        if not items:
            continue
        print(f"{title} ({len(items)}):")
        for s in items:
            print(f"  {s.id}  {s.kind:<5}  {s.rule}")
            if s.replay is not None:
                print(f"      covers {s.replay['covers']}")
            print(f"      {s.reason}")
            if s.evidence.examples:
                print(f"      e.g. {'; '.join(s.evidence.examples)}")
            if s.replay is not None:
                _print_replay(s.kind, s.replay)
    c = result.counts
    if not (result.suggested or result.held or result.rejected):
        print("no rule suggestions: no pattern has enough consistent, verified answers yet")
    if result.cap_hit:
        print(
            f"cap reached: {policy.max_suggestions} suggestions shown, {c['left_off']} more left off; "
            "apply or revert these and run again"
        )
    print(
        f"{c.get('patterns', 0)} pattern(s) examined: {c.get('insufficient', 0)} with too little evidence, "
        f"{c.get('already_configured', 0)} already configured, {c.get('reverted', 0)} reverted earlier"
    )
    if result.suggested:
        print("next: guard rules apply --dry-run   then: guard rules apply [ID ...]")
    return 0


def _print_replay(kind: str, replay: Mapping[str, Any]) -> None:
    done = "allowed" if kind == "allow" else "refused"
    calls = replay.get(done) or []
    shown = "; ".join(f"{c['call']} ({c['count']}x)" for c in calls)
    print(f"      replay: would have {done} {replay.get('past_calls', 0)} past call(s){': ' + shown if shown else ''}")
    others = "; ".join(f"{c['call']} ({c['count']}x)" for c in replay.get("not_covered") or [])
    if others:
        print(f"      not covered: {others}")
    if "variants_checked" in replay and not replay.get("widens"):
        n = replay["variants_checked"]
        print(f"      none of {n} target-changing variants is covered (--index-url, git+URL, -f FILE, ...)")


def run_apply(args: argparse.Namespace) -> int:
    from guard.policy import rules
    from guard.workspace import ensure, resolve

    root = resolve(args.workspace)
    ensure(root)
    try:
        result = rules.apply(root, args.ids, dry_run=args.dry_run)
    except (InputError, ConfigError) as exc:
        return error(str(exc))
    return _print_edit(result, args.json)


def run_revert(args: argparse.Namespace) -> int:
    from guard.policy import rules
    from guard.workspace import ensure, resolve

    root = resolve(args.workspace)
    ensure(root)
    try:
        result = rules.revert(root, args.id, dry_run=args.dry_run)
    except (InputError, ConfigError) as exc:
        return error(str(exc))
    return _print_edit(result, args.json)


def run_list(args: argparse.Namespace) -> int:
    from guard.policy import rules
    from guard.workspace import resolve

    root = resolve(args.workspace)
    try:
        rows = rules.listing(root)
    except (InputError, ConfigError) as exc:
        return error(str(exc))
    if args.json:
        print_json({"rules": rows})
        return 0
    if not rows:
        print("no rules: run 'guard rules suggest'")
        return 0
    print(
        table(
            [[r["id"] or "-", r["kind"], r["status"], "yes" if r["in_config"] else "no", r["rule"]] for r in rows],
            ["id", "kind", "status", "in guard.toml", "rule"],
        )
    )
    return 0


def _print_edit(result: EditResult, as_json: bool) -> int:
    if as_json:
        print_json(result.to_dict())
        return 0
    if not result.changes:
        print("nothing to apply: no candidate rules (run 'guard rules suggest')")
        return 0
    verb = "would " if result.dry_run else ""
    for c in result.changes:
        action = f"{verb}{c.action}" if c.action in ("add", "remove") else c.action
        print(f"{c.id}  {c.kind:<5}  {c.rule}: {action}")
    if result.diff:
        print(result.diff, end="" if result.diff.endswith("\n") else "\n")
    elif not result.dry_run:
        print(f"{result.file} unchanged")
    return 0
