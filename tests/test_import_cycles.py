"""No import cycle between the project's modules, lazy imports (inside functions) included.

Every module of the packages is parsed with ``ast``; each ``import`` and ``from ... import`` anywhere in
it (at the top, in a function, under ``if TYPE_CHECKING``) is an edge to the project module it names
(``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``).  A cycle
is a strongly connected component of more than one module, or a module importing itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("model", "backends", "scenarios", "engines", "analyses", "reports", "cli")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``path`` imports, anywhere in it."""
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the module's package
                package = name.split(".") if is_package else name.split(".")[:-1]
                package = package[:len(package) - node.level + 1]
                base = ".".join(package + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                       for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # import a.b.c of a module a.b: an edge to a.b
                target = target.rpartition(".")[0]
            if target:
                out.add(target)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module, or with a self-loop (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_itself_through_others() -> None:
    modules = project_modules()
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    assert sum(len(e) for e in graph.values()) > 500  # the parse found the project's imports
    assert cycles(graph) == []


def test_the_cycle_finder_finds_lazy_and_relative_cycles(tmp_path: Path) -> None:
    # the checker itself: a cycle closed by an import inside a function, and one through a package
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d"}, "e": {"a"}}
    assert cycles(graph) == [["a", "b", "c"], ["d"]]
    modules = {"p": tmp_path / "p" / "__init__.py", "p.x": tmp_path / "p" / "x.py",
               "p.y": tmp_path / "p" / "y.py"}
    for path in modules.values():
        path.parent.mkdir(exist_ok=True)
    modules["p"].write_text("")
    modules["p.x"].write_text("from p import y\n")
    modules["p.y"].write_text("def f():\n    from . import x\n    return x\n")
    edges = {n: imports_of(n, p, modules) for n, p in modules.items()}
    assert edges == {"p": set(), "p.x": {"p.y"}, "p.y": {"p.x"}}
    assert cycles(edges) == [["p.x", "p.y"]]
