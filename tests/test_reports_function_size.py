"""No function in reports/ is over 150 lines (issue 35, item 7): a report builder is a list of sections,
each built by a function of its own."""

from __future__ import annotations

import ast
from pathlib import Path

LIMIT = 150
REPORTS = Path(__file__).resolve().parent.parent / "reports"


def long_functions(source: str, limit: int = LIMIT) -> list[tuple[str, int, int]]:
    """(name, first line, lines) of every function or method of ``source`` longer than ``limit`` lines
    (its decorators, signature and docstring included)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            lines = (node.end_lineno or node.lineno) - first + 1
            if lines > limit:
                found.append((node.name, first, lines))
    return found


def test_the_size_check_finds_a_long_function() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(LIMIT))  # def line + 150 lines: 151
    source = f"def short():\n    return 1\n\n\ndef long():\n{body}"
    assert long_functions(source) == [("long", 5, LIMIT + 1)]
    assert long_functions(f"def fits():\n{''.join(body.splitlines(True)[1:])}") == []


def test_no_function_in_reports_is_over_150_lines() -> None:
    modules = sorted(REPORTS.glob("*.py"))
    assert len(modules) > 10  # the folder was found
    over = [f"{p.name}:{line} {name} ({n} lines)" for p in modules
            for name, line, n in long_functions(p.read_text())]
    assert over == [], f"functions in reports/ over {LIMIT} lines (split them into sections): {over}"
