"""Benchmark of the RFC-91 lock model (not a test; prints figures, asserts nothing).

1. Simulated lock operations per second: tryLock attempts, renewals and
   releases of the ``rfc91-safe`` scenario, divided by the wall-clock seconds
   the simulation took (one process, one core).
2. The time the Hypothesis search takes to find the long-pause violation and
   shrink it, median over 5 search seeds (the search of
   tests/test_lock_properties.py::test_hypothesis_finds_and_shrinks_the_long_pause).

Run: python benchmarks/bench_lock_model.py
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

from hypothesis import Phase, find, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from lockstrategies import VALIDITY_MS, fast_scenario, pauses  # noqa: E402

from model.checkers.lock_run import check_lock_history  # noqa: E402
from model.config import FaultPlan  # noqa: E402
from model.sim import run_scenario  # noqa: E402
from scenarios import loader  # noqa: E402

LOCK_OPS = {"try-lock", "renew", "release"}


def lock_ops_per_second(repeats: int = 3) -> tuple[float, int, float]:
    scenario = loader.load("rfc91-safe")
    best = float("inf")
    ops = 0
    for seed in range(repeats):
        started = time.perf_counter()
        events = run_scenario(scenario, seed)
        best = min(best, time.perf_counter() - started)
        ops = sum(1 for e in events if e.f in LOCK_OPS and e.type != "invoke")
    return ops / best, ops, best


def time_to_find_long_pause(search_seed: int) -> tuple[float, int]:
    strategy = st.tuples(st.integers(0, 100), st.lists(pauses(3 * VALIDITY_MS), min_size=1, max_size=3))

    def violates(case: tuple[int, list]) -> bool:
        seed, ps = case
        scenario = fast_scenario(faults=FaultPlan(pauses=tuple(ps)))
        return bool(check_lock_history(run_scenario(scenario, seed)).violations)

    started = time.perf_counter()
    _, ps = find(strategy, violates, random=random.Random(search_seed),
                 settings=settings(max_examples=300, deadline=None, database=None,
                                   phases=[Phase.generate, Phase.shrink]))
    return time.perf_counter() - started, ps[0].duration_ms


def main() -> None:
    rate, ops, seconds = lock_ops_per_second()
    print(f"simulated lock operations: {ops} in {seconds:.2f} s -> {rate:,.0f} ops/s "
          f"(rfc91-safe, 30 simulated minutes, one process)")
    runs = [time_to_find_long_pause(seed) for seed in range(5)]
    times = [t for t, _ in runs]
    print("long-pause search (find + shrink), 5 search seeds: "
          + ", ".join(f"{t:.1f}s (pause {d} ms)" for t, d in runs))
    print(f"median time to find and shrink the long-pause violation: {statistics.median(times):.1f} s")


if __name__ == "__main__":
    main()
