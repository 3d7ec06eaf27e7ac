"""The memory modules load no LanceDB or pyarrow until a background thread needs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = textwrap.dedent(
    """
    import json, sys
    import guard, guard.memory
    after_guard = sorted(m for m in ("lancedb", "pyarrow", "numpy") if m in sys.modules)
    from datetime import datetime
    from guard.config import Config
    from guard.memory import HistoryMemory
    from guard.memory.lance import LanceMemory
    import guard.memory.tidy, guard.memory.schedule, guard.cli.tidy
    from guard.model import Risk, ToolCall

    class NoHistory:
        def pattern(self, signature):
            return None

    history = HistoryMemory(NoHistory())
    call = ToolCall("Bash", {"command": "ls"})
    result = history.relevance(call, "bash:ls", Risk.SAFE, datetime.now())
    lazy = LanceMemory("/nonexistent/memory.lance", Config.load(env={}), start_background=False)
    unavailable = lazy.relevance(call, "bash:ls", Risk.SAFE, datetime.now())
    print(json.dumps({
        "after_guard": after_guard,
        "loaded": sorted(m for m in ("lancedb", "pyarrow") if m in sys.modules),
        "history_score": result.score,
        "lance_available": unavailable.available,
    }))
    """
)


def test_hot_path_modules_import_no_lancedb() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, env=env)
    got = json.loads(out.stdout)
    assert got == {"after_guard": [], "loaded": [], "history_score": 40.0, "lance_available": False}
