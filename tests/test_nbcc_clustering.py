"""Clustering of an NBCC table in the model (model/nbcc/sim_clustering.py), as Hudi 1.2.0 does it on its
simple bucket layout: the plan is written, its execution refused (CLUSTER is not among
HoodieSimpleBucketLayout's operations), and the pending plan then refuses every update of its file groups
and keeps them out of compaction plans. Seen on Hudi 1.2.0's own Spark writers (the plan requested, the
UnsupportedOperationException from BaseCommitActionExecutor's constructor, HoodieClusteringUpdateException
from SparkRejectUpdateStrategy for the next upsert)."""

from __future__ import annotations

import pytest

from model.config import ConfigError
from model.nbcc.config import NbccConfig
from model.nbcc.sim_checks import check_history
from model.nbcc.sim_clustering import UNSUPPORTED_LAYOUT, UPDATE_REJECTED
from model.nbcc.sim_layout import bucket_file_id, bucket_of
from model.nbcc.sim_plan import ClusteringSlot, CompactionSlot
from model.nbcc.sim_table import BatchPlan, SimRun, TablePlan, WriterPlan, run_table
from model.runtime.history import Event
from model.timeline.metadata import decode_instant_metadata, plan_file_groups
from scenarios import catalogue


def _run(clustering_ms: int | None = 1500) -> SimRun:
    """One writer: batch 0 upserts k0 and k1 (both buckets), batch 1 upserts k0 again 3 s later; a
    clustering at ``clustering_ms``, between them, and a compaction slot after it."""
    plan = TablePlan(
        (WriterPlan((BatchPlan(((0, 1), (1, 1)), work_ms=100, think_ms=3000),
                     BatchPlan(((0, 5),), work_ms=100))),),
        compactions=(CompactionSlot(2500),), buckets=2, metadata_table=False, variant="hudi-1.2.0",
        clusterings=() if clustering_ms is None else (ClusteringSlot(clustering_ms),))
    return run_table(plan, 1)


def _of(run: SimRun, f: str) -> list[Event]:
    return [e for e in run.events if e.f == f and e.type in ("ok", "fail")]


def test_the_plan_is_written_and_its_execution_refused_by_the_bucket_layout() -> None:
    run = _run()
    (planned,) = _of(run, "clustering-plan")
    groups = {bucket_file_id(bucket_of(k, 2)) for k in ("k0", "k1")}
    assert planned.type == "ok" and set(planned.value["file_groups"]) == groups
    (executed,) = _of(run, "clustering")
    assert (executed.type, executed.value["reason"]) == ("fail", UNSUPPORTED_LAYOUT)
    timeline = sorted(k.rsplit("/", 1)[1] for k in run.objects if "/.hoodie/timeline/" in k)
    (requested,) = [n for n in timeline if "clustering" in n]
    assert requested == f"{planned.value['instant']}.clustering.requested"
    assert not [n for n in timeline if "replacecommit" in n]  # nothing is ever replaced
    key = next(k for k in run.objects if k.endswith(requested))
    assert {fid for _p, fid in plan_file_groups(decode_instant_metadata(run.objects[key], key))} == groups


def test_the_pending_plan_refuses_the_next_update_for_good_and_keeps_its_groups_from_compaction() -> None:
    run = _run()
    deltas = _of(run, "deltacommit")
    assert [e.type for e in deltas] == ["ok", "fail"]  # batch 1 refused once, never retried
    assert deltas[1].value["reason"] == UPDATE_REJECTED
    assert deltas[1].value["file_groups"] == [bucket_file_id(bucket_of("k0", 2))]
    (compaction,) = _of(run, "compaction-plan")
    assert (compaction.type, compaction.value["reason"]) == ("fail", "nothing to compact")
    verdict = check_history(run.events, run.objects)
    assert verdict.verdict == "ok" and [f.kind for f in verdict.findings] == ["clustering-blocks-updates"]
    assert verdict.findings[0].details["refused"] == 1


def test_without_the_clustering_the_same_plan_commits_and_compacts() -> None:
    run = _run(None)
    assert [e.type for e in _of(run, "deltacommit")] == ["ok", "ok"]
    assert [e.type for e in _of(run, "compaction-plan")] == ["ok"]
    assert check_history(run.events, run.objects).findings == ()


def test_the_catalogue_entry_plans_both_buckets_and_refuses_both_writers() -> None:
    entry = catalogue.load("nbcc-clustering-bucket-layout")
    run = run_table(entry.config.plan(entry.config.seed), entry.config.seed)
    refused = [e for e in _of(run, "deltacommit") if e.type == "fail"]
    assert {e.process for e in refused} == {"w1", "w2"} and all(e.value["reason"] == UPDATE_REJECTED
                                                                for e in refused)
    verdict = check_history(run.events, run.objects, rule=entry.config.nbcc.slicing_rule)
    assert verdict.verdict == entry.expect == "ok" and verdict.findings


def test_a_negative_clustering_time_is_refused_by_field() -> None:
    with pytest.raises(ConfigError, match=r"nbcc\.clustering_at_ms"):
        NbccConfig(clustering_at_ms=(-1,)).validate()
