"""Sweeps on Spark (local mode): the same rows as the local engine, error rows, retried tasks, the CLI.

One Spark session for the whole module (starting one costs tens of seconds).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pandas")

from analyses import sweep_summary as summary  # noqa: E402
from analyses.boundary import Prober, bisect  # noqa: E402
from engines import cells
from engines.local import LocalEngine  # noqa: E402
from engines.spark import (  # noqa: E402
    SparkEngine,
    find_java,
    local_with_retries,
    spark_available,
    start_session,
)
from model.config import Dist  # noqa: E402
from scenarios import grid

pytestmark = [pytest.mark.spark, pytest.mark.slow]

_why = spark_available()
if _why:
    pytest.skip(_why, allow_module_level=True)


@pytest.fixture(scope="module")
def engine() -> Iterator[SparkEngine]:
    session = start_session("local[2]", app_name="hcc-tests")
    yield SparkEngine(session=session, quiet=True)
    session.stop()


def test_java_is_found_and_local_masters_retry() -> None:
    java = find_java()
    assert java.version >= 17 and Path(java.home, "bin", "java").exists()
    assert local_with_retries("local[*]") == "local[*,4]" and local_with_retries("local") == "local[1,4]"
    assert local_with_retries("local[2,3]") == "local[2,3]"
    assert local_with_retries("spark://h:7077") == "spark://h:7077"


def test_smoke_grid_on_spark_equals_local_row_for_row(engine: SparkEngine, tmp_path: Path) -> None:
    g = grid.load("smoke")
    tasks = cells.expand(g, seeds=3)
    assert len(tasks) == 12
    on_spark = engine.run(tasks)
    local = LocalEngine(quiet=True).run(tasks)
    assert on_spark == local
    assert {r["verdict"] for r in on_spark} == {"ok", "violation"}
    summary.write_outputs(tmp_path / "spark", on_spark, g.keys, g.kinds(), {})
    summary.write_outputs(tmp_path / "local", local, g.keys, g.kinds(), {})
    assert summary.read_rows(tmp_path / "spark").equals(summary.read_rows(tmp_path / "local"))


def test_local_worker_processes_give_sparks_rows(engine: SparkEngine) -> None:
    tasks = cells.expand(grid.load("smoke"), seeds=3)
    pooled = LocalEngine(quiet=True, jobs=2)
    try:
        assert pooled.run(tasks) == engine.run(tasks)  # same rows, same order: --engine local --jobs 2
    finally:
        pooled.close()


def test_a_model_crash_on_an_executor_is_an_error_row(engine: SparkEngine) -> None:
    task = cells.expand(grid.load("smoke"), seeds=1)[0]
    workload = dataclasses.replace(task.scenario.workload, work_ms=Dist("bogus"))
    broken = dataclasses.replace(task, scenario=dataclasses.replace(task.scenario, workload=workload))
    rows = engine.run([task, broken])
    assert rows[0]["verdict"] == "ok" and rows[1]["verdict"] == "error" and "bogus" in rows[1]["error"]


def _fails_on_first_attempt(task: cells.SweepRun) -> dict[str, Any]:
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is not None and ctx.attemptNumber() == 0:
        raise RuntimeError("executor trouble on the first attempt")
    return {**cells.run_task(task), "attempt": ctx.attemptNumber() if ctx else None}


def test_spark_retries_a_failed_task(engine: SparkEngine) -> None:
    from pyspark import cloudpickle

    # Executors cannot import this test module: ship its functions by value.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    tasks = cells.expand(grid.load("smoke"), seeds=1)[:2]
    rows = engine.run(tasks, fn=_fails_on_first_attempt)
    assert [r["attempt"] for r in rows] == [1, 1]
    without_attempt = [{k: v for k, v in r.items() if k != "attempt"} for r in rows]
    assert without_attempt == LocalEngine(quiet=True).run(tasks)


def test_boundary_probes_on_spark(engine: SparkEngine) -> None:
    fast = ["lock.validity_secs=10", "lock.renew_interval_secs=1", "duration_ms=40000",
            "faults.pauses[0].at_ms=5000"]
    pause = "faults.pauses[0].duration_ms"
    on_spark = bisect(pause, 0, 30_000, 500, Prober("rfc91-long-pause", fast, pause, [1, 2], engine))
    in_process = Prober("rfc91-long-pause", fast, pause, [1, 2], LocalEngine(quiet=True))
    local = bisect(pause, 0, 30_000, 500, in_process)
    assert on_spark.outcome == "found" and on_spark.probes == local.probes
    assert 9_500 - 500 <= on_spark.unsafe <= 11_580 + 500  # type: ignore[operator]
