"""The seed's ``yolo_classifier`` integration, with guard as both of its layers.

    from guard.integrations.yolo_classifier import classify_with_fusion

    classify_with_fusion("bash", {"command": "ls"}, "session_123")
    # {"risk": "SAFE", "fusion_score": 90.0, "decision": "auto_allow"}
    classify_with_fusion("bash", {"command": "rm -rf /"}, "session_123")
    # {"risk": "CRITICAL", "reason": "block (score 0.0, risk critical): [G101] ...",
    #  "fusion_score": 0.0, "decision": "block"}

Layer 1 (the old static classification, ``yolo_static_classify``) is guard's static layer;
layer 2 (the fused score) is ``MultiSourceFusionEngine.fuse_decision_context``, which runs
guard's whole chain, so a critical call is blocked whatever its score. As in the seed, the
call is judged, not logged: ``engine.save_decision(...)`` logs it. ``risk`` uses the old
classifier's upper-case names.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from guard.chain import STATIC
from guard.engine import MultiSourceFusionEngine
from guard.layers.base import Context
from guard.model import BLOCK, Risk

_ENGINE: MultiSourceFusionEngine | None = None
_ENGINE_LOCK = threading.Lock()


def default_engine() -> MultiSourceFusionEngine:
    """One engine per process on the default workspace (``$GUARD_HOME``, else ``~/.guard``)."""
    global _ENGINE
    if _ENGINE is None:
        with _ENGINE_LOCK:
            if _ENGINE is None:
                _ENGINE = MultiSourceFusionEngine()
    return _ENGINE


def yolo_static_classify(
    tool_name: str, params: Mapping[str, Any] | None = None, *, engine: MultiSourceFusionEngine | None = None
) -> str:
    """The call's static risk alone: ``SAFE``, ``LOW``, ``MEDIUM``, ``HIGH`` or ``CRITICAL``."""
    guard = (engine or default_engine()).guard
    call = guard.make_call(tool_name, params or {})
    static = guard.chain.layer(STATIC)
    if static is None:
        return Risk.MEDIUM.name  # no static layer: unknown is not safe
    verdict = static(call, Context(config=guard.config, now=call.timestamp, state=guard.state))  # type: ignore[arg-type]
    return (verdict.risk if verdict.risk is not None else Risk.MEDIUM).name


def classify_with_fusion(
    tool_name: str,
    params: Mapping[str, Any] | None = None,
    session_id: str | None = None,
    *,
    engine: MultiSourceFusionEngine | None = None,
) -> dict[str, Any]:
    """The seed's answer: ``risk``, ``fusion_score``, ``decision``; ``risk: CRITICAL`` and a ``reason`` when blocked."""
    score = (engine or default_engine()).fuse_decision_context(tool_name, params or {}, session_id)
    record = score.record
    static = record.layer("static")
    risk = static.risk if static is not None and static.risk is not None else record.risk
    fused = round(score.final_score, 2)
    if score.decision == BLOCK:
        return {"risk": Risk.CRITICAL.name, "reason": record.summary(), "fusion_score": fused, "decision": BLOCK}
    return {"risk": risk.name, "fusion_score": fused, "decision": score.decision}
