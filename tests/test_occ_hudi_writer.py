"""Hudi 1.2.1's commit path (variant ``hudi``, model/timeline/hudi_writer.py) in the simulated world.

Each test names the Java it follows.  Writers here run scripted operations (a key and a kind per
operation) instead of random ones, so that a test sets up exactly the interleaving the Java test does.
About 10 s in all.
"""

from __future__ import annotations

import pytest
from occ_scripted import Script, outcomes, run_scripted, stored

from model.timeline.config import TimelineConfig
from model.timeline.run import check_timeline_run


def test_requested_is_created_inside_the_lock_hold_that_drew_its_time() -> None:
    # BaseHoodieWriteClient#startCommit: beginTransaction, createNewInstantTime(false),
    # createNewInstant(REQUESTED), endTransaction.  The specification's writer creates it after the
    # generator released the lock.
    for variant, inside in (("hudi", True), ("vanlightly-v5", False)):
        events, _, _ = run_scripted(
            TimelineConfig(variant=variant),
            {"w1": [("k1", "upsert")] * 2, "w2": [("k2", "upsert")] * 2},
            {"w1": 0, "w2": 0},
        )
        requested = stored(events, ".commit.requested")
        assert len(requested) == 4
        for r in requested:
            # the writer's last lock event before its .requested file: an acquisition (held) or a release
            mine = [
                e
                for e in events[: r.index]
                if e.node == r.node and e.f in ("acquire", "release") and e.type == "ok"
            ]
            assert (mine[-1].f == "acquire") == inside, (variant, r.value["key"], mine[-1])


def test_the_second_writer_to_commit_on_a_file_group_aborts() -> None:
    # TestHoodieClientMultiWriter#testHoodieClientBasicMultiWriter: writers 002 and 003 update the same
    # records; 002 commits first; 003's commit throws HoodieWriteConflictException
    events, _, ts = run_scripted(
        TimelineConfig(preload=True),
        {"w1": [("k1", "upsert")], "w2": [("k1", "upsert")]},
        {"w1": 0, "w2": 500},
        work_ms=3_000,
    )
    assert outcomes(events) == {"w1": [("ok", "committed")], "w2": [("fail", "occ-conflict")]}
    (conflict,) = [e for e in events if e.f == "conflict"]
    w1_commit = stored(events, ".commit")
    assert conflict.process == "w2" and conflict.value["other"] in {
        e.value["key"].split("/")[-1][:17] for e in w1_commit if e.node == "w1"
    }
    assert check_timeline_run(ts, events).violations == ()


def test_inserts_into_distinct_partitions_all_commit() -> None:
    # TestHoodieClientMultiWriter#testMultiWriterWithInsertsToDistinctPartitions: five writers insert into
    # five partitions at once; each opens its own file group; no conflict
    script: Script = {f"w{i}": [(f"k{i}", "upsert")] for i in range(1, 6)}
    events, objects, ts = run_scripted(
        TimelineConfig(partitions=5, keys=5), script, {f"w{i}": 0 for i in range(1, 6)}
    )
    assert all(o == [("ok", "committed")] for o in outcomes(events).values()), outcomes(events)
    bases = sorted(k.split("/")[1] for k in objects if k.endswith(".parquet"))
    assert bases == ["p0", "p1", "p2", "p3", "p4"]
    assert not any(e.f == "conflict" for e in events)
    assert check_timeline_run(ts, events).violations == ()


def test_a_new_key_goes_to_the_existing_small_file_group() -> None:
    # UpsertPartitioner#assignInserts: an insert joins a small file of its partition before a new file group
    # is opened; with small_file_records = 1 a file group holding one record is full
    script: Script = {"w1": [("k1", "upsert"), ("k2", "upsert")]}
    _, objects, _ = run_scripted(TimelineConfig(), script, {"w1": 0})
    assert len({k.split("/")[-1].split("_")[0] for k in objects if k.endswith(".parquet")}) == 1
    _, objects, _ = run_scripted(TimelineConfig(small_file_records=1), script, {"w1": 0})
    assert len({k.split("/")[-1].split("_")[0] for k in objects if k.endswith(".parquet")}) == 2


def test_a_delete_of_an_absent_key_commits_an_empty_commit() -> None:
    # the index finds no location; the write commits with no write stats (hoodie.allow.empty.commit)
    events, objects, ts = run_scripted(TimelineConfig(), {"w1": [("k1", "delete")]}, {"w1": 0})
    assert outcomes(events) == {"w1": [("ok", "committed")]}
    assert not any(k.endswith(".parquet") for k in objects) and stored(events, ".commit")
    assert check_timeline_run(ts, events).violations == ()


@pytest.mark.parametrize("seed", [1, 2, 5])
def test_two_writers_inserting_one_new_key_both_commit_into_two_file_groups(seed: int) -> None:
    # SimpleConcurrentFileWritesConflictResolutionStrategy#hasConflict intersects (partition, fileId) sets:
    # two inserts of one new key, each into a new file id, do not intersect.  The duplicate-key checker
    # sees it.
    script: Script = {"w1": [("k1", "upsert")], "w2": [("k1", "upsert")]}
    events, objects, ts = run_scripted(TimelineConfig(), script, {"w1": 0, "w2": 0}, seed=seed)
    assert outcomes(events) == {"w1": [("ok", "committed")], "w2": [("ok", "committed")]}
    files = {k.split("/")[-1].split("_")[0] for k in objects if k.endswith(".parquet")}
    assert len(files) == 2
    kinds = {v.kind for v in check_timeline_run(ts, events).violations}
    assert "duplicate-key" in kinds


def test_the_specifications_pk_check_keeps_one_file_group_per_key() -> None:
    # the same race under vanlightly-v5 (two file groups drawn at random): its primary-key check aborts the
    # second insert when the key is already in another file group; without the check the duplicate appears
    found = {True: set(), False: set()}  # type: dict[bool, set[str]]
    aborted: set[str] = set()
    for pk in (True, False):
        for seed in range(1, 9):
            tl = TimelineConfig(
                variant="vanlightly-v5",
                pk_check=pk,
                file_groups=2,
                time_generator="monotonic",
                checkers=("duplicate-key",),
            )
            events, _, ts = run_scripted(
                tl, {"w1": [("k1", "upsert")], "w2": [("k1", "upsert")]}, {"w1": 0, "w2": 0}, seed=seed
            )
            found[pk] |= {v.kind for v in check_timeline_run(ts, events).violations}
            if pk:
                aborted |= {r for o in outcomes(events).values() for _, r in o}
    assert found[True] == set() and "primary-key-conflict" in aborted
    assert found[False] == {"duplicate-key"}


def test_removing_the_conflict_check_loses_updates() -> None:
    # a mutant of the writer: no candidate ever conflicts (resolveWriteConflictIfAny skipped).  Two writers
    # update the same file group concurrently; the later completed instant merged a slice without the
    # earlier one's change, and ConsistentRead finds the lost update.
    import model.timeline.hudi_writer as hw

    script: Script = {"w1": [("k1", "upsert")], "w2": [("k2", "upsert")]}
    events, _, ts = run_scripted(TimelineConfig(preload=True), script, {"w1": 0, "w2": 500}, work_ms=3_000)
    assert ("fail", "occ-conflict") in outcomes(events)["w2"]
    original = hw.first_conflict
    hw.first_conflict = lambda this, others: None  # type: ignore[assignment]
    try:
        events, _, ts = run_scripted(
            TimelineConfig(preload=True), script, {"w1": 0, "w2": 500}, work_ms=3_000
        )
    finally:
        hw.first_conflict = original  # type: ignore[assignment]
    assert outcomes(events) == {"w1": [("ok", "committed")], "w2": [("ok", "committed")]}
    assert "consistent-read" in {v.kind for v in check_timeline_run(ts, events).violations}
