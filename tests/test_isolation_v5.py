"""The isolation of Vanlightly's v5 specification's writer (variant ``vanlightly-v5``, not Hudi), found by
Elle's check of scripted runs: two writers insert one new key at once, each drawing a file group.

The specification's index is an object per key and a writer reads only its own file group's merge
target, so there is no write skew on file groups.  With the primary-key check (its default) and OCC the
race ends with one commit (``primary-key-conflict``, or in one file group ``occ-conflict``); without
the check, two file groups get the key and Elle finds a lost update, as for Hudi.  Pessimistic
concurrency control takes no table lock, so its primary-key check is a read of the index and a later
write of it: two inserts that both read it before either writes it both commit (a lost update), where
the specification's UpdateIndexes is one atomic step (``model/cow/spec.py``; TLC's pessimistic
primary-key row has one file group, where the race cannot show).  Without concurrency control two
writers of one file group both commit over the same merge target: a lost update on records and on the
file group.

Times come from the specification's store counter (``monotonic``: no lock held while the writers
work), so both inserts are in flight together.  Which file groups the writers draw depends on the seed
(each test names the seeds it needs and checks the draw).
"""

from __future__ import annotations

from typing import Any

import pytest
from isolation_scripted import anomalies, checked, outcomes, run_scripted

from model.checkers.timeline import check_timeline_history
from model.checkers.txn_from_runs import txn_records
from model.runtime.history import Event
from model.timeline.config import TimelineConfig

RACE = {"w1": [("k1", "upsert")], "w2": [("k1", "upsert")]}


def v5(**kw: Any) -> TimelineConfig:
    return TimelineConfig(variant="vanlightly-v5", keys=1, file_groups=2, delete_prob=0.0,
                          time_generator="monotonic", **kw)


def file_groups(events: list[Event]) -> list[str]:
    return [r["write"]["fg"] for _, r in txn_records(events) if isinstance(r.get("write"), dict)]


@pytest.mark.parametrize("seed", [1, 2, 5, 8])
def test_the_primary_key_check_under_the_table_lock_prevents_the_duplicate_key(seed: int) -> None:
    events = run_scripted(v5(), RACE, {"w1": 0, "w2": 0}, seed=seed)
    assert anomalies(events) == {"records": [], "file-groups": []}
    fgs = file_groups(events)
    if len(set(fgs)) == 2:  # two file groups drawn: the check under the table lock aborts the later insert
        assert sorted(o[2] for o in outcomes(events)) == ["committed", "primary-key-conflict"]


@pytest.mark.parametrize("seed", [1, 5])
def test_the_pessimistic_primary_key_check_aborts_an_insert_that_reads_the_other_entry(seed: int) -> None:
    events = run_scripted(v5(cc="pessimistic"), RACE, {"w1": 0, "w2": 0}, seed=seed)
    assert len(set(file_groups(events))) == 2
    assert sorted(o[2] for o in outcomes(events)) == ["committed", "primary-key-conflict"]
    assert anomalies(events) == {"records": [], "file-groups": []}


def test_the_pessimistic_primary_key_check_is_a_check_then_put_race() -> None:
    # seed 8: both inserts hold their own file group's lock; w1 writes the index entry k1 -> fg1 at
    # 508 ms, w2 (which read the entry absent before that) writes k1 -> fg2 at 547 ms; both commit
    events = run_scripted(v5(cc="pessimistic"), RACE, {"w1": 0, "w2": 0}, seed=8)
    assert len(set(file_groups(events))) == 2 and [o[2] for o in outcomes(events)] == ["committed"] * 2
    found = checked(events)
    assert found["records"].anomaly_types == ["G2-item", "lost-update"]
    assert found["file-groups"].anomaly_types == ["empty-transaction-graph"]
    dup = check_timeline_history(events, "table", "v8", ("duplicate-key",))  # the harness's own checker
    assert [v.kind for v in dup.violations] == ["duplicate-key"]


@pytest.mark.parametrize("cc", ["optimistic", "pessimistic"])
def test_without_the_primary_key_check_the_duplicate_key_is_a_lost_update(cc: str) -> None:
    events = run_scripted(v5(cc=cc, pk_check=False), RACE, {"w1": 0, "w2": 0}, seed=1)
    assert len(set(file_groups(events))) == 2 and [o[2] for o in outcomes(events)] == ["committed"] * 2
    found = checked(events)
    assert found["records"].anomaly_types == ["G2-item", "lost-update"]
    assert found["records"].anomalies["lost-update"][0]["value"] is None  # both read k1 absent
    assert found["file-groups"].anomaly_types == ["empty-transaction-graph"]


def test_the_same_race_in_one_file_group_is_prevented_by_the_optimistic_check() -> None:
    # seed 2 draws one file group for both: the later commit finds a completed instant on it newer
    # than its merge target and aborts (the specification's OCC step)
    events = run_scripted(v5(pk_check=False), RACE, {"w1": 0, "w2": 0}, seed=2)
    assert len(set(file_groups(events))) == 1
    assert sorted(o[2] for o in outcomes(events)) == ["committed", "occ-conflict"]
    assert anomalies(events) == {"records": [], "file-groups": []}


def test_without_concurrency_control_one_file_group_loses_an_update() -> None:
    # cc = "none" (the TLA+ rows CC=0): both writers read the same (empty) merge target of one file group
    # and both commit; the later slice hides the earlier operation
    events = run_scripted(v5(cc="none"), RACE, {"w1": 0, "w2": 0}, seed=2)
    assert len(set(file_groups(events))) == 1 and [o[2] for o in outcomes(events)] == ["committed"] * 2
    found = checked(events)
    assert "lost-update" in found["records"].anomaly_types
    assert "lost-update" in found["file-groups"].anomaly_types
