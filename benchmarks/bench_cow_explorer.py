"""Benchmark of the copy-on-write explorer (not a test; prints figures, asserts nothing).

Proves the first row of issue 3's table (monotonic times, optimistic concurrency control,
primary-key check, 1 file group, 4 operations, 2 writers, 2 keys, 2 values) twice in one
process on one core: without symmetry reduction (the specification's own state space, whose
distinct-state count equals TLC's 1,486,597) and with it.  Prints seconds, distinct states,
states per second and the ratios, next to the reference: TLC, 1,486,597 states in about 150 s
on two cores of this kind of machine.  The garbage collector is paused during each search (the
states are acyclic tuples), as ``hcc explore`` does.

Run: python benchmarks/bench_cow_explorer.py [--ops N] [--repeat N]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model.cow import CC, CowConfig, ExploreResult, explore  # noqa: E402

TLC_STATES = 1_486_597
TLC_SECONDS = 150.0


def timed(cfg: CowConfig, symmetry: bool) -> tuple[float, ExploreResult]:
    """Seconds (wall clock, GC paused) and the result of one exhaustive search."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        res = explore(cfg, symmetry=symmetry)
        return time.perf_counter() - start, res
    finally:
        gc.enable()


def main() -> None:
    """Measure and print."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=4, help="started-operation bound (default 4, the table's)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per variant; the median is reported")
    args = ap.parse_args()
    cfg = CowConfig(writers=2, keys=2, values=2, file_groups=1, ops=args.ops, monotonic_ts=True,
                    cc=CC.OPTIMISTIC, put_if_absent=False, pk_check=True, salt=False)
    print(f"configuration: {cfg.row()}")
    rows = {}
    for symmetry in (False, True):
        runs = [timed(cfg, symmetry) for _ in range(max(1, args.repeat))]
        secs = statistics.median(s for s, _ in runs)
        res = runs[0][1]
        rows[symmetry] = (secs, res)
        print(f"symmetry {'on ' if symmetry else 'off'}: {res.verdict}, {res.states:>9,} distinct states, "
              f"{res.generated:>9,} generated, depth {res.depth}, {secs:7.2f} s, "
              f"{res.states / secs:>9,.0f} states/s")
    (s_off, r_off), (s_on, r_on) = rows[False], rows[True]
    print(f"symmetry reduction: {r_off.states / r_on.states:.2f}x fewer states, {s_off / s_on:.2f}x faster")
    if args.ops == 4:
        print(f"reference TLC (2 cores): {TLC_STATES:,} states in ~{TLC_SECONDS:.0f} s; "
              f"without symmetry {'equal' if r_off.states == TLC_STATES else 'DIFFERENT'} state count, "
              f"{TLC_SECONDS / s_off:.1f}x TLC's speed on one core; with symmetry {TLC_SECONDS / s_on:.1f}x")


if __name__ == "__main__":
    main()
