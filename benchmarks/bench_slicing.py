"""Benchmark of RFC-66 file slicing (not a test; prints figures, asserts nothing).

A synthetic MERGE_ON_READ table: 10,000 file groups, 200,000 log files written by 2,000 overlapping
deltacommits (each appends to 100 random groups), and a compaction every 200 deltacommits that
covers every group (so late logs, requested before a compaction and completed after it, exist).

Figures, each the median of 5 rounds in one process, in CPU time of this process
(``time.process_time``: the machine is shared, so wall time measures the neighbours too):

1. file slices built per second by ``build_file_slices`` (completion-time rule), and the same for
   the instant-time rule;
2. the time of a plain ``sorted`` of the same 200,000 log files by Hudi's log order, and the ratio
   slicing time / sort time (the goal: at most 1.5).

Run: python benchmarks/bench_slicing.py [--groups N] [--logs N]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model.nbcc.completion_times import Timeline  # noqa: E402
from model.nbcc.slicing import FileGroupFiles, Rule, build_file_slices  # noqa: E402
from model.timeline.layout import BaseFile, Instant, LogFile, State  # noqa: E402  # noqa: E402


def synthetic_table(
    groups: int, logs: int, seed: int = 1
) -> tuple[list[FileGroupFiles], Timeline, list[LogFile]]:
    """File groups, their timeline and the flat list of every log file."""
    rng = random.Random(seed)
    per_commit = 100
    commits = logs // per_commit
    fids = [f"{g:08d}-0000-0000-0000-000000000000-0" for g in range(groups)]
    bases: dict[str, list[BaseFile]] = {f: [] for f in fids}
    group_logs: dict[str, list[LogFile]] = {f: [] for f in fids}
    instants: list[Instant] = []
    t = 1_000
    for c in range(commits):
        t += 10
        if c and c % 200 == 0:  # a compaction over every group, while deltacommits are in flight
            instants.append(Instant(t, "commit", State.COMPLETED, t + 500, "compaction"))
            for f in fids:
                bases[f].append(BaseFile(f, "0-0-0", t))
            t += 10
        done = t + rng.randint(1, 400) if rng.random() > 0.01 else None
        instants.append(Instant(t, "deltacommit", State.COMPLETED if done else State.INFLIGHT, done))
        for g in rng.sample(range(groups), per_commit):
            group_logs[fids[g]].append(LogFile(fids[g], t, 1, f"{c % 8}-{c}-0"))
    table = [FileGroupFiles("p0", f, tuple(bases[f]), tuple(group_logs[f])) for f in fids]
    all_logs = [lf for f in fids for lf in group_logs[f]]
    return table, Timeline(tuple(instants)), all_logs


def median_seconds(fn: Callable[[], object], rounds: int = 5) -> float:
    """Median CPU seconds of ``fn`` over ``rounds`` calls."""
    times = []
    for _ in range(rounds):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    """Build the table, time slicing and sorting, print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", type=int, default=10_000)
    ap.add_argument("--logs", type=int, default=200_000)
    args = ap.parse_args()
    groups, timeline, logs = synthetic_table(args.groups, args.logs)
    ct = timeline.completion_time
    print(f"table: {len(groups)} file groups, {len(logs)} log files, {len(timeline.instants)} instants")
    sort_s = median_seconds(lambda: sorted(logs, key=lambda lf: lf.sort_key))
    print(f"plain sort of the log list: {sort_s * 1000:.1f} ms")
    for rule in (Rule.COMPLETION_TIME, Rule.INSTANT_TIME):
        slices = build_file_slices(groups, ct, rule)
        n = sum(len(s) for s in slices.values())
        secs = median_seconds(lambda rule=rule: build_file_slices(groups, ct, rule))  # type: ignore[misc]
        print(
            f"{rule.value:>16}: {n} slices in {secs * 1000:.1f} ms = {n / secs:,.0f} slices/s; "
            f"{len(logs) / secs:,.0f} logs/s; {secs / sort_s:.2f}x the plain sort"
        )


if __name__ == "__main__":
    main()
