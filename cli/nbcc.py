"""``hcc nbcc run``: a MERGE_ON_READ table under NBCC (RFC-66) in the simulated world, checked.

Writers with a bucket index append logs to shared file groups while a compaction service is
scheduled mid-flight; writers fail mid-deltacommit and retry.  The history and the final table are
checked with the slicing rule given by ``--rule`` plugged into every reader view.  ``--faults FILE``
takes the ``[faults]`` table of a scenario file (error rules, lost replies, pauses, cut-offs,
crashes; nodes ``w1``..``wN`` write, ``w{N+1}`` compacts).  The run
directory (``--out``) gets ``history.jsonl``, ``verdict.json``, ``plan.json`` and the table itself
under ``table/`` (readable with ``hcc slices OUT/table``).

The table is a Hudi table (version 8, MERGE_ON_READ): hudi-rs lists its file slices; its data
files hold JSON rows, not Parquet and Avro log blocks.

Exit codes: 0 when the verdict is the expected one (``ok`` for the completion-time rule with the
skew-adjusting generator, ``violation`` otherwise, or ``--expect``), 1 when not, 2 for bad input.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import tomllib
from pathlib import Path
from typing import Any

from engines.rundir import link_latest, marks_interrupted, prepare_out, write_json, write_table
from model.config import ConfigError, FaultPlan
from model.history import Event
from model.nbcc.sim_checks import check_history, rel
from model.nbcc.sim_table import random_plan, run_table
from model.nbcc.slicing import Rule
from model.timeline.timegen import GENERATORS
from scenarios.loader import build

RULES = {
    "completion": Rule.COMPLETION_TIME,
    "instant": Rule.INSTANT_TIME,
    "uncommitted-anchor-bug": Rule.UNCOMMITTED_ANCHOR_BUG,
}


def register(subparsers: Any) -> None:
    """Add ``nbcc run`` to the hcc subparsers."""
    p = subparsers.add_parser("nbcc", help="simulate a MOR table under NBCC and check its file slicing")
    sub = p.add_subparsers(dest="nbcc_command", required=True)
    r = sub.add_parser(
        "run",
        help="one simulated run, checked",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("--writers", type=int, default=3, help="concurrent writers (default 3)")
    r.add_argument("--seed", type=int, default=1, help="seed of the plan and the network (default 1)")
    r.add_argument(
        "--rule",
        choices=sorted(RULES),
        default="completion",
        help="slicing rule of the readers (default completion)",
    )
    r.add_argument(
        "--time-generator",
        choices=GENERATORS,
        default="skew-adjusting",
        help="skew-adjusting (under the table lock, RFC-66), monotonic (CAS counter, no lock: unsafe) "
        "or local-clock (no lock: unsafe)",
    )
    r.add_argument("--batches", type=int, default=4, help="deltacommits per writer (default 4)")
    r.add_argument("--buckets", type=int, default=3, help="file groups / buckets (default 3)")
    r.add_argument("--compactions", type=int, default=3, help="compaction slots (default 3)")
    r.add_argument("--fail-prob", type=float, default=0.25, help="chance a batch has injected failures")
    r.add_argument("--faults", metavar="FILE", help="a TOML file whose [faults] table is the fault plan")
    r.add_argument("--expect", choices=("ok", "violation"), help="expected verdict (see the exit codes)")
    r.add_argument("--out", help="run directory, new or empty "
                                 "(default: a new folder out/runs/nbcc-RULE/seedN-TIME)")
    r.add_argument("--force", action="store_true", help="replace the run in a used --out folder")
    r.add_argument("--json", action="store_true", help="print the summary as JSON")
    r.set_defaults(func=run)


def _check_args(args: argparse.Namespace) -> None:
    if not 1 <= args.writers <= 16:
        raise ConfigError("--writers", args.writers, "must be between 1 and 16")
    for name in ("batches", "buckets"):
        if getattr(args, name) < 1:
            raise ConfigError(f"--{name}", getattr(args, name), "must be >= 1")
    if args.compactions < 0:
        raise ConfigError("--compactions", args.compactions, "must be >= 0")
    if not 0.0 <= args.fail_prob <= 1.0:
        raise ConfigError("--fail-prob", args.fail_prob, "must be in [0, 1]")


def load_faults(path: str) -> FaultPlan:
    """The ``[faults]`` table of a TOML file; ConfigError names the file or the field."""
    try:
        raw = tomllib.loads(Path(path).read_text())
    except OSError as e:
        raise ConfigError("--faults", path, f"cannot be read: {e.strerror}") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError("--faults", path, f"is not valid TOML: {e}") from e
    faults = raw.get("faults", {})
    if not isinstance(faults, dict):
        raise ConfigError("faults", faults, "must be a table")
    plan: FaultPlan = build(FaultPlan, faults, "faults")
    return plan


def run(args: argparse.Namespace) -> int:
    """Run, check, write the run directory, print the verdict; return the exit code."""
    _check_args(args)
    faults = load_faults(args.faults) if args.faults else None
    rule = RULES[args.rule]
    plan = random_plan(
        random.Random(args.seed),
        args.writers,
        args.batches,
        args.buckets,
        compactions=args.compactions,
        fail_prob=args.fail_prob,
        time_generator=args.time_generator,
        faults=faults,
    )
    plan.validate()
    out = prepare_out(args.out, force=args.force, name=f"nbcc-{args.rule}", seed=args.seed)
    out.mkdir(parents=True, exist_ok=True)
    marker = {"seed": args.seed, "rule": rule.value, "time_generator": args.time_generator}
    with marks_interrupted(out, marker), \
            open(out / "history.jsonl", "w") as history:

        def sink(event: Event) -> None:
            history.write(event.to_json() + "\n")
            history.flush()

        result = run_table(plan, args.seed, sink)
    verdict = check_history(result.events, result.objects, plan.base, rule)
    expect = args.expect or (
        "ok" if rule is Rule.COMPLETION_TIME and args.time_generator == "skew-adjusting" else "violation"
    )
    table = result.table()
    summary = {
        "seed": args.seed,
        "rule": rule.value,
        "time_generator": args.time_generator,
        "expect": expect,
        "matches_expectation": verdict.verdict == expect,
        "out": str(out),
        "instants": len(table.timeline.instants),
        "completed": len(table.timeline.completed()),
        "compactions": sum(1 for i in table.timeline.instants if i.requested_action == "compaction"),
        "file_groups": len(table.groups),
        "log_files": sum(len(g.log_files) for g in table.groups),
        **verdict.to_dict(),
    }
    write_json(out / "plan.json", dataclasses.asdict(plan))
    write_json(out / "verdict.json", summary)
    write_table(out, result.objects, plan.base + "/")
    link_latest(out)
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=True))
    else:
        _print(summary, table.timeline.instants)
    return 0 if verdict.verdict == expect else 1


def _print(summary: dict[str, Any], instants: Any) -> None:
    print(
        f"nbcc seed={summary['seed']} rule={summary['rule']} time-generator={summary['time_generator']}: "
        f"verdict={summary['verdict']} (expected {summary['expect']})"
    )
    print(
        f"  {summary['instants']} instants ({summary['completed']} completed), {summary['compactions']} "
        f"compaction(s), {summary['file_groups']} file groups, {summary['log_files']} log files"
    )
    for inst in instants:
        print(
            f"    {rel(inst.requested):>8} {inst.requested_action:<12} {inst.state.value:<9} "
            f"done {rel(inst.completed)}"
        )
    for v in summary["violations"]:
        print(f"  VIOLATION {v['kind']}: {v['message']} (events {v['events']})")
    print(f"  history, verdict and table in {summary['out']}")
