"""``hcc boundary SCENARIO --param dotted.key --range LO:HI [--seeds N] [--engine spark|local]``.

Bisection over ``[LO, HI]`` for the smallest value of one setting at which a violation
appears.  Each probe is a small sweep: the scenario with the setting at that value, run
with ``--seeds`` seeds (on Spark, or with ``--engine local`` in ``--jobs`` worker processes); a probe
violates when any seed does.  The search assumes the property is monotone in the setting
(safe below some value, unsafe above) and says so when the ends do not fit.

It prints the boundary with its evidence: the violating seed, the first violation, and the
fault schedule at the boundary, shrunk by dropping every other fault that the violation does
not need.  When the setting is a pause length of the RFC-91 lock, it also derives the
boundary by hand from the validity, the renew interval and the 500 ms drift allowance and
explains the difference.

Exit status: 0 when a boundary was found, 1 when the range does not bracket one, 2 for bad input.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any

from analyses.boundary import (
    Prober,
    bisect,
    default_tolerance,
    evidence,
    parse_number,
    parse_range,
    pause_derivation,
)
from cli.options import add_json, add_quiet, add_set
from model.config import ConfigError, describe_faults


def register(subparsers: Any) -> None:
    """Add the ``boundary`` subcommand."""
    p = subparsers.add_parser(
        "boundary",
        help="bisect one setting for the smallest value at which a violation appears",
        description="Bisection over a range of one setting; each probe runs a few seeds (Spark or local).",
    )
    p.add_argument("scenario", help="catalogue name or path to a scenario TOML file")
    p.add_argument(
        "--param", required=True, help="dotted key of the setting, e.g. faults.pauses[0].duration_ms"
    )
    p.add_argument("--range", required=True, dest="range_", metavar="LO:HI", help="the interval to search")
    p.add_argument("--seeds", type=int, default=4, help="seeds per probe (default 4)")
    p.add_argument("--first-seed", type=int, default=1, help="first seed (default 1)")
    p.add_argument("--tolerance", help="stop when the bracket is this narrow (default (HI-LO)/1000)")
    p.add_argument("--engine", default="spark", help="spark (default) or local (no Spark)")
    p.add_argument("--jobs", type=int, metavar="N",
                   help="--engine local: worker processes (default: the machine's cores; 1: this process)")
    p.add_argument("--master", help="Spark master URL (default local[*])")
    add_set(p)
    add_json(p, "one JSON object instead of text")
    add_quiet(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Bisect, print the probes, the boundary, its evidence and (for pauses) the hand derivation."""
    from engines.local import TaskFailed, WorkersFailed
    from engines.sweep_engines import open_engine

    lo, hi = parse_range(args.range_)
    if args.seeds < 1:
        raise ConfigError("--seeds", args.seeds, "must be >= 1")
    tolerance = (
        default_tolerance(lo, hi) if args.tolerance is None else parse_number("--tolerance", args.tolerance)
    )
    if tolerance <= 0:
        raise ConfigError("--tolerance", args.tolerance, "must be > 0")
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    overrides = list(args.set or [])
    prober = Prober(args.scenario, overrides, args.param, seeds, None)
    base = prober.build(lo)  # bad keys and values fail here, before an engine starts
    prober.build(hi)
    out = sys.stderr if args.json else sys.stdout

    def log(line: str) -> None:
        print(line, file=out, flush=True)

    log(
        f"boundary of {args.param} in [{lo}, {hi}] for {base.name}: {len(seeds)} seeds per probe "
        f"({seeds[0]}..{seeds[-1]}), tolerance {tolerance}, engine {args.engine}"
    )
    engine = open_engine(args.engine, args.master, quiet=args.quiet, jobs=args.jobs)
    try:
        prober.engine = engine
        search = bisect(args.param, lo, hi, tolerance, prober, log)
    except (TaskFailed, WorkersFailed) as e:  # a worker's failure that no row can hold
        log(f"hcc boundary: {e}")
        return 1
    finally:
        engine.close()
    result: dict[str, Any] = {
        "scenario": base.name,
        "param": args.param,
        "range": [lo, hi],
        "seeds": seeds,
        "tolerance": tolerance,
        "outcome": search.outcome,
        "boundary": search.unsafe,
        "largest_safe": search.safe,
        "probes": [dataclasses.asdict(p) for p in search.probes],
    }
    code = 0
    if search.outcome == "error":
        errors = search.probes[-1].errors
        log(f"a probe crashed the model: {'; '.join(errors[:3])}")
        code = 1
    elif search.outcome == "none-in-range":
        log(
            f"no violation up to {hi} with seeds {seeds[0]}..{seeds[-1]}: "
            "the range does not bracket a boundary"
        )
        code = 1
    else:
        value = search.unsafe
        assert value is not None
        probe = next(p for p in search.probes if p.value == value)
        ev = evidence(prober, value, min(probe.violating))
        if search.outcome == "violates-at-lo":
            log(f"already violated at the low end {lo}: the boundary is at or below it")
            code = 1
        else:
            log(
                f"boundary: {args.param} = {value}  (smallest violating value found; "
                f"largest safe value tried {search.safe}"
                + (f"; bracket {value - search.safe})" if search.safe is not None else ")")
            )
        log(
            f"evidence: seed {ev.seed} at {args.param} = {value}; "
            f"violating seeds {' '.join(map(str, probe.violating))}"
        )
        log(f"  first violation [{ev.violation.kind}] {ev.violation.message}")
        log("  schedule at the boundary (shrunk):")
        for line in describe_faults(ev.scenario.faults) or ["(no faults)"]:
            log(f"    {line}")
        for line in ev.dropped:
            log(f"    dropped, not needed: {line}")
        derivation = (
            pause_derivation(args.param, value, value - (search.safe or value), ev)
            if search.outcome == "found"
            else None
        )
        for line in derivation or []:
            log(line)
        result["evidence"] = {
            "seed": ev.seed,
            "violation": ev.violation.to_dict(),
            "schedule": describe_faults(ev.scenario.faults),
            "dropped": list(ev.dropped),
            "hand_derivation": derivation,
        }
    if args.json:
        print(json.dumps(result, sort_keys=True))
    return code
