"""What a user installs: one package, ``guard``, under the distribution name ``guard-preflight``.

The repository keeps the design card's top-level folders; ``integrations/`` installs as
``guard.integrations`` and ``benchmarks/`` and the OpenClaw plugin's JS tests are not installed.
The wheel is built for real (pip, setuptools from the index) and imported from where it was
unpacked, outside the repository, so nothing here can pass by reading the source tree.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.conftest import guard_cli_env

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# ``from integrations…`` / ``import integrations…`` at the start of a line (the old top-level name).
OLD_IMPORT = re.compile(r"^\s*(from|import)\s+integrations\b", re.M)


def _python_dirs(top: str) -> set[str]:
    found = set()
    for path in (ROOT / top).rglob("*.py"):
        rel = path.parent.relative_to(ROOT / top)
        if "node_modules" in rel.parts or "__pycache__" in rel.parts:
            continue
        found.add(".".join(("guard",) + (("integrations",) if top == "integrations" else ()) + rel.parts))
    return found


def test_the_package_list_covers_every_folder_of_python_code() -> None:
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    assert listed == _python_dirs("guard") | _python_dirs("integrations")
    assert PYPROJECT["tool"]["setuptools"]["package-dir"] == {"guard": "guard", "guard.integrations": "integrations"}


def test_the_distribution_name_is_not_the_taken_guard_and_the_license_is_spdx() -> None:
    project = PYPROJECT["project"]
    assert project["name"] == "guard-preflight"  # "guard" on PyPI is another project (1.0.1, 2013)
    assert project["license"] == "MIT"
    assert project["scripts"] == {"guard": "guard.cli:main"}


def test_no_code_imports_the_old_top_level_integrations_name() -> None:
    offenders = []
    for top in ("guard", "integrations", "tests", "benchmarks"):
        for path in (ROOT / top).rglob("*.py"):
            if ".hosts" in path.parts or "node_modules" in path.parts:
                continue
            if OLD_IMPORT.search(path.read_text(encoding="utf-8")):
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    if done.returncode != 0 and "No matching distribution found for setuptools" in done.stderr:
        pytest.skip("no package index to build the wheel from")
    assert done.returncode == 0, done.stderr
    (built,) = out.glob("guard_preflight-*.whl")
    return built


@pytest.mark.slow
def test_the_wheel_installs_one_top_level_package_and_no_tests_or_benchmarks(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names if not n.split("/", 1)[0].endswith(".dist-info")}
    assert tops == {"guard"}
    assert "guard/integrations/hosts/flow.py" in names
    for plugin_file in ("index.mjs", "guard-plugin.mjs", "openclaw.plugin.json", "package.json"):
        assert f"guard/integrations/openclaw/{plugin_file}" in names
    assert not [n for n in names if "/test/" in n or "test-support" in n or n.startswith("benchmarks/")]
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(meta).decode()
    assert "Name: guard-preflight" in text
    assert "License-Expression: MIT" in text


@pytest.mark.slow
def test_the_unpacked_wheel_runs_outside_the_repository(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = guard_cli_env() | {"HOME": str(tmp_path / "home"), "GUARD_HOME": str(tmp_path / "gh")}
    env["PYTHONPATH"] = str(site)  # ahead of the editable install; the repository is not on the path
    code = (
        "import json, guard, guard.integrations.hosts.flow as flow, guard.cli.install as inst;"
        "print(json.dumps([guard.__file__, flow.__file__, str(inst.openclaw_plugin_dir())]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path, check=True
    )
    paths = json.loads(done.stdout)
    assert all(p.startswith(str(site)) for p in paths), paths
    assert (Path(paths[2]) / "index.mjs").is_file()
    check = subprocess.run(
        [sys.executable, "-m", "guard", "check", "bash", '{"command": "ls"}'],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert check.returncode == 0, check.stderr
    assert "auto_allow" in check.stdout
