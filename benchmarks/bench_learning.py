"""What learning from history buys and what it must not give away (issue 15).

A scripted history per mode (seed, guard): each repeated operation is asked for ``K`` times;
when guard asks, the person approves and the run succeeds; when it allows, the run succeeds.
Some operations are refused every time, some fail every time. Reported:

- ``prompts saved``: prompts a guard without history would show for the repeated operations
  (every repeat of one whose first-time decision is request_confirm) minus the prompts shown;
- ``trust moved to variants``: after the script, variants of the learned operations (another
  package, host, index URL, branch, file) that are allowed while a guard without history
  would ask — budget 0 in guard mode; the seed's per-tool formulas are reported as they are;
- ``dragged``: learned operations allowed before that unrelated refusals and failures (other
  programs, other packages) turn into prompts — budget 0 in guard mode;
- ``refused ops auto-allowed``: refused operations that end up auto-allowed (budget 0).

Nothing is run: every command is data handed to ``Guard.decide``.

    python benchmarks/bench_learning.py [--quick]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.common import Row, row  # noqa: E402

REPEATED = (
    "pip install requests",
    "npm install lodash",
    "git push origin feature-x",
    "kubectl apply -f k8s/dev.yaml",
    "curl https://api.example.com/v1/items",
    "make lint",
    "pytest tests/unit",
)
REFUSED = ("make deploy-staging", "pip install leftpad")
FAILING = ("make integration",)
VARIANTS = (
    "pip install reqeusts",
    "pip install git+https://x.example/p",
    "pip install requests --index-url http://x.example",
    "npm install left-padx",
    "git push origin main",
    "kubectl apply -f k8s/prod.yaml",
    "curl https://other.example.net/v1/items",
    "make lint --jobs=64",
    "pytest tests/unit --pdb",
)
CONFIG = {"system.health": 90, "memory.backend": "history"}


def _script(mode: str, k: int, tmp: Path) -> dict[str, int]:
    from guard import Guard
    from guard.model import AUTO_ALLOW, REQUEST_CONFIRM

    cfg = CONFIG | {"fusion.mode": mode}
    with Guard(tmp / f"fresh-{mode}", cfg) as fresh:
        first = {c: fresh.decide("bash", {"command": c}, session_id="f", save=False).decision for c in REPEATED}
        variant_fresh = {c: fresh.decide("bash", {"command": c}, session_id="f", save=False).decision for c in VARIANTS}
    prompts = baseline = 0
    with Guard(tmp / f"learn-{mode}", cfg) as g:
        for i in range(k):
            for c in REPEATED:
                params = {"command": c}
                rec = g.decide("bash", params, session_id=f"r{i}-{c}")
                baseline += first[c] == REQUEST_CONFIRM
                if rec.decision == REQUEST_CONFIRM:
                    prompts += 1
                    g.record_interaction("bash", params, session_id=f"r{i}-{c}", approved=True)
                if rec.decision != "block":
                    g.record_result("bash", params, session_id=f"r{i}-{c}", success=True)

        def allowed(commands: tuple[str, ...], session: str) -> set[str]:
            return {
                c
                for c in commands
                if g.decide("bash", {"command": c}, session_id=session, save=False).decision == AUTO_ALLOW
            }

        moved = len(allowed(VARIANTS, "v") - {c for c, d in variant_fresh.items() if d == AUTO_ALLOW})
        learned = allowed(REPEATED, "l1")
        for i in range(k):  # then unrelated refusals and failures
            for c in REFUSED:
                g.record_interaction("bash", {"command": c}, session_id=f"x{i}", approved=False)
            for c in FAILING:
                g.record_result("bash", {"command": c}, session_id=f"y{i}", success=False)
        dragged = len(learned - allowed(REPEATED, "l2"))
        refused_allowed = len(allowed(REFUSED, "q"))
    return {
        "prompts": prompts,
        "baseline": baseline,
        "moved": moved,
        "dragged": dragged,
        "learned": len(learned),
        "refused_allowed": refused_allowed,
    }


def run(quick: bool = False) -> list[Row]:
    k = 12 if quick else 20
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("guard", "seed"):
            r = _script(mode, k, Path(tmp))
            gate = "== 0" if mode == "guard" else None
            rows.append(
                row(
                    f"learning {mode}: prompts saved, {len(REPEATED)} ops × {k}",
                    r["baseline"] - r["prompts"],
                    "prompts",
                    note=f"{r['prompts']} shown of {r['baseline']} without history",
                )
            )
            rows.append(
                row(
                    f"learning {mode}: trust moved to variants",
                    r["moved"],
                    "variants",
                    gate,
                    note=f"of {len(VARIANTS)} variants",
                )
            )
            rows.append(
                row(
                    f"learning {mode}: learned ops no longer allowed after unrelated refusals",
                    r["dragged"],
                    "ops",
                    gate,
                    note=f"of {r['learned']} allowed before",
                )
            )
            rows.append(row(f"learning {mode}: refused ops auto-allowed", r["refused_allowed"], "ops", gate))
    return rows


if __name__ == "__main__":
    for r in run("--quick" in sys.argv):
        print(r)
