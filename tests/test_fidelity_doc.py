"""docs/fidelity.md stays true to the code: every model function it cites is at the line it names, and
every test it names exists (a row whose pinning test was renamed or removed pins nothing)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "fidelity.md").read_text()
CITED = re.compile(r"`(model/[\w/]+\.py)` (\w+) \((\d+)\)")
TEST = re.compile(r"`(test_\w+)`")


def _definitions(path: Path) -> dict[str, set[int]]:
    """name -> the lines where a function, class or module-level name of that name is defined."""
    found: dict[str, set[int]] = {}
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.setdefault(node.name, set()).add(node.lineno)
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    found.setdefault(target.id, set()).add(node.lineno)
    return found


def test_every_cited_model_function_is_at_its_line() -> None:
    cited = sorted(set(CITED.findall(DOC)))
    assert len(cited) > 20, "the pattern no longer matches the table's citations"
    wrong = []
    for file, name, line in cited:
        lines = _definitions(ROOT / file).get(name, set())
        if int(line) not in lines:
            wrong.append(f"{file} {name} ({line}): defined at {sorted(lines) or 'nowhere'}")
    assert not wrong, "docs/fidelity.md cites stale lines:\n" + "\n".join(wrong)


def test_every_named_test_exists() -> None:
    names = set(TEST.findall(DOC))
    assert len(names) > 40
    defined = {n for p in (ROOT / "tests").glob("test_*.py") for n in _definitions(p)}
    missing = sorted(names - defined)
    assert not missing, f"docs/fidelity.md names tests that do not exist: {missing}"
