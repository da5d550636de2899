"""Benchmark of the level-by-level search in parallel (not a test; prints figures, asserts nothing).

On finished rows of the lock explorer's README table (the table's bounds, every reduction on), one run
measures: the depth-first search (one process, for reference), the level-by-level search in this process
(``--jobs 1``) and in N worker processes (``--jobs N``, default 2), and with ``--master URL`` on Spark.
Each row prints the verdict, distinct states, runs, seconds and states/s of each, the ratio of the
level search's wall time with one process to its time with N (the speed-up), and the ratio of their
CPU seconds (all processes: what the parallel search spends more, whatever the machine's load).  The
level search's verdict, states and counterexample length are the same for every N
(``tests/test_explore_parallel.py``); its states differ from the depth-first search's with
partial-order reduction on (which states a reduced search meets depends on its order).  ``uptime`` is
printed before and after: the machine may be shared.

Run: python benchmarks/bench_explore_parallel.py [--rows fenced:2:1:0,hudi:3:0:0,hudi:2:1:250]
     [--jobs 2] [--master local[2]] [--budget S]
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engines.explore_pool import ProcessPool, SparkPool  # noqa: E402
from model.explore import Bounds, ExploreResult  # noqa: E402
from model.explore.level import search_levels  # noqa: E402
from model.explore.search import search_bounds  # noqa: E402

ROWS = "fenced:2:1:0,hudi:3:0:0,hudi:2:1:250"  # variant:N:K:skew, finished rows of the README's lock table


def cpu_seconds() -> float:
    """CPU time of this process and of its children that ended (the workers, once their pool closed)."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def timed(search: Callable[..., ExploreResult], *args: Any, **kw: Any) -> tuple[ExploreResult, float]:
    """One search, GC paused (as the lock table's benchmark runs), and its wall time."""
    gc.collect()
    gc.disable()
    try:
        started = time.perf_counter()
        res = search(*args, **kw)
        return res, time.perf_counter() - started
    finally:
        gc.enable()


def timed_jobs(bounds: Bounds, jobs: int, budget: float | None) -> tuple[ExploreResult, float, float]:
    """The level search in ``jobs`` worker processes (a pool of its own): result, wall and CPU seconds of
    all its processes (the machine's load leaves CPU seconds alone, unlike wall time)."""
    cpu = cpu_seconds()
    with ProcessPool(jobs) as pool:
        res, seconds = timed(search_levels, bounds, pool=pool, max_seconds=budget)
    return res, seconds, cpu_seconds() - cpu


def show(name: str, res: ExploreResult, seconds: float) -> str:
    """One search's figures."""
    length = res.counterexample_length
    return (f"  {name:<14} {res.verdict:<10} {res.states:>7,} states {res.runs:>7,} runs {seconds:7.1f} s "
            f"{res.states / seconds:6.0f} states/s  counterexample {length if length is not None else '-'}")


def uptime() -> str:
    """The load of the machine now."""
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def main() -> None:
    """Measure and print."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default=ROWS, help=f"variant:N:K:skew,... (default {ROWS})")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes of the parallel search (default 2)")
    ap.add_argument("--master", default=None, help="also on Spark at this master (local[2], spark://...)")
    ap.add_argument("--budget", type=float, default=None, help="seconds per search (default none)")
    args = ap.parse_args()
    print(f"before: {uptime()}", flush=True)
    spark = SparkPool(args.master) if args.master else None
    ratios = []
    try:
        for spec in args.rows.split(","):
            variant, n, k, skew = spec.split(":")
            bounds = dataclasses.replace(Bounds(), variant=variant, writers=int(n), faults=int(k),
                                         skew_ms=int(skew))
            print(f"{variant} N={n} K={k} skew={skew} ms", flush=True)
            dfs, t_dfs = timed(search_bounds, bounds, max_seconds=args.budget)
            print(show("depth-first", dfs, t_dfs), flush=True)
            one, t_one, cpu_one = timed_jobs(bounds, 1, args.budget)
            print(show("level jobs 1", one, t_one) + f" ({cpu_one:.1f} CPU s)", flush=True)
            par, t_par, cpu_par = timed_jobs(bounds, args.jobs, args.budget)
            print(show(f"level jobs {args.jobs}", par, t_par) + f" ({cpu_par:.1f} CPU s)", flush=True)
            if spark is not None:
                on, t_on = timed(search_levels, bounds, pool=spark, max_seconds=args.budget)
                print(show("level spark", on, t_on), flush=True)
            same = (one.verdict, one.states, one.counterexample_length) == (
                par.verdict, par.states, par.counterexample_length)
            ratios.append(t_one / t_par)
            print(f"  jobs 1 / jobs {args.jobs}: {t_one / t_par:.2f}x the wall time, "
                  f"{cpu_par / cpu_one:.2f}x the CPU time; level jobs 1 / depth-first: "
                  f"{t_one / t_dfs:.2f}x the time; same verdict, states and length: {same}", flush=True)
    finally:
        if spark is not None:
            spark.close()
    print(f"speed-up of jobs {args.jobs} over jobs 1 per row: {', '.join(f'{r:.2f}x' for r in ratios)}")
    print(f"after: {uptime()}")


if __name__ == "__main__":
    main()
