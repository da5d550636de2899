"""The timeline checkers added with Hudi's writer: duplicate keys, the order in which requested instants reach
the store, and what readers see of a deleted committed base file (metadata-table listing or storage
listing).  About 5 s."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from occ_scripted import run_scripted

from model.checkers.timeline import (
    check_consistent_read_history,
    check_duplicate_keys,
    check_requested_order,
    check_timeline_history,
)
from model.config import FaultPlan, Pause, Scenario, WorkloadConfig
from model.runtime.history import Event
from model.timeline.config import TimelineConfig, TimelineScenario
from model.timeline.layout import Instant, State, instant_path
from model.timeline.modeldata import commit_body, table_spec, write_stat
from model.timeline.run import check_timeline_run, simulate_timeline

BASE = "table"


class History:
    """A hand-made history of store writes (and writers' deletes) of a v8 table."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def _add(self, node: str, process: str, f: str, value: dict[str, Any]) -> None:
        self.events.append(Event(len(self.events), len(self.events), node, process, "info", f, value))

    def put(self, key: str, body: bytes, node: str = "w1") -> None:
        value = {"key": key, "version": "v", "size": len(body), "body": body.decode()}
        self._add(node, "store", "object", value)

    def delete(self, key: str, node: str = "w2") -> None:
        n = len(self.events)
        self.events.append(Event(n, n, node, node, "ok", "delete", {"key": key}))

    def commit(self, t: int, fg: str, entries: dict[str, str], key: str, kind: str, merge: int | None = None,
               node: str = "w1") -> str:
        """A commit of one operation writing a base file of ``fg``; returns the base file's key."""
        partition, file_id = fg.split("/")
        path = f"{partition}/{file_id}_0-0-0_{t:017d}.parquet"
        data = json.dumps({"fg": fg, "time": t, "salt": "", "entries": entries}).encode()
        self.put(f"{BASE}/{path}", data, node)
        self.put(instant_path(BASE, "v8", Instant(t, "commit", State.REQUESTED)), b"", node)
        merged = None if merge is None else f"{merge:017d}"
        model = {"fg": fg, "slice": path, "merge": merged,
                 "aux": {"key": key, "kind": kind, "value": entries.get(key)}}
        stats = {partition: [write_stat(partition, file_id, path, merged, len(entries), kind)]}
        body = commit_body("v8", table_spec("v8", "part"), stats, model)
        self.put(instant_path(BASE, "v8", Instant(t, "commit", State.COMPLETED, t + 1)), body, node)
        return f"{BASE}/{path}"


def test_a_deleted_committed_file_is_lost_through_the_metadata_table_and_stale_on_storage_listing() -> None:
    h = History()
    h.commit(10, "p0/a-0", {"k1": "v1"}, "k1", "insert")
    second = h.commit(20, "p0/a-0", {"k1": "v2"}, "k1", "update", merge=10)
    assert check_consistent_read_history(h.events, BASE, "v8", metadata_table=True) == []
    h.delete(second)  # a rollback deleted the base file of a completed commit
    mdt = check_consistent_read_history(h.events, BASE, "v8", metadata_table=True)
    listing = check_consistent_read_history(h.events, BASE, "v8", metadata_table=False)
    assert [v.details["kind"] for v in mdt] == ["committed value lost"]
    assert [v.details["kind"] for v in listing] == ["wrong value read (lost update or overwritten file)"]
    assert "returns v1" in listing[0].message and "returns nothing" in mdt[0].message


def test_an_unpublished_commit_is_a_committed_write_that_vanished() -> None:
    # a rollback that found its instant completed reverts it (deletes the completed file) and its base file
    h = History()
    h.commit(10, "p0/a-0", {"k1": "v1"}, "k1", "insert")
    second = h.commit(20, "p0/a-0", {"k1": "v2"}, "k1", "update", merge=10)
    h.delete(instant_path(BASE, "v8", Instant(20, "commit", State.COMPLETED, 21)))
    h.delete(second)
    found = check_consistent_read_history(h.events, BASE, "v8", metadata_table=True)
    assert [v.details["kind"] for v in found] == ["wrong value read (lost update or overwritten file)"]


def test_duplicate_keys_are_found_once_in_the_newest_committed_slices() -> None:
    h = History()
    h.commit(10, "p0/a-0", {"k1": "x"}, "k1", "insert")
    h.commit(20, "p0/b-0", {"k2": "y"}, "k2", "insert", node="w2")
    assert check_duplicate_keys(h.events, BASE, "v8") == []
    h.commit(30, "p0/b-0", {"k1": "x", "k2": "y"}, "k1", "insert", merge=20, node="w2")  # same key and value
    first = list(h.events)
    h.commit(40, "p0/a-0", {"k1": "z"}, "k1", "update", merge=10)
    (dup,) = check_duplicate_keys(h.events, BASE, "v8")
    assert dup.details == {"key": "k1"} and "p0/a-0" in dup.message and "p0/b-0" in dup.message
    assert dup.events[-1] < len(first)  # reported where it first showed
    # the same value in both file groups: ConsistentRead does not see that duplicate, only the later update
    assert check_duplicate_keys(first, BASE, "v8") != []
    assert check_timeline_history(first, BASE, "v8", ("consistent-read",)).violations == ()
    later = check_timeline_history(h.events, BASE, "v8", ("consistent-read",)).violations
    assert {v.details["kind"] for v in later} == {"key visible in two file groups with different values"}


def test_a_key_deleted_from_one_file_group_is_no_duplicate() -> None:
    h = History()
    h.commit(10, "p0/a-0", {"k1": "x"}, "k1", "insert")
    h.commit(20, "p0/b-0", {"k1": "y"}, "k1", "insert", node="w2")
    h.commit(30, "p0/a-0", {}, "k1", "delete", merge=10)
    (dup,) = check_duplicate_keys(h.events, BASE, "v8")  # reported at 20, when it first showed
    assert dup.events[-1] < 12


@pytest.mark.parametrize(("variant", "violated"), [("vanlightly-v5", True), ("hudi", False)])
def test_requested_instants_reach_the_store_in_time_order_only_when_created_in_the_lock_hold(
    variant: str, violated: bool
) -> None:
    # BaseHoodieWriteClient#startCommit creates .requested in the lock hold that drew its time; the
    # specification's writer creates it after the generator released the lock.  A pause of w1 at the moment
    # it releases that lock (found in a first run; same seed, so the same moment) lets the others draw later
    # times and create their .requested files first, under the specification only.
    scenario = Scenario(name="t", duration_ms=12_000, workload=WorkloadConfig(writers=3))
    tl = TimelineConfig(variant=variant, workload="times", ops_per_writer=0)
    events = simulate_timeline(TimelineScenario(scenario, tl), 1).events
    assert check_requested_order(events, BASE, "v8") == []
    released = next(e for e in events if e.process == "w1" and e.f == "release" and e.type == "ok")
    paused = replace(scenario, faults=FaultPlan(pauses=(Pause("w1", released.time, 3_000, "time"),)))
    ts = TimelineScenario(paused, tl)
    events = simulate_timeline(ts, 1).events
    verdict = check_timeline_run(ts, events)
    kinds = {v.kind for v in verdict.violations + verdict.findings}
    assert ("requested-out-of-order" in kinds) == violated
    assert not kinds & {"duplicate-time", "time-not-increasing"}  # the times themselves are fine


def test_two_writers_inserting_two_keys_make_no_duplicate() -> None:
    # the race of tl-hudi-occ-duplicate-key with two different keys: two file groups, no duplicate key
    events, _, ts = run_scripted(TimelineConfig(), {"w1": [("k1", "upsert")], "w2": [("k2", "upsert")]},
                                 {"w1": 0, "w2": 0})
    assert check_duplicate_keys(events, BASE, "v8", metadata_table=True) == []
    assert check_timeline_run(ts, events).violations == ()
