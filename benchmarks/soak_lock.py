"""Soak: the real-world lock workload on fake-gcs-server and SeaweedFS at once, faults on, for a long time.

Not a test: prints figures over time and a summary, asserts nothing.  Both servers are
launched; on each, the three writers of ``rfc91-safe`` run on real threads through the fault
proxy (``backends/realworld.py``) with shortened timings (validity 6 s, renewal every 1 s,
client timeout 500 ms) and, on top of the scenario's error rules (503 on 5 % of requests,
2 % of lock writes timing out), a 1.5 s pause of one node every 90 s and a 2 s cutoff of
another every 120 s: every fault stays inside RFC-91's assumptions, so the expected
verdict is ``ok``.

Every ``--every`` seconds it prints the harness's resident memory, open descriptors and
threads, each server's memory and descriptors, each history's size and the events per
second.  At the end: first-quarter vs last-quarter means (flat memory shows as x1.0), the
descriptor range, whether each history is complete (parses, run-start .. run-end, every
recorded event on disk) and the checkers' verdict on the history read back from disk.

Run: python benchmarks/soak_lock.py [--minutes 20] [--every 30] [--backends fake-gcs,seaweedfs]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
import threading
import time
from pathlib import Path
from typing import Any

from soak_probe import Sampler, Stream, history_complete, print_summary

from backends.realworld import run_realworld
from backends.registry import open_endpoint
from model.checkers.lock_run import check_lock_history
from model.config import Cutoff, Pause, Scenario
from scenarios import loader

SHORT = ["lock.validity_secs=6", "lock.renew_interval_secs=1", "lock.enforce_hudi_limits=false",
         "storage.timeout_ms=500", "lock.wait_time_ms=30000"]


def soak_scenario(minutes: float) -> Scenario:
    """rfc91-safe, shortened, with periodic pauses and cutoffs well inside its assumptions."""
    duration = int(minutes * 60_000)
    sc = loader.load("rfc91-safe", [*SHORT, f"duration_ms={duration}"])
    end = duration - 10_000
    pauses = tuple(Pause(node=f"w{1 + i % 3}", at_ms=t, duration_ms=1_500)
                   for i, t in enumerate(range(45_000, end, 90_000)))
    cutoffs = tuple(Cutoff(node=f"w{1 + (i + 1) % 3}", start_ms=t, end_ms=t + 2_000)
                    for i, t in enumerate(range(60_000, end, 120_000)))
    return dataclasses.replace(sc, faults=dataclasses.replace(sc.faults, pauses=pauses, cutoffs=cutoffs))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=20.0, help="how long each run lasts (default 20)")
    ap.add_argument("--every", type=float, default=30.0, help="seconds between samples (default 30)")
    ap.add_argument("--backends", default="fake-gcs,seaweedfs", help="launched servers, comma-separated")
    ap.add_argument("--out", default=None, help="folder for the histories (default out/soak/lock-TIME)")
    args = ap.parse_args()
    scenario = soak_scenario(args.minutes)
    out = Path(args.out or f"out/soak/lock-{time.strftime('%Y%m%dT%H%M%S')}")
    out.mkdir(parents=True, exist_ok=True)
    names = [b.strip() for b in args.backends.split(",") if b.strip()]
    print(f"soak: {scenario.name} on {', '.join(names)} for {args.minutes:g} min; "
          f"{len(scenario.faults.pauses)} pauses, {len(scenario.faults.cutoffs)} cutoffs, "
          f"{len(scenario.faults.errors)} error rules; histories in {out}", flush=True)
    results: dict[str, Any] = {}
    streams: dict[str, Stream] = {}
    pids: dict[str, int | None] = {}
    ready = threading.Barrier(len(names) + 1)

    def soak(name: str) -> None:
        stream = streams[name]
        try:
            with open_endpoint(name) as ep, open(stream.history, "w") as f:
                pids[name] = ep.process.pid if ep.process else None
                ready.wait()
                res = run_realworld(scenario, ep, prefix=f"soak-{name}/", sink=stream.sink(f),
                                    log_dir=out / name)
                results[name] = res
        except BaseException as e:  # reported in the summary
            results[name] = e
            if not ready.broken:
                ready.abort()
        finally:
            pids[name] = None

    for name in names:
        (out / name).mkdir(exist_ok=True)
        streams[name] = Stream(name, out / name / "history.jsonl", lambda n=name: pids.get(n))
    workers = [threading.Thread(target=soak, args=(n,), name=f"soak-{n}") for n in names]
    for w in workers:
        w.start()
    with contextlib.suppress(threading.BrokenBarrierError):  # a server did not start: reported below
        ready.wait()
    sampler = Sampler(list(streams.values()), args.every)
    sampler.start()
    for w in workers:
        w.join()
    sampler.stop()
    print("\nsummary")
    print_summary(sampler)
    failed = False
    for name in names:
        res = results.get(name)
        if isinstance(res, BaseException):
            print(f"{name}: run failed: {type(res).__name__}: {res}")
            failed = True
            continue
        complete, events, why = history_complete(streams[name].history, streams[name].events)
        verdict = check_lock_history(events, res.scenario.checkers) if events else None
        acquisitions = sum(1 for e in events if e.f == "acquire" and e.type == "ok")
        print(f"{name}: history complete: {complete} ({why}); acquisitions {acquisitions}; "
              f"proxy {dict(sorted(res.proxy_actions.items()))}")
        print(f"{name}: verdict {verdict.verdict if verdict else '-'} (expected {scenario.expect}); "
              f"violations {[v.kind for v in verdict.violations] if verdict else '-'}; "
              f"findings {sorted({f.kind for f in verdict.findings}) if verdict else '-'}")
        failed |= not complete or verdict is None or verdict.verdict != scenario.expect
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
