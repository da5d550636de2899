"""``hcc sweep GRID.toml|NAME [--engine spark|local] [--master URL] [--seeds N] [--out DIR]``, and
``hcc contention [SCENARIO] --backend NAME [--workload lock|occ|nbcc] [--duration-ms N] [--master URL]``.

Runs every (cell, seed) of a grid in the simulated world (one Spark task each, or all in
this process with ``--engine local``) and writes under ``--out`` (default
``out/sweeps/GRID``): ``rows/part-00000.parquet`` (one row per run), ``summary.csv`` and
``summary.json`` (one line per cell) and ``sweep.json`` (what ran, and the row schema).
Exit status: 0 when every run finished, 1 when a run crashed the model (its row says
why), 2 for bad input.

``hcc contention`` launches a real backend, runs each writer of a lock scenario as one
Spark task against it (see :mod:`scenarios.sweep.contention`), and writes a run directory
like ``hcc run``'s; exit 0 when the verdict is the scenario's expected one.  A timeline
scenario (a file with a ``[timeline]`` table, or a name in ``scenarios/timeline``) runs its
copy-on-write commits instead (``--workload occ``), and ``--workload nbcc`` runs ``--writers``
NBCC deltacommit writers and a compaction service (no scenario file); see
:mod:`scenarios.sweep.contention_commits`.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from pathlib import Path
from typing import Any

from model.config import ConfigError, Scenario


def register(subparsers: Any) -> None:
    """Add the ``sweep`` subcommand."""
    p = subparsers.add_parser(
        "sweep", help="run a grid of settings x seeds in simulation (Spark or local)",
        description="Run every (cell, seed) of a grid file in the simulated world and write rows (Parquet) "
                    "and a per-cell summary (CSV, JSON).")
    p.add_argument("grid", help="grid name (scenarios/grids) or path to a grid TOML file")
    p.add_argument("--engine", default="spark", help="spark (default) or local (one process)")
    p.add_argument("--master", help="Spark master URL (default local[*])")
    p.add_argument("--seeds", type=int, help="seeds per cell (default: the grid's)")
    p.add_argument("--first-seed", type=int, help="first seed (default: the grid's)")
    p.add_argument("--out", help="output folder (default out/sweeps/GRID)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=run)

    c = subparsers.add_parser(
        "contention", help="Spark tasks as writers (lock, OCC commits or NBCC) against a launched backend",
        description="Launch BACKEND, run each writer of SCENARIO as one Spark task against it for "
                    "--duration-ms, then merge the histories, check them and print the contention metrics. "
                    "A timeline scenario runs OCC commits; --workload nbcc runs NBCC writers and a "
                    "compaction service.")
    c.add_argument("scenario", nargs="?",
                   help="lock scenario (catalogue name or path) or timeline scenario (scenarios/timeline "
                        "name or path); none for --workload nbcc")
    c.add_argument("--workload", choices=("lock", "occ", "nbcc"),
                   help="lock: the lock workload; occ: timeline commits; nbcc: NBCC deltacommits and "
                        "compaction (default: occ for a timeline scenario, else lock)")
    c.add_argument("--writers", type=int,
                   help="writers (default: the scenario's; 3 for nbcc, which adds a compaction service)")
    c.add_argument("--backend", required=True, help="a launcher name: fake-gcs, moto, azurite, minio, ...")
    c.add_argument("--duration-ms", type=int, default=30_000, help="how long the writers run (default 30000)")
    c.add_argument("--master", help="Spark master URL (default local[W] for W writers)")
    c.add_argument("--seed", type=int, help="seed of the writers' random choices (default: the scenario's)")
    c.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a field of the scenario")
    c.add_argument("--out", help="run directory (history.jsonl, verdict.json, metrics.json, scenario.toml)")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    c.set_defaults(func=run_contention_cmd)


def is_timeline_scenario(name_or_path: str) -> bool:
    """True for a name in ``scenarios/timeline`` or a TOML file with a ``[timeline]`` table."""
    import tomllib

    from scenarios import cmd_timeline

    try:
        path = cmd_timeline.resolve(name_or_path)
        return "timeline" in tomllib.loads(path.read_text())
    except (ConfigError, OSError, tomllib.TOMLDecodeError):
        return False


def run_contention_cmd(args: argparse.Namespace) -> int:
    """hcc contention [SCENARIO] --backend NAME: exit 0 when the verdict is the expected one."""
    import json

    from scenarios import loader

    workload = args.workload
    if workload is None:
        workload = "occ" if args.scenario and is_timeline_scenario(args.scenario) else "lock"
    if workload != "nbcc" and not args.scenario:
        raise ConfigError("scenario", None, f"--workload {workload} needs a scenario name or path")
    if workload == "nbcc" and (args.scenario or args.set):
        raise ConfigError("scenario", args.scenario or args.set,
                          "--workload nbcc takes no scenario file or --set (use --writers, --seed)")
    overrides = list(args.set or []) + ([f"workload.writers={args.writers}"] if args.writers else [])
    out = Path(args.out) if args.out else None
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


def run_spark_commits(workload: str, scenario_name: str | None, backend: str, duration_ms: int, *,
                      master: str | None = None, seed: int | None = None, out: Path | None = None,
                      overrides: list[str] | None = None, writers: int | None = None) -> dict[str, Any]:
    """OCC commits of a timeline scenario, or NBCC writers, as Spark tasks on ``backend``; write the run dir.

    Returns the summary (verdict, expectation, metrics).  NBCC is expected to be violation-free.
    """
    import tomli_w

    from scenarios import cmd_timeline
    from scenarios.rundir import HISTORY, METRICS, SCENARIO, VERDICT, write_atomic, write_json
    from scenarios.sweep.contention_commits import NbccSettings, check_occ_scenario, run_nbcc, run_occ
    from scenarios.sweep.engine_spark import SparkEngine, SparkUnavailable

    if duration_ms <= 0:
        raise ConfigError("--duration-ms", duration_ms, "must be > 0")
    if workload == "occ":
        assert scenario_name is not None
        ts = cmd_timeline.load(scenario_name, overrides or [])
        check_occ_scenario(ts)
        tasks, name, expect = ts.scenario.workload.writers, ts.name, ts.scenario.expect
        settings_toml = cmd_timeline.to_toml(ts)
    else:
        settings = NbccSettings(writers=3 if writers is None else writers, seed=1 if seed is None else seed)
        settings.validate()
        tasks, name, expect = settings.writers + 1, f"nbcc-{settings.writers}w", "ok"
        settings_toml = tomli_w.dumps({"workload": "nbcc", "duration_ms": duration_ms,
                                       **dataclasses.asdict(settings)})
    try:
        session = _start(master, tasks)
    except SparkUnavailable as e:
        raise ConfigError("--master", master, str(e)) from e
    out = out or Path("out") / "contention" / f"{name}-{backend}"
    try:
        engine = SparkEngine(session=session)
        if workload == "occ":
            result = run_occ(ts, backend, engine, duration_ms=duration_ms, seed=seed, log_dir=out / "logs")
        else:
            result = run_nbcc(settings, backend, engine, duration_ms=duration_ms, log_dir=out / "logs")
    finally:
        session.stop()
    write_atomic(out / HISTORY, "".join(e.to_json() + "\n" for e in result.events))
    write_atomic(out / SCENARIO, settings_toml)
    write_json(out / METRICS, result.metrics)
    summary = {"scenario": name, "workload": workload, "backend": backend, "expect": expect,
               "matches_expectation": result.verdict.verdict == expect, "seed": seed, "writers": tasks,
               "duration_ms": duration_ms, "out": str(out), **result.verdict.to_dict()}
    write_json(out / VERDICT, summary)
    return {**summary, "metrics": result.metrics}


def _start(master: str | None, tasks: int) -> Any:
    from scenarios.sweep.engine_spark import start_session

    return start_session(master or f"local[{tasks}]", app_name="hcc-contention")


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


def run_spark_world(scenario: Scenario, backend: str, duration_ms: int, *, master: str | None = None,
                    seed: int | None = None, out: Path | None = None) -> dict[str, Any]:
    """Run a scenario's writers as Spark tasks against ``backend``; write the run dir; return its summary.

    This is ``hcc contention`` and ``hcc run`` of a scenario with ``world = "spark"``.
    """
    from scenarios import loader
    from scenarios.rundir import HISTORY, METRICS, SCENARIO, VERDICT, write_atomic, write_json
    from scenarios.sweep.contention import run_contention
    from scenarios.sweep.engine_spark import SparkEngine, SparkUnavailable

    if duration_ms <= 0:
        raise ConfigError("--duration-ms", duration_ms, "must be > 0")
    writers = scenario.workload.writers
    try:
        session = _start(master, writers)
    except SparkUnavailable as e:
        raise ConfigError("--master", master, str(e)) from e
    out = out or Path("out") / "contention" / f"{scenario.name}-{backend}"
    try:
        engine = SparkEngine(session=session)
        result = run_contention(scenario, backend, engine, seed=seed, duration_ms=duration_ms,
                                log_dir=out / "logs")
    finally:
        session.stop()
    write_atomic(out / HISTORY, "".join(e.to_json() + "\n" for e in result.events))
    write_atomic(out / SCENARIO, loader.to_toml(result.scenario))
    write_json(out / METRICS, result.metrics)
    summary = {"scenario": scenario.name, "backend": backend, "expect": scenario.expect,
               "matches_expectation": result.verdict.verdict == scenario.expect, "seed": seed,
               "writers": writers, "duration_ms": duration_ms, "out": str(out),
               **result.verdict.to_dict()}
    write_json(out / VERDICT, summary)
    from reports.report import write_report

    write_report(out, write_atomic, required=False)  # every contention run of the lock gets its report
    return {**summary, "metrics": result.metrics}


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


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        return str(int(value)) if value.is_integer() else f"{value:.3f}"
    return str(value)


def run(args: argparse.Namespace) -> int:
    """Load the grid, run it on the chosen engine, write the outputs and print the per-cell summary."""
    from scenarios.sweep import cells, grid, open_engine

    g = grid.load(args.grid)
    tasks = cells.expand(g, args.seeds, args.first_seed)
    seeds = g.seed_list(args.seeds, args.first_seed)
    try:
        from scenarios.sweep import summary
    except ImportError as e:
        raise ConfigError("--engine", args.engine, f"sweeps need the spark extra ({e.name} is missing): "
                          "pip install 'hudi-cc-harness[spark]'") from e
    out = Path(args.out) if args.out else Path("out") / "sweeps" / g.name
    print(f"sweep {g.name}: base {g.scenario}, {len(g.cells())} cells x {len(seeds)} seeds = "
          f"{len(tasks)} runs", file=sys.stderr)
    engine = open_engine(args.engine, args.master, quiet=args.quiet)
    try:
        started = time.monotonic()
        rows = engine.run(tasks, label=f"sweep {g.name}")
        seconds = time.monotonic() - started
        described = engine.describe()
    finally:
        engine.close()
    meta = {"grid": g.name, "source": g.source, "scenario": g.scenario, "keys": g.keys,
            "base": [f"{k}={grid.toml_literal(v)}" for k, v in g.base], "seeds": seeds,
            "engine": described, "runs": len(rows), "seconds": round(seconds, 3)}
    _, table = summary.write_outputs(out, rows, g.keys, g.kinds(), meta)
    cols = ["cell", *g.keys, "runs", "violating_runs", "violation_rate", "ci_low", "ci_high",
            "acquire_latency_p50_ms", "acquire_latency_p99_ms", "errors"]
    widths = [max(len(c), *(len(_fmt(v)) for v in table[c])) for c in cols]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)))
    for _, line in table.iterrows():
        print("  ".join(_fmt(line[c]).ljust(w) for c, w in zip(cols, widths, strict=True)))
    errors = [r for r in rows if r["verdict"] == "error"]
    for r in errors[:5]:
        print(f"error: cell {r['cell']} seed {r['seed']}: {r['error']}", file=sys.stderr)
    from reports.report import write_sweep_report
    from reports.sweep import rows_path
    from scenarios.rundir import write_atomic

    rows_file = rows_path(out)
    if rows_file is not None:  # the sweep's report (heat map over the first two settings, cell table)
        write_sweep_report(rows_file, write_atomic)
    print(f"{len(rows)} runs in {seconds:.1f}s on {described} -> {out}")
    return 1 if errors else 0
