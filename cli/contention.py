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
import sys
from pathlib import Path
from typing import Any

from backends import registry
from backends.launchers.process import LaunchError
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
    c.add_argument("--world", choices=("spark", "hudi"), default="spark",
                   help="spark: the harness's writers as Spark tasks (default); hudi: Hudi's own Spark "
                        "writers (PySpark 3.5 and the pinned Hudi bundle, tox -e hudi) on SeaweedFS, OCC "
                        "copy-on-write: an OCC entry's operations as its simulated run draws them "
                        "(engines/hudi_spark/plans.py), an NBCC entry's deltacommits on merge-on-read "
                        "(engines/hudi_spark/nbcc_plans.py), or without SCENARIO the fixed conflict workload "
                        "(--protocol nbcc: merge-on-read writers under Hudi's NBCC)")
    c.add_argument("--hudi-version", default="1.2.0",
                   help="with --world hudi: the Hudi release whose Spark bundle runs (default 1.2.0)")
    c.add_argument("--max-ops", type=int, default=3,
                   help="with --world hudi and an entry: each writer's first N operations (default 3)")
    c.add_argument("--protocol", choices=("occ", "nbcc"),
                   help="with --world hudi and no entry: occ (copy-on-write, the default) or nbcc (Hudi's "
                        "NBCC: merge-on-read, simple bucket index; engines/hudi_spark/nbcc.py)")
    c.add_argument("--hudi-workload",
                   help="with --world hudi and no entry: occ: conflict (default), duplicate-key; nbcc: "
                        "overlap (default), uncommitted-anchor (2 writers, w1 killed mid-commit: #19774), "
                        "anchor-first (its control: no earlier commit), overlap-pause (w2 stopped 20 s "
                        "mid-commit)")
    add_set(c)
    add_out(c, "a new folder out/runs/NAME-BACKEND/seedN-TIME")
    add_json(c)
    c.set_defaults(func=run_contention_cmd)


def run_contention_cmd(args: argparse.Namespace) -> int:
    """hcc contention [SCENARIO] --backend NAME: exit 0 when the verdict is the expected one."""
    if args.world == "hudi":
        return _run_hudi(args)
    for name, value in (("--protocol", args.protocol), ("--hudi-workload", args.hudi_workload)):
        if value is not None:
            raise ConfigError(name, value, "with --world hudi only")
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


def _run_hudi(args: argparse.Namespace) -> int:
    """``--world hudi``: Hudi's own Spark writers, on an OCC entry's plans or the fixed conflict workload;
    exit 0 when the verdict is the entry's expected one (no entry: when the checks pass)."""
    from engines.hudi_spark.classpath import writer_classpath
    from engines.hudi_spark.nbcc_plans import hudi_plans, load_entry
    from engines.hudi_spark.run import SETUPS, WORKLOADS
    from engines.hudi_spark.run import run as run_hudi

    if args.workload is not None:
        raise ConfigError("--workload", args.workload, "--world hudi runs its own OCC copy-on-write writers "
                                                       "(no --workload)")
    if args.backend not in ("seaweedfs", "minio"):
        raise ConfigError("--backend", args.backend, "--world hudi runs on seaweedfs or minio")
    if args.writers is not None and args.writers < 2:
        raise ConfigError("--writers", args.writers, "--world hudi needs 2 writers or more")
    if not args.out:
        raise ConfigError("--out", None, "--world hudi needs --out (a new or empty folder)")
    plans, toml, expect = None, "", None
    protocol = args.protocol or "occ"
    if args.scenario and (args.protocol or args.hudi_workload):
        name = "--protocol" if args.protocol else "--hudi-workload"
        raise ConfigError(name, args.protocol or args.hudi_workload,
                          "an entry runs its own plans under its protocol (no --protocol or --hudi-workload)")
    if args.scenario:
        entry = load_entry("scenario", args.scenario, list(args.set or []))
        if args.writers:  # the entry's own writer count, in its protocol's field
            field = SETUPS[entry.protocol].writers_field
            entry = load_entry("scenario", args.scenario, [*(args.set or []), f"{field}={args.writers}"])
        protocol, plans = hudi_plans(entry, args.max_ops)
        toml, expect = entry.to_toml(), entry.expect
    elif args.set:
        raise ConfigError("--set", args.set, "--set changes an entry: give one")
    if args.hudi_workload is not None and args.hudi_workload not in WORKLOADS[protocol]:
        raise ConfigError("--hudi-workload", args.hudi_workload,
                          f"under --protocol {protocol} one of {', '.join(WORKLOADS[protocol])}")
    if args.hudi_workload in ("uncommitted-anchor", "anchor-first") and args.writers not in (None, 2):
        raise ConfigError("--writers", args.writers, f"the {args.hudi_workload} workload has 2 writers")
    writer_classpath(args.hudi_version)  # a version without a served bundle: exit 2 before any folder
    out = claim_out(Path(args.out), args.force)
    try:
        verdict = run_hudi(out, version=args.hudi_version, writers=args.writers or 2, entry=plans,
                           scenario_toml=toml, protocol=protocol, workload=args.hudi_workload,
                           backend=args.backend)
    except LaunchError as e:  # Unavailable too: no MinIO build here
        print(f"hcc contention: backend {args.backend} did not start: {e}", file=sys.stderr)
        return 2
    matches = verdict["valid"] if expect is None else verdict["valid"] == (expect == "ok")
    if args.json:
        print(json.dumps({**verdict, "expect": expect, "matches_expectation": matches}, sort_keys=True))
    else:
        kinds = ", ".join(sorted({a["kind"] for a in verdict["anomalies"]}))
        judged = "" if expect is None else f"; expected {expect}: {'as' if matches else 'NOT as'} expected"
        replaces, refused = verdict.get("replacecommits") or 0, len(verdict.get("rejected") or ())
        print(f"{verdict['real']}, {verdict['protocol']} {verdict['workload']}: "
              f"{verdict['commits']} commits{f' ({replaces} replacecommits)' if replaces else ''}, "
              f"{len(verdict['conflicts'])} write conflicts (HoodieWriteConflictException), "
              f"{f'{refused} refused (HoodieClusteringUpdateException), ' if refused else ''}"
              f"{len(verdict['anomalies'])} anomalies{f' ({kinds})' if kinds else ''}{judged}; run in {out}")
    return 0 if matches else 1
