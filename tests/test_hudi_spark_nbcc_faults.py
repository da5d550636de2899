"""An NBCC entry's clusterings, crashes, time-triggered pauses and failing compactions translated to Hudi's
Spark writers (engines/hudi_spark/nbcc_plans.py, nbcc_sim.py, nbcc_faults.py), the writer's waits for them
(writer.py), the faults scoped to a batch (launch.FaultInjector, launch.Progress) and the differential's
judgement of the model's refusals (analyses/nbcc_writers_differential.judge_refusals). No Spark: the
translation is pure, the faults hit ``sleep`` processes."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from writer_faults import exchange, sleeper

from analyses.nbcc_writers_differential import (
    COMPACTION_HEARTBEAT,
    COMPACTION_HEARTBEAT_ROW,
    REFUSALS,
    judge_deltacommits,
    judge_failures,
    judge_refusals,
)
from engines.hudi_spark.launch import ANY, FaultInjector, WriterFault, WriterProcess
from engines.hudi_spark.nbcc_faults import BASE_PUT, COMPACTION_INFLIGHT_PUT, LOG_PUT
from engines.hudi_spark.nbcc_plans import nbcc_entry_plans
from engines.hudi_spark.writer import PlanError, load_plan
from model.config import ConfigError
from reports.load import load_writers_history
from scenarios import catalogue

LOG = "t/table/p0/.00000001-0000-0000-0000-000000000000-0_1.log.1_0-1-1"
BASE = "t/table/p0/00000001-0000-0000-0000-000000000000-0_0-1-0_2.parquet"


def _plans(name: str, *overrides: str) -> Any:
    entry = catalogue.load(name, list(overrides))
    return nbcc_entry_plans(name, entry.config)


def _faults(plans: Any, writer: str) -> list[tuple[Any, ...]]:
    return [(f.fault, f.key, f.method, f.nth, f.batch, f.since, f.restart_at, f.resume_after_s)
            for f in plans.faults if f.writer == writer]


def test_the_clustering_entry_plans_its_clustering_between_the_models_deltacommits(tmp_path: Path) -> None:
    plans = _plans("nbcc-clustering-bucket-layout")
    (cluster,) = plans.batches["w3"]  # the compaction service's node plans the clustering
    assert cluster["op"] == "cluster" and cluster["rows"] == [] and cluster["model"]["outcome"] == "refused"
    # the model's plan found w1's and w2's second deltacommits past their .inflight (NBC4: they commit), and
    # the table's two first commits
    assert cluster["after_instants"] == {"deltacommit.inflight": 4} and cluster["after_commits"] == 2
    for w in ("w1", "w2"):
        assert [b["model"]["outcome"] for b in plans.batches[w]] == ["ok", "ok", "rejected"]
        # the third began after the plan: it waits for it on the timeline, and the plan refuses it (NBC3)
        waits = [b.get("after_instants") for b in plans.batches[w]]
        assert waits == [None, None, {"clustering.requested": 1}]
    assert plans.faults == ()  # a refused deltacommit is Hudi's to refuse: no kill
    assert any(u.startswith("nbcc.clustering_at_ms = [4100]") for u in plans.untranslated)
    plan = {"writer": "w3", "base_path": "s3a://b/t", "table": "t", "endpoint": "http://x", "classpath": [],
            "history": "h", "batches": [cluster]}
    (tmp_path / "p.json").write_text(json.dumps(plan))
    assert load_plan(tmp_path / "p.json")["batches"][0]["after_instants"] == {"deltacommit.inflight": 4}
    plan["batches"] = [{**cluster, "after_instants": {"deltacommit.done": 1}}]
    (tmp_path / "p.json").write_text(json.dumps(plan))
    with pytest.raises(PlanError, match=r"batches\[0\]\.after_instants: 'deltacommit.done'"):
        load_plan(tmp_path / "p.json")


def test_a_failed_compaction_kills_the_compactor_and_its_restart_is_refused_the_pending_plan() -> None:
    plans = _plans("nbcc-storage-faults")
    w4 = plans.batches["w4"]
    # the model's first execution of 20260101000004996 fails after its .inflight (injected, no base file: its
    # executor killed); at the next slot its service's resume is refused, the killed executor's heartbeat
    # still living (NB34), and the slot plans nothing (the groups are in the pending compaction)
    assert [(b["op"], b["model"]["instant"], b["model"]["outcome"], b.get("pending")) for b in w4] == [
        ("compact", "20260101000004996", "failed", None),
        ("compact", "20260101000004996", "heartbeat-refused", True)]
    assert w4[0]["model"]["killed_at"] == "its .compaction.inflight PUT"
    assert w4[1]["after_info"] == {"process": "w4", "f": "kill"}
    # killed at its first .compaction.inflight PUT inside that batch, restarted from the next; the refused
    # execution is Hudi's to refuse: no kill in it
    assert ("kill", COMPACTION_INFLIGHT_PUT, "PUT", 1, 0, "invoke", 1, 5.0) in _faults(plans, "w4")
    assert not [f for f in _faults(plans, "w4") if f[4] == 1]
    assert any("a run_compaction Hudi must refuse too" in u for u in plans.untranslated)


def test_crashes_and_pauses_land_on_a_request_the_model_and_hudi_share() -> None:
    plans = _plans("nbcc-storage-faults")
    # w4 crashes at 2.5 s before its first compaction (its plan at 2.2 s found nothing): killed at its
    # first request, restarted from its first batch; w2 paused at 1 s before its first attempt: at its first
    # request, for the entry's 3 s
    assert _faults(plans, "w4")[0] == ("kill", ".", ANY, 1, None, "end", 0, 5.0)
    assert _faults(plans, "w2")[0] == ("pause", ".", ANY, 1, None, "end", None, 3.0)
    assert any(u.startswith("crashes and pauses at a request") for u in plans.untranslated)
    # the model's lock validity, as a pause may outlast it
    assert plans.options["hoodie.write.lock.storage.validity.timeout.secs"] == "10"
    # w1 paused in its second attempt, two logs written: after its first log PUT of that batch
    paused = _plans("nbcc-storage-faults", "faults.pauses[0].node=w1", "faults.pauses[0].at_ms=1600")
    assert ("pause", LOG_PUT, "PUT", 1, 1, "invoke", None, 3.0) in _faults(paused, "w1")
    # w2 crashed in its first attempt, its logs written: the attempt cut there, the writer restarted from
    # the next batch, or (the model never restarts it) not at all
    for restart, expected in ((1000, 1), (-1, None)):
        cut = _plans("nbcc-storage-faults", "faults.crashes[0].node=w2", "faults.crashes[0].at_ms=5000",
                     f"faults.crashes[0].restart_after_ms={restart}")
        assert cut.batches["w2"][0]["model"]["outcome"] == "failed"
        assert ("kill", LOG_PUT, "PUT", 1, None, "invoke", expected, 5.0) in _faults(cut, "w2")


def test_a_fault_after_a_nodes_translated_operations_is_listed_not_injected() -> None:
    # w3 crashes at 31.8 s, when the model's w3 holds the lock; with one operation per node translated the
    # crash comes after them all: listed, not refused and not injected
    entry = catalogue.load("nbcc-storage-faults",
                           ["faults.crashes[0].node=w3", "faults.crashes[0].at_ms=31800"])
    one = nbcc_entry_plans(entry.name, entry.config, max_ops=1)
    assert not _faults(one, "w3")
    assert "faults.crashes[0] (w3 at 31800 ms): after its translated operations" in one.untranslated
    with pytest.raises(ConfigError, match="w3 holds the table lock"):  # translated with every operation
        nbcc_entry_plans(entry.name, entry.config, max_ops=10)


def _state(w: WriterProcess, want: str) -> bool:
    """Whether ``w``'s process reaches scheduler state ``want`` (``T``: stopped) within 5 s."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if f"State:\t{want}" in Path(f"/proc/{w.proc.pid}/status").read_text():
            return True
        time.sleep(0.02)
    return False


def _lines(history: Path, *lines: dict[str, Any]) -> None:
    with history.open("a") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")


def _infos(run: Path) -> list[dict[str, Any]]:
    """The history's info lines (the faults the injector recorded), read by the loader."""
    return [e for e in load_writers_history(run) if e["type"] == "info"]


def _write(process: str, kind: str, batch: int) -> dict[str, Any]:
    return {"process": process, "type": kind, "f": "write", "time": time.time(), "value": {"batch": batch}}


def test_a_fault_scoped_to_a_batch_counts_only_from_its_invoke_or_end(tmp_path: Path) -> None:
    history = tmp_path / "history.jsonl"
    history.write_text("")
    procs: list[WriterProcess] = []

    def restart(w: str, batch: int) -> WriterProcess:
        procs.append(sleeper(tmp_path, f"{w}-2"))
        return procs[-1]

    faults = [WriterFault("w1", "pause", ".", ANY, batch=0, since="end", resume_after_s=0.2),
              WriterFault("w2", "kill", BASE_PUT, batch=1, restart_at=2),
              WriterFault("w3", "kill", ".", ANY, batch=0, since="end")]
    for f in faults:
        f.check(["w1", "w2", "w3"])
    inj = FaultInjector(faults, history, restart)
    for w in ("w1", "w2", "w3"):
        procs.append(sleeper(tmp_path, w))
        inj.add(procs[-1])
    w1, w2, w3 = procs
    try:
        _lines(history, _write("w1", "invoke", 0), _write("w2", "invoke", 0))
        inj(exchange("w1", LOG))  # batch 0 under way: not yet
        inj(exchange("w2", BASE))  # a base file of batch 0: not the batch's
        assert w1.proc.poll() is None and w2.proc.poll() is None and not procs[3:]
        _lines(history, _write("w1", "ok", 0), _write("w2", "ok", 0), _write("w2", "invoke", 1))
        inj(exchange("w1", "t/table/.hoodie/timeline/"))  # its first request once batch 0 ended
        assert _state(w1, "T")
        inj(exchange("w2", BASE))  # its first base file PUT in batch 1
        assert w2.proc.wait(timeout=5) == -signal.SIGKILL and len(procs) == 4
        # a kill during a batch ends it: w3's fault after batch 0 fires at its next request
        killed = {"process": "w3", "type": "info", "f": "kill", "time": time.time()}
        _lines(history, _write("w3", "invoke", 0), killed)
        inj(exchange("w3", "t/table/.hoodie/hoodie.properties"))
        assert w3.proc.wait(timeout=5) == -signal.SIGKILL
        assert _state(w1, "S")  # resumed
        deadline = time.monotonic() + 5
        while "resume" not in [e["f"] for e in _infos(tmp_path)] and time.monotonic() < deadline:
            time.sleep(0.02)
        recorded = _infos(tmp_path)
        assert [(x["process"], x["f"]) for x in recorded if x["f"] != "kill" or "value" in x] == [
            ("w1", "pause"), ("w2", "kill"), ("w3", "kill"), ("w1", "resume")]
    finally:
        for p in procs:
            if p.proc.poll() is None:
                p.proc.kill()
                p.proc.wait()


def test_the_differential_judges_the_models_refusals_and_leaves_the_rest_to_nb4(tmp_path: Path) -> None:
    plans = {"w1": [{"model": {"outcome": "ok"}}, {"model": {"outcome": "rejected"}}],
             "w3": [{"model": {"outcome": "refused"}}]}
    rejected = {"process": "w1", "batch": 1, "outcome": "fail",
                "error": "org.apache.hudi.exception.HoodieClusteringUpdateException"}
    refused = {"process": "w3", "batch": 0, "outcome": "fail",
               "error": "java.lang.UnsupportedOperationException"}
    ok = {"process": "w1", "batch": 0, "outcome": "commit"}
    timeline = tmp_path / ".hoodie" / "timeline"
    timeline.mkdir(parents=True)
    (timeline / "20260101000004218.clustering.requested").write_text("")
    rest, diffs, notes = judge_refusals([ok, rejected, refused], plans, tmp_path)
    assert rest == [ok] and diffs == [] and len(notes) == 2
    # a Hudi that commits what the model refuses, and one that left no pending clustering plan
    (timeline / "20260101000004218_20260101000009000.replacecommit").write_text("")
    rest, diffs, _ = judge_refusals([{**rejected, "outcome": "commit"}, refused], plans, tmp_path)
    assert rest == [] and [(d["kind"], d["fidelity"]) for d in diffs] == [
        ("refusal", REFUSALS["rejected"][1]), ("clustering-plan", REFUSALS["refused"][1])]


def test_a_compaction_refused_for_a_live_heartbeat_the_model_executed_is_a_difference_under_faults() -> None:
    # Hudi 1.2.0 on nbcc-storage-faults: the compactor killed in its execution left the compaction's heartbeat
    # and its restart could not execute the pending plan; an execution the model did not refuse
    # (judge_refusals passes it on) is a difference whatever the storage faults
    message = "Cannot execute instant 20261129094456996 due to heartbeat by concurrent writer/job"
    error = {"class": "org.apache.hudi.exception.HoodieLockException", "message": message,
             "root_class": "org.apache.hudi.exception.HoodieLockException", "root_message": message}
    events = [{"process": "w4", "type": "invoke", "f": "write", "value": {"batch": 1}},
              {"process": "w4", "type": "fail", "f": "write", "value": {"batch": 1}, "error": error},
              {"process": "w1", "type": "invoke", "f": "write", "value": {"batch": 0}},
              {"process": "w1", "type": "fail", "f": "write", "value": {"batch": 0},
               "error": {**error, "root_message": "FAILED_TO_RELEASE"}}]
    attempts = judge_deltacommits(events)
    diffs, notes = judge_failures(attempts, faulted=True)
    assert [(d["kind"], d["process"], d["fidelity"]) for d in diffs] == [
        ("compaction-failed", "w4", COMPACTION_HEARTBEAT_ROW)]
    assert len(notes) == 1 and notes[0].startswith("w1 batch 0 failed under the run's storage faults")


def test_a_compaction_the_model_refused_for_a_live_heartbeat_must_be_refused_by_hudi(tmp_path: Path) -> None:
    # NB34: the model's resume of a killed executor's plan is refused; Hudi's run_compaction must throw
    # validateHeartBeat's HoodieLockException, and executing it is a difference
    message = "Cannot execute instant 20261129094456996 due to heartbeat by concurrent writer/job"
    plans = {"w4": [{"model": {"outcome": "failed"}}, {"model": {"outcome": "heartbeat-refused"}}]}
    refused = {"process": "w4", "batch": 1, "outcome": "fail",
               "error": "org.apache.hudi.exception.HoodieLockException", "message": message}
    (tmp_path / ".hoodie" / "timeline").mkdir(parents=True)
    rest, diffs, notes = judge_refusals([refused], plans, tmp_path)
    assert rest == [] and diffs == [] and notes == [
        f"w4 batch 1 failed with HoodieLockException, as the model ({COMPACTION_HEARTBEAT_ROW})"]
    assert COMPACTION_HEARTBEAT in message
    # another HoodieLockException (a lock not acquired) is not the refusal, nor a commit
    for hudi in ({**refused, "message": "Unable to acquire lock"}, {**refused, "outcome": "commit"}):
        rest, diffs, _ = judge_refusals([hudi], plans, tmp_path)
        assert [(d["kind"], d["expected"], d["fidelity"]) for d in diffs] == [
            ("refusal", "HoodieLockException", COMPACTION_HEARTBEAT_ROW)]
