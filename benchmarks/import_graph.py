"""The import graph of guard's own modules, and its largest cycle.

    python benchmarks/import_graph.py            # largest cycle, counting every import
    python benchmarks/import_graph.py --runtime  # ignoring imports under ``if TYPE_CHECKING:``

Every ``import`` in a module counts, at any depth: a function-level import still ties two modules
together (it only moves the failure from import time to call time). ``from pkg import name``
is an edge to ``pkg.name`` when that is a module, else to ``pkg``. As in grimp, importing
``a.b.c`` is not counted as importing ``a`` and ``a.b``, so a package's ``__init__`` joins a
cycle only through what it imports itself. ``integrations/`` is read as ``guard.integrations``
(its installed name). The strongly connected components are Tarjan's, iterative.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOPS = {"guard": ROOT / "guard", "guard.integrations": ROOT / "integrations"}


def modules() -> dict[str, Path]:
    """Every module of guard, by dotted name (a package by its own name, from its ``__init__``)."""
    found: dict[str, Path] = {}
    for top, folder in TOPS.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if "node_modules" in parts or ".hosts" in parts:
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((top, *parts))] = path
    return found


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, runtime: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    stack = [tree]
    while stack:
        node = stack.pop()
        if runtime and isinstance(node, ast.If) and _type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def graph(runtime: bool = False) -> dict[str, set[str]]:
    """``module -> modules of guard it imports``."""
    known = modules()
    edges: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(encoding="utf-8")), runtime):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                base = (
                    base.replace("integrations.", "guard.integrations.", 1)
                    if base.startswith("integrations.")
                    else base
                )
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
            for target in targets:
                while target and target not in known:  # ``import guard.static.scan as s`` -> the module
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges[name].add(target)
    return edges


def components(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module, largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found, key=len, reverse=True)


def largest(runtime: bool = False) -> list[str]:
    """The modules of the largest import cycle (empty when there is none)."""
    found = components(graph(runtime))
    return found[0] if found else []


def main(argv: list[str]) -> int:
    runtime = "--runtime" in argv
    found = components(graph(runtime))
    print(f"import cycles ({'runtime imports' if runtime else 'every import'}): {len(found)}")
    for component in found:
        print(f"  {len(component)} modules: {' '.join(component)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
