"""``hcc contention [SCENARIO] --backend NAME [--workload lock|occ|nbcc] [--duration-ms N] [--master URL]``.

Launches a real backend, runs each writer of a scenario as one Spark task against it (the
protocol's Spark world, ``engines/spark_worlds.py``), and writes a run directory like ``hcc run``'s;
exit 0 when the verdict is the scenario's expected one.  A lock scenario runs the lock workload
(:mod:`engines.contention`), a timeline scenario (a catalogue entry of protocol ``occ``) its
copy-on-write commits, and ``--workload nbcc`` runs ``--writers`` NBCC deltacommit writers and a
compaction service (no scenario file); see :mod:`engines.contention_commits`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from backends import registry
from cli.options import add_backend, add_json, add_out, add_set
from engines.rundir import claim_out
from engines.spark_worlds import SPARK_WORLDS, SparkRequest
from model.config import ConfigError
from scenarios import catalogue


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
    c.add_argument("--workload", choices=tuple(SPARK_WORLDS),
                   help="the protocol whose writers run: lock, occ (timeline commits) or nbcc (NBCC "
                        "deltacommits and compaction; no scenario) (default: the scenario's protocol)")
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
    overrides = list(args.set or []) + ([f"workload.writers={args.writers}"] if args.writers else [])
    entry = catalogue.load(args.scenario, overrides) if args.scenario else None
    workload = args.workload or (entry.protocol if entry is not None else None)
    if workload is None:
        raise ConfigError("scenario", None, "give a scenario name or path, or --workload nbcc")
    world = SPARK_WORLDS.get(workload)
    if world is None:
        raise ConfigError("scenario", args.scenario, f"a {workload} scenario has no Spark world (one of "
                                                     f"{', '.join(SPARK_WORLDS)})")
    if world.takes_scenario and entry is None:
        raise ConfigError("scenario", None, f"--workload {workload} needs a scenario name or path")
    if not world.takes_scenario and (args.scenario or args.set):
        raise ConfigError("scenario", args.scenario or args.set,
                          f"--workload {workload} takes no scenario file or --set (use --writers, --seed)")
    if entry is not None and entry.protocol != workload:
        raise ConfigError("--workload", workload, f"{args.scenario} is a {entry.protocol} scenario")
    out = claim_out(Path(args.out), args.force) if args.out else None
    summary = world.run(entry, SparkRequest(args.backend, args.duration_ms, args.master, args.seed, out,
                                            args.writers))
    if args.json:
        print(json.dumps(summary, sort_keys=True))
    else:
        print("\n".join(world.describe(summary)))
    return 0 if summary["matches_expectation"] else 1
