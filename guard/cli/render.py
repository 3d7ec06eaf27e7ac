"""Human-readable renderings of decision records."""

from __future__ import annotations

from typing import Any

from guard.model import DecisionRecord

_ICON = {"auto_allow": "ALLOW", "request_confirm": "CONFIRM", "block": "BLOCK"}


def explain_text(record: DecisionRecord, details: dict[str, Any] | None = None) -> str:
    """The decision, then each layer's reasons, then the fused score's parts."""
    lines = [
        f"{_ICON[record.decision]}  {record.tool}  ->  {record.decision}",
        f"  score {record.final_score:.2f}   risk {record.risk.label}   ({record.elapsed_us:.0f} µs)",
    ]
    for v in record.layers:
        head = f"  [{v.layer}]"
        if v.risk is not None:
            head += f" risk {v.risk.label}"
        if v.decision:
            head += f", decides {v.decision}"
        if v.ceiling:
            head += f", at most {v.ceiling}"
        if v.error:
            head += f", FAILED: {v.error}"
        lines.append(head)
        for r in v.reasons:
            lines.append(f"      {r.rule_id}  {r.message}")
            if r.alternative:
                lines.append(f"            instead: {r.alternative}")
        if v.layer == "behavior" and "health" in v.data:
            lines.append(f"      session health {float(v.data['health']):.0f}/100")
        breaker = v.data.get("breaker") if v.layer == "behavior" else None
        if isinstance(breaker, dict) and breaker.get("close_with") and breaker.get("state") != "closed":
            lines.append(f"      circuit breaker {breaker.get('state')}: close it with `{breaker['close_with']}`")
        if v.layer == "fusion":
            dims = v.data.get("dimensions", {})
            weights = v.data.get("weights", {})
            comps = v.data.get("components", {})
            for key, d in dims.items():
                lines.append(
                    f"      {key:<12} {comps.get(key, 0):6.2f} × {weights.get(key, 0):.2f}"
                    f"   (raw {d['value']:.1f}, confidence {d['confidence']:.2f}) {d.get('note', '')}"
                )
    for note in record.notes:
        lines.append(f"  note: {note}")
    if record.unavailable:
        lines.append(f"  unavailable: {', '.join(record.unavailable)}")
    if details:
        static = details.get("static")
        if isinstance(static, dict):
            for key in ("parse", "commands"):
                if key in static:
                    lines.append(f"  static {key}: {static[key]}")
            for fired in static.get("rules", ()):
                detail = f" ({fired['detail']})" if fired.get("detail") else ""
                lines.append(f"  static rule {fired['id']}{detail} fired by {fired.get('handler') or 'guard'}")
    return "\n".join(lines)
