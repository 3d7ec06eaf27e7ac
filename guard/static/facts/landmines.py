"""Files that run later: scripts, build files, package hooks, CI jobs, notebooks.

Writing ``rm -rf ~`` into ``cleanup.sh``, a Makefile recipe, an npm ``postinstall`` hook, a CI
``run:`` step or a Python script does not run it now, but it will run: the write itself is judged
by what the file would do (G127, asks). Only the parts that execute are read: recipe lines, script
values, ``run:`` steps, whole scripts.

Some project files run *by themselves*, with nobody typing a command: a husky git hook on the next
commit, an editor task marked ``runOn: folderOpen`` when the folder opens, a dev container's
``initializeCommand`` (on the host) or ``postCreateCommand``, a pre-commit ``entry``. Those are
persistence inside the project (:func:`autorun_commands`): dangerous content there blocks (G152)
like it does in ``.git/hooks``.
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
_INLINE_RECIPE = lazyre.compile(r"(?m)^[^\t#=\n:]+:(?!=)[^;\n=]*;[@+-]*(.+)$")
_MAKE_SHELL = lazyre.compile(r"\$[({]shell\s+([^)}]+)[)}]")
_RUN_STEP = lazyre.compile(r"(?m)^[ \t]*(?:-[ \t]*)?run:\s*[|>]?-?\s*(.+)$")
_JSON_STRING = r'"((?:[^"\\\n]|\\.)*)"'
_TASK_COMMAND = lazyre.compile(r'"command"\s*:\s*' + _JSON_STRING)
_DEVCONTAINER_COMMAND = lazyre.compile(
    r'"(?:initialize|onCreate|updateContent|postCreate|postStart|postAttach)Command"\s*:\s*'
)
_STRING_IN = lazyre.compile(_JSON_STRING)
_ENTRY = lazyre.compile(r"(?m)^[ \t]*(?:-[ \t]*)?entry:[ \t]*(.+)$")
# Project files that run as programs without anyone reviewing them: the host's project hooks
# (``.claude/hooks/*.sh`` named in ``.claude/settings.json``), ``python`` from the virtualenv,
# ``jest`` from ``node_modules/.bin`` when an npm script runs.
PROJECT_PROGRAM = lazyre.compile(r"/(\.claude/hooks|\.?venv/bin|node_modules/\.bin)/(?!activate)[^/]+$")
_PACKAGE_CONFIGS = frozenset(
    {".npmrc", ".yarnrc", ".yarnrc.yml", "pip.conf", "pip.ini", "bunfig.toml", ".bunfig.toml", "uv.toml", ".pnpmrc"}
)
_PACKAGE_REDIRECT = lazyre.compile(
    r"(?im)^[ \t]*(?:[\w@/:-]*registry|script-shell|shell|node-options|onload-script|yarnPath|npmRegistryServer|"
    r"(?:extra-)?index-url|find-links|trusted-host|plugins)\s*[=:]"
)
_CI_FILES = lazyre.compile(
    r"(^|/)(\.github/workflows/[^/]+\.ya?ml|\.gitlab-ci\.yml|\.circleci/config\.yml|"
    r"azure-pipelines\.yml|bitbucket-pipelines\.yml|\.travis\.yml|Jenkinsfile)$"
)


def commands_in(path: str, text: str) -> tuple[list[str], str | None]:
    """(shell snippets, interpreter language) a file at ``path`` with ``text`` would run."""
    name = path.rsplit("/", 1)[-1]
    if path.endswith(_SHELL_SUFFIXES) or path.endswith("/bin/activate") or path == "bin/activate":
        return [text], None
    if name in ("Makefile", "makefile", "GNUmakefile") or name.endswith(".mk"):
        return makefile_commands(text), None
    if name == "package.json":
        try:
            scripts = json.loads(text).get("scripts", {})
        except (ValueError, AttributeError):
            scripts = {}
        return [v for v in scripts.values() if isinstance(v, str)] if isinstance(scripts, dict) else [], None
    if _CI_FILES.search(path):
        return _RUN_STEP.findall(text), None
    if path.endswith(".vscode/tasks.json"):
        return _json_strings(_TASK_COMMAND.findall(text)), None
    auto = autorun_commands(path, text)
    if auto:
        return auto, None
    for suffix, lang in _CODE_SUFFIXES.items():
        if path.endswith(suffix):
            return [], lang
    if text.startswith("#!") and re.match(r"#!\s*\S*(ba|z|k|da)?sh\b", text):
        return [text], None
    return [], None


_IPY_LINE = lazyre.compile(r"^\s*(?:!!?|%(?:system|sx)\b|[\w.]+\s*=\s*!)\s*(.+)$")
_IPY_SHELL_CELL = lazyre.compile(r"^\s*%%(?:bash|sh|zsh|system|script\s+(?:\S*/)?(?:ba|z|da|k)?sh)\b[^\n]*\n?")
_JSON_LINE = lazyre.compile(r'^\s*("(?:[^"\\]|\\.)*")\s*,?\s*$')


def notebook_parts(text: str) -> tuple[list[str], str]:
    """(shell commands, Python source) of a notebook: a whole ``.ipynb`` document, a cell's source
    (NotebookEdit) or a fragment of the JSON (an Edit). ``!rm -rf ~``, ``x = !cmd``, ``%system cmd``
    lines and ``%%bash`` cells are shell; the rest is Python."""
    cells: list[str] = []
    if text.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
            cells = [_source(c.get("source", "")) for c in doc.get("cells", []) if isinstance(c, dict)]
        except (ValueError, AttributeError):
            cells = []
    if not cells:
        lines = []
        for line in text.split("\n"):
            m = _JSON_LINE.match(line)
            if m:
                try:
                    line = json.loads(m[1]).rstrip("\n")
                except ValueError:
                    pass
            lines.append(line)
        cells = ["\n".join(lines)]
    commands: list[str] = []
    source: list[str] = []
    for cell in cells:
        head = _IPY_SHELL_CELL.match(cell)
        if head:
            commands.append(cell[head.end() :])
            continue
        for line in cell.split("\n"):
            m = _IPY_LINE.match(line)
            if m:
                commands.append(m[1])
            else:
                source.append(line)
    return commands, "\n".join(source)


def _source(value: object) -> str:
    return "".join(v for v in value if isinstance(v, str)) if isinstance(value, list) else str(value)


def makefile_commands(text: str) -> list[str]:
    """What a makefile runs: recipe lines, ``target: ; recipe`` and ``$(shell …)`` calls."""
    return _RECIPE.findall(text) + _INLINE_RECIPE.findall(text) + _MAKE_SHELL.findall(text)


def blocked_if_run(path: str, text: str, shell: Callable[[str], Risk], code: Callable[[str, str], Risk]) -> bool:
    """Would running the file at ``path`` do something guard blocks?"""
    if not text:
        return False
    if path.endswith(".ipynb"):  # cells are Python, but ``!cmd`` lines and ``%%bash`` cells are shell
        commands, source = notebook_parts(text[:65536])
        return any(shell(c) >= Risk.CRITICAL for c in commands[:64]) or code(source, "python") >= Risk.CRITICAL
    snippets, lang = commands_in(path, text[:65536])
    if lang is not None:
        return code(text[:65536], lang) >= Risk.CRITICAL
    return any(shell(s) >= Risk.CRITICAL for s in snippets[:64])


# package.json scripts npm, pnpm and yarn run on their own (install, pack, publish of the package)
_LIFECYCLE = lazyre.compile(
    r'"(?:preinstall|install|postinstall|prepare|preprepare|postprepare|prepublish|prepack|postpack|'
    r'dependencies)"\s*:\s*"((?:[^"\\]|\\.)*)"'
)


def autorun_commands(path: str, text: str | None) -> list[str] | None:
    """The commands a project file at ``path`` runs by itself; ``None`` when it is not such a file.

    ``[]`` means it is one but nothing in ``text`` (or no text known) was readable as a command.
    """
    slashed = "/" + path
    if "/.husky/" in slashed:
        return [text] if text else []
    if PROJECT_PROGRAM.search(slashed):  # project hook scripts, virtualenv and node_modules programs
        return [text] if text else []
    if text is None:
        return None
    if slashed.endswith("/.vscode/tasks.json"):
        return _json_strings(_TASK_COMMAND.findall(text)) if "folderOpen" in text else None
    name = slashed.rsplit("/", 1)[-1]
    if name in ("devcontainer.json", ".devcontainer.json") and ("/.devcontainer" in slashed or name[0] == "."):
        found: list[str] = []
        for m in _DEVCONTAINER_COMMAND.finditer(text):
            value = _json_value(text, m.end())
            strings = _json_strings(_STRING_IN.findall(value))
            # a string, an argv array (also read joined), or an object of named strings or arrays
            found += [*strings, " ".join(strings)] if value.startswith("[") else strings
        return found
    if name in (".pre-commit-config.yaml", ".pre-commit-config.yml"):
        return [unquoted(e.strip()) for e in _ENTRY.findall(text)]
    if name == "package.json":  # lifecycle scripts: ``npm install`` runs them by itself
        scripts = _json_strings(_LIFECYCLE.findall(text[:65536]))
        return scripts or None
    return None


def unquoted(value: str) -> str:
    """A YAML scalar without the quotes around it (``'sh -c "x"'`` -> ``sh -c "x"``)."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _json_strings(raw: list[str]) -> list[str]:
    out = []
    for item in raw[:64]:
        try:
            out.append(json.loads(f'"{item}"'))
        except ValueError:
            out.append(item)
    return out


def _json_value(text: str, start: int) -> str:
    """The JSON value starting at ``start`` (a string, or a bracketed array or object), tolerantly."""
    if text[start : start + 1] not in ("[", "{"):
        m = _STRING_IN.match(text, start)
        return m.group(0) if m else ""
    depth, i, quoted = 0, start, False
    while i < len(text):
        ch = text[i]
        if quoted:
            if ch == "\\":
                i += 1
            elif ch == '"':
                quoted = False
        elif ch == '"':
            quoted = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
        i += 1
    return text[start:]


def redirects_packages(path: str, text: str | None) -> bool:
    """A project's package-manager configuration that names another registry or a program to run
    (``.npmrc`` ``registry=``/``script-shell=``, ``.yarnrc.yml`` ``yarnPath:``, ``pip.conf`` ``index-url``)."""
    name = path.rsplit("/", 1)[-1]
    return name in _PACKAGE_CONFIGS and (text is None or bool(_PACKAGE_REDIRECT.search(text)))
