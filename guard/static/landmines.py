"""Files that run later: scripts, build files, package hooks, CI jobs, notebooks.

Writing ``rm -rf ~`` into ``cleanup.sh``, a Makefile recipe, an npm ``postinstall`` hook, a CI
``run:`` step or a Python script does not run it now, but it will run: the write itself is judged
by what the file would do (G127, asks). Only the parts that execute are read: recipe lines, script
values, ``run:`` steps, whole scripts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from guard import lazyre
from guard.model import Risk

_SHELL_SUFFIXES = (".sh", ".bash", ".zsh", ".ksh", ".command", ".bashrc", ".profile", ".envrc")
_CODE_SUFFIXES = {
    ".py": "python",
    ".js": "js",
    ".mjs": "js",
    ".cjs": "js",
    ".ts": "js",
    ".rb": "ruby",
    ".pl": "perl",
    ".php": "php",
    ".ipynb": "python",
}
_RECIPE = lazyre.compile(r"(?m)^\t[@+-]*(.+)$")
_RUN_STEP = lazyre.compile(r"(?m)^\s*(?:-\s*)?run:\s*[|>]?-?\s*(.+)$")
_CI_FILES = lazyre.compile(
    r"(^|/)(\.github/workflows/[^/]+\.ya?ml|\.gitlab-ci\.yml|\.circleci/config\.yml|"
    r"azure-pipelines\.yml|bitbucket-pipelines\.yml|\.travis\.yml|Jenkinsfile)$"
)


def commands_in(path: str, text: str) -> tuple[list[str], str | None]:
    """(shell snippets, interpreter language) a file at ``path`` with ``text`` would run."""
    name = path.rsplit("/", 1)[-1]
    if path.endswith(_SHELL_SUFFIXES):
        return [text], None
    if name in ("Makefile", "makefile", "GNUmakefile") or name.endswith(".mk"):
        return _RECIPE.findall(text), None
    if name == "package.json":
        try:
            scripts = json.loads(text).get("scripts", {})
        except (ValueError, AttributeError):
            scripts = {}
        return [v for v in scripts.values() if isinstance(v, str)] if isinstance(scripts, dict) else [], None
    if _CI_FILES.search(path):
        return _RUN_STEP.findall(text), None
    for suffix, lang in _CODE_SUFFIXES.items():
        if path.endswith(suffix):
            return [], lang
    if text.startswith("#!") and re.match(r"#!\s*\S*(ba|z|k|da)?sh\b", text):
        return [text], None
    return [], None


def blocked_if_run(path: str, text: str, shell: Callable[[str], Risk], code: Callable[[str, str], Risk]) -> bool:
    """Would running the file at ``path`` do something guard blocks?"""
    if not text:
        return False
    snippets, lang = commands_in(path, text[:65536])
    if lang is not None:
        return code(text[:65536], lang) >= Risk.CRITICAL
    return any(shell(s) >= Risk.CRITICAL for s in snippets[:64])
