"""Sweep reports: violation rate per cell, a heat map over two settings, and a table of cells.

Input: one row per (cell, seed) run.  Two layouts are read:

1. What ``hcc sweep --out DIR`` writes: ``DIR/rows/`` (a Parquet dataset) and ``DIR/sweep.json``
   whose ``keys`` lists the setting columns (named by their dotted scenario key, e.g.
   ``faults.pauses[0].duration_ms``, ``lock.variant``).
2. A standalone ``rows.parquet`` / ``rows.csv`` (or any ``.parquet``/``.csv`` file), where each
   setting column is named ``setting.<dotted.key>``.

Columns besides the settings:

=========================  ======  ==========================================================
``seed``                   int     the run's seed
``verdict``                str     ``ok``, ``violation`` or ``error`` (the model crashed)
``violations``             int     number of violations (0 for ok)
``violations_<kind>``      int     optional: count per kind (``overlap``, ``stale_write``...)
``error``                  str     optional: the error of an ``error`` row
``scenario``, ``cell``     str/int optional: the base scenario's name, the cell number
metrics (optional)         number  ``acquire_latency_p99_ms``, ``precondition_failures``,
                                   ``retries_per_acquisition``, ``unknown_outcomes``,
                                   ``throughput_writes_per_s``, ``fairness_jain``
=========================  ======  ==========================================================

The violation rate of a cell is violating runs / (runs - errors), with a Wilson 95% interval.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from reports import plots
from reports.document import Report, Section

SETTING = "setting."
REQUIRED = ("seed", "verdict", "violations")
VERDICTS = {"ok", "violation", "error"}
CELL_METRICS = ("acquire_latency_p99_ms", "precondition_failures", "retries_per_acquisition",
                "unknown_outcomes", "throughput_writes_per_s", "fairness_jain")
ROWS_DIR = "rows"
META = "sweep.json"


class SweepError(ValueError):
    """Sweep rows that cannot be read; the message names the file, the column and the value."""


def rows_path(path: Path) -> Path | None:
    """The rows file of a sweep folder (or the file itself), None when ``path`` is not a sweep."""
    if path.is_file() and path.suffix in (".parquet", ".csv"):
        return path
    if (path / ROWS_DIR).is_dir() and (path / META).is_file():
        return path / ROWS_DIR
    for name in ("rows.parquet", "rows.csv"):
        if (path / name).exists():
            return path / name
    return None


def load_rows(path: Path) -> pd.DataFrame:
    """Read and validate sweep rows (``SweepError`` names the problem)."""
    try:
        df = pd.read_csv(path) if path.suffix == ".csv" else pd.read_parquet(path)
    except ImportError as e:
        raise SweepError(f"sweep rows {path}: reading Parquet needs pyarrow ({e})") from None
    except Exception as e:  # pandas/pyarrow raise many types for a corrupted file
        raise SweepError(f"sweep rows {path}: cannot be read ({type(e).__name__}: {e})") from None
    meta = path.parent / META
    if path.name == ROWS_DIR and meta.is_file():
        try:
            keys = json.loads(meta.read_text())["keys"]
        except (ValueError, KeyError, TypeError) as e:
            raise SweepError(f"sweep {meta}: no list of setting keys ({type(e).__name__}: {e})") from None
        absent = [k for k in keys if k not in df.columns]
        if absent:
            raise SweepError(f"sweep {meta}: keys {absent} are not columns of {path}")
        df = df.rename(columns={k: SETTING + k for k in keys})
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise SweepError(f"sweep rows {path}: missing column(s) {', '.join(missing)}")
    if not settings_of(df):
        raise SweepError(f"sweep rows {path}: no setting column (named {SETTING}<dotted.key>)")
    bad = sorted(set(df["verdict"].astype(str)) - VERDICTS)
    if bad:
        raise SweepError(f"sweep rows {path}: column verdict has value(s) {bad}, "
                         f"not among {sorted(VERDICTS)}")
    return df


def settings_of(df: pd.DataFrame) -> list[str]:
    """The setting columns, in file order."""
    return [c for c in df.columns if str(c).startswith(SETTING)]


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float | None, float | None]:
    """Wilson score interval for k successes out of n."""
    if n == 0:
        return None, None
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)


def cell_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per combination of settings: runs, errors, violations, rate, its interval, metric medians."""
    keys = settings_of(df)
    rows = []
    for values, g in df.groupby(keys, sort=True, dropna=False):
        values = values if isinstance(values, tuple) else (values,)
        errors = int((g["verdict"] == "error").sum())
        bad = int((g["verdict"] == "violation").sum())
        valid = len(g) - errors
        lo, hi = wilson(bad, valid)
        row: dict[str, Any] = {k[len(SETTING):]: v for k, v in zip(keys, values, strict=True)}
        row |= {"runs": len(g), "errors": errors, "violating_runs": bad,
                "violation_rate": round(bad / valid, 4) if valid else None, "ci95_low": lo, "ci95_high": hi}
        for m in CELL_METRICS:
            if m in g.columns:
                row[f"median {m}"] = g[m].median()
        rows.append(row)
    return pd.DataFrame(rows)


def choose_axes(df: pd.DataFrame, x: str | None, y: str | None) -> tuple[str, str]:
    """The two settings of the heat map: the given ones, else the first two that vary."""
    keys = settings_of(df)

    def col(name: str) -> str:
        full = name if name.startswith(SETTING) else SETTING + name
        if full not in keys:
            raise SweepError(f"--{'x' if name == x else 'y'}: {name!r} is not a setting of the sweep "
                             f"({', '.join(k[len(SETTING):] for k in keys)})")
        return full

    varying = [k for k in keys if df[k].nunique(dropna=False) > 1] or keys
    cx = col(x) if x else varying[0]
    cy = col(y) if y else next((k for k in varying if k != cx), next((k for k in keys if k != cx), cx))
    return cx, cy


def rate_grid(df: pd.DataFrame, x: str, y: str) -> pd.DataFrame:
    """Violation rate (non-error runs) per (y, x), pooled over every other setting.

    A sweep of one setting (x == y) gives a single row, labelled ``all``.
    """
    valid = df[df["verdict"] != "error"]
    violating = valid["verdict"] == "violation"
    if x == y:
        return violating.groupby(valid[x]).mean().to_frame("all").T
    return violating.groupby([valid[y], valid[x]]).mean().unstack(x)


def build_sweep_report(path: Path, x: str | None = None, y: str | None = None) -> Report:
    """The report of a sweep: heat map over two settings and the table of cells."""
    df = load_rows(path)
    cx, cy = choose_axes(df, x, y)
    cells = cell_table(df)
    others = [k[len(SETTING):] for k in settings_of(df) if k not in (cx, cy) and df[k].nunique() > 1]
    name = str(df["scenario"].iloc[0]) if "scenario" in df.columns and len(df) else path.stem
    grid = rate_grid(df, cx, cy)
    xs, ys = cx[len(SETTING):], cy[len(SETTING):]
    head = Section("Sweep", [
        f"{len(df)} runs in {len(cells)} cells, seeds {df['seed'].min()}..{df['seed'].max()}; "
        f"{int((df['verdict'] == 'violation').sum())} violating, "
        f"{int((df['verdict'] == 'error').sum())} errors.",
        f"Heat map: violation rate over {xs} (x)" + (f" and {ys} (y)" if ys != xs else "")
        + (f", pooled over {', '.join(others)}." if others else "."),
    ])
    head.images.append((f"Violation rate over {xs} and {ys}",
                        plots.heatmap(grid, xs, ys, f"{name}: violation rate")))
    head.tables.append(("Cells (rate with Wilson 95% interval)", cells))
    errors = df[df["verdict"] == "error"]
    sections = [head]
    if len(errors):
        cols = [c for c in [*settings_of(df), "seed", "error"] if c in errors.columns]
        sections.append(Section("Errors", tables=[("Runs that crashed the model", errors[cols].head(200))]))
    summary = {"rows": len(df), "x": xs, "y": ys, "pooled_over": others,
               "cells": cells.to_dict(orient="records"),
               "heatmap": {str(k): {str(c): (None if pd.isna(v) else float(v)) for c, v in row.items()}
                           for k, row in grid.iterrows()}}
    return Report(f"hcc sweep report: {name}", sections, summary)
