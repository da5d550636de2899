"""Benchmark of sweeps (not a test; prints figures; asserts only that Spark's rows equal one process's).

For one grid (default: ``smoke`` with 32 seeds per cell, 128 simulated runs), measured in one run:

1. simulated runs per second in one process (the local engine), and with ``--engine local --jobs N``
   (``--jobs``, default 2: worker processes; the ratio one process / jobs N is the figure; the first
   run, which starts the workers, is reported apart, the timed ones reuse them, as a sweep or a
   boundary search does after its first probe), with the CPU time per run of each (the workers'
   from /proc, and the parent's: what the pool costs, which the load does not change much);
   and the machine's ceiling measured between the rounds (``--jobs`` plain busy processes against
   the same work one after the other: the other work on a shared machine takes cores);
   ``--local-only`` stops there (no Spark);
2. simulated runs per second on Spark ``local[1]`` and ``local[2]``, each after a warm-up job
   (the first job of a session starts the Python workers), in ``--rounds`` rounds of alternating
   order (the JVM warms up in the first session), best per master; session starts are reported apart.
   Each master runs the sweep batched (``SparkEngine.run``: ``--tasks-per-core`` Spark tasks per
   core, many runs each) and, with ``--unbatched``, also one Spark task per run (``SparkEngine.map``,
   the engine before batching);
3. the ratio local[2] / local[1] for both (Spark's scaling on this machine: at most the number of
   cores);
4. Spark's overhead against one process on one core: (local[1] seconds - one-process seconds) / runs.

Every timed configuration is repeated ``--repeats`` times and the best time is kept.  The load
average is printed before and after: other work on the machine lowers the ratio.

Run: python benchmarks/bench_sweep.py [--grid smoke] [--seeds 32] [--repeats 2] [--rounds 2]
     [--tasks-per-core 3] [--unbatched] [--jobs 2] [--local-only]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from engines import cells
from engines.local import LocalEngine
from engines.spark import TASKS_PER_CORE, SparkEngine, start_session
from scenarios import grid


def _burn(n: int = 4_000_000) -> int:
    """A fixed amount of pure-Python CPU work."""
    total = 0
    for i in range(n):
        total += i
    return total


def machine_ceiling(jobs: int) -> float:
    """How much faster ``jobs`` busy processes finish than the same work one after the other, now: the
    most any pool can gain on this machine at this moment (other work on it takes cores)."""
    import multiprocessing

    ctx = multiprocessing.get_context("forkserver" if "forkserver" in multiprocessing.get_all_start_methods()
                                      else "spawn")
    procs = [ctx.Process(target=_burn) for _ in range(jobs)]
    started = time.perf_counter()
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    parallel = time.perf_counter() - started
    started = time.perf_counter()
    for _ in range(jobs):
        _burn()
    return (time.perf_counter() - started) / parallel


def _cpu_of(pids: list[int]) -> float:
    """CPU seconds (user + system) the processes ``pids`` have used so far (Linux /proc; nan elsewhere)."""
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return float("nan")
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def best_of(repeats: int, fn) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", default="smoke")
    parser.add_argument("--seeds", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2, help="sessions per master, in alternating order")
    parser.add_argument("--tasks-per-core", type=int, default=TASKS_PER_CORE)
    parser.add_argument("--unbatched", action="store_true", help="also time one Spark task per run")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes of the local engine")
    parser.add_argument("--local-only", action="store_true", help="time the local engine only (no Spark)")
    args = parser.parse_args()

    g = grid.load(args.grid)
    tasks = cells.expand(g, seeds=args.seeds)
    n = len(tasks)
    print(f"grid {g.name}: {len(g.cells())} cells x {args.seeds} seeds = {n} simulated runs; "
          f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}")

    local = LocalEngine(quiet=True)
    reference = local.run(tasks)
    pooled = LocalEngine(quiet=True, jobs=args.jobs)
    try:
        started = time.perf_counter()
        assert pooled.run(tasks) == reference, f"--jobs {args.jobs} rows differ from one process's"
        first = time.perf_counter() - started
        # Alternating, best of each: other work on the machine comes and goes during the run.
        t_local = t_pooled = float("inf")
        cpu_local = cpu_workers = cpu_parent = float("inf")
        ceilings = []
        for _ in range(args.repeats):
            ceilings.append(machine_ceiling(args.jobs))
            cpu0 = time.process_time()
            t_local = min(t_local, best_of(1, lambda: local.run(tasks)))
            cpu_local = min(cpu_local, time.process_time() - cpu0)
            cpu0, workers0 = time.process_time(), _cpu_of(pooled.worker_pids())
            t_pooled = min(t_pooled, best_of(1, lambda: pooled.run(tasks)))
            cpu_parent = min(cpu_parent, time.process_time() - cpu0)
            cpu_workers = min(cpu_workers, _cpu_of(pooled.worker_pids()) - workers0)
    finally:
        pooled.close()
    print(f"one process      : {t_local:7.2f} s  {n / t_local:7.1f} runs/s")
    print(f"local --jobs {args.jobs:<3} : {t_pooled:7.2f} s  {n / t_pooled:7.1f} runs/s  (first run, "
          f"starting the workers: {first:.2f} s); one process / --jobs {args.jobs}: "
          f"{t_local / t_pooled:.2f}x ({t_local / first:.2f}x counting the start); "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"machine ceiling  : {args.jobs} plain busy processes ran "
          f"{' / '.join(f'{c:.2f}x' for c in ceilings)} faster than one after the other, measured between "
          "the rounds (the most a pool can gain now)")
    if cpu_workers == cpu_workers and cpu_workers < float("inf"):  # /proc was readable
        print(f"CPU per run      : one process {cpu_local / n * 1000:.1f} ms; --jobs {args.jobs}: workers "
              f"{cpu_workers / n * 1000:.1f} ms + parent {cpu_parent / n * 1000:.1f} ms "
              "(what the pool costs, whatever the load)")
    if args.local_only:
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        return

    # Rounds in alternating orders, best per master: the JVM warms up during the first session, and
    # other work on the machine comes and goes.
    timings: dict[tuple[str, str], float] = {}
    order = ("local[1]", "local[2]")
    for master in (m for r in range(args.rounds) for m in (order if r % 2 == 0 else order[::-1])):
        started = time.perf_counter()
        session = start_session(master, app_name=f"bench-{master}")
        boot = time.perf_counter() - started
        engine = SparkEngine(session=session, quiet=True, tasks_per_core=args.tasks_per_core)
        started = time.perf_counter()
        rows = engine.run(tasks)  # warm-up: starts the Python workers
        warm = time.perf_counter() - started
        assert rows == reference, "Spark rows differ from the local engine's"
        runs = {"batched": lambda engine=engine: engine.run(tasks)}
        if args.unbatched:
            assert engine.map(tasks, cells.run_task) == reference, "unbatched Spark rows differ"
            runs["unbatched"] = lambda engine=engine: engine.map(tasks, cells.run_task)
        for how, fn in runs.items():
            seconds = best_of(args.repeats, fn)
            timings[master, how] = min(seconds, timings.get((master, how), float("inf")))
            print(f"spark {master:<8} {how:<9}: {seconds:7.2f} s  {n / seconds:7.1f} runs/s  "
                  f"(session start {boot:.1f} s, first job {warm:.1f} s, "
                  f"{engine.batches(n) if how == 'batched' else n} Spark tasks, "
                  f"load {os.getloadavg()[0]:.1f})")
        session.stop()

    for how in ("batched", "unbatched") if args.unbatched else ("batched",):
        ratio = timings["local[1]", how] / timings["local[2]", how]
        overhead_ms = (timings["local[1]", how] - t_local) / n * 1000
        print(f"{how:<9}: scaling local[2] / local[1] {ratio:.2f}x; overhead vs one process on one core "
              f"{overhead_ms:+.1f} ms per run (one-process run: {t_local / n * 1000:.1f} ms)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
