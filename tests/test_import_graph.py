"""The house seen from its imports: data flows one way, so no module inside arnes/ imports itself back.

The graph is built from the source with `ast`, not by importing, so a lazy (function-level) import
is an edge like any other: deferring an import hides a circle from Python but not from the reader.
Imports under `if TYPE_CHECKING:` count too: a type taken from a module above is still an arrow
pointing up.
"""

from __future__ import annotations

import ast
from pathlib import Path

import arnes

ROOT = Path(arnes.__file__).parent


def _modules(root: Path) -> dict[str, Path]:
    """Every module of the package by dotted name; a package's __init__ is the package itself."""
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The deepest module of arnes that `import name` names (None for anything outside arnes)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                targets.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            for alias in node.names:
                # `from pkg import submodule` imports the submodule; `from pkg import name` the package.
                targets.add(f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source)
    top = module.split(".")[0]
    edges = {_resolve(t, modules) for t in targets if t == top or t.startswith(top + ".")}
    return {e for e in edges if e is not None and e != module}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _graph(root: Path = ROOT) -> dict[str, set[str]]:
    modules = _modules(root)
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def test_the_graph_sees_every_kind_of_import(tmp_path: Path) -> None:
    """Each way of importing is an edge, so a cycle hidden behind any of them is found."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "from pkg.sub import deep\n",  # a package __init__ is a module
        "top.py": "import pkg.sub.deep\n",
        "rel.py": "from .sub.deep import name\n",  # relative
        "lazy.py": "def f():\n    from pkg import top\n",  # function-level, `from pkg import submodule`
        "typed.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import rel\n",
        "outside.py": "import os\nimport pkgother\nfrom pkg import not_a_module\n",
        "sub/__init__.py": "",
        "sub/deep.py": "from .. import lazy\nfrom ..typed import x\n",
    }
    for name, text in files.items():
        (pkg / name).write_text(text)
    graph = _graph(pkg)
    assert graph["pkg"] == {"pkg.sub.deep"}
    assert graph["pkg.top"] == {"pkg.sub.deep"}
    assert graph["pkg.rel"] == {"pkg.sub.deep"}
    assert graph["pkg.lazy"] == {"pkg.top"}
    assert graph["pkg.typed"] == {"pkg.rel"}
    assert graph["pkg.outside"] == {"pkg"}  # a name from the package is an edge to its __init__
    assert graph["pkg.sub.deep"] == {"pkg.lazy", "pkg.typed"}
    assert _cycles(graph) == [["pkg.lazy", "pkg.rel", "pkg.sub.deep", "pkg.top", "pkg.typed"]]


def test_no_import_cycle_inside_arnes() -> None:
    graph = _graph()
    cycles = _cycles(graph)
    report = []
    for component in cycles:
        members = set(component)
        arrows = [f"{a} -> {b}" for a in component for b in sorted(graph[a] & members)]
        report.append("  " + ", ".join(component) + "\n    " + "\n    ".join(arrows))
    assert not cycles, "import cycles inside arnes/ (each must flow one way):\n" + "\n".join(report)


# Folders that must not import these (the layers below never reach up). The model-adaptation layer
# sits above the loop; the loop, the tools and the permission engine know nothing of it, and the
# lowest folder, host/, imports no other folder of arnes.
FOLDER_NEVER_IMPORTS = {
    "host": {"tools", "permissions", "agent", "adapt", "ui", "workflow", "commands", "sandbox", "extensions"},
    "permissions": {"tools", "agent", "adapt", "ui", "workflow", "commands"},
    "tools": {"agent", "adapt", "ui", "workflow", "commands"},
    # The loop knows its session only as agent/run_context.py's protocol: not the module that builds it.
    "agent": {"adapt", "workflow", "commands", "ui", "session", "runner", "cli"},
    "adapt": {"ui", "workflow", "commands", "extensions", "mcp"},
    "llm": {"agent", "adapt", "tools", "permissions", "ui", "workflow", "commands"},
    "rewind": {"agent", "adapt", "tools", "ui", "workflow", "commands", "sandbox", "extensions", "llm", "mcp"},
}


def test_folders_import_only_downwards() -> None:
    graph = _graph()
    wrong = []
    for module, targets in graph.items():
        parts = module.split(".")
        if len(parts) < 3 or parts[1] not in FOLDER_NEVER_IMPORTS:
            continue
        for target in targets:
            folder = target.split(".")[1] if target.count(".") >= 1 else ""
            if folder in FOLDER_NEVER_IMPORTS[parts[1]]:
                wrong.append(f"{module} -> {target}")
    assert wrong == []
