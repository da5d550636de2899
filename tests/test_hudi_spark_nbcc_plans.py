"""NBCC catalogue entries translated to Hudi's Spark writers (engines/hudi_spark/nbcc_plans.py), the writer
restart after a kill (launch.FaultInjector), and the NBCC differential's comparisons
(analyses/nbcc_writers_differential.py), shown to catch a Hudi whose file slices differ from the model's.
No Spark: the translation and the comparisons are pure; the restart runs ``sleep`` processes."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest
from writer_faults import exchange, sleeper

from analyses.nbcc_writers_differential import (
    COMMIT_ROWS,
    compare_slices,
    judge_deltacommits,
    judge_failures,
    model_view,
    storage_faults,
)
from engines.hudi_spark.launch import FaultInjector, WriterFault, WriterProcess
from engines.hudi_spark.nbcc import bucket_of
from engines.hudi_spark.nbcc_plans import LOG_PUT, hudi_plans, load_entry, nbcc_entry_plans
from model.config import ConfigError
from model.nbcc.sim_layout import bucket_of as model_bucket_of
from model.nbcc.sim_table import run_table
from model.nbcc.slices import Rule
from reports.load import load_writers_history
from scenarios import catalogue


def _plans(name: str, max_ops: int = 3) -> Any:
    entry = catalogue.load(name)
    return entry, nbcc_entry_plans(name, entry.config, max_ops)


def test_the_anchor_entry_becomes_a_kill_after_the_first_log_and_a_restart() -> None:
    entry, plans = _plans("nbcc-uncommitted-anchor")
    assert plans == nbcc_entry_plans("nbcc-uncommitted-anchor", entry.config)  # the seed decides it all
    w1 = plans.batches["w1"]
    # the model's w1 fails its first deltacommit after a log of a fresh bucket and retries it
    assert [b["model"]["outcome"] for b in w1] == ["failed", "ok", "ok"]
    assert w1[0]["rows"] == w1[1]["rows"] and w1[1]["after_info"] == {"process": "w1", "f": "kill"}
    (kill,) = [f for f in plans.faults if f.writer == "w1"]
    assert (kill.fault, kill.key, kill.method, kill.nth, kill.restart_at) == ("kill", LOG_PUT, "PUT", 1, 1)
    # it begins after a commit (the simulation's w3 and w2 began earlier): #19774 needs an earlier instant
    assert w1[0]["after_commits"] == 1
    # w3's kill comes after the two logs of its committed first deltacommit (two buckets)
    (k3,) = [f for f in plans.faults if f.writer == "w3"]
    assert k3.nth == 3 and k3.restart_at == 2
    # the first attempt the simulation began creates the table alone
    assert [b["after_commits"] for w in plans.batches.values() for b in w].count(0) == 1
    assert plans.options["hoodie.bucket.index.num.buckets"] == "6"
    assert plans.options["hoodie.metadata.enable"] == "false"
    assert any(u.startswith("nbcc.compactions = 1") for u in plans.untranslated)


def test_keys_keep_their_bucket_and_values_their_order() -> None:
    entry, plans = _plans("nbcc-completion-time-safe")
    sim = entry.config.plan(entry.config.seed)
    for w, batches in plans.batches.items():
        if w == sim.compactor_node:
            continue
        model = sim.writers[int(w[1:]) - 1].batches
        for b in batches:
            rows = model[b["model"]["batch"]].rows
            assert [bucket_of(r["key"], sim.buckets) for r in b["rows"]] == \
                [model_bucket_of(f"k{k}", sim.buckets) for k, _ in rows]
            order = sorted(range(len(rows)), key=lambda i: rows[i][1])
            assert [b["rows"][i]["value"] for i in order] == sorted(r["value"] for r in b["rows"])
    assert plans.options["hoodie.metadata.enable"] == "true"


@pytest.mark.parametrize(("name", "overrides", "field"), [
    ("nbcc-uncommitted-anchor-pr-19785", (), "nbcc.variant"), ("nbcc-instant-time-rule", (), "nbcc.variant"),
    ("nbcc-uncommitted-anchor-window", (), "nbcc.read_every_ms"),
    # a crash while the compactor holds the table lock (2121-2479 ms), one after w1 wrote its next
    # requested instant and before it began that attempt, a pause not triggered by time (nbcc_faults.py)
    ("nbcc-storage-faults", ("faults.crashes[0].at_ms=2300",), "faults.crashes[0].at_ms"),
    ("nbcc-storage-faults", ("faults.crashes[0].node=w1", "faults.crashes[0].at_ms=1500"),
     "faults.crashes[0].at_ms"),
    ("nbcc-storage-faults", ("faults.pauses[0].trigger=acquired",), "faults.pauses[0].trigger")])
def test_what_hudi_cannot_run_is_refused_by_field(name: str, overrides: tuple[str, ...], field: str) -> None:
    entry = catalogue.load(name, list(overrides))
    with pytest.raises(ConfigError) as e:
        nbcc_entry_plans(name, entry.config)
    assert e.value.field == field


def test_max_ops_caps_each_writer_and_refuses_zero() -> None:
    _, plans = _plans("nbcc-uncommitted-anchor", max_ops=1)
    assert all(len(b) == 1 for b in plans.batches.values())
    # a kill of a writer's last attempt restarts it past its batches: it only reads, after the kill
    assert [(f.writer, f.restart_at) for f in plans.faults] == [("w1", 1)]
    with pytest.raises(ConfigError, match="max_ops"):
        _plans("nbcc-uncommitted-anchor", max_ops=0)


def test_load_entry_takes_nbcc_and_occ_entries_and_names_the_field_otherwise() -> None:
    assert hudi_plans(load_entry("scenario", "nbcc-uncommitted-anchor"))[0] == "nbcc"
    assert hudi_plans(load_entry("scenario", "tl-hudi-occ-duplicate-key"))[0] == "occ"
    with pytest.raises(ConfigError) as e:
        load_entry("scenario", "rfc91-safe")
    assert e.value.field == "scenario"


def test_a_kill_with_restart_at_starts_the_writer_again_before_killing_it(tmp_path: Path) -> None:
    started: list[tuple[str, int]] = []
    procs: list[WriterProcess] = []

    def restart(w: str, batch: int) -> WriterProcess:
        started.append((w, batch))
        assert procs[0].proc.poll() is None  # started before the kill: a waiter never sees no writer
        procs.append(sleeper(tmp_path, f"{w}-2"))
        return procs[-1]

    inj = FaultInjector([WriterFault("w1", "kill", LOG_PUT, restart_at=2),
                         WriterFault("w1", "kill", LOG_PUT, nth=2)], tmp_path / "history.jsonl", restart)
    procs.append(sleeper(tmp_path, "w1"))
    inj.add(procs[0])
    try:
        inj(exchange("w1", "t/table/p0/.00000001-0000-0000-0000-000000000000-0_1.log.1_0-1-1"))
        assert started == [("w1", 2)] and procs[0].proc.wait(timeout=5) == -signal.SIGKILL
        assert procs[1].proc.poll() is None and inj.writers["w1"] is procs[1]
        # the writer's next matching request, now the restarted process's: the second kill hits it
        inj(exchange("w1", "t/table/p0/.00000002-0000-0000-0000-000000000000-0_2.log.1_0-1-1"))
        assert procs[1].proc.wait(timeout=5) == -signal.SIGKILL and len(started) == 1
        lines = load_writers_history(tmp_path)
        assert [(x["f"], x["process"]) for x in lines] == [("kill", "w1"), ("kill", "w1")]
    finally:
        for p in procs:
            if p.proc.poll() is None:
                p.proc.kill()
                p.proc.wait()


def test_a_restart_needs_a_kill() -> None:
    with pytest.raises(ValueError, match="restart_at"):
        WriterFault("w1", "pause", "x", restart_at=1).check(["w1"])


def _as_fsview(view: dict[str, Any]) -> dict[str, Any]:
    """A model view in FsViewDump's JSON (fsview.json's per-release entry)."""
    def js(s: tuple[str, str | None, tuple[str, ...]], fid: str) -> dict[str, Any]:
        return {"file_id": fid, "base_instant": s[0], "base_file": s[1], "log_files": list(s[2])}

    parts = {}
    for p, v in view.items():
        groups = [{"file_id": fid, "all_slices": [js(s, fid) for s in v["all_slices"][fid]],
                   "committed_slices": [js(s, fid) for s in v["committed_slices"][fid]]}
                  for fid in v["all_slices"]]
        read = [js(s, fid) for fid, ss in v["reader_slices"].items() for s in ss]
        parts[p] = {"file_groups": groups, "reader_slices": read}
    return {"partitions": parts}


def test_the_slice_comparison_catches_a_hudi_whose_slices_differ_from_the_models() -> None:
    entry = catalogue.load("nbcc-uncommitted-anchor")
    table = run_table(entry.config.plan(1), 1).table()  # failed first logs in two log-only groups
    old, new = model_view(table, Rule.HUDI_1_2_0), model_view(table, Rule.PR_19785)
    same = {"1.2.0": _as_fsview(old), "1.2.1": _as_fsview(new)}
    assert compare_slices(table, same) == ([], [])
    # a 1.2.0 that slices as 1.2.1 does (PR #19785 in it): the anchored groups differ, named by fidelity row
    wrong = {"1.2.0": _as_fsview(new), "1.2.1": _as_fsview(new)}
    diffs, _ = compare_slices(table, wrong)
    hidden = {fid for fid, s in old["p0"]["committed_slices"].items() if not s}
    assert hidden and {d["file_id"] for d in diffs} == hidden
    assert {d["version"] for d in diffs} == {"1.2.0"}
    assert {d["view"] for d in diffs} == {"all_slices", "committed_slices", "reader_slices"}
    assert {d["fidelity"].split(" (")[0] for d in diffs} == {"NB12-NB15", "NB17, NB18", "NB19, NB21, NB22"}
    # a release whose view could not be built is a note, not a silent pass
    diffs, notes = compare_slices(table, {"1.2.0": _as_fsview(old), "1.2.1": {"error": "no java"}})
    assert diffs == [] and notes == ["Hudi 1.2.1's file slices not compared: no java"]


def test_every_deltacommit_not_killed_must_commit() -> None:
    def ev(p: str, t: str, f: str = "write", **kw: Any) -> dict[str, Any]:
        return {"process": p, "type": t, "f": f, "value": {"batch": kw.pop("batch", 0)}, **kw}

    events = [ev("w1", "invoke"), ev("w2", "invoke"), ev("w1", "info", "kill"),
              ev("w2", "ok", instant="1_2"), ev("w1", "invoke", batch=1),
              ev("w1", "fail", batch=1, error={"class": "org.apache.hudi.exception.HoodieException"})]
    assert [(a["process"], a["batch"], a["outcome"]) for a in judge_deltacommits(events)] == \
        [("w1", 0, "killed"), ("w2", 0, "commit"), ("w1", 1, "fail")]


def test_a_deltacommit_failed_by_a_storage_fault_is_a_note_and_a_conflict_never_is() -> None:
    assert not storage_faults({"proxy_actions": {"forward": 12, "bad-request": 1}})
    assert not storage_faults({})  # a run from before metrics.json had proxy_actions
    assert storage_faults({"proxy_actions": {"forward": 12, "error-503": 1}})
    lock = {"process": "w1", "batch": 2, "outcome": "fail",
            "error": "org.apache.hudi.exception.HoodieLockException"}
    conflict = {**lock, "process": "w2", "error": "org.apache.hudi.exception.HoodieWriteConflictException"}
    diffs, notes = judge_failures([lock, conflict], faulted=True)
    assert [d["process"] for d in diffs] == ["w2"] and len(notes) == 1 and "HoodieLockException" in notes[0]
    diffs, notes = judge_failures([lock], faulted=False)  # without a fault, any failure contradicts NB4
    assert [d["fidelity"] for d in diffs] == [COMMIT_ROWS] and notes == []


def test_the_compactions_the_simulation_planned_run_on_a_compactor(tmp_path: Path) -> None:
    from engines.hudi_spark.writer import PlanError, load_plan

    entry, plans = _plans("nbcc-completion-time-safe")
    compactor = entry.config.plan(entry.config.seed).compactor_node
    ops = [b["op"] for b in plans.batches[compactor]]
    assert ops == ["compact", "compact"] and all(b["after_commits"] >= 1 for b in plans.batches[compactor])
    assert plans.options["hoodie.compact.inline.max.delta.commits"] == "1"
    _, anchor = _plans("nbcc-uncommitted-anchor")  # its one slot found nothing to compact
    assert "w4" not in anchor.batches
    assert any(u.startswith("nbcc.compactions = 1: the 0 ") for u in anchor.untranslated)
    plan = {"writer": "w4", "base_path": "s3a://b/t", "table": "t", "endpoint": "http://x", "classpath": [],
            "history": "h", "batches": [{"op": "compact", "rows": []}]}
    (tmp_path / "p.json").write_text(json.dumps(plan))
    assert load_plan(tmp_path / "p.json")["batches"][0]["op"] == "compact"
    plan["batches"] = [{"op": "compact", "rows": [{"key": "k", "partition": "p", "value": 1}]}]
    (tmp_path / "p.json").write_text(json.dumps(plan))
    with pytest.raises(PlanError, match=r"batches\[0\]: a compact batch has no rows"):
        load_plan(tmp_path / "p.json")
