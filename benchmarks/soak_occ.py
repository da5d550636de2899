"""Soak: the OCC contention workload (copy-on-write commits of a timeline) on threads, faults on, for long.

Not a test: prints figures over time and a summary, asserts nothing.  The workload is the
``occ`` one of ``engines/contention_commits.py`` (:func:`model.timeline.run.timeline_workload`: every node a
``CowWriter`` of ``tl-occ-put-if-absent``, OCC under the table lock, put-if-absent, local
clocks 300 ms apart), run by the real-world interpreter on threads of this process against a
launched server (fake-gcs-server by default) rather than as Spark tasks, through the fault
proxy: 503 on 5 % of requests, a 1.5 s pause of one node every 90 s and a 2 s cutoff of
another every 120 s.  The timeline checkers judge the history read back from disk, with
the OCC metrics (commits, conflicts, aborts) of the contention workload.

Run: python benchmarks/soak_occ.py [--minutes 20] [--every 30] [--backend fake-gcs] [--writers 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import threading
import time
from pathlib import Path
from typing import Any

from soak_probe import Sampler, Stream, history_complete, print_summary

from backends.realworld import RealWorld, clear_prefix, endpoint_health, map_scenario_keys, node_backends
from backends.registry import open_endpoint
from engines.contention_commits import check_occ_scenario, judge_occ
from model.config import Cutoff, ErrorRule, Pause
from model.timeline.config import TimelineScenario
from model.timeline.run import timeline_workload
from scenarios import timeline_loader


def soak_scenario(minutes: float, writers: int, prefix: str) -> TimelineScenario:
    """tl-occ-put-if-absent for ``minutes``, keys under ``prefix``, with errors, pauses and cutoffs."""
    duration = int(minutes * 60_000)
    ts = timeline_loader.load("tl-occ-put-if-absent", [
        f"duration_ms={duration}", f"workload.writers={writers}", "storage.timeout_ms=1000"])
    check_occ_scenario(ts)
    end = duration - 10_000
    nodes = ts.scenario.workload.nodes()
    faults = dataclasses.replace(
        ts.scenario.faults,
        errors=(ErrorRule(node="any", key="any", status="503", prob=0.05),),
        pauses=tuple(Pause(node=nodes[i % len(nodes)], at_ms=t, duration_ms=1_500)
                     for i, t in enumerate(range(45_000, end, 90_000))),
        cutoffs=tuple(Cutoff(node=nodes[(i + 1) % len(nodes)], start_ms=t, end_ms=t + 2_000)
                      for i, t in enumerate(range(60_000, end, 120_000))))
    scenario = map_scenario_keys(dataclasses.replace(ts.scenario, faults=faults), prefix)
    return TimelineScenario(scenario, ts.timeline)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=20.0, help="how long the run lasts (default 20)")
    ap.add_argument("--every", type=float, default=30.0, help="seconds between samples (default 30)")
    ap.add_argument("--backend", default="fake-gcs", help="launched server (default fake-gcs)")
    ap.add_argument("--writers", type=int, default=3, help="committing writers (default 3)")
    ap.add_argument("--out", default=None, help="folder for the history (default out/soak/occ-TIME)")
    args = ap.parse_args()
    prefix = "soak-occ/"
    ts = soak_scenario(args.minutes, args.writers, prefix)
    sc = ts.scenario
    nodes = sc.workload.nodes()
    out = Path(args.out or f"out/soak/occ-{time.strftime('%Y%m%dT%H%M%S')}")
    out.mkdir(parents=True, exist_ok=True)
    print(f"soak: occ {ts.name} on {args.backend}, {len(nodes)} writers for {args.minutes:g} min; "
          f"{len(sc.faults.pauses)} pauses, {len(sc.faults.cutoffs)} cutoffs, {len(sc.faults.errors)} error "
          f"rules; history in {out}", flush=True)
    pid: list[int | None] = [None]
    stream = Stream(args.backend, out / "history.jsonl", lambda: pid[0])
    result: dict[str, Any] = {}
    ready = threading.Event()

    def soak() -> None:
        try:
            with open_endpoint(args.backend) as ep, open(stream.history, "w") as f:
                pid[0] = ep.process.pid if ep.process else None
                clear_prefix(ep, prefix)
                holder: list[RealWorld] = []
                with node_backends(sc, ep, nodes, prefix=prefix, log_dir=out, seed=sc.seed,
                                   clock_ms=lambda: holder[0].now_ms() if holder else 0) as (backends, proxy):
                    world = RealWorld(sc, backends, sink=stream.sink(f), health=endpoint_health(ep),
                                      workload=timeline_workload(ts, sc))
                    holder.append(world)
                    ready.set()
                    world.run()
                    result["proxy"] = dict(proxy.stats.actions) if proxy else {}
        except BaseException as e:  # reported in the summary
            result["error"] = e
        finally:
            pid[0] = None
            ready.set()

    worker = threading.Thread(target=soak, name="soak-occ")
    worker.start()
    ready.wait()
    sampler = Sampler([stream], args.every)
    sampler.start()
    worker.join()
    sampler.stop()
    print("\nsummary")
    print_summary(sampler)
    if "error" in result:
        print(f"run failed: {type(result['error']).__name__}: {result['error']}")
        return 1
    complete, events, why = history_complete(stream.history, stream.events)
    verdict, m = judge_occ(ts, events, nodes, sc.duration_ms)
    print(f"history complete: {complete} ({why}); proxy {dict(sorted(result['proxy'].items()))}")
    print(f"commits {m['commits']} ({m['commits_per_s']}/s), per writer {m['commits_per_writer']}, "
          f"OCC conflicts {m['conflicts']}, aborts {m['aborts']} {m['abort_reasons']}, "
          f"commit latency p50 {m['commit_latency_ms']['p50']} ms p99 {m['commit_latency_ms']['p99']} ms")
    print(f"verdict {verdict.verdict} (expected {sc.expect}); "
          f"violations {[v.kind for v in verdict.violations]}; "
          f"findings {sorted({f.kind for f in verdict.findings})}")
    return 0 if complete and verdict.verdict == sc.expect else 1


if __name__ == "__main__":
    sys.exit(main())
