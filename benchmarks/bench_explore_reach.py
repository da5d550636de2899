"""Issue 36's reach goals for the explorer, one row each (not a test; prints figures, asserts nothing).

Each row is one exhaustive search with every reduction on, stopped at the goal's own time budget (10
minutes for the lock rows, 30 for the NBCC rows with one storage fault), with the exact command that
reproduces it (``cli/explore_command.py``) and the machine's load when it ran: the goal is met when the
search finished within its budget (the lock's K = 1 row: in at most 9,666 states, 4x fewer than 38,664).

Run: python benchmarks/bench_explore_reach.py [--only lock|nbcc] [--match TEXT] [--readme] [--from LOG ...]
``--readme`` rewrites the rows it ran in README.md's reach table (the others stay as they were); ``--from``
takes the rows printed by earlier runs (one per core, say) instead of running any.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_explore_lock import README, write_readme  # noqa: E402
from bench_explore_protocols import STORAGE_KINDS  # noqa: E402

from cli.explore_command import command_of  # noqa: E402
from model.explore import Bounds, explore  # noqa: E402
from model.explore.nbcc import NbccBounds  # noqa: E402

BEGIN, END = "<!-- explore-reach-table -->", "<!-- /explore-reach-table -->"
HEAD = ("| goal | verdict | states | search | load | command |\n"
        "|---|---|---|---|---|---|\n")
FENCED_K1_BEFORE = 38_664  # fenced N = 2, K = 1, skew 250 ms when the issue was filed


def rows() -> list[tuple[str, Bounds, float, str]]:
    """(group, bounds, budget in seconds, the goal) for every row of the table."""
    out: list[tuple[str, Bounds, float, str]] = [
        ("lock", Bounds(variant="fenced", writers=2, faults=1, skew_ms=250), 600,
         f"fenced N = 2, K = 1, skew 250 ms: at least 4x fewer states than {FENCED_K1_BEFORE:,}"),
        ("lock", Bounds(variant="fenced", writers=2, faults=2, skew_ms=250), 600,
         "fenced N = 2, K = 2, skew 250 ms: proved (holds, complete) within 10 minutes"),
    ]
    for variant in ("hudi-1.2.0", "hudi"):
        for table in (True, False):
            listing = "metadata table" if table else "storage listing"
            b = NbccBounds(variant=variant, writers=2, faults=1, fault_kinds=STORAGE_KINDS,
                           metadata_table=table)
            out.append(("nbcc", b, 1800,
                        f"NBCC `{variant}`, {listing}, K = 1 storage fault: finished within 30 minutes"))
    return out


def measure(bounds: Bounds, budget: float) -> dict[str, Any]:
    """One search within ``budget`` seconds (GC paused, as the other explorer benchmarks do)."""
    load = os.getloadavg()[0]
    gc.collect()
    gc.disable()
    try:
        started = time.perf_counter()
        res = explore(bounds, max_seconds=budget)
        seconds = time.perf_counter() - started
    finally:
        gc.enable()
    return {"verdict": res.verdict, "states": res.states, "complete": res.complete, "seconds": seconds,
            "load": (load, os.getloadavg()[0])}


def line(goal: str, bounds: Bounds, budget: float, r: dict[str, Any]) -> str:
    """The row's markdown line."""
    states = f"{r['states']:,}" if r["complete"] else f"≥ {r['states']:,}"
    command = f"{command_of(bounds, shortest=False)} --max-seconds {budget:g}"
    load = f"{r['load'][0]:.1f}-{r['load'][1]:.1f}"
    return f"| {goal} | {r['verdict']} | {states} | {r['seconds']:.0f} s | {load} | `{command}` |\n"


def _rows_of(text: str) -> dict[str, str]:
    """The table rows in ``text``, by goal."""
    return {ln.split(" | ", 1)[0].removeprefix("| "): ln + "\n" for ln in text.splitlines()
            if ln.startswith("| ") and not ln.startswith("| goal")}


def merge(old: str, new: dict[str, str]) -> str:
    """The table with the rows in ``new`` (by goal) replacing or joining those of ``old``, in ``rows()``'s
    order."""
    have = _rows_of(old)
    have.update(new)
    order = [goal for _g, _b, _s, goal in rows()]
    return HEAD + "".join(have[g] for g in order if g in have)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=("lock", "nbcc"), default=None)
    ap.add_argument("--match", default="", help="only the rows whose goal contains this text")
    ap.add_argument("--readme", action="store_true", help="rewrite the rows run in README.md's reach table")
    ap.add_argument("--from", dest="logs", nargs="+", default=[], metavar="LOG",
                    help="the rows these earlier runs printed, instead of running any")
    args = ap.parse_args()
    new: dict[str, str] = {}
    for log in args.logs:
        new.update(_rows_of(Path(log).read_text(encoding="utf-8")))
    for group, bounds, budget, goal in rows():
        if args.logs or (args.only and group != args.only) or args.match not in goal:
            continue
        r = measure(bounds, budget)
        new[goal] = line(goal, bounds, budget, r)
        print(new[goal], end="", flush=True)
    if args.readme:
        text = README.read_text(encoding="utf-8")
        old = text.split(BEGIN, 1)[1].split(END, 1)[0] if BEGIN in text else ""
        write_readme(merge(old, new), BEGIN, END)


if __name__ == "__main__":
    main()
