"""``hcc contention [SCENARIO] --backend NAME [--workload lock|occ|nbcc] [--duration-ms N] [--master URL]``.

Launches a real backend, runs each writer of a lock scenario as one Spark task against it
(see :mod:`engines.contention`), and writes a run directory like ``hcc run``'s; exit 0 when
the verdict is the scenario's expected one.  A timeline scenario (a file with a
``[timeline]`` table, or a catalogue entry of protocol ``occ``) runs its copy-on-write commits
instead (``--workload occ``), and ``--workload nbcc`` runs ``--writers`` NBCC deltacommit
writers and a compaction service (no scenario file); see :mod:`engines.contention_commits`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from backends import registry
from cli.options import add_backend, add_json, add_out, add_set
from engines.contention import run_spark_world
from engines.contention_commits import run_spark_commits
from engines.rundir import claim_out
from model.config import ConfigError
from scenarios import loader
from scenarios.timeline_loader import is_timeline_scenario


def register(subparsers: Any) -> None:
    """Add the ``contention`` subcommand."""
    c = subparsers.add_parser(
        "contention", help="Spark tasks as writers (lock, OCC commits or NBCC) against a launched backend",
        description="Launch BACKEND, run each writer of SCENARIO as one Spark task against it for "
                    "--duration-ms, then merge the histories, check them and print the contention metrics. "
                    "A timeline scenario runs OCC commits; --workload nbcc runs NBCC writers and a "
                    "compaction service.")
    c.add_argument("scenario", nargs="?",
                   help="lock scenario (catalogue name or path) or timeline scenario (catalogue occ entry "
                        "name or path); none for --workload nbcc")
    c.add_argument("--workload", choices=("lock", "occ", "nbcc"),
                   help="lock: the lock workload; occ: timeline commits; nbcc: NBCC deltacommits and "
                        "compaction (default: occ for a timeline scenario, else lock)")
    c.add_argument("--writers", type=int,
                   help="writers (default: the scenario's; 3 for nbcc, which adds a compaction service)")
    add_backend(c, registry.NAMES, urls=False)
    c.add_argument("--duration-ms", type=int, default=30_000, help="how long the writers run (default 30000)")
    c.add_argument("--master", help="Spark master URL (default local[W] for W writers)")
    c.add_argument("--seed", type=int, help="seed of the writers' random choices (default: the scenario's)")
    add_set(c)
    add_out(c, "a new folder out/runs/NAME-BACKEND/seedN-TIME")
    add_json(c)
    c.set_defaults(func=run_contention_cmd)


def run_contention_cmd(args: argparse.Namespace) -> int:
    """hcc contention [SCENARIO] --backend NAME: exit 0 when the verdict is the expected one."""
    workload = args.workload
    if workload is None:
        workload = "occ" if args.scenario and is_timeline_scenario(args.scenario) else "lock"
    if workload != "nbcc" and not args.scenario:
        raise ConfigError("scenario", None, f"--workload {workload} needs a scenario name or path")
    if workload == "nbcc" and (args.scenario or args.set):
        raise ConfigError("scenario", args.scenario or args.set,
                          "--workload nbcc takes no scenario file or --set (use --writers, --seed)")
    overrides = list(args.set or []) + ([f"workload.writers={args.writers}"] if args.writers else [])
    out = claim_out(Path(args.out), args.force) if args.out else None
    if workload == "lock":
        scenario = loader.load(args.scenario, overrides)
        summary = run_spark_world(scenario, args.backend, args.duration_ms, master=args.master,
                                  seed=args.seed, out=out)
    else:
        summary = run_spark_commits(workload, args.scenario, args.backend, args.duration_ms,
                                    master=args.master, seed=args.seed, out=out, overrides=overrides,
                                    writers=args.writers)
    if args.json:
        print(json.dumps(summary, sort_keys=True))
    elif workload == "lock":
        print_spark_world(summary)
    else:
        print_spark_commits(summary)
    return 0 if summary["matches_expectation"] else 1


def print_spark_commits(summary: dict[str, Any]) -> None:
    """The text form of an OCC or NBCC contention run's summary."""
    m = summary["metrics"]
    print(f"contention {summary['workload']} {summary['scenario']} on {summary['backend']}: "
          f"{summary['writers']} tasks for {summary['duration_ms']} ms: verdict {summary['verdict']} "
          f"(expected {summary['expect']}) -> {summary['out']}")
    for v in summary["violations"][:10]:
        print(f"  violation [{v['kind']}] {v['message']}")
    lat = m["commit_latency_ms"]
    print(f"  commits {m['commits']} ({m['commits_per_s']}/s), per writer {m['commits_per_writer']}, "
          f"Jain fairness {m['fairness_jain']}")
    print(f"  commit latency p50 {lat['p50']} p90 {lat['p90']} p99 {lat['p99']} max {lat['p100']} ms")
    extra = f", OCC conflicts {m['conflicts']}" if m["workload"] == "occ" else ""
    print(f"  aborts {m['aborts']} ({m['aborts_per_commit']} per commit){extra}; "
          f"reasons {m['abort_reasons']}")
    if m["workload"] == "nbcc":
        print(f"  compactions {m['compactions']}")


def print_spark_world(summary: dict[str, Any]) -> None:
    """The text form of a contention run's summary."""
    m = summary["metrics"]
    seconds = max(m["simulated_ms"], 1) / 1000
    print(f"contention {summary['scenario']} on {summary['backend']}: {summary['writers']} writers for "
          f"{summary['duration_ms']} ms: verdict {summary['verdict']} (expected {summary['expect']}) "
          f"-> {summary['out']}")
    for v in summary["violations"][:10]:
        print(f"  violation [{v['kind']}] {v['message']}")
    lat = m["acquire_latency_ms"]
    print(f"  acquisitions {m['acquisitions']} ({m['acquisitions'] / seconds:.2f}/s), per writer "
          f"{m['acquisitions_per_writer']}, Jain fairness {m['fairness_jain']}")
    print(f"  acquire latency p50 {lat['p50']} p90 {lat['p90']} p99 {lat['p99']} max {lat['p100']} ms")
    print(f"  per acquisition: precondition failures "
          f"{m['acquire_precondition_failure_per_acquisition']}, unknown outcomes "
          f"{m['unknown_outcomes_per_acquisition']}, retries {m['retries_per_acquisition']}")
    print(f"  writes ok {m['writes_ok']} ({m['throughput_writes_per_s']}/s)")
