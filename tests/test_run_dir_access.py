"""One writer and one reader of run directories (issue 35, item 2): no module but engines/rundir.py (the
writer, RunWriter) and reports/load.py (the loader) builds a path to a run directory's declared files, so
every file is checked as it is written and as it is read."""

from __future__ import annotations

import ast
from pathlib import Path

from model import run_format

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("analyses", "backends", "benchmarks", "cli", "engines", "model", "reports", "scenarios")
CONSTANTS = ("HISTORY", "VERDICT", "METRICS", "SCENARIO", "STEPS", "ORACLE", "ISOLATION", "TIMELINE",
             "FSVIEW", "READS", "READS_LOG", "DIFFERENTIAL")
FILES = frozenset(getattr(run_format, c) for c in CONSTANTS)
# the writer, the loader, and the format that names the files
OWNERS = frozenset({"engines/rundir.py", "reports/load.py", "model/run_format.py"})
# The soaks stream histories into folders that are not run directories (one per backend or node, read
# back by the soak itself).  Hudi's own Spark writers' folder is a run directory of the format's kind
# hudi-writers, written by RunWriter and read by reports/load.py like every other.
OWN_FORMATS = frozenset({"benchmarks/soak_lock.py", "benchmarks/soak_occ.py"})


def _names_a_run_file(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in CONSTANTS
    return isinstance(node, ast.Constant) and node.value in FILES


def run_file_access(source: str) -> list[int]:
    """Lines of ``source`` that build a path to a run directory's file (``folder / VERDICT``,
    ``folder / "verdict.json"``) or name one by its literal name; a message (an f-string) is not one."""
    tree = ast.parse(source)
    in_messages = {id(n) for s in ast.walk(tree) if isinstance(s, ast.JoinedStr) for n in ast.walk(s)}
    lines = set()
    for node in ast.walk(tree):
        if id(node) in in_messages:
            continue
        path = isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and _names_a_run_file(node.right)
        if path or (isinstance(node, ast.Constant) and node.value in FILES):
            lines.add(node.lineno)
    return sorted(lines)


def test_the_access_check_finds_paths_to_run_files() -> None:
    assert run_file_access('import json\nv = json.loads((run / "verdict.json").read_text())\n') == [2]
    assert run_file_access("with open(out / HISTORY, 'w') as f:\n    pass\n") == [1]
    assert run_file_access('name = "metrics.json"\n') == [1]
    # a hudi-writers run's own files too
    assert run_file_access('views = json.loads((run / "fsview.json").read_text())\n') == [1]
    assert run_file_access("write_atomic(out / TIMELINE, text)\n") == [1]
    # and the files added to a finished hudi-writers run (reads, their log, the model's judgement)
    assert run_file_access('got = json.loads((run_dir / "reads.json").read_text())\n') == [1]
    assert run_file_access('(run_dir / "reads.log").write_text(done.stderr)\n') == [1]
    assert run_file_access("write_atomic(out / DIFFERENTIAL, text)\n") == [1]
    assert run_file_access('print(f"history kept in {out / HISTORY}")\nwriter.write_text(STEPS, "")\n') == []


def test_only_the_writer_and_the_loader_touch_run_files() -> None:
    found: dict[str, list[int]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel not in OWNERS and (lines := run_file_access(path.read_text())):
                found[rel] = lines
    outside = {m: lines for m, lines in found.items() if m not in OWN_FORMATS}
    assert outside == {}, ("modules that build a path to a run directory's file without the writer "
                           f"(engines/rundir.py) or the loader (reports/load.py): {outside}")
    # the exemptions are still needed (a module that no longer touches those files leaves the list)
    assert sorted(OWN_FORMATS - found.keys()) == []
