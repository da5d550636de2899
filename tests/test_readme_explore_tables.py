"""The README's OCC and NBCC explorer tables agree with the code: each row's command parses, and the bounds it
parses to are the row's own cells (so a changed default, which changes what a command without that option
means, fails here until the table is regenerated: ``python benchmarks/bench_explore_protocols.py
--readme``)."""

from __future__ import annotations

import importlib.util
import re
import shlex
import sys
from pathlib import Path
from types import ModuleType

import pytest

from cli.explore import parse_bounds
from cli.main import build_parser

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _bench() -> ModuleType:
    """``benchmarks/bench_explore_protocols.py``: the table's cell writer (``_bounds_cells``)."""
    spec = importlib.util.spec_from_file_location("bench_explore_protocols",
                                                  ROOT / "benchmarks" / "bench_explore_protocols.py")
    assert spec and spec.loader
    sys.path.insert(0, str(ROOT / "benchmarks"))  # it imports bench_explore_lock
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rows(protocol: str) -> list[tuple[str, str]]:
    """(the row's bounds cells, its command) of each row of the protocol's table."""
    begin, end = f"<!-- explore-{protocol}-table -->", f"<!-- /explore-{protocol}-table -->"
    table = README.split(begin, 1)[1].split(end, 1)[0]
    out = []
    width = 7 if protocol == "occ" else 6
    for line in table.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        command = re.fullmatch(r"`(hcc explore .*)`", cells[-1])
        assert command, line
        out.append((" | ".join(cells[:width]), command.group(1)))
    return out


@pytest.mark.parametrize("protocol", ["occ", "nbcc"])
def test_each_rows_command_parses_to_the_rows_bounds(protocol: str) -> None:
    found = rows(protocol)
    assert len(found) >= 8
    cells_of = _bench()._bounds_cells
    for cells, command in found:
        argv = shlex.split(command)
        args = build_parser().parse_args(argv[1:])
        bounds = parse_bounds(args, args.protocol)
        assert cells_of({"bounds": bounds}) == cells, command


def _reach() -> ModuleType:
    """``benchmarks/bench_explore_reach.py``: the reach table's rows (goal, bounds, budget)."""
    spec = importlib.util.spec_from_file_location("bench_explore_reach",
                                                  ROOT / "benchmarks" / "bench_explore_reach.py")
    assert spec and spec.loader
    sys.path.insert(0, str(ROOT / "benchmarks"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_reach_rows_command_parses_to_its_goals_bounds_and_budget() -> None:
    table = README.split("<!-- explore-reach-table -->", 1)[1].split("<!-- /explore-reach-table -->", 1)[0]
    goals = {goal: (bounds, budget) for _group, bounds, budget, goal in _reach().rows()}
    lines = [ln for ln in table.splitlines() if ln.startswith("| ") and not ln.startswith("| goal")]
    assert lines
    for line in lines:
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        bounds, budget = goals[cells[0]]
        command = re.fullmatch(r"`(hcc explore .*)`", cells[-1])
        assert command, line
        argv = shlex.split(command.group(1))
        args = build_parser().parse_args(argv[1:])
        assert parse_bounds(args, args.protocol) == bounds, line
        assert float(args.max_seconds) == budget, line
