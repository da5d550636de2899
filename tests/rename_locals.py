"""Rename a module's local variables mechanically, keeping its layout (for the explorer's rename test).

Every local variable of every function (assigned names, loop targets, ``except ... as`` and
``with ... as`` names, and the parameters of private functions that no call in the module
passes by keyword) gets a meaningless name ``_rn<N>``, in every scope that sees it (nested
functions read it as a free variable).  Attributes, globals and the parameters of public
functions keep their names.  The text is edited in place, token by token, so that every line
stays where it was; ``shift`` blank lines inserted after the module docstring then move every
line (the explorer must not care where a function sits in its file either).
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections import defaultdict

Scope = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def _bound(scope: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[set[str], set[str]]:
    """Names a function binds itself, not counting nested scopes: (variables and parameters, the names of
    the functions and classes it defines, which keep their names)."""
    a = scope.args
    out = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
    out |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
    defs: set[str] = set()
    declared: set[str] = set()
    todo: list[ast.AST] = list(scope.body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defs.add(n.name)
            todo.extend([*n.decorator_list, *(n.args.defaults if not isinstance(n, ast.ClassDef) else [])])
            continue
        if isinstance(n, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            continue
        if isinstance(n, ast.Global | ast.Nonlocal):
            declared |= set(n.names)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
            out.add(n.id)
        if isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
        todo.extend(ast.iter_child_nodes(n))
    return out - declared - defs, defs


def _params(fn: Scope) -> list[ast.arg]:
    a = fn.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs, *[x for x in (a.vararg, a.kwarg) if x is not None]]


def rename_locals(source: str, shift: int = 0) -> tuple[str, dict[str, int]]:
    """``source`` with its locals renamed (see the module doc), and how often each old name was renamed."""
    tree = ast.parse(source)
    keyword_args = {kw.arg for n in ast.walk(tree) if isinstance(n, ast.Call) for kw in n.keywords if kw.arg}
    edits: dict[tuple[int, int], tuple[str, str]] = {}  # (line, col) -> (old, new)
    counts: dict[str, int] = defaultdict(int)
    fresh = iter(range(1_000_000))

    def visit(scope: ast.AST, names: dict[str, str]) -> None:
        """Rename inside ``scope``; ``names`` maps the enclosing scopes' renamed locals to new names."""
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            for d in [*scope.decorator_list, *scope.args.defaults, *[d for d in scope.args.kw_defaults if d]]:
                visit_expr(d, names)  # evaluated in the enclosing scope
            own, defs = _bound(scope)
            private = scope.name.startswith("_") and not scope.name.startswith("__")
            params = {p.arg for p in _params(scope)}
            keep = {"self", "cls"} | (params if not private else params & keyword_args)
            mine = {n: f"_rn{next(fresh)}" for n in sorted(own - keep)}
            names = {**{k: v for k, v in names.items() if k not in own | defs}, **mine}
            for p in _params(scope):
                if p.arg in mine:
                    edits[(p.lineno, p.col_offset)] = (p.arg, mine[p.arg])
            body: list[ast.AST] = list(scope.body)
        elif isinstance(scope, ast.Lambda):
            own = {p.arg for p in _params(scope)}
            names = {k: v for k, v in names.items() if k not in own}
            body = [scope.body]
        else:
            body = list(ast.iter_child_nodes(scope))
        for n in body:
            visit_expr(n, names)

    def visit_expr(node: ast.AST, names: dict[str, str]) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            visit(node, names)
            return
        if isinstance(node, ast.ClassDef):
            visit(node, {})
            return
        if isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            targets = {t.id for g in node.generators for t in ast.walk(g.target) if isinstance(t, ast.Name)}
            inner = {k: v for k, v in names.items() if k not in targets}
            for child in ast.iter_child_nodes(node):
                visit_expr(child, inner)
            return
        if isinstance(node, ast.Name) and node.id in names:
            edits[(node.lineno, node.col_offset)] = (node.id, names[node.id])
        if isinstance(node, ast.ExceptHandler) and node.name and node.name in names:
            edits[("handler", node.lineno, node.col_offset)] = (node.name, names[node.name])  # type: ignore[index]
        for child in ast.iter_child_nodes(node):
            visit_expr(child, names)

    visit(tree, {})
    lines = source.splitlines(keepends=True)
    handler_edits = {k[1:]: v for k, v in edits.items() if k[0] == "handler"}  # type: ignore[comparison-overlap]
    plain = {k: v for k, v in edits.items() if k[0] != "handler"}  # type: ignore[comparison-overlap]
    # ``except E as name``: find the NAME token after ``as`` on the handler's line(s)
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    for (line, col), (old, new) in handler_edits.items():
        after = [t for t in tokens if t.start >= (line, col)]
        for i, t in enumerate(after):
            if t.type == tokenize.NAME and t.string == "as" and after[i + 1].string == old:
                plain[after[i + 1].start] = (old, new)
                break
    by_line: dict[int, list[tuple[int, str, str]]] = defaultdict(list)
    for (line, col), (old, new) in plain.items():
        by_line[line].append((col, old, new))
    for line, cols in by_line.items():
        text = lines[line - 1].encode()
        for col, old, new in sorted(cols, reverse=True):  # col_offset counts UTF-8 bytes
            assert text[col:col + len(old)].decode() == old, (line, col, old)
            text = text[:col] + new.encode() + text[col + len(old):]
            counts[old] += 1
        lines[line - 1] = text.decode()
    out = "".join(lines)
    if shift:
        doc = tree.body[0] if tree.body and isinstance(tree.body[0], ast.Expr) else None
        at = doc.end_lineno if doc is not None and doc.end_lineno is not None else 0
        split = out.splitlines(keepends=True)
        out = "".join(split[:at]) + "\n" * shift + "".join(split[at:])
    compile(out, "<renamed>", "exec")
    return out, dict(counts)
