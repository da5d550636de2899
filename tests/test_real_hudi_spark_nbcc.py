"""Hudi's own Spark writers (hudi-spark3.5-bundle_2.12 1.2.0) under NBCC (merge-on-read, simple bucket index)
on SeaweedFS through the fault proxy, the harness's writer faults, and issue #19774 on real Hudi 1.2.0.

The two runs need PySpark 3.5 (tox env ``hudi``), Java 17 and SeaweedFS: about 1 minute (overlap) and
2 minutes (uncommitted-anchor) on a 2-core machine. The rest runs anywhere.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

import pytest
from writer_faults import exchange, sleeper

from engines.hudi_spark.check import check_run
from engines.hudi_spark.launch import FaultInjector, WriterFault
from engines.hudi_spark.nbcc import BUCKETS, anchor_plan, bucket_of, file_id_prefix
from engines.hudi_spark.writer import PlanError, hudi_options, load_plan
from reports.load import load_writers_history, load_writers_run


def _pyspark_35() -> bool:
    try:
        import pyspark
    except ImportError:
        return False
    return str(pyspark.__version__).startswith("3.5.")


needs_spark = pytest.mark.skipif(not _pyspark_35() or shutil.which("java") is None,
                                 reason="needs PySpark 3.5 (tox -e hudi) and Java 17")


def test_bucket_of_is_javas_list_hash() -> None:
    # "k0".hashCode() = 107 * 31 + 48 = 3365; List.of("k0").hashCode() = 31 + 3365
    assert bucket_of("k0", 4) == (31 + 3365) % 4
    # "polygenelubricants".hashCode() is Integer.MIN_VALUE: the list hash overflows, the sign bit is cleared
    assert bucket_of("polygenelubricants", 256) == 31


def test_anchor_plan_puts_the_kill_and_the_commit_in_one_fresh_bucket() -> None:
    plans = anchor_plan(["w1", "w2"], 1, 1)
    seed, killed = (b["rows"][0]["key"] for b in plans["w1"])
    (after,) = plans["w2"]
    assert bucket_of(seed, BUCKETS) != bucket_of(killed, BUCKETS) == 1
    assert after["rows"][0]["key"] == killed and after["after_info"] == {"process": "w1", "f": "kill"}


def test_nbcc_options_are_hudis_own() -> None:
    plan = {"table": "t", "endpoint": "http://x", "protocol": "nbcc"}
    opts = hudi_options(plan)
    assert opts["hoodie.write.concurrency.mode"] == "NON_BLOCKING_CONCURRENCY_CONTROL"
    assert opts["hoodie.datasource.write.table.type"] == opts["hoodie.table.type"] == "MERGE_ON_READ"
    assert (opts["hoodie.index.type"], opts["hoodie.index.bucket.engine"]) == ("BUCKET", "SIMPLE")
    assert opts["hoodie.clean.failed.writes.policy"] == "LAZY"
    assert hudi_options({"table": "t", "endpoint": "http://x"})["hoodie.datasource.write.table.type"] == \
        "COPY_ON_WRITE"


def test_bad_protocol_names_the_field(tmp_path: Path) -> None:
    plan = {"writer": "w1", "base_path": "s3a://b/t", "table": "t", "endpoint": "http://x", "classpath": [],
            "history": "h", "protocol": "mvcc",
            "batches": [{"op": "upsert", "rows": [{"key": "k", "partition": "p", "value": 1}]}]}
    (tmp_path / "p.json").write_text(json.dumps(plan))
    with pytest.raises(PlanError, match=r"protocol='mvcc'"):
        load_plan(tmp_path / "p.json")


def test_checks_judge_event_time_and_a_missing_committed_row() -> None:
    def ok(p: str, inst: str, t: float, rows: list[list[object]]) -> dict[str, object]:
        return {"process": p, "f": "write", "type": "ok", "instant": inst, "elapsed_s": 1.0, "time": t,
                "value": {"batch": 0, "op": "upsert", "rows": rows}}
    timeline = [{"requested": r, "completed": c, "state": "completed", "action": "deltacommit", "file": ""}
                for r, c in (("1", "4"), ("2", "3"))]
    # w2 completes first with the greater ordering value: under NBCC (event time) its value wins
    events = [ok("w1", "1_4", 5, [["k0", "p0", 1001]]), ok("w2", "2_3", 4, [["k0", "p0", 1002]]),
              {"process": "w2", "f": "read", "type": "invoke", "time": 6},
              {"process": "w2", "f": "read", "type": "ok", "time": 7,
               "value": [["k0", "p0", 1002, "2", "f"]]}]
    assert check_run(events, timeline, ordering="event-time")["valid"]
    assert not check_run(events, timeline, ordering="completion")["valid"]
    # the read misses the key a committed write upserted (issue #19774's hidden slice)
    events[-1] = {**events[-1], "value": []}
    (a,) = check_run(events, timeline, ordering="event-time")["anomalies"]
    assert (a["kind"], a["key"], a["value"], a["expected"]) == ("lost-update", "k0", None, 1002)


def test_fault_injector_kills_at_the_nth_matching_request(tmp_path: Path) -> None:
    history = tmp_path / "history.jsonl"
    inj = FaultInjector([WriterFault("w1", "kill", r"/p0/\.f1.*\.log\.", nth=2)], history)
    w1, w2 = sleeper(tmp_path, "w1"), sleeper(tmp_path, "w2")
    inj.add(w1)
    inj.add(w2)
    try:
        inj(exchange("w1", "t/p0/.f1_1.log.1_0"))  # the first match: not yet
        inj(exchange("w2", "t/p0/.f1_1.log.1_0"))  # another writer's
        inj(exchange("w1", "t/p0/.f2_1.log.1_0"))  # another file group
        assert w1.proc.poll() is None and not history.exists()
        inj(exchange("w1", "t/p0/.f1_2.log.1_0"))
        assert w1.proc.wait(timeout=5) == -signal.SIGKILL
        assert w2.proc.poll() is None
        (line,) = load_writers_history(tmp_path)
        assert (line["type"], line["f"], line["process"], line["value"]["key"]) == \
            ("info", "kill", "w1", "t/p0/.f1_2.log.1_0")
    finally:
        for w in (w1, w2):
            w.proc.kill()
            w.proc.wait()


def test_fault_injector_pauses_then_resumes(tmp_path: Path) -> None:
    history = tmp_path / "history.jsonl"
    inj = FaultInjector([WriterFault("w1", "pause", r"\.log\.", resume_after_s=0.5)], history)
    w1 = sleeper(tmp_path, "w1")
    inj.add(w1)
    try:
        inj(exchange("w1", "t/p0/.f1_1.log.1_0"))
        # stopped: SIGSTOP takes effect when the process is next scheduled (a loaded machine showed R here)
        deadline = time.monotonic() + 0.4  # before the resume at 0.5 s
        while Path(f"/proc/{w1.proc.pid}/stat").read_text().split()[2] != "T" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert Path(f"/proc/{w1.proc.pid}/stat").read_text().split()[2] == "T"
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and len(load_writers_history(tmp_path)) < 2:  # pause, then resume
            time.sleep(0.1)
        assert [e["f"] for e in load_writers_history(tmp_path)] == ["pause", "resume"]
        assert Path(f"/proc/{w1.proc.pid}/stat").read_text().split()[2] != "T"
    finally:
        os.killpg(w1.proc.pid, signal.SIGKILL)
        w1.proc.wait()


def test_fsview_refuses_a_folder_without_a_table(tmp_path: Path) -> None:
    from engines.hudi_spark.fsview import main

    assert main([str(tmp_path)]) == 2


def test_contention_cli_names_the_bad_protocol_option(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import main

    base = ["contention", "--backend", "seaweedfs", "--out", str(tmp_path / "o")]
    assert main([*base, "--protocol", "nbcc"]) == 2  # the spark world
    assert main([*base, "--world", "hudi", "--protocol", "nbcc", "--hudi-workload", "conflict"]) == 2
    assert main([*base, "--world", "hudi", "--protocol", "nbcc", "--hudi-workload", "uncommitted-anchor",
                 "--writers", "3"]) == 2
    err = capsys.readouterr().err
    assert "--protocol = 'nbcc': with --world hudi only" in err
    assert "--hudi-workload = 'conflict': under --protocol nbcc one of overlap, uncommitted-anchor" in err
    assert "--writers = 3" in err
    assert not (tmp_path / "o").exists()


def test_fault_names_the_bad_field() -> None:
    with pytest.raises(ValueError, match=r"fault='crash'"):
        WriterFault("w1", "crash", "x").check(["w1"])
    with pytest.raises(ValueError, match=r"fault writer='w3'"):
        WriterFault("w3", "kill", "x").check(["w1", "w2"])


@needs_spark
def test_two_hudi_spark_writers_under_nbcc(tmp_path: Path) -> None:
    from engines.hudi_spark.run import run

    out = tmp_path / "run"
    verdict = run(out, protocol="nbcc", rounds=1, keys=2, timeout_s=300)
    assert (verdict["protocol"], verdict["table_type"]) == ("nbcc", "MERGE_ON_READ")
    assert verdict["valid"], verdict["anomalies"]
    # both writers upsert the same keys at once: NBCC resolves no conflict, every upsert commits
    assert verdict["failures"] == [] and verdict["conflicts"] == []
    assert verdict["commits"] == 1 + 2  # the seed, then one upsert per writer
    timeline = load_writers_run(out).timeline
    assert {i["action"] for i in timeline if i["state"] == "completed"} == {"deltacommit"}
    props = (out / "table" / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.table.type=MERGE_ON_READ" in props
    # every writer's logs go to the one file group NBCC gives each bucket
    logs = [p.name for p in (out / "table" / "p0").glob(".*.log.*")]
    assert logs and all(n[1:9] in {f"{b:08d}" for b in range(BUCKETS)} for n in logs)
    assert {n[1:].split("_")[0] for n in logs} <= {f"{file_id_prefix(b)}-0" for b in range(BUCKETS)}


@needs_spark
def test_uncommitted_anchor_hides_a_committed_row_on_hudi_120(tmp_path: Path) -> None:
    """Issue #19774 on real Hudi 1.2.0: w1 killed after its log in a fresh bucket is written, w2's later
    committed upsert of that bucket is missing from Hudi's own snapshot read (storage listing)."""
    from engines.hudi_spark.run import run

    out = tmp_path / "run"
    verdict = run(out, protocol="nbcc", workload="uncommitted-anchor", timeout_s=300)
    killed = [n for n in verdict["notes"] if n["kind"] == "fault"]
    assert [(n["f"], n["process"]) for n in killed] == [("kill", "w1")]
    plans = anchor_plan(["w1", "w2"], 1, 1)
    key = plans["w2"][0]["rows"][0]["key"]
    (pending,) = [n["instant"] for n in verdict["notes"] if n["kind"] == "pending-instant"]
    # the table: w1's log of the pending instant and w2's of a completed one, in bucket 1's file group
    group = f"{file_id_prefix(1)}-0"
    logs = sorted(p.name for p in (out / "table" / "p0").glob(f".{group}_*.log.*"))
    assert len(logs) == 2 and logs[0].startswith(f".{group}_{pending}.log."), logs
    ran = load_writers_run(out)
    (w2_ok,) = [e for e in ran.events if e["process"] == "w2" and e.get("f") == "write" and e["type"] == "ok"]
    assert logs[1].startswith(f".{group}_{w2_ok['instant'].split('_')[0]}.log.")
    # Hudi's reader misses w2's committed row: the slice keyed on w1's pending instant is hidden
    assert not verdict["valid"]
    assert [(a["kind"], a["key"], a["value"], a["expected"]) for a in verdict["anomalies"]] == \
        [("lost-update", key, None, plans["w2"][0]["rows"][0]["value"])]
    # the same table under each release's own file-system view (engines/hudi_spark/fsview.py): 1.2.0 keys
    # bucket 1's only slice on w1's pending instant and holds no committed slice of it; 1.2.1 (PR #19785's
    # HoodieFileGroup#addLogFiles) opens it at w2's completed instant and its reader reads w2's log
    views = ran.file_slices
    assert views is not None
    old, new = (views[v]["partitions"]["p0"] for v in ("1.2.0", "1.2.1"))
    (g120,) = [g for g in old["file_groups"] if g["file_id"] == group]
    assert [s["base_instant"] for s in g120["all_slices"]] == [pending] and g120["committed_slices"] == []
    assert group not in {s["file_id"] for s in old["reader_slices"]}
    (r121,) = [s for s in new["reader_slices"] if s["file_id"] == group]
    assert r121["base_instant"] == w2_ok["instant"].split("_")[0] and r121["log_files"] == [logs[1]]
