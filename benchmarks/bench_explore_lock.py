"""Benchmark and table of the lock explorer (not a test; prints figures, asserts nothing).

Explores the lock variants of ``model/lock/variants.py`` exhaustively within small bounds (two or
three identical writers, one acquisition each of one read-modify-write, abstract times: validity
2 s, renewals every 1 s, polls every 1 s, drift allowance 500 ms, client timeout 500 ms, Hudi's
lock audit off) for K = 0, 1, 2 faults of the default kinds (a pause across a boundary, a lost
reply, a client timeout, a 412, a window of 503s) and clock skew 0 and 250 ms with N = 2, K = 0, 1
with N = 3, and ``412-recovery`` with request faults only; it prints one row per configuration:
verdict, distinct states, depth, seconds of search, states/s and the shortest counterexample (its
kind, its decisions and the faults it injects) with what iterative deepening proved of it
(``explore(..., shortest=True)``: every smaller depth searched to the end, and how long that took),
then the time of all rows and the states/s of the finished ones.  Each row has a time budget for
the search (``--budget``, ``--budget-k2``; past it the row says ``incomplete``, a lower bound of the
states, unless a violation was found) and one for the deepening (``--budget-shortest``; a
counterexample it did not prove is marked *not proved shortest*).

``--readme`` rewrites the table between the markers in README.md (atomically).

Run: python benchmarks/bench_explore_lock.py [--budget S] [--budget-k2 S] [--budget-shortest S]
     [--variants hudi,fenced] [--readme]
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
from model.explore import Bounds, ExploreResult, explore  # noqa: E402
from model.lock.variants import VARIANTS  # noqa: E402

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


def proof_of(res: ExploreResult) -> str:
    """What iterative deepening proved of the shortest counterexample, and how long it took."""
    if not res.deepening:
        return "-"
    spent = sum(lv["seconds"] for lv in res.deepening)
    deepest = res.deepening[-1]["depth"]
    if res.shortest_proved:
        return f"proved shortest: depths 0-{deepest}, {spent:.1f} s"
    return f"none below {res.lower_bound} decisions (depth {deepest} stopped at {spent:.0f} s)"


def row(bounds: Bounds, budget: float, budget_shortest: float) -> dict[str, Any]:
    """Explore one configuration, then prove its counterexample shortest (GC paused, as the COW
    explorer's benchmark does)."""
    gc.collect()
    gc.disable()
    try:
        started = time.perf_counter()
        res = explore(bounds, max_seconds=budget, shortest=True, shortest_seconds=budget_shortest)
        seconds = time.perf_counter() - started
    finally:
        gc.enable()
    found = res.found
    example = ""
    if found is not None:
        example = (f"{found.violation.kind}, {res.counterexample_length} decisions: {faults_of(res)}"
                   f"{'' if res.shortest_proved else ' (*not proved shortest*)'}"
                   f"{'' if res.replays_exactly else ' (replay differs!)'}")
    search = seconds - sum(lv["seconds"] for lv in res.deepening)
    kinds = "" if bounds.fault_kinds == Bounds().fault_kinds else f" ({', '.join(bounds.fault_kinds)})"
    return {"bounds": bounds, "variant": bounds.variant, "writers": bounds.writers,
            "faults": f"{bounds.faults}{kinds}", "skew_ms": bounds.skew_ms, "verdict": res.verdict,
            "states": res.states, "depth": res.depth, "seconds": seconds, "search": search,
            "rate": res.states / search if search else 0.0, "example": example, "proof": proof_of(res),
            "findings": ", ".join(sorted(res.findings)), "complete": res.complete}


def rate_of(rows: list[dict[str, Any]]) -> float:
    """Distinct states per second over the rows whose search finished (a budget's stop is no rate)."""
    done = [r for r in rows if r["complete"]]
    seconds = sum(r["search"] for r in done)
    return sum(r["states"] for r in done) / seconds if seconds else 0.0


def write_readme(table: str, begin: str, end: str) -> None:
    """Replace what README.md holds between the markers ``begin`` and ``end`` by ``table`` (atomically)."""
    text = README.read_text(encoding="utf-8")
    if begin not in text or end not in text:
        sys.exit(f"README.md has no {begin} ... {end} markers")
    before, rest = text.split(begin, 1)
    _old, after = rest.split(end, 1)
    write_atomic(README, f"{before}{begin}\n{table}{end}{after}")
    print(f"table written to {README}")


def markdown(rows: list[dict[str, Any]], budget: float, budget_k2: float, budget_shortest: float) -> str:
    """The README table."""
    head = ("| variant | N | K | skew | verdict | states | depth | search | shortest counterexample "
            "| iterative deepening | findings |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
    body = "".join(
        f"| `{r['variant']}` | {r['writers']} | {r['faults']} | {r['skew_ms']} ms | {r['verdict']} "
        f"| {r['states']:,} | {r['depth']} | {r['search']:.1f} s | {r['example'] or '-'} | {r['proof']} "
        f"| {r['findings'] or '-'} |\n" for r in rows)
    return head + body + (
        f"\nTime budget per row: {budget:.0f} s for the search ({budget_k2:.0f} s with K = 2), then "
        f"{budget_shortest:.0f} s for iterative deepening when the search found a violation or stopped at "
        "its budget. The search (with partial-order reduction) stops at its budget as `incomplete` (its "
        "states are a lower bound) unless it or the deepening found a violation; a counterexample is "
        "*proved shortest* when the deepening searched every smaller depth to the end (no violation "
        "below that many decisions), else marked *not proved shortest*, with the depth the deepening "
        "proved clear. A `holds` is the search's, complete.\n")


REQUEST_KINDS = ("lost-reply", "timeout", "412")  # the request faults alone (no pause, no window)
Row = tuple[str, int, int, int, tuple[str, ...] | None]  # variant, N, K, skew, fault kinds (None: default)


def table_rows(variants: list[str]) -> list[Row]:
    """The README table's rows: N = 2 with K = 0, 1, 2 and skew 0 and 250 ms for every variant; N = 3
    with K = 0, 1 (skew 0); ``412-recovery`` with request faults only (N = 2, K = 2, skew 0)."""
    rows: list[Row] = [(v, 2, k, skew, None) for k in (0, 1, 2) for skew in (0, 250) for v in variants]
    rows += [(v, 3, k, 0, None) for k in (0, 1) for v in variants]
    rows += [(v, 2, 2, 0, REQUEST_KINDS) for v in ("412-recovery",) if v in variants]
    return rows


def main() -> None:
    """Measure, print, and optionally write the README table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=25.0, help="seconds of search per row (default 25)")
    ap.add_argument("--budget-k2", type=float, default=30.0, help="seconds per row with K = 2 (default 30)")
    ap.add_argument("--budget-shortest", type=float, default=60.0,
                    help="seconds of iterative deepening per row (default 60)")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--writers", default=None, help="a grid, not the table: N values (--faults, --skew)")
    ap.add_argument("--faults", default="0,1,2")
    ap.add_argument("--skew", default="0,250")
    ap.add_argument("--readme", action="store_true", help="rewrite the table in README.md")
    args = ap.parse_args()
    ints = lambda raw: [int(x) for x in raw.split(",") if x]  # noqa: E731
    variants = args.variants.split(",")
    plan: list[Row] = table_rows(variants) if args.writers is None else [
        (v, n, k, skew, None) for n in ints(args.writers) for k in ints(args.faults)
        for skew in ints(args.skew) for v in variants]
    rows = []
    started = time.perf_counter()
    for variant, n, k, skew, kinds in plan:
        bounds = dataclasses.replace(TABLE_BOUNDS, variant=variant, writers=n, faults=k, skew_ms=skew)
        if kinds is not None:
            bounds = dataclasses.replace(bounds, fault_kinds=kinds)
        r = row(bounds, args.budget_k2 if k >= 2 else args.budget, args.budget_shortest)
        rows.append(r)
        print(f"{variant:<17} N={n} K={r['faults']} skew={skew:>3} ms: {r['verdict']:<10} "
              f"{r['states']:>8,} states depth {r['depth']:>3} {r['seconds']:7.1f} s "
              f"{r['rate']:6.0f} states/s  {r['example']}  [{r['proof']}]", flush=True)
    print(f"all rows: {time.perf_counter() - started:.0f} s; states/s over the rows that finished: "
          f"{rate_of(rows):.0f}")
    table = markdown(rows, args.budget, args.budget_k2, args.budget_shortest)
    print()
    print(table)
    if args.readme:
        write_readme(table, BEGIN, END)


if __name__ == "__main__":
    main()
