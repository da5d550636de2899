"""``hcc sweep GRID.toml|NAME [--engine spark|local] [--master URL] [--jobs N] [--seeds N] [--out DIR]``.

Runs every (cell, seed) of a grid in the simulated world (on Spark, a few tasks per core with
many runs each; or without Spark with ``--engine local``, in ``--jobs`` worker processes, by default
one per core; the rows are the same either way) and writes under ``--out`` (default
a new folder ``out/sweeps/GRID/TIME``, linked as ``out/sweeps/GRID/latest``; a used ``--out`` is
refused unless ``--force``): ``rows/part-00000.parquet`` (one row per run), ``summary.csv`` and
``summary.json`` (one line per cell) and ``sweep.json`` (what ran, and the row schema).
Exit status: 0 when every run finished, 1 when a run crashed the model (its row says
why), 2 for bad input.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

from cli.options import add_out, add_quiet
from model.config import ConfigError


def register(subparsers: Any) -> None:
    """Add the ``sweep`` subcommand."""
    p = subparsers.add_parser(
        "sweep", help="run a grid of settings x seeds in simulation (Spark or local)",
        description="Run every (cell, seed) of a grid file in the simulated world and write rows (Parquet) "
                    "and a per-cell summary (CSV, JSON).")
    p.add_argument("grid", help="grid name (scenarios/grids) or path to a grid TOML file")
    p.add_argument("--engine", default="spark", help="spark (default) or local (no Spark)")
    p.add_argument("--master", help="Spark master URL (default local[*])")
    p.add_argument("--jobs", type=int, metavar="N",
                   help="--engine local: worker processes (default: the machine's cores; 1: this process)")
    p.add_argument("--seeds", type=int, help="seeds per cell (default: the grid's)")
    p.add_argument("--first-seed", type=int, help="first seed (default: the grid's)")
    add_out(p, "a new folder out/sweeps/GRID/TIME, linked as out/sweeps/GRID/latest", "sweep folder")
    add_quiet(p)
    p.set_defaults(func=run)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        return str(int(value)) if value.is_integer() else f"{value:.3f}"
    return str(value)


def run(args: argparse.Namespace) -> int:
    """Load the grid, run it on the chosen engine, write the outputs and print the per-cell summary."""
    from engines import cells
    from engines.local import TaskFailed, WorkersFailed
    from engines.sweep_engines import open_engine
    from scenarios import grid

    g = grid.load(args.grid)
    tasks = cells.expand(g, args.seeds, args.first_seed)
    seeds = g.seed_list(args.seeds, args.first_seed)
    try:
        from analyses import sweep_summary as summary
    except ImportError as e:
        raise ConfigError("--engine", args.engine, f"sweeps need the spark extra ({e.name} is missing): "
                          "pip install 'hudi-cc-harness[spark]'") from e
    from engines.rundir import SWEEPS, claim_out, link_latest, new_run_dir

    out = claim_out(Path(args.out), args.force) if args.out else new_run_dir(g.name, store=SWEEPS)
    print(f"sweep {g.name}: base {g.scenario}, {len(g.cells())} cells x {len(seeds)} seeds = "
          f"{len(tasks)} runs", file=sys.stderr)
    engine = open_engine(args.engine, args.master, quiet=args.quiet, jobs=args.jobs)
    try:
        started = time.monotonic()
        rows = engine.run(tasks, label=f"sweep {g.name}")
        seconds = time.monotonic() - started
        described = engine.describe()
    except (TaskFailed, WorkersFailed) as e:  # a worker's failure that no row can hold
        print(f"hcc sweep: {e}", file=sys.stderr)
        return 1
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
    from engines.rundir import write_atomic
    from reports.report import write_sweep_report
    from reports.sweep import rows_path

    rows_file = rows_path(out)
    if rows_file is not None:  # the sweep's report (heat map over the first two settings, cell table)
        write_sweep_report(rows_file, write_atomic)
    link_latest(out)
    print(f"{len(rows)} runs in {seconds:.1f}s on {described} -> {out}")
    return 1 if errors else 0
