"""Sweeps on a real Spark standalone cluster whose executors' Python does not have the project.

A master and a worker are started with PySpark's ``spark-class`` (:mod:`engines.spark_standalone`);
the executors run a virtualenv made here with only :data:`engines.ship.EXECUTOR_REQUIREMENTS`.
Without shipping the executors cannot import the harness (the failure users hit first); with it
(:mod:`engines.ship`) the sweep's rows equal ``--engine local``'s.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pandas")

from analyses import sweep_summary as summary  # noqa: E402
from engines import cells  # noqa: E402
from engines.local import LocalEngine  # noqa: E402
from engines.ship import EXECUTOR_REQUIREMENTS, ship  # noqa: E402
from engines.spark import SparkEngine, spark_available, start_session  # noqa: E402
from engines.spark_standalone import Cluster, standalone_cluster  # noqa: E402
from scenarios import grid  # noqa: E402

pytestmark = [pytest.mark.spark, pytest.mark.slow]

_why = spark_available()
if _why:
    pytest.skip(_why, allow_module_level=True)


def _python(venv: Path) -> Path:
    return venv / "bin" / "python"


@pytest.fixture(scope="module")
def executor_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv with only what executors need from PyPI: no project, no pyspark (Spark ships its own)."""
    venv = tmp_path_factory.mktemp("executor-venv")
    base = getattr(sys, "_base_executable", sys.executable)  # the interpreter under the driver's venv
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(_python(venv)), "install", "-q",
                    *EXECUTOR_REQUIREMENTS], check=True)
    return _python(venv)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, executor_python: Path) -> Iterator[Cluster]:
    with pytest.MonkeyPatch.context() as mp, standalone_cluster(tmp_path_factory.mktemp("spark")) as c:
        mp.setenv("PYSPARK_PYTHON", str(executor_python))  # the executors' Python (the driver stays here)
        yield c


def _isolated(python: Path, code: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin"}  # no PYTHONPATH: what a cluster node's Python sees
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True, env=env, cwd="/")


def test_the_executor_python_has_the_requirements_but_not_the_project(executor_python: Path) -> None:
    assert _isolated(executor_python, "import simpy, tomli_w").returncode == 0
    missing = _isolated(executor_python, "import engines")
    assert missing.returncode != 0 and "No module named 'engines'" in missing.stderr


def _where_executors_import_from(_: int) -> dict[str, Any]:
    import engines.cells

    return {"python": sys.executable, "engines": engines.cells.__file__}


def test_shipped_code_makes_a_cluster_sweep_equal_local_row_for_row(cluster: Cluster, executor_python: Path,
                                                                    tmp_path: Path) -> None:
    """One application (an executor start costs tens of seconds): first without the code, then with it."""
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # executors cannot import this module
    g = grid.load("smoke")
    tasks = cells.expand(g, seeds=3)
    session = start_session(cluster.master_url, app_name="hcc-test-cluster", ship_code=False)
    try:
        engine = SparkEngine(session=session, quiet=True)
        assert session.sparkContext.master == cluster.master_url
        # The failure a user of a plain cluster hits first.
        with pytest.raises(Exception, match=r"No module named '(engines|model|scenarios)'"):
            engine.run(tasks[:1])
        shipped = ship(session.sparkContext)
        where = engine.map([0, 1], _where_executors_import_from)
        rows = engine.run(tasks)
    finally:
        session.stop()
    for w in where:
        assert w["python"] == str(executor_python)
        assert w["engines"].endswith(f"/{shipped.name}/engines/cells.py")  # from the zip the driver shipped
    local = LocalEngine(quiet=True).run(tasks)
    assert len(rows) == 12 and rows == local
    assert {r["verdict"] for r in rows} == {"ok", "violation"}
    summary.write_outputs(tmp_path / "spark", rows, g.keys, g.kinds(), {})
    summary.write_outputs(tmp_path / "local", local, g.keys, g.kinds(), {})
    assert summary.read_rows(tmp_path / "spark").equals(summary.read_rows(tmp_path / "local"))
