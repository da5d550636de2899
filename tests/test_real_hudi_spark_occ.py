"""Hudi's own Spark writers (hudi-spark3.5-bundle_2.12 1.2.0) under OCC on SeaweedFS through the fault proxy.

The run test needs PySpark 3.5 (the tox env ``hudi``: constraints-hudi.txt), Java 17 and SeaweedFS; it
takes about 1.5 minutes on a 2-core machine (two JVMs, a seed commit and 2 x 3 contended upserts).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from backends.hudi.artifacts import ArtifactError, spark_jars
from engines.hudi_spark.check import CONFLICT, check_run
from engines.hudi_spark.writer import PlanError, load_plan
from reports.load import load_writers_run


def _pyspark_35() -> bool:
    try:
        import pyspark
    except ImportError:
        return False
    return str(pyspark.__version__).startswith("3.5.")


def test_version_without_bundle_names_the_coordinate() -> None:
    with pytest.raises(ArtifactError, match=r"org\.apache\.hudi:hudi-spark3\.5-bundle_2\.12:1\.2\.1"):
        spark_jars("1.2.1")


def test_bad_plan_names_the_field(tmp_path: Path) -> None:
    plan = {"writer": "w1", "base_path": "s3a://b/t", "table": "t", "endpoint": "http://x", "classpath": [],
            "history": "h",
            "batches": [{"op": "merge", "rows": [{"key": "k", "partition": "p", "value": 1}]}]}
    (tmp_path / "p.json").write_text(json.dumps(plan))
    with pytest.raises(PlanError, match=r"batches\[0\]\.op='merge'"):
        load_plan(tmp_path / "p.json")


def test_checks_find_a_lost_update_and_a_duplicate() -> None:
    ok = [{"process": "w1", "f": "write", "type": "ok", "instant": "1_2", "elapsed_s": 1.0, "time": 1,
           "value": {"batch": 0, "rows": [["k0", "p0", 5]]}},
          {"process": "w2", "f": "write", "type": "ok", "instant": "3_4", "elapsed_s": 1.0, "time": 2,
           "value": {"batch": 0, "rows": [["k0", "p0", 7]]}}]
    read = {"process": "w1", "f": "read", "type": "ok", "time": 3,
            "value": [["k0", "p0", 5, "1", "f1"], ["k0", "p0", 7, "3", "f2"]]}
    timeline = [{"requested": r, "completed": c, "state": "completed", "action": "commit"}
                for r, c in (("1", "2"), ("3", "4"))]
    got = check_run([*ok, read], timeline)
    assert not got["valid"]
    assert {a["kind"] for a in got["anomalies"]} == {"duplicate-key", "lost-update"}


def test_checks_find_a_lost_delete_and_a_missing_row() -> None:
    ok = [{"process": "w1", "f": "write", "type": "ok", "instant": "1_2", "elapsed_s": 1.0, "time": 1,
           "value": {"batch": 0, "op": "upsert", "rows": [["k0", "p0", 5], ["k1", "p0", 6]]}},
          {"process": "w2", "f": "write", "type": "ok", "instant": "3_4", "elapsed_s": 1.0, "time": 2,
           "value": {"batch": 0, "op": "delete", "rows": [["k0", "p0", 7]]}}]
    timeline = [{"requested": r, "completed": c, "state": "completed", "action": "commit"}
                for r, c in (("1", "2"), ("3", "4"))]
    read = {"process": "w1", "f": "read", "type": "ok", "time": 3, "value": [["k0", "p0", 5, "1", "f1"]]}
    got = check_run([*ok, read], timeline)
    assert sorted((a["key"], a["expected"]) for a in got["anomalies"]) == [("k0", None), ("k1", 6)]
    right = {"process": "w1", "f": "read", "type": "ok", "time": 3, "value": [["k1", "p0", 6, "1", "f1"]]}
    assert check_run([*ok, right], timeline)["valid"]


@pytest.mark.skipif(not _pyspark_35(), reason="needs PySpark 3.5 (tox -e hudi, constraints-hudi.txt)")
@pytest.mark.skipif(shutil.which("java") is None, reason="needs Java 17")
def test_two_hudi_spark_writers_under_occ(tmp_path: Path) -> None:
    from engines.hudi_spark.run import run

    out = tmp_path / "run"
    verdict = run(out, rounds=3, keys=3)
    assert verdict["world"] == "hudi" and verdict["version"] == "1.2.0"
    assert set(verdict["jars"]) >= {"org.apache.hudi:hudi-spark3.5-bundle_2.12:1.2.0"}
    assert verdict["valid"], verdict["anomalies"]
    assert verdict["commits"] >= 2  # the seed and at least one upsert
    # the same file group upserted by both writers at once: Hudi's OCC aborts with its own exception
    assert verdict["conflicts"], verdict["failures"]
    assert all(c["class"] == CONFLICT for c in verdict["conflicts"])
    assert all(f["class"] == CONFLICT for f in verdict["failures"])
    assert (out / "table" / ".hoodie" / ".locks" / "table_lock.json").is_file()
    assert (out / "table" / ".hoodie" / "hoodie.properties").is_file()
    loaded = load_writers_run(out)
    # each aborted write's line records that Hudi completed no instant of it (writer.failed_instant)
    fails = [e for e in loaded.events if e.get("f") == "write" and e["type"] == "fail"]
    assert fails and all("instant" in e and e["instant"] is None for e in fails), fails
    metrics = loaded.metrics
    assert all(v == 0 or v == 1 for v in metrics["exit_codes"].values())
    assert max(metrics["peak_rss_mb"].values()) < 1536
