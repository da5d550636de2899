"""Benchmark of the targeted bug search, analyses/bug_search.py (not a test; prints figures, asserts nothing).

For each class (long-pause, throttled-renewal, failed-renewal, lost-reply): over search seeds 0..N-1,
the median time to find and shrink a case (wall clock, and CPU time of this process, which a loaded
machine disturbs less), the examples Hypothesis tried and the model runs per find, and each find's
search seed and shrunk faults (write them as scenario files with ``--out``; ``hcc run FILE`` replays
one).  In the same run, the untargeted long-pause search of bench_lock_model.py (the search the
property test had: Hypothesis over 1-3 pauses of any node, trigger and time) over the same seeds,
and the ratio of the two medians.  ``--ablation`` also runs each class without the focus of the draw
(every kind of fault alike) and with ``hypothesis.target`` steering.

Goals (issue 13, item 4): the long pause found and shrunk in <= 1 s median, the three others <= 5 s.

Run: python benchmarks/bench_bug_search.py [--seeds 5] [--ablation] [--out DIR] [--skip-baseline]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_lock_model import time_to_find_long_pause  # noqa: E402

from analyses import bug_search as bs  # noqa: E402
from engines.rundir import write_atomic  # noqa: E402

GOALS_S = {"long-pause": 1.0, "throttled-renewal": 5.0, "failed-renewal": 5.0, "lost-reply": 5.0}


def timed_search(target: str, seed: int, **options: bool) -> tuple[bs.SearchResult, float]:
    """One search and the CPU seconds it took."""
    cpu = time.process_time()
    result = bs.search(target, seed, **options)  # type: ignore[arg-type]
    return result, time.process_time() - cpu


def one_class(target: str, seeds: int, out: Path | None, **options: bool) -> tuple[float, float]:
    """Search ``target`` with seeds 0..seeds-1, print the finds and the medians; return the medians
    (wall, CPU)."""
    runs = [timed_search(target, seed, **options) for seed in range(seeds)]
    label = target + "".join(f" ({k}={v})" for k, v in options.items())
    for result, _ in runs:
        print("  " + result.describe().replace("\n", "\n  "))
        if out is not None and result.found and not options:
            write_atomic(out / f"{target}-seed{result.search_seed}.toml", bs.scenario_toml(result))
    found = sum(r.found for r, _ in runs)
    wall = statistics.median(r.seconds for r, _ in runs)
    cpu = statistics.median(cpu for _, cpu in runs)
    goal = f" (goal <= {GOALS_S[target]:.0f} s: {'met' if wall <= GOALS_S[target] else 'NOT met'})"
    print(f"{label}: found {found}/{seeds}; median to find and shrink {wall:.2f} s wall, {cpu:.2f} s CPU; "
          f"median per search {statistics.median(r.examples for r, _ in runs):.0f} examples, "
          f"{statistics.median(r.runs for r, _ in runs):.0f} runs" + ("" if options else goal))
    return wall, cpu


def untargeted(seed: int) -> tuple[float, float, int]:
    """The untargeted long-pause search: (wall s, CPU s, the shrunk pause in ms)."""
    cpu = time.process_time()
    wall, pause_ms = time_to_find_long_pause(seed)
    return wall, time.process_time() - cpu, pause_ms


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5, help="search seeds per class (0..N-1)")
    ap.add_argument("--ablation", action="store_true", help="also without focus / with steering")
    ap.add_argument("--out", type=Path, help="write each find as a scenario file in this folder")
    ap.add_argument("--skip-baseline", action="store_true", help="not the untargeted long-pause search")
    args = ap.parse_args()
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
    medians = {target: one_class(target, args.seeds, args.out) for target in bs.TARGETS}
    if args.ablation:
        for target in bs.TARGETS:
            one_class(target, args.seeds, None, focus=False)
            one_class(target, args.seeds, None, steer=True)
    if args.skip_baseline:
        return
    old = [untargeted(seed) for seed in range(args.seeds)]
    old_wall = statistics.median(w for w, _, _ in old)
    old_cpu = statistics.median(c for _, c, _ in old)
    print("untargeted long-pause search (bench_lock_model.py), same seeds: "
          + ", ".join(f"{w:.1f}s (pause {d} ms)" for w, _, d in old))
    wall, cpu = medians["long-pause"]
    print(f"long pause, median to find and shrink: targeted {wall:.2f} s wall / {cpu:.2f} s CPU, untargeted "
          f"{old_wall:.2f} s / {old_cpu:.2f} s: {old_wall / wall:.1f}x faster in wall time, "
          f"{old_cpu / cpu:.1f}x in CPU time (same run)")

if __name__ == "__main__":
    main()
