"""Hudi 1.2.1's isolation under OCC (variant ``hudi``), found by Elle's check of scripted runs.

Each test is a minimal example: two scripted writers (``tests/isolation_scripted.py``) whose operations
are recorded as transactions and checked (``model/checkers/txn_from_runs.py``), and names the Java the
finding rests on.  What Hudi's commit path admits: write skew on file groups (the index reads every
file group of the partition; the conflict check compares written (partition, fileId) pairs only) and
the duplicate-key insert, which Elle classifies as a lost update.  What it prevents: a lost update
within one file group (both writers rewrite it: the later commit aborts), and the same insert race
when both inserts go to one existing small file group.  Without the check (SINGLE_WRITER) the race it
prevents comes back: write skew on records, a lost update on the file group.
"""

from __future__ import annotations

from isolation_scripted import anomalies, checked, outcomes, run_scripted

from model.timeline.config import TimelineConfig

PRELOADED = TimelineConfig(preload=True, keys=2, delete_prob=0.0)  # k1, k2 in one file group of p0


def test_a_lost_update_within_one_file_group_is_prevented() -> None:
    # SimpleConcurrentFileWritesConflictResolutionStrategy#hasConflict (134-146): both commits write
    # (p0, pre00000-0); TransactionUtils#resolveWriteConflictIfAny throws HoodieWriteConflictException
    # for the later one.  Both read the preloaded base file; one commits, so nothing is lost.
    events = run_scripted(PRELOADED, {"w1": [("k1", "upsert")], "w2": [("k2", "upsert")]}, {"w1": 0, "w2": 0})
    assert sorted(o[2] for o in outcomes(events)) == ["committed", "occ-conflict"]
    assert anomalies(events) == {"records": [], "file-groups": []}
    assert all(v.valid is True for v in checked(events).values())


def test_without_the_check_the_race_is_write_skew_on_records_and_a_lost_update_on_the_file_group() -> None:
    # SINGLE_WRITER (HoodieWriteConfig#needResolveWriteConflict false): an unsupported configuration
    # with two writers, LAZY so that neither rolls the other back.  Each rewrote the preloaded base file
    # with its own change: the later file drops the other's (the counterfactual the check prevents).
    tl = TimelineConfig(preload=True, keys=2, delete_prob=0.0, cc="none", unsupported_single_writer=True,
                        failed_writes="lazy")
    events = run_scripted(tl, {"w1": [("k1", "upsert")], "w2": [("k2", "upsert")]}, {"w1": 0, "w2": 0})
    assert [o[2] for o in outcomes(events)] == ["committed", "committed"]
    found = checked(events)
    assert found["records"].anomaly_types == ["G2-item"]  # each read the key the other overwrote
    steps = found["records"].to_json()["anomalies"]["G2-item"][0]["steps"]
    assert {s["type"] for s in steps} == {"rw"} and {s["key"] for s in steps} == {"k1", "k2"}
    assert "lost-update" in found["file-groups"].anomaly_types  # both read the preloaded version and wrote it
    assert "snapshot-isolation" in found["file-groups"].also_not


def test_commits_to_two_file_groups_of_one_partition_are_write_skew_on_file_groups_only() -> None:
    # HoodieSimpleIndex#tagLocation reads the keys of the latest base file of every file group of the
    # key's partition; the conflict check intersects the written (partition, fileId) pairs only.  With
    # one record per file group (small_file_records = 1: UpsertPartitioner#assignInserts opens a new
    # file group per insert) w1 and w2 insert k1 and k2, then update them at once: each update read
    # both file groups and rewrote one, both commit.  On records each read only the key it rewrote.
    tl = TimelineConfig(keys=2, small_file_records=1, delete_prob=0.0)
    script = {"w1": [("k1", "upsert"), ("k1", "upsert")], "w2": [("k2", "upsert"), ("k2", "upsert")]}
    events = run_scripted(tl, script, {"w1": 0, "w2": 500}, think_ms=2_000)
    assert [o[2] for o in outcomes(events)] == ["committed"] * 4
    found = checked(events)
    assert found["records"].anomaly_types == []
    assert found["file-groups"].anomaly_types == ["G2-item"]
    fg = found["file-groups"]
    assert fg.not_models == ["repeatable-read"]
    assert "serializable" in fg.also_not and "snapshot-isolation" not in fg.also_not  # SI allows write skew
    case = fg.to_json()["anomalies"]["G2-item"][0]
    assert [s["type"] for s in case["steps"]] == ["rw", "rw"]
    assert {t["process"] for t in case["txns"]} == {"w1", "w2"}


def test_two_inserts_of_one_new_key_into_two_file_groups_are_a_lost_update() -> None:
    # tl-hudi-occ-duplicate-key as a transaction history: the index finds k1 in no base file, each
    # partitioner opens a new file id, the (partition, fileId) sets do not intersect ("TODO: UUID's can
    # clash even for insert/insert", #hasConflict), both commit.  Each read k1 absent (nil) and wrote it.
    tl = TimelineConfig(keys=1, delete_prob=0.0)
    events = run_scripted(tl, {"w1": [("k1", "upsert")], "w2": [("k1", "upsert")]}, {"w1": 0, "w2": 0})
    assert [o[2] for o in outcomes(events)] == ["committed", "committed"]
    found = checked(events)
    rec = found["records"]
    assert rec.anomaly_types == ["G2-item", "lost-update"]
    case = rec.anomalies["lost-update"][0]
    assert case["key"] == "k1" and case["value"] is None and len(case["txns"]) == 2
    assert rec.not_models == ["cursor-stability", "update-atomic"] and "snapshot-isolation" in rec.also_not
    # on file groups the two never met: each wrote a file group nobody read
    assert found["file-groups"].anomaly_types == ["empty-transaction-graph"]


def test_the_same_insert_race_into_an_existing_small_file_group_is_prevented() -> None:
    # UpsertPartitioner#assignInserts: a new key goes to a small file of its partition; with the table
    # preloaded (one file group, under the small-file limit) both inserts of k3 rewrite that file group,
    # so the check aborts the later one: no duplicate, no anomaly.
    events = run_scripted(PRELOADED, {"w1": [("k3", "upsert")], "w2": [("k3", "upsert")]}, {"w1": 0, "w2": 0})
    assert sorted(o[2] for o in outcomes(events)) == ["committed", "occ-conflict"]
    assert anomalies(events) == {"records": [], "file-groups": []}


def test_a_commit_after_another_completed_reads_it() -> None:
    # The snapshot of BaseHoodieWriteClient#preWrite lists the completed instants: w2 starts after w1's
    # commit completed and reads its value (a wr edge, no real-time anomaly); the update chain is
    # strict serializable.
    events = run_scripted(PRELOADED, {"w1": [("k1", "upsert")], "w2": [("k1", "upsert")]},
                          {"w1": 0, "w2": 6_000})
    assert [o[2] for o in outcomes(events)] == ["committed", "committed"]
    rec = checked(events)["records"]
    assert rec.valid is True and rec.anomaly_types == []
    w2 = next(t for t in rec.txns if t.process == "w2")
    assert ("r", "k1", "w1.1") in w2.mops and ("w", "k1", "w2.1") in w2.mops
