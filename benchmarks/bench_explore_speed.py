"""Benchmark: distinct states per second of the lock explorer, this checkout against an older commit.

Runs the search (``search_bounds``, no iterative deepening) of the lock table's finished rows
(``bench_explore_lock.py``'s bounds: one read-modify-write per hold, abstract times) on the code of
this checkout and on the code of ``--old`` (a commit, extracted with ``git archive`` into a temporary
folder), each row in a fresh subprocess whose ``PYTHONPATH`` is that tree, old and new interleaved
(the order alternates row by row, so a machine whose load drifts penalises neither side).  It prints,
per row and side, the distinct states, the seconds, states/s, and the ratio new / old (and that of
the process's CPU time, steadier on a shared machine); then the ratio over all rows (total states /
total seconds of each side).  It asserts that both sides give
identical results: verdict, distinct states, decision points, runs, transitions, depth, the
counterexample's decisions and the findings (a speed-up must not change what the search does).

Not a test: timings depend on the machine (the figures it prints are the record, with ``uptime``).

Run: python benchmarks/bench_explore_speed.py [--old COMMIT] [--rows NAME,...] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# The lock table's rows whose search finishes (bench_explore_lock.py, README): variant, N, K, skew ms,
# fault kinds (None: the default kinds).
ROWS: dict[str, tuple[str, int, int, int, tuple[str, ...] | None]] = {
    "hudi-2-0-0": ("hudi", 2, 0, 0, None),
    "fenced-2-0-0": ("fenced", 2, 0, 0, None),
    "hudi-2-0-250": ("hudi", 2, 0, 250, None),
    "fenced-2-0-250": ("fenced", 2, 0, 250, None),
    "hudi-2-1-0": ("hudi", 2, 1, 0, None),
    "fenced-2-1-0": ("fenced", 2, 1, 0, None),
    "hudi-3-0-0": ("hudi", 3, 0, 0, None),
    "fenced-3-0-0": ("fenced", 3, 0, 0, None),
    "412-recovery-2-2-0-requests": ("412-recovery", 2, 2, 0, ("lost-reply", "timeout", "412")),
}

# What a subprocess runs: one row's search on the tree it imports from, printed as one JSON line.
CHILD = """
import dataclasses, gc, json, sys, time
from model.explore import Bounds
from model.explore.search import search_bounds
variant, n, k, skew, kinds = json.loads(sys.argv[1])
bounds = Bounds(holds=1, steps_per_hold=1, work_ms=1_000, variant=variant, writers=n, faults=k, skew_ms=skew)
if kinds is not None:
    bounds = dataclasses.replace(bounds, fault_kinds=tuple(kinds))
gc.collect()
gc.disable()
started, cpu = time.perf_counter(), time.process_time()
res = search_bounds(bounds)
seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
path = None if res.found is None else [repr(c) for c in res.found.path]
findings = {kind: [repr(c) for c in f.path] for kind, f in sorted(res.findings.items())}
print(json.dumps({"seconds": seconds, "cpu": cpu, "same": {
    "verdict": res.verdict, "complete": res.complete, "states": res.states, "points": res.points,
    "runs": res.runs, "transitions": res.transitions, "depth": res.depth, "reached_ms": res.reached_ms,
    "violation": None if res.found is None else res.found.violation.kind, "path": path,
    "findings": findings}}))
"""


def extract(commit: str, into: Path) -> Path:
    """The tree of ``commit`` (``git archive``) in ``into``."""
    archive = into / "tree.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", commit], stdout=out, check=True)
    tree = into / "tree"
    tree.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    archive.unlink()
    return tree


def run_row(tree: Path, spec: tuple[Any, ...]) -> dict[str, Any]:
    """One row's search in a subprocess importing from ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], cwd=tree, env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    """Measure both trees row by row, print the table and the ratios, check the results are identical."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", default="43fdd42", help="the commit to compare with (default 43fdd42)")
    ap.add_argument("--rows", default=",".join(ROWS), help=f"rows to run (default all: {','.join(ROWS)})")
    ap.add_argument("--repeat", type=int, default=1, help="runs per row and side; the fastest counts")
    args = ap.parse_args()
    names = [r for r in args.rows.split(",") if r]
    unknown = [r for r in names if r not in ROWS]
    if unknown:
        sys.exit(f"--rows: unknown row(s) {', '.join(unknown)} (known: {', '.join(ROWS)})")
    if args.repeat < 1:
        sys.exit(f"--repeat: must be at least 1, got {args.repeat}")
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
          f"(1, 5, 15 min); old = {args.old}, new = this checkout ({ROOT})", flush=True)
    totals = {"old": [0, 0.0, 0.0], "new": [0, 0.0, 0.0]}  # states, seconds, CPU seconds
    mismatches: list[str] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-explore-speed-") as tmp:
        trees = {"old": extract(args.old, Path(tmp)), "new": ROOT}
        for i, name in enumerate(names):
            spec = ROWS[name]
            order = ("old", "new") if i % 2 == 0 else ("new", "old")
            best: dict[str, dict[str, Any]] = {}
            for _ in range(args.repeat):
                for side in order:
                    got = run_row(trees[side], spec)
                    if side not in best or got["seconds"] < best[side]["seconds"]:
                        best[side] = got
            old, new = best["old"], best["new"]
            if old["same"] != new["same"]:
                mismatches.append(f"{name}: old {old['same']} != new {new['same']}")
            states = new["same"]["states"]
            rates = {side: states / best[side]["seconds"] for side in ("old", "new")}
            for side in ("old", "new"):
                totals[side][0] += states
                totals[side][1] += best[side]["seconds"]
                totals[side][2] += best[side]["cpu"]
            print(f"{name:<28} {new['same']['verdict']:<9} {states:>6,} states  "
                  f"old {old['seconds']:6.2f} s {rates['old']:6.0f}/s  new {new['seconds']:6.2f} s "
                  f"{rates['new']:6.0f}/s  ratio {rates['new'] / rates['old']:.2f}x (CPU time "
                  f"{old['cpu'] / new['cpu']:.2f}x)", flush=True)
    rate = {side: totals[side][0] / totals[side][1] for side in ("old", "new")}
    print(f"all rows: old {rate['old']:.0f} states/s ({totals['old'][1]:.1f} s), new {rate['new']:.0f} "
          f"states/s ({totals['new'][1]:.1f} s): ratio {rate['new'] / rate['old']:.2f}x (CPU time "
          f"{totals['old'][2] / totals['new'][2]:.2f}x) "
          f"[{time.perf_counter() - started:.0f} s; load now {os.getloadavg()[0]:.2f}]")
    if mismatches:
        sys.exit("results differ:\n" + "\n".join(mismatches))
    print("identical results on every row (verdict, states, points, runs, transitions, depth, paths)")


if __name__ == "__main__":
    main()
