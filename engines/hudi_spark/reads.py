"""Time-travel and incremental reads of a finished Hudi run's table by Hudi's own Spark reader.

``python -m engines.hudi_spark.reads RUN_DIR`` (the hudi env: PySpark 3.5 and the pinned Hudi bundle) reads
``RUN_DIR/table`` (the local copy of the table the writers left) in one ``local[1]`` Spark session, after
the writers ended, at the run's read points (:func:`read_points`) and adds ``reads.json`` to the finished
run directory (``model.run_format.ReadsFile``, through ``RunWriter.after_run``):

- **time travel** as of each sampled completed instant's completion time (``as.of.instant``);
- **incremental** from the previous completed instant's completion time to this one's
  (``hoodie.datasource.query.type=incremental`` with ``hoodie.datasource.read.begin.instanttime`` and
  ``end.instanttime``). In Hudi 1.x (table version 8 and later) both bounds are completion times and the
  range is ``(begin, end]``: ``DataSourceReadOptions`` documents them as completion times, and the 1.2.0
  bundle's ``HoodieCopyOnWriteIncrementalHadoopFsRelationFactoryV2`` and
  ``HoodieMergeOnReadIncrementalHadoopFsRelationFactoryV2`` default their range type to
  ``InstantRange.RangeType.OPEN_CLOSED`` for ``IncrementalQueryAnalyzer`` (``javap`` on
  ``hudi-spark3.5-bundle_2.12-1.2.0.jar``).

Each read lists as the run's final read did (``hoodie.metadata.enable`` from the plan's
``read_metadata_table``). A read's answer is its rows ``[key, partition, value, _hoodie_commit_time]`` or
Hudi's exception (class and message, :func:`engines.hudi_spark.writer.java_error`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from model.oracle.points import evenly
from model.run_format import READS, READS_LOG, ReadPoint
from model.timeline.layout import Instant, format_instant, parse_instant_name

MAX_POINTS = 10  # sampled completed instants per run (every one when there are at most 10)
# the completed instants that write data (a clean or rollback changes no row a reader reads)
WRITE_ACTIONS = frozenset({"commit", "deltacommit", "replacecommit"})
TIMEOUT_S = 600.0


def completed_writes(table_dir: Path) -> list[Instant]:
    """The table's completed data-writing instants (commits, deltacommits, replacecommits), in completion
    order, from ``.hoodie/timeline`` (layout 2, whose completed file names carry completion times)."""
    out = []
    for f in (table_dir / ".hoodie" / "timeline").iterdir():
        i = parse_instant_name(f.name, "v8") if f.is_file() else None
        if i is not None and i.is_completed and i.completed is not None and i.action in WRITE_ACTIONS:
            out.append(i)
    return sorted(out, key=lambda i: (i.completed, i.requested))


def read_points(table_dir: Path, limit: int = MAX_POINTS) -> list[ReadPoint]:
    """The read points of a table: at each of at most ``limit`` completed instants (evenly chosen, the first
    and the last always in) a time-travel read as of its completion time and, but for the first completed
    instant, an incremental read from the previous completed instant's completion time to its own."""
    return points_at(completed_writes(table_dir), limit)


def points_at(done: Sequence[Instant], limit: int = MAX_POINTS) -> list[ReadPoint]:
    """:func:`read_points` of the completed instants ``done`` (in completion order)."""
    index = {i.requested: n for n, i in enumerate(done)}
    points: list[ReadPoint] = []
    for i in evenly(done, limit):
        req, tc = format_instant(i.requested), format_instant(i.completed or 0)
        points.append(ReadPoint(f"as_of {tc}", "as_of", req, at=tc))
        n = index[i.requested]
        if n > 0:
            start = format_instant(done[n - 1].completed or 0)
            points.append(ReadPoint(f"incremental ({start}, {tc}]", "incremental", req, start=start, end=tc))
    return points


def _spark_read(spark: Any, base_path: str, listing: bool, p: ReadPoint) -> dict[str, Any]:
    """One point read by Hudi's Spark datasource: ``{"rows": ...}`` or ``{"error": ...}``."""
    from engines.hudi_spark.writer import java_error

    r = spark.read.format("hudi").option("hoodie.metadata.enable", str(listing).lower())
    if p.kind == "as_of":
        r = r.option("as.of.instant", p.at)
    else:
        r = (r.option("hoodie.datasource.query.type", "incremental")
             .option("hoodie.datasource.read.begin.instanttime", p.start)
             .option("hoodie.datasource.read.end.instanttime", p.end))
    try:
        got = r.load(base_path).select("key", "partition", "value", "_hoodie_commit_time").collect()
    except Exception as e:  # Hudi's refusal is the read's answer
        return {"error": java_error(e)}
    return {"rows": sorted([str(x[0]), str(x[1]), int(x[2]), str(x[3])] for x in got)}


def read_run(run_dir: Path) -> dict[str, Any]:
    """Read ``run_dir``'s table at its read points in one Spark session (the hudi env); what
    ``reads.json`` holds (``model.run_format.ReadsFile``)."""
    from engines.hudi_spark.writer import spark_session
    from reports.load import load_writers_plan

    plan = load_writers_plan(run_dir)  # the first writer's: its classpath, whether its final read listed
    table = (run_dir / "table").resolve()
    points = read_points(table)
    listing = bool(plan.get("read_metadata_table", False))
    t0 = time.time()
    # the writer's session (its classpath and Kryo settings); the table is local, so no s3a endpoint is used
    spark = spark_session({"writer": "reads", "classpath": plan["classpath"], "endpoint": "http://127.0.0.1:9"})
    try:
        answers = {p.id: _spark_read(spark, table.as_uri(), listing, p) for p in points}
    finally:
        spark.stop()
    return {"points": [asdict(p) for p in points], "answers": answers, "metadata_table": listing,
            "seconds": round(time.time() - t0, 1)}


def ensure_reads(run_dir: Path, python: str | None = None, timeout_s: float = TIMEOUT_S) -> str | None:
    """``run_dir``'s ``reads.json``, added by one extra Spark process if absent (its stderr kept as
    ``reads.log``); None when it is there, else why not (no PySpark here: the hudi env reads; the process's
    failure)."""
    from engines.rundir import RunWriter
    from reports.load import load_writers_file

    if load_writers_file(run_dir, READS) is not None:
        return None
    if python is None:
        import importlib.util

        if importlib.util.find_spec("pyspark") is None:
            return "Hudi's Spark reader did not read (no PySpark here: run under the hudi env, tox -e hudi)"
        python = sys.executable
    env = {**os.environ, "PYSPARK_PYTHON": python, "PYTHONUNBUFFERED": "1"}
    try:
        done = subprocess.run([python, "-m", "engines.hudi_spark.reads", str(run_dir)], capture_output=True,
                              text=True, timeout=timeout_s, env=env, check=False)
    except subprocess.TimeoutExpired:
        return f"Hudi's Spark reads did not end within {timeout_s:g} s (killed)"
    RunWriter.after_run(run_dir).write_text(READS_LOG, done.stderr)
    if done.returncode != 0:
        tail = " ".join(done.stderr.strip().splitlines()[-3:])[:400]
        return f"Hudi's Spark reads exited {done.returncode}: {tail}"
    return None


def main(argv: list[str] | None = None) -> int:
    """CLI: add ``reads.json`` to the finished hudi-writers run ``RUN_DIR``; exit 2 on a directory that is not
    one."""
    from engines.rundir import RunWriter

    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 1:
        print("usage: python -m engines.hudi_spark.reads RUN_DIR", file=sys.stderr)
        return 2
    run_dir = Path(args[0])
    if not (run_dir / "table" / ".hoodie" / "timeline").is_dir():
        print(f"hudi reads: run={args[0]!r}: no table/.hoodie/timeline there", file=sys.stderr)
        return 2
    try:
        writer = RunWriter.after_run(run_dir)  # RunDirError (a ValueError): not a finished hudi-writers run
        result = read_run(run_dir)
    except ValueError as e:
        print(f"hudi reads: {e}", file=sys.stderr)
        return 2
    writer.write_text(READS, json.dumps(result, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
