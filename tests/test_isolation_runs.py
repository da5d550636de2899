"""Transaction records of OCC and NBCC runs and their mapping to Elle's histories
(``model/checkers/txn_from_runs.py``): the records change nothing else in a run, each read is the write
its base file's lineage names (a deleted key reads the delete, a restarted writer's values stay unique),
the histories written for ``hcc check-history`` give the same answer, and the detectors the NBCC view
relies on fire on histories built for them.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from isolation_scripted import checked, outcomes, run_scripted

from model.checkers.txn_check import check_txns
from model.checkers.txn_from_runs import nbcc_views, occ_views, txn_records
from model.checkers.txn_history import read_txn_jsonl
from model.config import Crash, FaultPlan
from model.nbcc.sim_table import nbcc_workload, run_table
from model.protocols import plugin
from model.protocols.occ import occ_metrics
from model.runtime.history import Event
from model.runtime.sim import SimWorld
from model.timeline.config import TimelineConfig
from model.timeline.run import check_timeline_run, simulate_timeline, timeline_workload
from scenarios.catalogue import load

OCC_ENTRIES = ["tl-hudi-occ-duplicate-key", "tl-skew-adjusting-safe", "tl-hudi-heartbeat-expiry-rollback",
               "tl-cc-none-lost-update", "tl-occ-put-if-absent", "tl-hudi-single-writer-unsupported"]
NBCC_ENTRIES = ["nbcc-uncommitted-anchor-window", "nbcc-storage-faults", "nbcc-completion-time-safe"]


def without_txns(events: list[Event]) -> list[Event]:
    return [e for e in events if e.f != "txn"]


@pytest.mark.parametrize("name", ["tl-hudi-occ-duplicate-key", "tl-skew-adjusting-safe",
                                  "tl-occ-put-if-absent", "tl-hudi-lazy-rollback-safe"])
def test_occ_records_change_nothing_but_the_lines_they_add_after_run_end(name: str) -> None:
    ts = load(name).config
    plain = SimWorld(ts.scenario, ts.scenario.seed, None, workload=timeline_workload(ts)).run()
    recorded = simulate_timeline(ts, ts.scenario.seed).events
    assert recorded[:len(plain)] == plain  # every event the same, index and all
    added = recorded[len(plain):]
    assert added and all(e.f == "txn" and e.process == "nemesis" for e in added)
    assert plain[-1].f == "run-end" and all(e.time == plain[-1].time for e in added)
    assert occ_metrics(recorded) == occ_metrics(plain)
    assert check_timeline_run(ts, recorded).to_dict() == check_timeline_run(ts, plain).to_dict()


@pytest.mark.parametrize("name", NBCC_ENTRIES)
def test_nbcc_records_change_nothing_but_the_lines_they_add_after_run_end(name: str) -> None:
    cfg = load(name).config
    plan = cfg.plan(cfg.seed)
    scenario = plan.scenario(cfg.seed)
    plain = SimWorld(scenario, cfg.seed, None, workload=nbcc_workload(plan, scenario)).run()
    recorded = list(run_table(plan, cfg.seed).events)
    assert recorded[:len(plain)] == plain
    assert all(e.f == "txn" for e in recorded[len(plain):]) and len(recorded) > len(plain)


def test_the_times_workload_records_no_transaction() -> None:
    ts = load("tl-skew-beyond-setting").config
    assert not txn_records(simulate_timeline(ts, 1).events)
    assert occ_views(simulate_timeline(ts, 1).events) == []


@pytest.mark.parametrize("name", OCC_ENTRIES + NBCC_ENTRIES)
def test_the_histories_written_for_check_history_give_the_same_answer(name: str) -> None:
    entry = load(name)
    if entry.protocol == "occ":
        events = simulate_timeline(entry.config, entry.seed).events
    else:
        events = list(run_table(entry.config.plan(entry.seed), entry.seed).events)
    transactions = plugin(entry.protocol).transactions
    assert transactions is not None
    views = transactions.views(events)
    assert views
    for v in views:
        here = v.check()
        again = check_txns(read_txn_jsonl(v.jsonl().splitlines(), "rw-register"), ["strict-serializable"],
                           wfr_keys=v.wfr_keys)
        assert (again.anomaly_types, again.not_models, again.also_not) == \
               (here.anomaly_types, here.not_models, here.also_not), (name, v.view)


def test_a_key_deleted_then_inserted_again_reads_the_delete() -> None:
    # the base file after a delete no longer holds the key: the lookup that finds it absent read the
    # delete's value (its tombstone), which the lineage of the file group's base files names
    script = {"w1": [("k1", "upsert"), ("k1", "delete"), ("k1", "upsert"), ("k1", "delete"),
                     ("k1", "delete")]}
    for tl in (TimelineConfig(keys=1, delete_prob=0.0),
               TimelineConfig(variant="vanlightly-v5", keys=1, delete_prob=0.0, time_generator="monotonic")):
        events = run_scripted(tl, script, {"w1": 0})
        assert all(o[1] == "ok" for o in outcomes(events)), outcomes(events)
        txns = checked(events)["records"].txns
        reads = [next(m for m in t.mops if m[0] == "r" and m[1] == "k1") for t in txns]
        assert [r[2] for r in reads] == [None, "w1.1", "w1.2", "w1.3", "w1.4"]
        assert all(v.valid is True for v in checked(events).values())


def test_a_restarted_writers_values_stay_unique_and_reads_follow_the_lineage() -> None:
    # w1 crashes in its first operation and restarts: its script begins again, writing "w1.1" a second
    # time; the mapping names that write w1.1#2, and the next read (of the stored "w1.1") names it too
    tl = TimelineConfig(keys=1, delete_prob=0.0)
    events = run_scripted(tl, {"w1": [("k1", "upsert"), ("k1", "upsert")]}, {"w1": 0},
                          faults=FaultPlan(crashes=(Crash("w1", 1_000, 1_000),)))
    rec = next(v for v in occ_views(events) if v.view == "records")
    mops = [(t.type, t.mops) for t in rec.history.txns]
    assert mops[0][0] == "info"  # cut off by the crash
    assert mops[1] == ("ok", (("r", "k1", None), ("w", "k1", "w1.1#2")))
    assert mops[2] == ("ok", (("r", "k1", "w1.1#2"), ("w", "k1", "w1.2")))
    read_txn_jsonl(rec.jsonl().splitlines(), "rw-register")  # unique values: no bad input


def test_a_record_that_does_not_match_its_operation_is_left_out_with_a_note() -> None:
    events = run_scripted(TimelineConfig(keys=1, delete_prob=0.0), {"w1": [("k1", "upsert")]}, {"w1": 0})
    bad = [e._replace(value={**e.value, "op": "w9.9"}) if e.f == "txn" else e for e in events]
    views = occ_views(bad)
    assert views[0].history.txns == [] and "does not match" in views[0].notes[0]


# ---- NBCC: what Elle can see, on histories built for it ------------------------------------------


def _event(index: int, time: int, process: str, type_: str, f: str, value: Any) -> Event:
    return Event(index, time, process, process, type_, f, value, None)


def _nbcc_history(read_rows: dict[str, list[Any]], completed: list[str], outcome: str = "ok") -> list[Event]:
    """w1's one deltacommit writing k1 and k2 (instant 1, completed at 20), then a reader's snapshot, read
    after one that failed at 25 (so the snapshot was invoked no earlier than 25)."""
    rows = [["k1", 5, "w1/0/0", 1, 0], ["k2", 5, "w1/0/1", 1, 1]]
    evs = [
        _event(0, 10, "w1", "invoke", "deltacommit", {"instant": "1", "batch": 0, "attempt": 0}),
        _event(1, 20, "w1", outcome, "deltacommit", {"instant": "1"}),
        _event(2, 25, "w3", "fail", "read", {"reason": "table not listed"}),
        _event(3, 30, "w3", "ok", "read", {"completed": completed, "rows": read_rows, "hidden": []}),
        _event(4, 40, "-", "info", "run-end", {}),
    ]
    rec = {"process": "w1", "kind": "deltacommit", "instant": "1", "batch": 0, "attempt": 0, "rows": rows,
           "outcome": outcome, "reason": None}
    return [*evs, Event(5, 40, "w1", "nemesis", outcome, "txn", rec, None)]


def test_nbcc_a_snapshot_with_part_of_a_deltacommit_is_read_skew() -> None:
    verdict = nbcc_views(_nbcc_history({"k1": [5, "w1/0/0"]}, ["1"]))[0].check()
    assert "G-single-item" in verdict.anomaly_types  # k2 read absent beside k1 of the same commit


def test_nbcc_a_key_read_absent_after_its_commit_completed_is_a_stale_read() -> None:
    verdict = nbcc_views(_nbcc_history({}, []))[0].check()
    assert verdict.anomaly_types == ["G-single-item-realtime"]  # invoked (25) after the commit completed (20)
    # the reader's first snapshot may have started at the run's start: concurrent with the commit, fine
    first = [e for e in _nbcc_history({}, []) if not (e.f == "read" and e.type == "fail")]
    assert nbcc_views(first)[0].check().valid is True


def test_nbcc_a_read_of_a_failed_attempt_is_an_aborted_read() -> None:
    both = {"k1": [5, "w1/0/0"], "k2": [5, "w1/0/1"]}
    verdict = nbcc_views(_nbcc_history(both, [], outcome="fail"))[0].check()
    assert "G1a" in verdict.anomaly_types


def test_nbcc_a_snapshot_with_the_whole_deltacommit_is_fine() -> None:
    verdict = nbcc_views(_nbcc_history({"k1": [5, "w1/0/0"], "k2": [5, "w1/0/1"]}, ["1"]))[0].check()
    assert verdict.valid is True


def test_nbcc_transactions_are_invoked_no_later_than_their_process_s_previous_one_ended() -> None:
    cfg = load("nbcc-uncommitted-anchor-window").config
    events = list(run_table(cfg.plan(cfg.seed), cfg.seed).events)
    h = nbcc_views(events)[0].history
    by_proc: dict[Any, list[Any]] = {}
    for t in sorted(h.txns, key=lambda t: (t.invoke, t.id)):
        by_proc.setdefault(t.process, []).append(t)
    for ts in by_proc.values():
        for a, b in zip(ts, ts[1:], strict=False):
            if math.isfinite(a.complete):
                assert b.invoke >= a.complete or b.invoke == a.invoke


# ---- the catalogue's runs, as their reports state them ---------------------------------------------


@pytest.mark.parametrize(("name", "records", "file_groups"), [
    ("tl-hudi-occ-duplicate-key", ["G2-item", "lost-update"], ["empty-transaction-graph"]),
    ("tl-hudi-heartbeat-expiry-rollback", ["G2-item", "lost-update"], ["G2-item", "lost-update"]),
    ("tl-cc-none-lost-update", ["G-single-item-realtime", "G2-item", "lost-update"],
     ["G2-item", "lost-update"]),
    ("tl-skew-adjusting-safe", [], []),
    ("tl-hudi-prefer-writer-safe", [], []),
    ("tl-hudi-lazy-rollback-safe", [], []),
    ("tl-v5-pk-check-unique-keys", [], []),
    ("tl-occ-put-if-absent", [], []),
])
def test_catalogue_occ_runs_show_their_isolation(name: str, records: list[str],
                                                file_groups: list[str]) -> None:
    ts = load(name).config
    events = simulate_timeline(ts, ts.scenario.seed).events
    found = {v.view: v.check().anomaly_types for v in occ_views(events)}
    assert found == {"records": records, "file-groups": file_groups}


@pytest.mark.parametrize(("name", "found"), [
    ("nbcc-uncommitted-anchor-window", ["G-single-item"]),
    ("nbcc-uncommitted-anchor", []),  # no reader: the compaction planner skips the hidden group too
    ("nbcc-completion-time-safe", []),
    ("nbcc-storage-faults", []),
])
def test_catalogue_nbcc_runs_show_their_isolation(name: str, found: list[str]) -> None:
    cfg = load(name).config
    verdict = nbcc_views(list(run_table(cfg.plan(cfg.seed), cfg.seed).events))[0].check()
    assert verdict.anomaly_types == found
