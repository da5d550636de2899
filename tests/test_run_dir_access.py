"""One writer and one reader of run directories (issue 35, item 2): no module but engines/rundir.py (the
writer, RunWriter) and reports/load.py (the loader) builds a path to a run directory's declared files, so
every file is checked as it is written and as it is read."""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

from model import run_format

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("analyses", "backends", "benchmarks", "cli", "engines", "model", "reports", "scenarios")
CONSTANTS = ("HISTORY", "VERDICT", "METRICS", "SCENARIO", "STEPS", "ORACLE", "ISOLATION", "TIMELINE",
             "FSVIEW", "READS", "READS_LOG", "DIFFERENTIAL", "PROXY_LOG", "ISOLATION_RECORDS", "PLAN",
             "WRITER_LOG")
FILES = frozenset(getattr(run_format, c) for c in CONSTANTS)
# a hudi-writers run's files one per writer process, as globs: plan-*.json, writer-*.log
PATTERNS = tuple(p.format(writer="*") for p in run_format.WRITERS_PER_PROCESS)
# the writer, the loader, and the format that names the files
OWNERS = frozenset({"engines/rundir.py", "reports/load.py", "model/run_format.py"})
# The soaks stream histories into folders that are not run directories (one per backend or node, read
# back by the soak itself).  Hudi's own Spark writers' folder is a run directory of the format's kind
# hudi-writers, written by RunWriter and read by reports/load.py like every other.
# The fault proxy writes its own log (proxy.log) where its caller says: backends/realworld.py builds that
# path in the log folder it is given (a harness real-world run's folder, a Spark task's logs/), and
# backends/conformance.py in a temporary folder (not a run directory).
OWN_FORMATS = frozenset({"benchmarks/soak_lock.py", "benchmarks/soak_occ.py", "backends/realworld.py",
                         "backends/conformance.py"})


def _is_file_name(text: object) -> bool:
    """A run file's name, or the name (or a glob) of a writer process's file: ``plan-w1.json``,
    ``plan-*.json``."""
    return isinstance(text, str) and (text in FILES or any(fnmatch.fnmatchcase(text, p) for p in PATTERNS))


def _names_a_run_file(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in CONSTANTS
    if isinstance(node, ast.JoinedStr):  # f"plan-{name}.json": its text with each value a wildcard
        return _is_file_name("".join(v.value if isinstance(v, ast.Constant) else "*" for v in node.values))
    return isinstance(node, ast.Constant) and _is_file_name(node.value)


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
        if path or (isinstance(node, ast.Constant) and _is_file_name(node.value)):
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
    # and the files written as the run goes by others than the harness: the proxy's log, each writer
    # process's plan and log (by an f-string or a glob too), and the records view of its commits
    assert run_file_access('log = (run_dir / "proxy.log").read_text()\n') == [1]
    assert run_file_access("proxy = FaultProxy(url, nodes, log_path=out / PROXY_LOG)\n") == [1]
    assert run_file_access('plan_path = out / f"plan-{name}.json"\n') == [1]
    assert run_file_access('plan = json.loads(next(run_dir.glob("plan-*.json")).read_text())\n') == [1]
    assert run_file_access('log = out / f"writer-{name}.log"\n') == [1]
    assert run_file_access("(run / RECORDS).write_text(text)\nwrite_text(ISOLATION_RECORDS, text)\n") == []
    assert run_file_access('(run / "isolation-records.jsonl").write_text(text)\n') == [1]
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
