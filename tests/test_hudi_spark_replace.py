"""Clustering and insert_overwrite on Hudi's Spark writers, without Spark: the plans of the catalogue's
replacecommit entries, the writer's plan check, the run checks' overwrite semantics, Elle's view of
replacecommits (on a hand-made table in the model's JSON encoding) and the model's judgement of
replacecommits in ``hcc differential writers`` (SparkRejectUpdateStrategy, a pending clustering as a
conflict candidate, replaced file ids as mutated), each shown to catch a Hudi that decided otherwise."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from analyses.writers_differential import Replaces, judge, timeline_instants
from engines.hudi_spark.check import CONFLICT, REJECTED, check_run
from engines.hudi_spark.plans import UPDATE_STRATEGY, entry_plans
from engines.hudi_spark.txns import RECORDS_VIEW, isolation, view
from engines.hudi_spark.writer import PlanError, load_plan
from engines.rundir import RunWriter
from model.config import ConfigError
from model.run_format import HUDI_WRITERS
from scenarios import catalogue


def _plans(name: str, *overrides: str, max_ops: int = 3):  # type: ignore[no-untyped-def]
    return entry_plans(name, catalogue.load(name, list(overrides)).config, max_ops)


# ---- plans ---------------------------------------------------------------------------------------

def test_a_clustering_writer_becomes_clusterings_of_the_partitions_it_clusters_in_the_model() -> None:
    p = _plans("tl-hudi-clustering-safe")
    assert [b["op"] for b in p.batches["w3"]] == ["cluster"] * 3
    assert [b["partition"] for b in p.batches["w3"]] == ["p0", "p1", "p0"]  # the simulated run's order
    assert all(b["rows"] == [] and b["after_commits"] == 1 for b in p.batches["w3"])
    assert {b["op"] for w in ("w1", "w2") for b in p.batches[w]} == {"upsert"}
    assert "hoodie.clustering.updates.strategy" not in p.options  # Hudi infers Reject, as the model does


def test_an_overwrite_writer_becomes_insert_overwrites_of_its_keys() -> None:
    p = _plans("tl-hudi-insert-overwrite-safe")
    assert [(b["op"], b["rows"][0]["key"], b["rows"][0]["value"]) for b in p.batches["w3"]] == [
        ("insert_overwrite", "k3", 3001), ("insert_overwrite", "k3", 3002), ("insert_overwrite", "k2", 3003)]


def test_an_explicit_update_strategy_becomes_hudis_class() -> None:
    p = _plans("tl-hudi-clustering-safe", "timeline.clustering_updates=allow")
    assert p.options["hoodie.clustering.updates.strategy"] == UPDATE_STRATEGY["allow"]
    assert UPDATE_STRATEGY["allow"].endswith(".SparkAllowUpdateStrategy")


@pytest.mark.parametrize("name", ["tl-hudi-clustering-ignore-pending",
                                  "tl-hudi-insert-overwrite-ignore-replaced"])
def test_the_hypothetical_replace_writers_are_refused_by_field(name: str) -> None:
    with pytest.raises(ConfigError, match=r"timeline\.hypothetical_replace"):
        _plans(name)


def _plan_file(tmp_path: Path, batch: dict[str, Any]) -> Path:
    plan = {"writer": "w3", "base_path": "s3a://b/t", "table": "t", "endpoint": "http://x", "classpath": [],
            "history": "h", "batches": [batch]}
    (tmp_path / "p.json").write_text(json.dumps(plan))
    return tmp_path / "p.json"


def test_a_cluster_batch_names_its_partition_and_no_rows(tmp_path: Path) -> None:
    assert load_plan(_plan_file(tmp_path, {"op": "cluster", "partition": "p0", "rows": []}))
    for bad in ({"op": "cluster", "rows": []},
                {"op": "cluster", "partition": "p0", "rows": [{"key": "k", "partition": "p0", "value": 1}]}):
        with pytest.raises(PlanError, match=r"batches\[0\]: a cluster batch"):
            load_plan(_plan_file(tmp_path, bad))


# ---- the run checks --------------------------------------------------------------------------------

def _w(process: str, instant: str, op: str, rows: list[list[Any]], t: float, **extra: Any) -> dict[str, Any]:
    return {"process": process, "f": "write", "type": "ok", "instant": instant, "elapsed_s": 1.0, "time": t,
            "value": {"batch": 0, "op": op, "rows": rows}, **extra}


def _timeline(*pairs: tuple[str, str, str]) -> list[dict[str, str]]:
    return [{"requested": r, "completed": c, "state": "completed", "action": a} for r, c, a in pairs]


def _read(rows: list[list[Any]]) -> dict[str, Any]:
    return {"process": "w1", "f": "read", "type": "ok", "time": 9, "value": rows}


def test_an_overwrite_deletes_its_partitions_other_keys_and_a_key_still_read_is_a_lost_update() -> None:
    writes = [_w("w1", "1_2", "upsert", [["k1", "p0", 0], ["k3", "p0", 0], ["k2", "p1", 0]], 1),
              _w("w3", "3_4", "insert_overwrite", [["k3", "p0", 3001]], 2),
              _w("w3", "5_6", "cluster", [], 3),
              _w("w3", "", "cluster", [], 4, result="nothing-to-cluster")]
    timeline = _timeline(("1", "2", "commit"), ("3", "4", "replacecommit"), ("5", "6", "replacecommit"))
    right = check_run([*writes, _read([["k2", "p1", 0, "1", "f"], ["k3", "p0", 3001, "3", "g"]])], timeline)
    assert right["valid"], right["anomalies"]  # k1 gone with p0's old file group; p1 untouched
    wrong = check_run([*writes, _read([["k1", "p0", 0, "1", "f"], ["k2", "p1", 0, "1", "f"],
                                       ["k3", "p0", 3001, "3", "g"]])], timeline)
    assert [(a["kind"], a["key"], a["expected"]) for a in wrong["anomalies"]] == [("lost-update", "k1", None)]


@pytest.mark.parametrize("ordering", ["completion", "event-time"])
def test_a_write_after_a_delete_partition_must_be_read_and_one_before_it_must_not(ordering: str) -> None:
    # Hudi issue #19793's shape: a partition deleted, then a key of it written again
    writes = [_w("w1", "1_2", "upsert", [["k0", "p0", 1], ["k1", "p0", 1], ["k2", "p1", 1]], 1),
              _w("w1", "3_4", "delete_partition", [["k0", "p0", 0]], 2),
              _w("w1", "5_6", "upsert", [["k1", "p0", 3]], 3)]
    timeline = _timeline(("1", "2", "deltacommit"), ("3", "4", "replacecommit"), ("5", "6", "deltacommit"))
    right = check_run([*writes, _read([["k1", "p0", 3, "5", "g"], ["k2", "p1", 1, "1", "f"]])], timeline,
                      ordering)
    assert right["valid"] and right["replacecommits"] == 1, right["anomalies"]
    lost = check_run([*writes, _read([["k2", "p1", 1, "1", "f"]])], timeline, ordering)  # re-insert hidden
    assert [(a["kind"], a["key"], a["expected"]) for a in lost["anomalies"]] == [("lost-update", "k1", 3)]
    kept = check_run([*writes, _read([["k0", "p0", 1, "1", "f"], ["k1", "p0", 3, "5", "g"],
                                      ["k2", "p1", 1, "1", "f"]])], timeline, ordering)
    assert [(a["kind"], a["key"]) for a in kept["anomalies"]] == [("lost-update", "k0")]


def test_replacecommits_and_refused_updates_are_counted() -> None:
    refused = {"process": "w1", "f": "write", "type": "fail", "time": 3, "elapsed_s": 1.0,
               "value": {"batch": 1, "op": "upsert", "rows": [["k1", "p0", 1001]]},
               "error": {"class": "org.apache.hudi.exception.HoodieUpsertException", "message": "",
                         "root_class": REJECTED}}
    got = check_run([_w("w1", "1_2", "upsert", [["k1", "p0", 0]], 1), _w("w3", "3_4", "cluster", [], 2),
                     _w("w3", "", "cluster", [], 2.5, result="nothing-to-cluster"), refused],
                    _timeline(("1", "2", "commit"), ("3", "4", "replacecommit")))
    assert (got["commits"], got["replacecommits"], got["aborted"]) == (3, 1, 1)
    assert [(r["process"], r["batch"]) for r in got["rejected"]] == [("w1", 1)] and not got["conflicts"]


def test_an_upsert_completing_after_an_overwrite_is_read() -> None:
    writes = [_w("w1", "1_2", "upsert", [["k1", "p0", 0]], 1),
              _w("w3", "3_4", "insert_overwrite", [["k3", "p0", 3001]], 2),
              _w("w1", "5_6", "upsert", [["k1", "p0", 1001]], 3)]
    got = check_run([*writes, _read([["k1", "p0", 1001, "5", "g"], ["k3", "p0", 3001, "3", "g"]])],
                    _timeline(("1", "2", "commit"), ("3", "4", "replacecommit"), ("5", "6", "commit")))
    assert got["valid"], got["anomalies"]


# ---- Elle's view of replacecommits -------------------------------------------------------------------

def _table(root: Path, *, overwrite_deletes: bool = True) -> None:
    """p0's file group fa: a seed commit (k1, k3), an upsert of k1, a clustering of fa into fc, an
    insert_overwrite of p0 with k3 (fo, replacing fc): each base file JSON lines, each commit JSON."""
    tl = root / ".hoodie" / "timeline"
    tl.mkdir(parents=True)

    def base(name: str, rows: dict[str, int]) -> str:
        (root / "p0").mkdir(exist_ok=True)
        (root / "p0" / name).write_text("".join(json.dumps({"key": k, "value": v}) + "\n"
                                                for k, v in rows.items()))
        return f"p0/{name}"

    def commit(name: str, fid: str, path: str, prev: str | None, replaced: list[str] | None = None) -> None:
        stat = {"fileId": fid, "partitionPath": "p0", "path": path, "prevBaseFile": prev}
        md: dict[str, Any] = {"partitionToWriteStats": {"p0": [stat]}}
        if replaced is not None:
            md["partitionToReplaceFileIds"] = {"p0": replaced}
        (tl / name).write_text(json.dumps(md))

    commit("101_102.commit", "fa", base("fa_0-1-1_101.parquet", {"k1": 0, "k3": 0}), None)
    commit("103_104.commit", "fa", base("fa_0-1-1_103.parquet", {"k1": 1001, "k3": 0}),
           "fa_0-1-1_101.parquet")
    commit("105_106.replacecommit", "fc", base("fc_0-1-1_105.parquet", {"k1": 1001, "k3": 0}), None, ["fa"])
    kept = {} if overwrite_deletes else {"k1": 1001}
    commit("107_108.replacecommit", "fo", base("fo_0-1-1_107.parquet", {"k3": 3001, **kept}), None, ["fc"])


def _run_dir(tmp_path: Path, final: list[list[Any]], overwrite_failed: str | None = None) -> Path:
    """``overwrite_failed``: the insert_overwrite's line is a fail with that exception class, recording its
    completed instant (the call failed after its replacecommit completed)."""
    _table(tmp_path / "table")
    overwrite = _w("w3", "107_108", "insert_overwrite", [["k3", "p0", 3001]], 4)
    if overwrite_failed:
        overwrite |= {"type": "fail", "error": {"class": overwrite_failed, "message": "m"}}
    events = [_w("w1", "101_102", "upsert", [["k1", "p0", 0], ["k3", "p0", 0]], 1),
              _w("w1", "103_104", "upsert", [["k1", "p0", 1001]], 2),
              _w("w3", "105_106", "cluster", [], 3),
              overwrite,
              {"process": "w1", "f": "read", "type": "invoke", "time": 5, "value": None},
              {**_read(final), "time": 6}]
    (tmp_path / "history.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return tmp_path


def test_elle_reads_a_clustering_as_a_read_of_what_it_moved_an_overwrite_as_deletes(tmp_path: Path) -> None:
    run = _run_dir(tmp_path, [["k3", "p0", 3001, "107", "fo"]])
    txns = view(run).history.txns
    clustering, overwrite = txns[2], txns[3]
    assert [(m[0], m[1], m[2]) for m in clustering.mops] == [("r", "k1", 1001), ("r", "k3", 0)]
    assert [(m[0], m[1], m[2]) for m in overwrite.mops] == [("r", "k1", 1001), ("r", "k3", 0),
                                                            ("w", "k3", 3001), ("w", "k1", "del:3001")]
    assert isolation(run, RunWriter(run, "occ", HUDI_WRITERS).write_text)["valid"] is True
    assert (run / RECORDS_VIEW).read_text() == view(run).jsonl()  # the view Elle checked, kept beside it


@pytest.mark.parametrize(("failure", "valid"), [("org.apache.hudi.exception.HoodieRollbackException", True),
                                                (CONFLICT, False)])
def test_elle_reads_a_call_that_failed_after_its_commit_as_a_commit(tmp_path: Path, failure: str,
                                                                    valid: bool) -> None:
    run = _run_dir(tmp_path, [["k3", "p0", 3001, "107", "fo"]], overwrite_failed=failure)
    assert view(run).history.txns[3].type == ("ok" if valid else "fail")
    # a conflict is thrown before the commit (check.DEFINITE_ABORTS): its value read is an aborted read
    assert isolation(run, RunWriter(run, "occ", HUDI_WRITERS).write_text)["valid"] is valid


def test_elle_finds_a_key_read_after_the_overwrite_that_deleted_it(tmp_path: Path) -> None:
    run = _run_dir(tmp_path, [["k1", "p0", 1001, "103", "fc"], ["k3", "p0", 3001, "107", "fo"]])
    got = isolation(run, RunWriter(run, "occ", HUDI_WRITERS).write_text)
    assert got["valid"] is False and got["anomalies"], got


# ---- the model's judgement of replacecommits (hcc differential writers) -------------------------------

SEED, SEED_DONE = 20261129010000000, 20261129010001000
UP = 20261129010002000  # an upsert of p0/fa
CL = 20261129010003000  # a clustering of p0/fa
UP_DONE, CL_DONE = 20261129010005000, 20261129010008000
FA = ("p0", "fa")


def _seconds(instant: int) -> float:
    s = str(instant)
    return dt.datetime(int(s[:4]), int(s[4:6]), int(s[6:8]), int(s[8:10]), int(s[10:12]), int(s[12:14]),
                       int(s[14:]) * 1000, tzinfo=dt.UTC).timestamp()


def _names(clustering_done: bool, upsert_done: bool) -> list[str]:
    names = [f"{SEED}.commit.requested", f"{SEED}.inflight", f"{SEED}_{SEED_DONE}.commit",
             f"{UP}.commit.requested", f"{UP}.inflight", f"{CL}.clustering.requested",
             f"{CL}.clustering.inflight"]
    return (names + ([f"{CL}_{CL_DONE}.replacecommit"] if clustering_done else [])
            + ([f"{UP}_{UP_DONE}.commit"] if upsert_done else []))


MUTATED = {SEED: frozenset({FA}), UP: frozenset({FA}), CL: frozenset({("p0", "fc")})}
PLANS = Replaces({CL: frozenset({FA})}, {CL: frozenset({FA})})


def _invoke(process: str, instant: int) -> dict[str, Any]:
    return {"process": process, "f": "write", "type": "invoke", "time": _seconds(instant) - 0.5,
            "value": {"batch": 0, "op": "upsert", "rows": [["k1", "p0", 1]]}}


def _fail(process: str, instant: int, error: dict[str, str]) -> dict[str, Any]:
    return {"process": process, "f": "write", "type": "fail", "time": _seconds(instant),
            "value": {"batch": 0, "op": "upsert", "rows": [["k1", "p0", 1]]}, "error": error}


def _rejected(group: tuple[str, str]) -> dict[str, str]:
    return {"class": "org.apache.hudi.exception.HoodieUpsertException",
            "message": f"Failed to upsert for commit time {UP}", "root_class": REJECTED,
            "root_message": "Not allowed to update the clustering file group HoodieFileGroupId("
                            f"partitionPath={group[0]}, fileId={group[1]}). For pending clustering "
                            "operations, we are not going to support update for now."}


def _conflict_with_clustering() -> dict[str, str]:
    op = "ConcurrentOperation(actionState={}, actionType={}, instantTime={})"
    return {"class": CONFLICT,
            "message": "java.util.ConcurrentModificationException: Cannot resolve conflicts for overlapping "
                       f"writes between first operation = {op.format('INFLIGHT', 'commit', UP)}, "
                       f"second operation = {op.format('REQUESTED', 'clustering', CL)}"}


def test_a_completed_clustering_keeps_its_requested_action() -> None:
    (cl,) = [i for i in timeline_instants(_names(True, False)) if i.requested == CL]
    assert (cl.action, cl.requested_action, cl.is_completed) == ("replacecommit", "clustering", True)


def test_an_update_refused_while_its_group_was_being_clustered_agrees() -> None:
    instants = timeline_instants(_names(clustering_done=True, upsert_done=False))
    got = judge([_invoke("w1", CL + 500), _fail("w1", CL + 1000, _rejected(FA))], instants, MUTATED,
                replaces=PLANS)
    assert [(a.hudi, a.model, a.instant, a.conflict_with) for a in got] == [("reject", "reject", UP, CL)]


def test_an_update_refused_with_no_clustering_of_its_group_is_a_difference() -> None:
    instants = timeline_instants(_names(clustering_done=True, upsert_done=False))
    got = judge([_invoke("w1", CL + 500), _fail("w1", CL + 1000, _rejected(("p0", "fb")))], instants,
                MUTATED, replaces=PLANS)
    assert [(a.hudi, a.model, a.agrees) for a in got] == [("reject", "commit", False)]


def test_a_pending_clustering_of_the_written_group_is_a_conflict_candidate() -> None:
    instants = timeline_instants(_names(clustering_done=False, upsert_done=False))
    events = [_invoke("w1", UP), _fail("w1", UP_DONE, _conflict_with_clustering())]
    (got,) = judge(events, instants, MUTATED, replaces=PLANS)
    assert (got.hudi, got.model, got.conflict_with, got.hudi_conflict_with) == ("abort", "abort", CL, CL)
    # a Hudi that left pending clusterings out of its candidates (the hypothetical writer) would commit
    (caught,) = judge([_invoke("w1", UP), {**_fail("w1", UP_DONE, {}), "type": "ok",
                                           "instant": f"{UP}_{UP_DONE}"}],
                      timeline_instants(_names(False, True)), MUTATED, replaces=PLANS)
    assert (caught.hudi, caught.model, caught.agrees) == ("commit", "abort", False)


def test_a_completed_replacecommits_replaced_ids_are_mutated() -> None:
    # the clustering completed while the upsert wrote: its partitionToReplaceFileIds holds p0/fa
    instants = timeline_instants(_names(True, False))
    events = [_invoke("w1", UP), _fail("w1", CL_DONE + 1000, {**_conflict_with_clustering()})]
    (got,) = judge(events, instants, {**MUTATED, CL: frozenset({("p0", "fc")})}, replaces=PLANS)
    assert (got.model, got.conflict_with) == ("abort", CL)
    (blind,) = judge(events, instants, MUTATED, replaces=Replaces({}, {}))
    assert blind.model == "commit"  # without the replaced ids and the plan, the model sees no conflict


def test_a_clustering_commits_without_a_conflict_check() -> None:
    instants = timeline_instants(_names(True, True))
    done = {"process": "w3", "f": "write", "type": "ok", "instant": f"{CL}_{CL_DONE}",
            "time": _seconds(CL_DONE), "value": {"batch": 0, "op": "cluster", "partition": "p0", "rows": []}}
    (got,) = judge([done], instants, MUTATED, replaces=PLANS)
    assert (got.hudi, got.model, got.candidates, got.mutated) == ("commit", "commit", (), (FA,))
