"""``hcc timeline run NAME_OR_PATH [--seed N] [--out DIR] [--json]``: timeline scenarios in simulation.

A timeline scenario file is a lock-model scenario file (world, clocks, faults, lock,
storage, writers) with a ``[timeline]`` table (``model/timeline/config.py``).  Names are
looked up in ``scenarios/timeline/``.  The run directory holds history.jsonl, verdict.json,
metrics.json and scenario.toml (every default filled in), as for ``hcc run``, and the table the
writers left (``table/``: a Hudi COPY_ON_WRITE table, readable with ``hcc slices OUT/table``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from engines.rundir import claim_out, execute_timeline, prepare_out
from scenarios.timeline_loader import load, timeline_names


def run(args: argparse.Namespace) -> int:
    """hcc timeline run."""
    ts = load(args.scenario, args.set or [])
    if ts.scenario.world == "spark":  # Spark tasks are the committing writers, against a launched server
        from cli.contention import print_spark_commits
        from engines.contention_commits import run_spark_commits

        spark_summary = run_spark_commits("occ", args.scenario, ts.scenario.backend, ts.scenario.duration_ms,
                                          seed=args.seed, out=claim_out(Path(args.out), args.force)
                                          if args.out else None, overrides=args.set or [])
        if args.json:
            print(json.dumps(spark_summary, sort_keys=True))
        else:
            print_spark_commits(spark_summary)
        return 0 if spark_summary["matches_expectation"] else 1
    seed = ts.scenario.seed if args.seed is None else args.seed
    out = prepare_out(args.out, force=args.force, name=ts.name, seed=seed)
    started = time.monotonic()
    summary = execute_timeline(ts, seed, out)
    if args.json:
        print(json.dumps(summary, sort_keys=True))
    else:
        print(
            f"timeline scenario {ts.name}  seed {seed}  verdict {summary['verdict']} "
            f"(expected {ts.scenario.expect})  {time.monotonic() - started:.2f}s  -> {out}"
        )
        ops = summary["metrics"]["ops"]
        print(
            f"  ops: {ops['invoked']} started, {ops['committed']} committed, {ops['aborted']} aborted, "
            f"{ops['writer_failures']} writer failures; aborts {summary['metrics']['abort_reasons']}"
        )
        for v in summary["violations"][:10]:
            print(f"  violation [{v['kind']}] {v['message']}  events {v['events']}")
        if len(summary["violations"]) > 10:
            print(f"  ... and {len(summary['violations']) - 10} more")
        for f in summary["findings"][:5]:
            print(f"  finding   [{f['kind']}] {f['message']}")
    if not summary["matches_expectation"]:
        print(
            f"seed {seed}: timeline scenario {ts.name} expected {ts.scenario.expect}, "
            f"got {summary['verdict']}",
            file=sys.stderr,
        )
        return 1
    return 0


def register(subparsers: Any) -> None:
    """Add ``hcc timeline run``."""
    parser = subparsers.add_parser("timeline", help="timeline, time generation and OCC commits in simulation")
    sub = parser.add_subparsers(dest="timeline_command", required=True)
    r = sub.add_parser("run", help="run a timeline scenario")
    r.add_argument(
        "scenario", help=f"name in scenarios/timeline ({', '.join(timeline_names())}) or a TOML path"
    )
    r.add_argument("--seed", type=int, help="override the scenario's seed")
    r.add_argument("--out", help="run directory, new or empty "
                                 "(default: a new folder out/runs/NAME/seedN-TIME)")
    r.add_argument("--force", action="store_true", help="replace the run in a used --out folder")
    r.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a field (dotted key)")
    r.add_argument("--json", action="store_true", help="print one JSON object")
    r.set_defaults(func=run)
