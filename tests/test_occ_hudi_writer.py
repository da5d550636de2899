"""Hudi 1.2.1's commit path (variant ``hudi``, model/timeline/hudi_writer.py) in the simulated world.

Each test names the Java it follows.  Writers here run scripted operations (a key and a kind per
operation) instead of random ones, so that a test sets up exactly the interleaving the Java test does.
About 10 s in all.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

import pytest

from model.config import Dist, Scenario, WorkloadConfig
from model.effects import Effect
from model.history import Event
from model.objectstore import ObjectStore
from model.sim import SimWorld, WriterContext
from model.timeline.commits import writer_class
from model.timeline.config import TimelineConfig, TimelineScenario
from model.timeline.run import check_timeline_run
from model.workloads.lock import LockWorkload

Script = dict[str, Sequence[tuple[str, str]]]  # node -> [(key, kind)]


def scripted(cls: type, script: Sequence[tuple[str, str]]) -> type:
    """The variant's writer class with its operations taken from ``script`` (then it stops)."""

    def draw_op(self: Any) -> dict[str, Any]:
        key, kind = script[self.ops - 1]
        return {"key": key, "kind": kind, "value": f"{self.node}.{self.ops}"}

    return type(f"Scripted{cls.__name__}", (cls,), {"_draw_op": draw_op})


def run_scripted(
    tl: TimelineConfig,
    script: Script,
    starts: dict[str, int],
    work_ms: int = 1_000,
    duration_ms: int = 30_000,
    seed: int = 1,
) -> tuple[list[Event], dict[str, bytes], TimelineScenario]:
    """Run ``script`` (every writer's operations in order); the history, the store and the scenario."""
    workload = WorkloadConfig(
        writers=len(script),
        node_start_ms=starts,
        work_ms=Dist("uniform", work_ms, work_ms),
        think_ms=Dist("uniform", 0, 0),
    )
    scenario = Scenario(name="scripted", duration_ms=duration_ms, workload=workload)
    lengths = {len(ops) for ops in script.values()}
    ts = TimelineScenario(scenario, TimelineConfig(**{**tl.__dict__, "ops_per_writer": max(lengths)}))
    ts.validate()

    def make(ctx: WriterContext) -> Generator[Effect, Any, Any]:
        cls = scripted(writer_class(ts.timeline.spec.writer), script[ctx.node])
        writer = cls(
            ctx.node,
            ctx.rng,
            ctx.new_id,
            ts.timeline,
            scenario.lock,
            scenario.workload,
            start_ms=starts.get(ctx.node),
        )
        gen: Generator[Effect, Any, Any] = writer.run()
        return gen

    world = SimWorld(scenario, seed, None, workload=LockWorkload(scenario, make, ts.base_path + "/"))
    events = world.run()
    store = world.store
    assert isinstance(store, ObjectStore)
    return events, {k: o.body for k, o in store.objects.items()}, ts


def outcomes(events: list[Event]) -> dict[str, list[tuple[str, str]]]:
    """Per writer, how each operation ended: (type, reason or result)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for e in events:
        if e.f == "op" and e.type != "invoke":
            out.setdefault(e.process, []).append(
                (e.type, str(e.value.get("reason") or e.value.get("result")))
            )
    return out


def stored(events: list[Event], suffix: str) -> list[Event]:
    return [e for e in events if e.process == "store" and e.f == "object" and e.value["key"].endswith(suffix)]


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
