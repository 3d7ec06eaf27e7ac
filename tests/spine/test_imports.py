"""``import guard`` stays lean."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import guard_cli_env

HEAVY = ("lancedb", "pyarrow", "asyncio", "loguru", "tree_sitter", "psutil", "numpy")


def test_import_guard_loads_nothing_heavy() -> None:
    code = f"import sys, guard, json; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=guard_cli_env())
    assert json.loads(out.stdout) == []


def test_public_api_names() -> None:
    import guard

    for name in ("Guard", "guarded", "MultiSourceFusionEngine", "ToolBlocked", "ConfirmationRequired", "GuardError"):
        assert getattr(guard, name) is not None


def test_a_decision_in_a_history_backed_guard_does_not_import_lancedb() -> None:
    code = (
        "import sys, tempfile, guard; g = guard.Guard(tempfile.mkdtemp(), {'memory.backend': 'history', "
        "'system.health': 90}); g.decide('bash', {'command': 'ls'}); print('lancedb' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=guard_cli_env())
    assert out.stdout.strip() == "False", out.stderr
