"""Benchmark of the RFC-91 lock model (not a test; prints figures, asserts nothing).

1. The simulator against SimPy's floor: lock operations (tryLock attempts,
   renewals, releases) of ``rfc91-safe`` per second, the SimPy events each one
   costs, and the ratio of the simulation's rate to raw SimPy timeout events per
   second, measured in the same run by CPU time: each call in a fresh process after
   ``gc.collect()`` (so neither side's garbage collections scan the other's
   objects), the least of 7 rounds in which the two take turns (load from
   elsewhere falls on both alike).  Each side times its run alone: the scenario
   file is parsed, and the operations counted, outside the timed part.  The
   ratio is stated for the 11 SimPy events a lock operation took in the first
   simulator (ops/s x 11 / raw events/s), so fewer events per operation count as
   speed.  With ``--instructions`` the same ratio is also measured in instructions under
   valgrind's callgrind (repeatable on a loaded machine; slow).
2. The time the untargeted Hypothesis search (1-3 pauses of any node, trigger,
   time and length on the three-writer property scenario) takes to find the
   long-pause violation and shrink it, median over 5 search seeds.  It is the
   baseline of benchmarks/bench_bug_search.py, which measures the targeted search
   (analyses/bug_search.py) against it in the same run.

Run: python benchmarks/bench_lock_model.py [--instructions] [--skip-search] [--repeats N]
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import simpy
from hypothesis import Phase, find, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from lockstrategies import VALIDITY_MS, fast_scenario, pauses  # noqa: E402

from model.checkers.lock_run import check_lock_history  # noqa: E402
from model.config import FaultPlan  # noqa: E402
from model.runtime.sim import run_scenario  # noqa: E402
from scenarios import loader  # noqa: E402

LOCK_OPS = {"try-lock", "renew", "release"}


FIRST_SIMULATOR_EVENTS_PER_OP = 11  # SimPy events per lock operation of the first simulator (issue 13)


def raw_simpy(events: int = 200_000) -> float:
    """``events`` SimPy timeouts of 10 processes (the floor a SimPy simulation cannot beat): CPU seconds."""
    env = simpy.Environment()

    def tick(env: simpy.Environment) -> simpy.events.ProcessGenerator:
        while True:
            yield env.timeout(1)

    for _ in range(10):
        env.process(tick(env))
    started = time.process_time()
    env.run(until=events // 10)
    return time.process_time() - started


def timed_lock_run() -> float:
    """One run of rfc91-safe (seed 1), the scenario parsed beforehand: its CPU seconds."""
    scenario = loader.load("rfc91-safe")
    started = time.process_time()
    run_scenario(scenario, 1)
    return time.process_time() - started


def lock_run(count_events: bool = False) -> tuple[int, int]:
    """One run of rfc91-safe (seed 1): its lock operations and, with ``count_events``, the SimPy events
    it took (counted by a wrapper around ``Environment.step``, so not in a timed run; else 0)."""
    scenario = loader.load("rfc91-safe")
    if not count_events:
        return sum(1 for e in run_scenario(scenario, 1) if e.f in LOCK_OPS and e.type != "invoke"), 0
    counted = [0]
    step = simpy.Environment.step

    def counting(env: simpy.Environment) -> None:
        counted[0] += 1
        step(env)

    simpy.Environment.step = counting  # type: ignore[method-assign]
    try:
        events = run_scenario(scenario, 1)
    finally:
        simpy.Environment.step = step  # type: ignore[method-assign]
    return sum(1 for e in events if e.f in LOCK_OPS and e.type != "invoke"), counted[0]


_PRELUDE = (f"import sys; sys.path[:0] = [{str(Path(__file__).resolve().parent)!r}, "
            f"{str(Path(__file__).resolve().parents[1] / 'tests')!r}]; import bench_lock_model as b; ")


def cpu_seconds_fresh(name: str) -> float:
    """The CPU seconds this module's function ``name`` measures of itself, in a fresh Python process.

    Each side of a ratio is timed alike: imports done, ``gc.collect()``, then the call alone, so no
    objects left by the other side (a lock run leaves ~145,000) slow its garbage collections.
    """
    code = _PRELUDE + f"import gc; gc.collect(); print(b.{name}())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return float(out.split()[-1])


def cpu_seconds(names: list[str], repeats: int = 7) -> list[float]:
    """The least CPU time of each function over ``repeats`` rounds, each call in a fresh process, the
    functions taking turns in each round (so load from elsewhere on a shared machine falls on both
    sides of a ratio alike)."""
    best = [float("inf")] * len(names)
    for _ in range(repeats):
        for i, name in enumerate(names):
            best[i] = min(best[i], cpu_seconds_fresh(name))
    return best


def simulator_vs_simpy(repeats: int) -> None:
    ops, events = lock_run(count_events=True)
    sim_s, raw_s = cpu_seconds(["timed_lock_run", "raw_simpy"], repeats)
    raw_rate = 200_000 / raw_s
    print(f"simulator: rfc91-safe (30 simulated minutes): {ops} lock operations, {events} SimPy events "
          f"({events / ops:.1f} per operation), {ops / sim_s:,.0f} operations/s "
          f"({sim_s / ops * 1e6:.1f} us each), {events / sim_s:,.0f} SimPy events/s; "
          f"raw SimPy timeouts {raw_rate:,.0f}/s (CPU time, least of {repeats} fresh processes each)")
    ratio = ops * FIRST_SIMULATOR_EVENTS_PER_OP / sim_s / raw_rate
    print(f"simulator / raw SimPy (CPU time, in the first simulator's 11 events per operation): "
          f"1/{1 / ratio:.2f}; in its own events: 1/{raw_rate / (events / sim_s):.2f}")


def _instructions(code: str) -> int:
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                          "-c", code], capture_output=True, text=True, check=True).stderr
    found = re.search(r"refs:\s+([\d,]+)", out)
    assert found, out[-500:]
    return int(found.group(1).replace(",", ""))


def instructions_vs_simpy() -> None:
    """The same ratio in instructions: each side's run less its process's start (imports, scenario parsed)."""
    prelude = _PRELUDE + "import simpy; from scenarios import loader; scenario = loader.load('rfc91-safe'); "
    base = _instructions(prelude + "pass")
    raw = _instructions(prelude + "b.raw_simpy()") - base
    sim = _instructions(prelude + "b.run_scenario(scenario, 1)") - base
    ops, _ = lock_run()
    per_event, per_op = raw / 200_000, sim / ops
    print(f"instructions: raw SimPy {per_event:,.0f} per timeout event; rfc91-safe {per_op:,.0f} per lock "
          f"operation -> 1/{per_op / (per_event * FIRST_SIMULATOR_EVENTS_PER_OP):.2f} of the floor")


def time_to_find_long_pause(search_seed: int) -> tuple[float, int]:
    """The untargeted long-pause search with one search seed: (seconds to find and shrink, pause ms)."""
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
    ap = argparse.ArgumentParser()
    ap.add_argument("--instructions", action="store_true", help="also count instructions under callgrind")
    ap.add_argument("--skip-search", action="store_true", help="only the simulator figures")
    ap.add_argument("--repeats", type=int, default=7, help="fresh processes per side of the CPU-time ratio")
    args = ap.parse_args()
    simulator_vs_simpy(args.repeats)
    if args.instructions:
        instructions_vs_simpy()
    if args.skip_search:
        return
    runs = [time_to_find_long_pause(seed) for seed in range(5)]
    times = [t for t, _ in runs]
    print("long-pause search (find + shrink), 5 search seeds: "
          + ", ".join(f"{t:.1f}s (pause {d} ms)" for t, d in runs))
    print(f"median time to find and shrink the long-pause violation: {statistics.median(times):.1f} s")


if __name__ == "__main__":
    main()
