"""Rows to a Parquet dataset, and a per-cell summary (CSV and JSON) with pandas.

Per cell: runs, errors, runs with a violation, the violation rate among runs that did not
crash with its Wilson score interval (95 %), and the acquire-latency percentiles over seeds
(median of the runs' p50 and p99, the largest max), mean throughput, retries, precondition
failures and unknown outcomes, the earliest violation and the violating seeds.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from engines.cells import RESULT_COLUMNS, column_names
from engines.rundir import write_atomic, write_json

ROWS_DIR = "rows"
SUMMARY_CSV = "summary.csv"
SUMMARY_JSON = "summary.json"
META_JSON = "sweep.json"
_ARROW = {"int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(), "str": pa.string(),
          "json": pa.string()}


def row_schema(keys: list[str], kinds: dict[str, str]) -> pa.Schema:
    """The Parquet schema of the rows: one column per varied setting, named by its dotted key."""
    fixed = {"grid": "str", "scenario": "str", "cell": "int", "seed": "int", **dict(RESULT_COLUMNS)}
    types = {**fixed, **kinds}
    return pa.schema([pa.field(c, _ARROW[types[c]], nullable=True) for c in column_names(keys)])


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval for k successes in n trials (NaN, NaN for n = 0)."""
    if n == 0:
        return math.nan, math.nan
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def rows_table(rows: list[dict[str, Any]], keys: list[str], kinds: dict[str, str]) -> pa.Table:
    """The rows as an Arrow table with the fixed schema."""
    return pa.Table.from_pylist(rows, schema=row_schema(keys, kinds))


def summarize(rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One line per cell: violation rate with its Wilson interval, latency percentiles, mean metrics."""
    out = []
    for cell, g in rows.groupby("cell", sort=True):
        ran = g[g["verdict"] != "error"]
        k = int((ran["verdict"] == "violation").sum())
        n = len(ran)
        lo, hi = wilson(k, n)

        def med(col: str, frame: pd.DataFrame = ran) -> float:
            return float(frame[col].median()) if frame[col].notna().any() else math.nan

        def mean(col: str, frame: pd.DataFrame = ran) -> float:
            return float(frame[col].mean()) if frame[col].notna().any() else math.nan

        first = g.iloc[0]
        out.append({
            "cell": int(cell),
            **{key: first[key] for key in keys},
            "runs": len(g),
            "errors": int((g["verdict"] == "error").sum()),
            "violating_runs": k,
            "violation_rate": k / n if n else math.nan,
            "ci_low": lo,
            "ci_high": hi,
            "acquire_latency_p50_ms": med("acquire_latency_p50_ms"),
            "acquire_latency_p99_ms": med("acquire_latency_p99_ms"),
            "acquire_latency_max_ms": float(ran["acquire_latency_max_ms"].max()) if n else math.nan,
            "throughput_writes_per_s": mean("throughput_writes_per_s"),
            "acquisitions_per_s": mean("acquisitions_per_s"),
            "retries": mean("retries"),
            "precondition_failures": mean("precondition_failures"),
            "unknown_outcomes": mean("unknown_outcomes"),
            "first_violation_ms": float(ran["first_violation_ms"].min()) if k else math.nan,
            "violating_seeds": " ".join(str(s) for s in ran.loc[ran["verdict"] == "violation", "seed"]),
            "error": next((e for e in g["error"] if isinstance(e, str) and e), ""),
        })
    return pd.DataFrame(out)


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Records with NaN as None (valid JSON)."""
    records: list[dict[str, Any]] = json.loads(frame.to_json(orient="records"))
    return records


def write_outputs(out: Path, rows: list[dict[str, Any]], keys: list[str], kinds: dict[str, str],
                  meta: dict[str, Any]) -> tuple[pa.Table, pd.DataFrame]:
    """Write ``out/rows/part-00000.parquet``, ``summary.csv``, ``summary.json`` and ``sweep.json``."""
    table = rows_table(rows, keys, kinds)
    summary = summarize(table.to_pandas(), keys)
    rows_dir = out / ROWS_DIR
    rows_dir.mkdir(parents=True, exist_ok=True)
    for stale in rows_dir.glob("*.parquet"):
        stale.unlink()
    tmp = rows_dir / ".part-00000.parquet.tmp"
    pq.write_table(table, tmp)
    os.replace(tmp, rows_dir / "part-00000.parquet")
    write_atomic(out / SUMMARY_CSV, summary.to_csv(index=False))
    write_json(out / SUMMARY_JSON, _records(summary))
    write_json(out / META_JSON, {**meta, "columns": [f"{f.name}: {f.type}" for f in table.schema]})
    return table, summary


def read_rows(out: Path) -> pd.DataFrame:
    """The rows of a sweep directory as a DataFrame."""
    return pq.read_table(out / ROWS_DIR).to_pandas()
