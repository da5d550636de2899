"""``hcc differential lock``: the lock model against Hudi's own provider, on generated schedules;
``hcc differential writers ENTRY``: the OCC model against Hudi's own Spark writers on an entry's plan.

Hypothesis draws schedules (2-3 nodes calling tryLock, unlock and close, with gaps in which a holder's
heartbeat renews, storage faults from the bug search's fault space, clock offsets within 500 ms); each
runs in the thread world with the model's provider and in the hudi world with Hudi's
(``--hudi-version``, its pinned jars, a JVM per node kept across schedules), against the same launched
server, and what each side did is compared: each call's outcome, the requests each call sent, the
heartbeat's requests by kind, the lock file and the audit trail left (:mod:`analyses.lock_differential`;
its ``DECLARED`` divergences, what real time cannot pin, are left out and printed with their reasons).
The first divergence is shrunk to a smallest schedule, printed as both sides' step tables and written to
``OUT/schedule.json``, which ``--replay FILE`` runs again on both sides.

``writers ENTRY`` runs the OCC entry's plan on Hudi's Spark writers (``hcc contention ENTRY --world
hudi``; ``--run DIR`` judges a run already made) and asks the model about the schedule Hudi ran: each
attempt's commit or abort by the model's conflict check, and the final rows by the model's reader
(:mod:`analyses.writers_differential`). An NBCC entry's run is judged on its table: every deltacommit
committed, the model's file slices against Hudi 1.2.0's and 1.2.1's own, the final rows
(:mod:`analyses.nbcc_writers_differential`). Then one extra Spark process (the hudi env) reads the finished
table as of each sampled completed instant and incrementally between them (``reads.json``,
:mod:`engines.hudi_spark.reads`), compared with the model's reader and hudi-rs
(:mod:`analyses.writers_reads`). The differences name the fidelity rows they contradict.

Exit status: 0 no divergence (in ``--examples`` schedules); 1 a divergence (the search seed is printed);
2 bad input (an unknown version, a missing JDK, a server that does not start, an entry Hudi cannot run).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from backends import registry
from backends.hudi.artifacts import check_version, default_version
from backends.launchers.process import LaunchError, Unavailable
from cli.options import add_backend, add_json, add_out
from engines.rundir import RunWriter, prepare_out, write_atomic
from model.config import ConfigError
from model.run_format import DIFFERENTIAL, PROXY_LOG, READS


def register(subparsers: Any) -> None:
    """Add ``differential``."""
    p = subparsers.add_parser(
        "differential", help="the lock model against Hudi's own provider on generated schedules; the OCC "
                             "model against Hudi's Spark writers on an entry's plan",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("protocol", choices=("lock", "writers"),
                   help="what to compare: lock (the lock provider) or writers (OCC commits, NBCC "
                        "deltacommits)")
    p.add_argument("entry", nargs="?", help="writers: the OCC or NBCC catalogue entry (name or path)")
    p.add_argument("--run", metavar="DIR", help="writers: judge this hudi run directory instead of running")
    p.add_argument("--max-ops", type=int, default=3,
                   help="writers: each writer's first N operations (default 3)")
    add_backend(p, registry.NAMES, default="seaweedfs")
    p.add_argument("--hudi-version", metavar="V",
                   help="the Hudi release whose jars run (default the newest)")
    p.add_argument("--examples", type=int, default=20, help="schedules to generate (default 20)")
    p.add_argument("--seed", type=int, default=0,
                   help="the search seed (the same seed draws the same schedules)")
    p.add_argument("--shrink-seconds", type=float, default=300.0,
                   help="time given to shrinking a divergence (default 300)")
    p.add_argument("--replay", metavar="FILE",
                   help="run this schedule.json on both sides instead of searching")
    add_out(p, "out/differential/lock-SEED-TIME", "output folder")
    add_json(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the command; returns the exit code."""
    if args.protocol == "writers":
        return _run_writers(args)
    if args.entry or args.run:
        raise ConfigError("entry", args.entry or args.run, "differential lock takes no entry or --run")
    version = check_version(args.hudi_version or default_version())
    if args.examples <= 0:
        raise ConfigError("--examples", args.examples, "must be > 0")
    try:
        registry.validate(args.backend)
    except ValueError as e:
        raise ConfigError("--backend", args.backend, str(e)) from e
    from analyses import lock_differential as ld

    schedule = None
    if args.replay:
        try:
            schedule = ld.Schedule.from_json(Path(args.replay).read_text())
        except (OSError, ValueError) as e:
            raise ConfigError("--replay", args.replay, str(e)) from e
    out = prepare_out(args.out, force=args.force, name=f"differential-lock-{version}", seed=args.seed)
    started = time.monotonic()

    def progress(i: int, s: Any, found: list[Any]) -> None:
        if not args.json:
            mark = f"{len(found)} divergences" if found else "same"
            print(f"schedule {i}: {len(s.steps)} steps, {len(s.faults)} faults: {mark} "
                  f"({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)

    try:
        with registry.open_endpoint(args.backend) as ep:
            if ep.kind not in ("s3", "azure"):
                raise ConfigError("--backend", args.backend,
                                  "the differential test compares S3 and Azure requests only (GCS: the hudi "
                                  "world runs it, but the comparison does not yet normalise its multipart "
                                  "uploads and Hudi's two-GET reads)")
            if schedule is not None:
                found = ld.replay(schedule, ep, version=version, log_dir=out)
                result = ld.SearchResult(1, time.monotonic() - started, found if found.divergences else None)
            else:
                result = ld.search(ep, version=version, examples=args.examples, seed=args.seed, log_dir=out,
                                   shrink_seconds=args.shrink_seconds, on_example=progress)
    except (Unavailable, LaunchError) as e:
        print(f"hcc differential: backend {args.backend} did not start: {e}", file=sys.stderr)
        return 2
    summary: dict[str, Any] = {
        "hudi_version": version, "seed": args.seed, "examples": result.examples,
        "seconds": round(result.seconds, 1),
        "schedules_per_minute": round(60 * result.examples / result.seconds, 1) if result.seconds else None,
        "divergent": result.found is not None, "shrink_stopped": result.shrink_stopped,
        "flaky": result.flaky, "jvm_rss_mb": result.jvm_rss_mb,
        "declared": ld.DECLARED, "out": str(out)}
    lines = [f"hcc differential lock: Hudi {version} (real) against the model, {result.examples} schedules "
             f"in {result.seconds:.0f} s, seed {args.seed}"]
    if result.found is not None:
        f = result.found
        write_atomic(out / "schedule.json", f.schedule.to_json() + "\n")
        summary["divergences"] = [d.line() for d in f.divergences]
        again = " (it did not come back when the schedule ran again: a timing window)" if result.flaky else ""
        lines += [f"DIVERGENT (smallest schedule kept){again}:", *f.schedule.lines(),
                  *ld.step_table(f.schedule, f.model), *ld.step_table(f.schedule, f.hudi),
                  *(f"  divergence: {d.line()}" for d in f.divergences),
                  f"replay: hcc differential lock --replay {out / 'schedule.json'} --hudi-version {version}"]
    else:
        lines.append("no divergence")
    lines += [f"declared (left out): {k}: {v}" for k, v in ld.DECLARED.items()]
    write_atomic(out / "summary.json", json.dumps(summary, indent=1, sort_keys=True) + "\n")
    write_atomic(out / "report.txt", "\n".join(lines) + "\n")
    print(json.dumps(summary, sort_keys=True) if args.json else "\n".join(lines))
    if result.found is not None:
        print(f"seed {args.seed}: a divergence (hcc differential lock --seed {args.seed})", file=sys.stderr)
    return 1 if result.found is not None else 0


def _run_writers(args: argparse.Namespace) -> int:
    """``differential writers``: run (or take) a Hudi run of an OCC or NBCC entry and compare the model with
    it."""
    from analyses.nbcc_writers_differential import judge_run
    from engines.hudi_spark.nbcc_plans import hudi_plans, load_entry
    from engines.hudi_spark.reads import ensure_reads
    from reports.load import RunDirError, load_writers_file, load_writers_plan, load_writers_run

    if not args.entry:
        raise ConfigError("entry", None, "differential writers needs an OCC or NBCC catalogue entry")
    entry = load_entry("entry", args.entry)
    if args.run:
        out = Path(args.run)
        try:
            ran = _run_entry(load_writers_run(out).scenario)
            load_writers_file(out, READS)  # Hudi's reads an earlier judgement added, if any, as declared
            load_writers_plan(out)  # the writers' plans, whose table the judgement reads, as declared
            proxy_log = load_writers_file(out, PROXY_LOG)
        except RunDirError as e:
            raise ConfigError("--run", args.run, f"not a run of Hudi's Spark writers as declared (model/"
                                                 f"run_format.py): {e.reason}") from None
        if proxy_log is None:
            raise ConfigError("--run", args.run, f"a run of Hudi's Spark writers without its {PROXY_LOG}")
        if ran is not None and ran != entry.config.name:
            raise ConfigError("--run", args.run, f"a run of {ran}, not of {entry.config.name}")
    else:
        from engines.hudi_spark.run import run as run_hudi

        protocol, plans = hudi_plans(entry, args.max_ops)
        version = check_version(args.hudi_version or "1.2.0")
        out = prepare_out(args.out, force=args.force, name=f"differential-writers-{entry.name}",
                          seed=entry.seed)
        run_hudi(out, version=version, entry=plans, scenario_toml=entry.to_toml(), protocol=protocol)
    why_not = ensure_reads(out)  # Hudi's time-travel and incremental reads: one extra Spark process
    if why_not:
        print(f"hcc differential: {why_not}", file=sys.stderr)
    result = judge_run(entry, out)
    RunWriter.after_run(out).write_text(DIFFERENTIAL, json.dumps(result, indent=1, sort_keys=True))
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        PRINTERS[entry.protocol](result, out)
    return 0 if result["agree"] else 1


def _print_occ(result: dict[str, Any], out: Path) -> None:
    for a in result["attempts"]:
        print(f"  {a['process']} batch {a['batch']} instant {a['instant']}: Hudi {a['hudi']}, "
              f"model {a['model']}{'' if a['agrees'] else '  <- differs'}")
    rows = "the same" if not any(d["kind"] == "final-rows" for d in result["differences"]) else "differ"
    print(f"final rows: Hudi's reader and the model's reader {rows} ({len(result['model_rows'])} rows)")
    rs = "differ" if any(d["kind"] == "final-rows-hudi-rs" for d in result["differences"]) else "the same"
    print(f"hudi-rs: {result['hudi_rs']}" + ("" if result["hudi_rs_rows"] is None else f": rows {rs}"))
    for n in result["notes"]:  # a call that failed after its commit, ...
        print(f"note: {n}")
    _print_reads(result)
    print(f"{len(result['differences'])} differences; written to {out / DIFFERENTIAL}")


def _print_nbcc(result: dict[str, Any], out: Path) -> None:
    outcomes = [f"{a['process']} batch {a['batch']}: {a['outcome']}" for a in result["attempts"]]
    print("deltacommits: " + ", ".join(outcomes))
    for d in result["differences"]:
        print(f"  difference: {d['kind']} {d.get('version', '')} {d.get('view', '')} "
              f"{d.get('file_id', d.get('process', ''))} (fidelity {d['fidelity']})")
    print(f"hidden file groups by release: {result['hidden']}")
    print(f"hudi-rs: {result['hudi_rs']}")
    for n in result["notes"]:
        print(f"note: {n}")
    _print_reads(result)
    print(f"{len(result['differences'])} differences; written to {out / DIFFERENTIAL}")


def _print_reads(result: dict[str, Any]) -> None:
    """The time-travel and incremental reads: per kind how many points Hudi's reader and the model's agree
    at, the declared and differing ones, and hudi-rs's notes."""
    for kind, name in (("as_of", "time travel"), ("incremental", "incremental")):
        points = [r for r in result["reads"] if r["kind"] == kind]
        if points:
            n = {o: sum(1 for r in points if r["outcome"] == o) for o in ("agree", "declared", "differs")}
            rs = sum(1 for r in points if r.get("hudi_rs_agrees"))
            print(f"{name}: {len(points)} points: Hudi's reader and the model's agree at {n['agree']}, "
                  f"declared {n['declared']}, differ {n['differs']}; hudi-rs reads Hudi's rows at {rs}")
    for d in result["read_declared"]:
        print(f"  declared: {d['point']}: {d['why']}")
    for d in result["read_differences"]:
        print(f"  difference: {d['point']}: Hudi only {d['hudi_only']}, model only {d['model_only']}"
              f"{' (' + d['why'] + ')' if d.get('why') else ''} (fidelity {d['fidelity']})")
    for n in result["read_notes"]:
        print(f"note: {n}")


# what `differential writers` prints of a run of each protocol's entry
PRINTERS = {"occ": _print_occ, "nbcc": _print_nbcc}


def _run_entry(scenario: dict[str, Any]) -> str | None:
    """The entry a hudi run directory ran (its ``scenario.toml``'s ``hudi.entry``), None when unknown."""
    entry = scenario.get("hudi", {}).get("entry")
    return str(entry) if entry else None
