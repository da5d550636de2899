"""The OCC model judging the schedule Hudi's Spark writers ran (analyses/writers_differential.py), on
hand-made Hudi histories: the model agrees where Hudi's OCC decides as the model does, and a Hudi that
commits two overlapping writes of one file group is reported as a difference naming the fidelity rows."""

from __future__ import annotations

import datetime as dt

from analyses.writers_differential import (
    CONFLICT,
    epoch_to_instant,
    judge,
    mutated_by_instant,
    timeline_instants,
)

PREFIX = "hcc-hudi-spark/run/table/"
A, A_DONE = 20261129010000000, 20261129010005000
B, B_DONE = 20261129010001000, 20261129010006000


def _put(ms: int, node: str, rel: str) -> str:
    return f"{ms} {node} PUT '{PREFIX}{rel}' forward 200"


def _timeline(b_completed: bool) -> list[str]:
    names = [f"{A}.commit.requested", f"{A}.inflight", f"{A}_{A_DONE}.commit",
             f"{B}.commit.requested", f"{B}.inflight"]
    return names + ([f"{B}_{B_DONE}.commit"] if b_completed else [])


def _ok(process: str, instant: int, done: int) -> dict[str, object]:
    return {"process": process, "f": "write", "type": "ok", "instant": f"{instant}_{done}",
            "value": {"batch": 0, "rows": [["k1", "p0", 1]]}, "time": 0}


def _conflict(process: str, instant: int, other: int) -> dict[str, object]:
    op = "ConcurrentOperation(actionState={}, actionType=commit, instantTime={})"
    msg = ("java.util.ConcurrentModificationException: Cannot resolve conflicts for overlapping writes "
           f"between first operation = {op.format('INFLIGHT', instant)}, "
           f"second operation = {op.format('COMPLETED', other)}")
    t = dt.datetime(2026, 11, 29, 1, 0, 6, tzinfo=dt.UTC).timestamp()
    return {"process": process, "f": "write", "type": "fail", "time": t,
            "value": {"batch": 0, "rows": [["k1", "p0", 2]]}, "error": {"class": CONFLICT, "message": msg}}


def _log(b_file: str) -> list[str]:
    return [_put(1, "w1", f"p0/fa-0_0-1-1_{A}.parquet"),
            _put(2, "w1", f".hoodie/timeline/{A}_{A_DONE}.commit"),
            _put(3, "w2", f"p0/{b_file}_0-2-2_{B}.parquet"),
            "4 w2 PUT 'other-prefix/p0/fa-0_0-1-1_20261129010001000.parquet' forward 200"]


def test_an_abort_on_a_shared_file_group_agrees() -> None:
    instants = timeline_instants(_timeline(b_completed=False))
    mutated = mutated_by_instant(_log("fa-0"), PREFIX)
    got = judge([_ok("w1", A, A_DONE), _conflict("w2", B, A)], instants, mutated)
    assert [(a.hudi, a.model) for a in got] == [("commit", "commit"), ("abort", "abort")]
    assert got[1].conflict_with == got[1].hudi_conflict_with == A


def test_a_hudi_that_commits_both_writes_of_one_file_group_is_caught() -> None:
    instants = timeline_instants(_timeline(b_completed=True))
    mutated = mutated_by_instant(_log("fa-0"), PREFIX)
    got = judge([_ok("w1", A, A_DONE), _ok("w2", B, B_DONE)], instants, mutated)
    assert [(a.hudi, a.model, a.agrees) for a in got] == [("commit", "commit", True),
                                                          ("commit", "abort", False)]


def test_inserts_into_two_new_file_ids_both_commit() -> None:
    instants = timeline_instants(_timeline(b_completed=True))
    mutated = mutated_by_instant(_log("fb-0"), PREFIX)
    got = judge([_ok("w1", A, A_DONE), _ok("w2", B, B_DONE)], instants, mutated)
    assert all(a.agrees and a.model == "commit" for a in got)
    # A was pending at B's instant time and completed since: a candidate of the strategy and of
    # getCompletedInstantsDuringCurrentWriteOperation both (checked twice, as Hudi's stream concat does)
    assert got[1].candidates == (A, A)


def test_the_proxy_log_keeps_base_files_of_the_run_prefix_only() -> None:
    assert mutated_by_instant(_log("fb-0"), PREFIX) == {A: frozenset({("p0", "fa-0")}),
                                                        B: frozenset({("p0", "fb-0")})}


def test_epoch_seconds_become_utc_instants() -> None:
    t = dt.datetime(2026, 11, 29, 1, 0, 6, 123000, tzinfo=dt.UTC).timestamp()
    assert epoch_to_instant(t) == 20261129010006123
