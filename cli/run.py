"""``hcc run NAME | --all``, ``hcc show NAME`` and ``hcc list``: the scenario catalogue in simulation.

Exit status of ``hcc run``: 0 when every verdict equals its scenario's ``expect``, 1 when
one does not (its seed is printed), 2 for bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from engines.rundir import claim_out, execute
from model.config import ConfigError
from scenarios import loader


def _print_run_line(
    name: str, expect: str, verdict: str, n_violations: int, seed: int, seconds: float
) -> None:
    mark = "ok  " if verdict == expect else "FAIL"
    print(
        f"{mark} {name:<28} expect={expect:<9} verdict={verdict:<9} violations={n_violations:<4} "
        f"seed={seed} ({seconds:.2f}s)"
    )


def cmd_run(args: argparse.Namespace) -> int:
    """hcc run NAME_OR_PATH | --all."""
    if args.all == bool(args.scenario):
        raise ConfigError("scenario", args.scenario, "give a scenario name or path, or --all (not both)")
    names = loader.catalogue_names() if args.all else [args.scenario]
    scenarios = [loader.load(name, args.set or []) for name in names]  # bad input: exit 2 before any run
    root = claim_out(Path(args.out), args.force) if args.out else None
    failures = 0
    summaries = []
    for scenario in scenarios:
        seed = scenario.seed if args.seed is None else args.seed
        out = None if root is None else (root / scenario.name if args.all else root)
        if scenario.world == "spark":  # Spark tasks are the writers, against a launched server
            from cli.contention import print_spark_world
            from engines.contention import run_spark_world

            spark_summary = run_spark_world(
                scenario, scenario.backend, scenario.duration_ms, seed=seed, out=out
            )
            summaries.append(spark_summary)
            failures += not spark_summary["matches_expectation"]
            if not args.json:
                print_spark_world(spark_summary)
            continue
        started = time.monotonic()
        result = execute(scenario, seed, out)
        summary = result.summary()
        summaries.append(summary)
        if not result.matches_expectation:
            failures += 1
            print(
                f"seed {seed}: scenario {scenario.name} expected {scenario.expect}, "
                f"got {result.verdict.verdict}",
                file=sys.stderr,
            )
        if args.json:
            continue
        if args.all:
            _print_run_line(
                scenario.name,
                scenario.expect,
                result.verdict.verdict,
                len(result.verdict.violations),
                seed,
                time.monotonic() - started,
            )
        else:
            print(
                f"scenario {scenario.name}  seed {seed}  verdict {result.verdict.verdict} "
                f"(expected {scenario.expect})  -> {result.out}"
            )
            for v in result.verdict.violations[:10]:
                print(f"  violation [{v.kind}] {v.message}  events {list(v.events)}")
            if len(result.verdict.violations) > 10:
                print(f"  ... and {len(result.verdict.violations) - 10} more")
            for f in result.verdict.findings[:5]:
                print(f"  finding   [{f.kind}] {f.message}")
    if args.json:
        print(json.dumps(summaries if args.all else summaries[0], sort_keys=True))
    return 1 if failures else 0


def cmd_show(args: argparse.Namespace) -> int:
    """hcc show NAME: the scenario with every default filled in, as TOML."""
    print(loader.to_toml(loader.load(args.scenario, args.set or [])), end="")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """hcc list: the scenario catalogue."""
    for name in loader.catalogue_names():
        s = loader.load(name)
        print(f"{name:<28} expect={s.expect:<9} {s.description.splitlines()[0] if s.description else ''}")
    return 0


def register(sub: Any) -> None:
    """Add ``run``, ``show`` and ``list``."""
    run = sub.add_parser("run", help="run a scenario (or the whole catalogue) in simulation")
    run.add_argument("scenario", nargs="?", help="catalogue name or path to a TOML file")
    run.add_argument("--all", action="store_true", help="run every scenario of the catalogue")
    run.add_argument("--seed", type=int, help="override the scenario's seed")
    run.add_argument("--out", help="run directory, new or empty (with --all: a parent folder); default: "
                                   "a new folder out/runs/NAME/seedN-TIME, linked as out/runs/NAME/latest")
    run.add_argument("--force", action="store_true", help="replace the runs in a used --out folder")
    run.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a field (dotted key)")
    run.add_argument("--json", action="store_true", help="print one JSON object")
    run.set_defaults(func=cmd_run)

    show = sub.add_parser("show", help="print a scenario with every default filled in")
    show.add_argument("scenario")
    show.add_argument("--set", action="append", metavar="KEY=VALUE")
    show.set_defaults(func=cmd_show)

    lst = sub.add_parser("list", help="list the scenario catalogue")
    lst.set_defaults(func=cmd_list)
