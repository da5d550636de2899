"""Contention on a real backend: 4 Spark tasks are 4 writers of the RFC-91 lock on fake-gcs-server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("google.cloud.storage")
pytest.importorskip("backends.realworld")  # the real-world interpreter (backends issue)

from backends.launchers.process import Unavailable  # noqa: E402
from engines.contention import run_contention  # noqa: E402
from engines.spark import SparkEngine, spark_available, start_session  # noqa: E402
from scenarios import loader  # noqa: E402

pytestmark = [pytest.mark.spark, pytest.mark.slow]

_why = spark_available()
if _why:
    pytest.skip(_why, allow_module_level=True)


@pytest.fixture(scope="module")
def engine() -> Iterator[SparkEngine]:
    session = start_session("local[4]", app_name="hcc-contention-tests")
    yield SparkEngine(session=session, quiet=True)
    session.stop()


def test_four_writers_on_fake_gcs_with_rfc91_safe_settings(engine: SparkEngine, tmp_path: Path) -> None:
    # rfc91-safe (drift < 500 ms, 503s and lock-write timeouts through the fault proxy), 4 writers,
    # short holds.
    scenario = loader.load("rfc91-safe", [
        "workload.writers=4", 'workload.work_ms={kind="uniform", lo=20, hi=100}',
        'workload.think_ms={kind="uniform", lo=0, hi=200}',
        'workload.start_ms={kind="uniform", lo=0, hi=200}'])
    try:
        result = run_contention(scenario, "fake-gcs", engine, duration_ms=20_000, log_dir=tmp_path)
    except Unavailable as e:
        pytest.skip(f"fake-gcs-server cannot run here: {e}")
    assert result.verdict.verdict == "ok", [v.message for v in result.verdict.violations]
    m = result.metrics
    assert m["writers"] == ["w1", "w2", "w3", "w4"]
    assert all(n > 0 for n in m["acquisitions_per_writer"].values()), m["acquisitions_per_writer"]
    writes = {n: sum(1 for e in result.events if e.process == n and e.f == "write" and e.type == "ok")
              for n in m["writers"]}
    assert all(n > 0 for n in writes.values()), writes  # every writer got work done
    assert m["throughput_writes_per_s"] > 0
    assert m["acquire_latency_ms"]["p50"] is not None and 0 < m["fairness_jain"] <= 1
    # Every writer's events came back from its own task, on one time axis.
    assert {e.node for e in result.events if e.f == "acquire"} == {"w1", "w2", "w3", "w4"}
    assert [e.index for e in result.events] == list(range(len(result.events)))
