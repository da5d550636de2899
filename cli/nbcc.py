"""``hcc nbcc run``: a MERGE_ON_READ table under NBCC (RFC-66) in the simulated world, checked.

Writers with a bucket index append logs to shared file groups while a compaction service is
scheduled mid-flight; writers fail mid-deltacommit and retry, and a clean after each commit rolls back
the attempts whose heartbeat expired.  ``--variant`` says whose behaviour runs (``hudi``: Hudi's newest
release; ``hudi-1.2.0``; ``pr-19785``; the hypothetical ``pr-19786`` and ``v6-instant-time``:
``model/nbcc/variants.py``), ``--metadata-table`` / ``--storage-listing`` how readers and the compaction
planner list the table.  ``--faults FILE`` takes the ``[faults]`` table of a scenario file (error rules,
lost replies, pauses, cut-offs, crashes; nodes ``w1``..``wN`` write, ``w{N+1}`` compacts, ``w{N+2}``
reads when ``--read-every-ms`` is set).  ``--rule`` (before variants) still works, deprecated: its
old names map to variants (``completion``: ``pr-19786``, ``instant``: ``v6-instant-time``,
``uncommitted-anchor-bug``: ``hudi-1.2.0``), with a note on stderr.  The flags make an ``nbcc`` catalogue
entry (``model/nbcc/config.py``; ``scenarios/catalogue/nbcc-*.toml`` are the shipped ones, run with
``hcc run``), and the run directory is the one every entry gets: ``history.jsonl``,
``verdict.json``, ``metrics.json``, ``scenario.toml``, ``plan.json`` and the table itself under
``table/`` (readable with ``hcc slices OUT/table``).

The table is a Hudi table (version 8, MERGE_ON_READ): hudi-rs lists its file slices; its data
files hold JSON rows, not Parquet and Avro log blocks.

Exit codes: 0 when the verdict is the expected one (``--expect``; by default ``ok`` with the
skew-adjusting generator and a variant whose slicing is safe under the chosen listing: ``pr-19785``,
``pr-19786``, or ``hudi``/``hudi-1.2.0`` with the metadata table; ``violation`` otherwise), 1 when not,
2 for bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

from backends.hudi_table_source import load_table
from cli.options import add_json, add_out
from engines.rundir import execute_entry, prepare_out
from model.config import ConfigError, FaultPlan
from model.nbcc.config import NbccConfig, NbccScenario
from model.nbcc.sim_checks import rel
from model.nbcc.variants import RULE_REPLACEMENTS, VARIANTS
from model.run_format import TABLE
from model.timeline.timegen import GENERATORS
from scenarios.catalogue import Entry
from scenarios.loader import build


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
        "--variant",
        choices=VARIANTS,
        default="hudi",
        help="whose behaviour runs (default hudi: Hudi's newest release; see model/nbcc/variants.py)",
    )
    r.add_argument("--rule", choices=sorted(RULE_REPLACEMENTS),
                   help="deprecated: the variant of an old rule name (completion: pr-19786, instant: "
                        "v6-instant-time, uncommitted-anchor-bug: hudi-1.2.0)")
    listing = r.add_mutually_exclusive_group()
    listing.add_argument("--metadata-table", dest="metadata_table", action="store_true", default=True,
                         help="readers and the planner list through the metadata table (Hudi's default)")
    listing.add_argument("--storage-listing", dest="metadata_table", action="store_false",
                         help="readers and the planner list storage (hoodie.metadata.enable=false)")
    r.add_argument("--heartbeat-interval-ms", type=int, default=60_000,
                   help="hoodie.client.heartbeat.interval_in_ms (default 60000)")
    r.add_argument("--heartbeat-tolerable-misses", type=int, default=-1,
                   help="hoodie.client.heartbeat.tolerable.misses (default -1: the variant's)")
    r.add_argument("--no-clean", dest="auto_clean", action="store_false",
                   help="writers do not clean after commits: failed writes are never rolled back")
    r.add_argument("--read-every-ms", type=int, default=0,
                   help="a snapshot reader reads every that many ms while the writers run (default 0: none)")
    r.add_argument("--read-until-ms", type=int, default=15_000, help="... until that many ms (default 15000)")
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
    add_out(r, "a new folder out/runs/nbcc-VARIANT/seedN-TIME")
    add_json(r, "the summary as JSON")
    r.set_defaults(func=run)


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


def scenario_of(args: argparse.Namespace) -> NbccScenario:
    """The flags as an ``nbcc`` catalogue entry (what ``scenario.toml`` of the run keeps)."""
    if args.rule:  # the flag's old names map to variants (a scenario file's nbcc.rule is refused instead)
        args.variant = RULE_REPLACEMENTS[args.rule]
        print(f"hcc nbcc run: --rule {args.rule} is deprecated: running --variant {args.variant}",
              file=sys.stderr)
    faults = load_faults(args.faults) if args.faults else FaultPlan()
    safe = args.variant in ("pr-19785", "pr-19786") or (
        args.variant.startswith("hudi") and args.metadata_table)
    expect = args.expect or ("ok" if safe and args.time_generator == "skew-adjusting" else "violation")
    scenario = NbccScenario(
        name=f"nbcc-{args.variant}", description="hcc nbcc run", seed=args.seed, expect=expect,
        nbcc=NbccConfig(writers=args.writers, batches=args.batches, buckets=args.buckets,
                        compactions=args.compactions, fail_prob=args.fail_prob, variant=args.variant,
                        metadata_table=args.metadata_table, time_generator=args.time_generator,
                        heartbeat_interval_ms=args.heartbeat_interval_ms,
                        heartbeat_tolerable_misses=args.heartbeat_tolerable_misses,
                        auto_clean=args.auto_clean,
                        read_every_ms=args.read_every_ms,
                        read_until_ms=args.read_until_ms if args.read_every_ms else 0),
        faults=faults)
    try:
        scenario.validate()
    except ConfigError as e:  # name the flag, not the scenario file's field (nbcc.fail_prob -> --fail-prob)
        if e.field.startswith("nbcc."):
            flag = "--" + e.field.removeprefix("nbcc.").replace("_", "-")
            raise ConfigError(flag, e.value, e.reason) from None
        raise
    return scenario


def run(args: argparse.Namespace) -> int:
    """Run, check, write the run directory (as ``hcc run`` does), print the verdict; return the exit code."""
    scenario = scenario_of(args)
    out = prepare_out(args.out, force=args.force, name=scenario.name, seed=args.seed)
    result = execute_entry(Entry("nbcc", scenario), args.seed, out)
    summary = {k: v for k, v in result.summary().items() if k != "metrics"}
    summary |= {"variant": scenario.nbcc.variant, "rule": scenario.nbcc.slicing_rule.value,
                "metadata_table": scenario.nbcc.metadata_table, "models": scenario.models(),
                "time_generator": scenario.nbcc.time_generator, **result.metrics}
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=True))
    else:
        table = load_table(out / TABLE, with_metadata=False)
        _print(summary, table.timeline.instants)
    return 0 if result.matches_expectation else 1


def _print(summary: dict[str, Any], instants: Any) -> None:
    print(
        f"nbcc seed={summary['seed']} variant={summary['variant']} "
        f"time-generator={summary['time_generator']}: "
        f"verdict={summary['verdict']} (expected {summary['expect']})"
    )
    print(f"  models: {summary['models']}")
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
