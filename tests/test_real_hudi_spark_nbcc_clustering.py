"""The catalogue's ``nbcc-clustering-bucket-layout`` on Hudi 1.2.0's own Spark writers, translated by
engines/hudi_spark/nbcc_plans.py (two writers, three deltacommits each; the compaction service's clustering a
run_clustering on w3 once four deltacommits are past their .inflight) and judged by the NBCC model
(``compare_nbcc_run``): Hudi plans the clustering and refuses to execute it (NBC1, NBC2), the pending plan
refuses both writers' third deltacommits (NBC3), everything else commits (NB4), and the file slices and rows
are the model's.

Three JVMs, about 100 s of wall time on this 2-core machine (the hudi environment's budget is 15 minutes): run
by hand with ``HCC_HUDI_CLUSTERING=1 pytest -m hudi tests/test_real_hudi_spark_nbcc_clustering.py``."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from analyses.nbcc_writers_differential import compare_nbcc_run
from engines.hudi_spark.nbcc_plans import nbcc_entry_plans
from scenarios import catalogue


def _pyspark_35() -> bool:
    try:
        import pyspark
    except ImportError:
        return False
    return str(pyspark.__version__).startswith("3.5.")


@pytest.mark.skipif(not _pyspark_35() or shutil.which("java") is None,
                    reason="needs PySpark 3.5 (tox -e hudi) and Java 17")
@pytest.mark.skipif(not os.environ.get("HCC_HUDI_CLUSTERING"),
                    reason="about 100 s: set HCC_HUDI_CLUSTERING=1 to run it")
def test_the_clustering_entry_on_hudi_1_2_0_refuses_as_the_model_does(tmp_path: Path) -> None:
    from engines.hudi_spark.run import run

    entry = catalogue.load("nbcc-clustering-bucket-layout")
    plans = nbcc_entry_plans(entry.name, entry.config)
    out = tmp_path / "run"
    verdict = run(out, entry=plans, scenario_toml=entry.to_toml(), protocol="nbcc", timeout_s=420)
    assert verdict["valid"], verdict["anomalies"]
    diff = compare_nbcc_run(out, metadata_table=False)
    assert diff["agree"], diff["differences"]
    assert sorted((a["process"], a["batch"], a["outcome"]) for a in diff["attempts"]) == [
        ("w1", 0, "commit"), ("w1", 1, "commit"), ("w1", 2, "fail"),
        ("w2", 0, "commit"), ("w2", 1, "commit"), ("w2", 2, "fail"), ("w3", 0, "fail")]
    # the plan stays requested, never executed; the refused deltacommits stay requested (NBC3)
    timeline = sorted(p.name for p in (out / "table" / ".hoodie" / "timeline").iterdir() if p.is_file())
    assert sum(n.endswith(".clustering.requested") for n in timeline) == 1
    assert not any("replacecommit" in n for n in timeline)
    assert {a["error"] for a in diff["attempts"] if a["outcome"] == "fail"} == {
        "java.lang.UnsupportedOperationException",
        "org.apache.hudi.exception.HoodieClusteringUpdateException"}
    assert diff["hudi_rows"] == diff["model_rows"]
