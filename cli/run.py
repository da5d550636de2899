"""``hcc run NAME | --all [--protocol P]``, ``hcc show NAME`` and ``hcc list``: the one scenario catalogue.

Every entry of ``scenarios/catalogue/`` (protocol ``lock``, ``occ``, ``nbcc`` or ``explore``) runs
through the same command and leaves the same run directory (``engines/rundir.py``).
Exit status of ``hcc run``: 0 when every verdict equals its entry's ``expect``, 1 when
one does not (its seed is printed), 2 for bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from backends import registry
from cli.options import add_backend, add_json, add_out, add_set
from engines.rundir import STORE, RunResult, claim_out, execute_entry
from model.config import ConfigError
from model.protocols import NAMES
from scenarios import catalogue
from scenarios.catalogue import Entry


def _print_run_line(result: RunResult, seconds: float) -> None:
    e = result.entry
    mark = "ok  " if result.matches_expectation else "FAIL"
    print(
        f"{mark} {e.protocol:<7} {e.name:<38} expect={e.expect:<9} verdict={result.verdict.verdict:<9} "
        f"violations={_found(result):<4} seed={result.seed} ({seconds:.2f}s)"
    )


def _found(result: RunResult) -> int:
    """How many violations the run's checkers found (some keep only the first few of a kind)."""
    return sum(result.verdict.counts.values()) or len(result.verdict.violations)


def _print_one(result: RunResult) -> None:
    e = result.entry
    print(f"{e.protocol} scenario {e.name}  seed {result.seed}  verdict {result.verdict.verdict} "
          f"(expected {e.expect})  -> {result.out}")
    for v in result.verdict.violations[:10]:
        print(f"  violation [{v.kind}] {v.message}  events {list(v.events)}")
    if _found(result) > 10:
        kept = "" if _found(result) == len(result.verdict.violations) else \
            f" ({len(result.verdict.violations)} kept as examples in verdict.json)"
        print(f"  ... and {_found(result) - 10} more{kept}")
    for f in result.verdict.findings[:5]:
        print(f"  finding   [{f.kind}] {f.message}")


def _run_spark(entry: Entry, seed: int, out: Path | None, args: argparse.Namespace) -> dict[str, Any]:
    """A ``world = "spark"`` entry: Spark tasks are the writers, against a launched server (the
    protocol's Spark world, ``engines/spark_worlds.py``)."""
    from engines.spark_worlds import SPARK_WORLDS, SparkRequest

    world = SPARK_WORLDS.get(entry.protocol)
    if world is None:
        raise ConfigError("world", "spark", f"protocol {entry.protocol} has no Spark world")
    summary = world.run(entry, SparkRequest(seed=seed, out=out))
    if not args.json:
        print("\n".join(world.describe(summary)))
    return summary


def _run_hudi(entry: Entry, seed: int, out: Path | None, args: argparse.Namespace) -> dict[str, Any]:
    """``--world hudi``: the lock entry on Hudi's own provider, one JVM per node (engines/hudi_world.py)."""
    from engines.hudi_world import HudiRequest, describe, run_entry

    req = HudiRequest(version=args.hudi_version or "", backend=args.backend or "seaweedfs",
                      time_scale=args.time_scale, quiet=args.json)
    summary = run_entry(entry, seed, out, req)
    if not args.json:
        print("\n".join(describe(summary)))
    return dict(summary)


def cmd_run(args: argparse.Namespace) -> int:
    """hcc run NAME_OR_PATH | --all [--protocol P]."""
    if args.all == bool(args.scenario):
        raise ConfigError("scenario", args.scenario, "give a scenario name or path, or --all (not both)")
    if args.protocol and not args.all:
        raise ConfigError("--protocol", args.protocol, "selects entries of --all; a named entry has its own")
    folder_arg = getattr(args, "catalogue", None)  # hcc timeline run shares this command, without it
    if folder_arg and not args.all:
        raise ConfigError("--catalogue", folder_arg, "selects the folder of --all")
    if folder_arg:
        folder = Path(folder_arg)
        if not folder.is_dir():
            raise ConfigError("--catalogue", folder_arg, "is not a folder (of scenario TOML files)")
        names = [str(folder / f"{n}.toml") for n in catalogue.names(args.protocol, folder)]
        if not names:
            raise ConfigError("--catalogue", folder_arg, "holds no scenario (*.toml) file")
    else:
        names = catalogue.names(args.protocol) if args.all else [args.scenario]
    world = getattr(args, "world", None)
    if world is None and (getattr(args, "hudi_version", None) or getattr(args, "backend", None)
                          or getattr(args, "time_scale", 1) != 1):
        raise ConfigError("--world", None, "--hudi-version, --backend and --time-scale go with --world hudi")
    entries = [catalogue.load(name, args.set or []) for name in names]  # bad input: exit 2 before any run
    root = claim_out(Path(args.out), args.force) if args.out else None
    failures = 0
    summaries = []
    for entry in entries:
        seed = entry.seed if args.seed is None else args.seed
        out = None if root is None else (root / entry.name if args.all else root)
        if world == "hudi":
            hudi_summary = _run_hudi(entry, seed, out, args)
            summaries.append(hudi_summary)
            if hudi_summary["verdict"] == "not-started":
                return 2  # the server did not start: nothing ran
            failures += not hudi_summary["matches_expectation"]
            continue
        if entry.world == "spark":
            spark_summary = _run_spark(entry, seed, out, args)
            summaries.append(spark_summary)
            failures += not spark_summary["matches_expectation"]
            continue
        started = time.monotonic()
        result = execute_entry(entry, seed, out)
        summaries.append(result.summary())
        if not result.matches_expectation:
            failures += 1
            print(f"seed {seed}: scenario {entry.name} expected {entry.expect}, got {result.verdict.verdict}",
                  file=sys.stderr)
        if args.json:
            continue
        if args.all:
            _print_run_line(result, time.monotonic() - started)
        else:
            _print_one(result)
    if args.json:
        print(json.dumps(summaries if args.all else summaries[0], sort_keys=True))
    elif args.all:
        print(_all_summary(len(entries), failures, root))
    return 1 if failures else 0


def _all_summary(entries: int, failures: int, root: Path | None) -> str:
    """The line ``hcc run --all`` ends with: how many entries gave their expected verdict, and where the
    run folders and their reports are."""
    where = root if root is not None else f"{STORE}/<entry>/latest"
    missed = f"; {failures} did NOT (above)" if failures else ""
    return (f"{entries - failures} of {entries} entries gave their expected verdict{missed}. Run folders, "
            f"each with report.html and report.md: {where}")


def cmd_show(args: argparse.Namespace) -> int:
    """hcc show NAME: the entry with every default filled in, as TOML."""
    print(catalogue.load(args.scenario, args.set or []).to_toml(), end="")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """hcc list: the catalogue, grouped by protocol."""
    for protocol in [args.protocol] if args.protocol else NAMES:
        names = catalogue.names(protocol)
        if not names:
            continue
        print(f"{protocol} ({len(names)})")
        for name in names:
            e = catalogue.load(name)
            first = e.description.splitlines()[0] if e.description else ""
            print(f"  {name:<38} expect={e.expect:<9} {first}")
            print(f"  {'':<38} models: {e.models}")
    return 0


def register(sub: Any) -> None:
    """Add ``run``, ``show`` and ``list``."""
    run = sub.add_parser("run", help="run a catalogue entry (lock, occ, nbcc, explore) or all of them")
    run.add_argument("scenario", nargs="?", help="catalogue name or path to a TOML file")
    run.add_argument("--all", action="store_true", help="run every entry of the catalogue")
    run.add_argument("--protocol", choices=NAMES, help="with --all: only the entries of this protocol")
    run.add_argument("--catalogue", metavar="DIR",
                     help="with --all: run the scenario files of this folder, not the shipped catalogue")
    run.add_argument("--seed", type=int, help="override the entry's seed")
    add_out(run, "a new folder out/runs/NAME/seedN-TIME, linked as out/runs/NAME/latest; with --all a "
                 "parent folder")
    add_set(run)
    add_json(run)
    real = run.add_argument_group("Hudi itself (lock entries): its StorageBasedLockProvider, a JVM per node")
    real.add_argument("--world", choices=("hudi",), help="run in this world instead of the entry's own")
    real.add_argument("--hudi-version", metavar="V",
                      help="the Hudi release whose pinned jars run (default the newest pinned, 1.2.1)")
    add_backend(run, registry.NAMES, required=False)  # --world hudi; default seaweedfs (engines/hudi_world)
    real.add_argument("--time-scale", type=int, default=1, metavar="N",
                      help="divide the entry's times by N (30: Hudi's 300 s lease becomes its 10 s minimum)")
    run.set_defaults(func=cmd_run)

    show = sub.add_parser("show", help="print a catalogue entry with every default filled in")
    show.add_argument("scenario")
    add_set(show)
    show.set_defaults(func=cmd_show)

    lst = sub.add_parser("list", help="list the catalogue, grouped by protocol")
    lst.add_argument("--protocol", choices=NAMES, help="only this protocol's entries")
    lst.set_defaults(func=cmd_list)
