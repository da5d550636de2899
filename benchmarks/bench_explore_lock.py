"""Benchmark and table of the lock explorer (not a test; prints figures, asserts nothing).

Explores the lock variants of ``model/lock_variants.py`` exhaustively within small bounds (two or
three identical writers, one acquisition each of one read-modify-write, abstract times: validity
2 s, renewals every 1 s, polls every 1 s, drift allowance 500 ms, client timeout 500 ms, Hudi's
lock audit off) for K = 0, 1 (and 2 for the fixes) faults of the default kinds (a pause across a
boundary, a lost reply, a client timeout, a 412, a window of 503s) and clock skew 0 and 250 ms, and
prints one row
per configuration: verdict, distinct states, depth, seconds, states/s and the shortest
counterexample (its kind, its decisions and the faults it injects).  Each row has a time budget
(``--budget``): past it the row says ``incomplete`` (a lower bound of the states).

``--readme`` rewrites the table between the markers in README.md (atomically).

Run: python benchmarks/bench_explore_lock.py [--budget S] [--budget-k2 S] [--variants hudi,fenced] [--readme]
     (the README's rows; or --writers 2,3 --faults 0,1,2 --skew 0,250 for a grid of your own)
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engines.rundir import write_atomic  # noqa: E402
from model.explore_lock import Bounds, ExploreResult, explore  # noqa: E402
from model.lock_variants import VARIANTS  # noqa: E402

README = Path(__file__).resolve().parent.parent / "README.md"
BEGIN, END = "<!-- explore-lock-table -->", "<!-- /explore-lock-table -->"
TABLE_BOUNDS = Bounds(holds=1, steps_per_hold=1, work_ms=1_000)


def faults_of(res: ExploreResult) -> str:
    """The faults the shortest counterexample injects, as the explorer's decisions name them."""
    picks = [r["detail"] for r in res.counterexample if r["decision"]
             and r["what"] in ("decide fault", "decide pause") and not r["detail"].startswith("no ")]
    picks += [r["detail"] for r in res.counterexample
              if r["decision"] and r["what"] == "decide root" and "crashes" in r["detail"]]
    return "; ".join(picks) or "no fault"


def row(bounds: Bounds, budget: float) -> dict[str, Any]:
    """Explore one configuration (GC paused, as the COW explorer's benchmark does)."""
    gc.collect()
    gc.disable()
    try:
        started = time.perf_counter()
        res = explore(bounds, max_seconds=budget)
        seconds = time.perf_counter() - started
    finally:
        gc.enable()
    found = res.found
    example = ""
    if found is not None:
        example = (f"{found.violation.kind}, {res.counterexample_length} decisions: {faults_of(res)}"
                   f"{'' if res.complete else ' (*not proved shortest*)'}"
                   f"{'' if res.replays_exactly else ' (replay differs!)'}")
    return {"variant": bounds.variant, "writers": bounds.writers, "faults": bounds.faults,
            "skew_ms": bounds.skew_ms, "verdict": res.verdict, "states": res.states, "depth": res.depth,
            "seconds": seconds, "rate": res.states / seconds if seconds else 0.0, "example": example,
            "findings": ", ".join(sorted(res.findings))}


def markdown(rows: list[dict[str, Any]], budget: float, budget_k2: float) -> str:
    """The README table."""
    head = ("| variant | N | K | skew | verdict | states | depth | time | shortest counterexample "
            "| findings |\n|---|---|---|---|---|---|---|---|---|---|\n")
    body = "".join(
        f"| `{r['variant']}` | {r['writers']} | {r['faults']} | {r['skew_ms']} ms | {r['verdict']} "
        f"| {r['states']:,} | {r['depth']} | {r['seconds']:.1f} s | {r['example'] or '-'} "
        f"| {r['findings'] or '-'} |\n" for r in rows)
    return head + body + (f"\nTime budget per row: {budget:.0f} s, {budget_k2:.0f} s with K = 2; a row past "
                          "it says `incomplete` (its states are a lower bound), or `violated` with the "
                          "shortest counterexample found so far (marked *not proved shortest*).\n")


def table_rows(variants: list[str]) -> list[tuple[str, int, int, int]]:
    """The README table's rows (variant, N, K, skew): N = 2 with K = 0, 1 and skew 0 and 250 ms for
    every variant; K = 2 for the two fixes (fenced, 412-recovery); N = 3 without faults."""
    rows = [(v, 2, k, skew) for k in (0, 1) for skew in (0, 250) for v in variants]
    rows += [(v, 2, 2, 0) for v in ("fenced", "412-recovery") if v in variants]
    rows += [(v, 3, 0, 0) for v in variants]
    return rows


def main() -> None:
    """Measure, print, and optionally write the README table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=60.0, help="seconds per row (default 60)")
    ap.add_argument("--budget-k2", type=float, default=300.0, help="seconds per row with K = 2 (default 300)")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--writers", default=None, help="a grid, not the table: N values (--faults, --skew)")
    ap.add_argument("--faults", default="0,1,2")
    ap.add_argument("--skew", default="0,250")
    ap.add_argument("--readme", action="store_true", help="rewrite the table in README.md")
    args = ap.parse_args()
    ints = lambda raw: [int(x) for x in raw.split(",") if x]  # noqa: E731
    variants = args.variants.split(",")
    plan = table_rows(variants) if args.writers is None else [
        (v, n, k, skew) for n in ints(args.writers) for k in ints(args.faults) for skew in ints(args.skew)
        for v in variants]
    rows = []
    for variant, n, k, skew in plan:
        bounds = dataclasses.replace(TABLE_BOUNDS, variant=variant, writers=n, faults=k, skew_ms=skew)
        r = row(bounds, args.budget_k2 if k >= 2 else args.budget)
        rows.append(r)
        print(f"{variant:<17} N={n} K={k} skew={skew:>3} ms: {r['verdict']:<10} "
              f"{r['states']:>8,} states depth {r['depth']:>3} {r['seconds']:7.1f} s "
              f"{r['rate']:6.0f} states/s  {r['example']}", flush=True)
    table = markdown(rows, args.budget, args.budget_k2)
    print()
    print(table)
    if args.readme:
        text = README.read_text(encoding="utf-8")
        if BEGIN not in text or END not in text:
            sys.exit(f"README.md has no {BEGIN} ... {END} markers")
        before, rest = text.split(BEGIN, 1)
        _old, after = rest.split(END, 1)
        write_atomic(README, f"{before}{BEGIN}\n{table}{END}{after}")
        print(f"table written to {README}")


if __name__ == "__main__":
    main()
