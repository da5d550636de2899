"""``hcc report RUN_DIR [--format html,md,json]``: write the report of a run directory, of each run in a
folder of runs (``hcc run --all --out DIR``), or of a sweep (a folder with rows.parquet or rows.csv, see
reports/sweep.py for the columns; ``--x``/``--y`` choose the heat map's settings)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from engines.rundir import write_atomic


def register(subparsers: Any) -> None:
    """Add the ``report`` subcommand."""
    p = subparsers.add_parser("report", help="write report.html, report.md and report.json for a run")
    p.add_argument("run_dir", nargs="?", default="out/runs/latest",
                   help="a run directory, a folder holding one run directory per scenario, or a folder of "
                        "the store (its latest runs); default out/runs/latest, the newest run")
    p.add_argument("--format", default="html,md,json", help="comma-separated: html, md, json")
    p.add_argument("--x", help="sweeps: the setting on the heat map's x axis (dotted key)")
    p.add_argument("--y", help="sweeps: the setting on the heat map's y axis (dotted key)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Exit 0 when every report was written, 2 for a missing or corrupted run directory."""
    from reports.load import RunDirError, find_runs
    from reports.report import parse_formats, write_report, write_sweep_report
    from reports.sweep import rows_path

    try:
        formats = parse_formats(args.format)
        rows = rows_path(Path(args.run_dir))
        if rows is not None:  # a sweep (hcc sweep's rows.parquet / rows.csv)
            paths = write_sweep_report(rows, write_atomic, formats, args.x, args.y)
            print(f"{rows.parent}: " + ", ".join(p.name for p in paths))
            return 0
        runs = find_runs(Path(args.run_dir))
    except ValueError as e:
        print(f"hcc report: error: {e}", file=sys.stderr)
        return 2
    failed = 0
    for run_dir in runs:
        try:
            paths = write_report(run_dir, write_atomic, formats)
        except RunDirError as e:
            print(f"hcc report: error: {e}; no report written", file=sys.stderr)
            failed += 1
            continue
        print(f"{run_dir}: " + ", ".join(p.name for p in paths))
    return 2 if failed else 0
