"""Failed writes under Hudi 1.2.1 (variant ``hudi``): heartbeats, LAZY rollback by a clean, EAGER rollback
at a writer's start, and a writer's own heartbeat check before it commits.

Follows BaseHoodieTableServiceClient#rollbackFailedWrites / #getInstantsToRollback, HoodieHeartbeatClient,
CleanerUtils#rollbackFailedWrites and HeartbeatUtils#abortIfHeartbeatExpired.  About 10 s.
"""

from __future__ import annotations

import json
from dataclasses import replace

from occ_scripted import outcomes, run_scripted

from model.config import Crash, ErrorRule, FaultPlan
from model.runtime.history import Event
from model.timeline.config import TimelineConfig, TimelineScenario
from model.timeline.failed_writes import is_expired, to_rollback
from model.timeline.layout import Instant, State
from model.timeline.metadata import decode_instant_metadata
from model.timeline.run import check_timeline_run, simulate_timeline
from scenarios import timeline_loader


def instant_of(e: Event) -> str:
    return str(e.value["instant"])


def test_expiry_is_interval_times_misses_and_a_missing_file_is_time_zero() -> None:
    # HoodieHeartbeatClient#isHeartbeatExpired: now - lastHeartbeatTime > interval * tolerable misses;
    # HoodieHeartbeatUtils#getLastHeartbeatTime: 0 when the file does not exist
    assert not is_expired(10_000, 8_000, 1_000, 2) and is_expired(10_001, 8_000, 1_000, 2)
    assert is_expired(10_000, None, 60_000, 10) is False and is_expired(600_001, None, 60_000, 10)


def test_rollback_takes_pending_commits_newest_first() -> None:
    # getInstantsToRollback: the inflight timeline (requested and inflight), reverse order, no clustering
    instants = [
        Instant(1, "commit", State.COMPLETED, 2),
        Instant(3, "commit", State.INFLIGHT),
        Instant(5, "commit", State.REQUESTED),
        Instant(4, "clustering", State.REQUESTED),
        Instant(6, "rollback", State.REQUESTED),
    ]
    assert [i.requested for i in to_rollback(instants)] == [5, 3]


def test_lazy_rolls_back_dead_and_aborted_writes_once_their_heartbeats_expire() -> None:
    # more writers dying than the catalogue entry has, so that some die well before the run ends
    more = ["timeline.fail_commit_prob=0.3", "workload.writers=5"]
    ts = timeline_loader.load("tl-hudi-lazy-rollback-safe", more)
    run = simulate_timeline(ts, ts.scenario.seed)
    events = run.events
    interval = ts.timeline.heartbeat_ms * ts.timeline.tolerable_misses
    died = {instant_of(e) for e in events if e.f == "writer-fail"}
    aborted = {e.value["instant"] for e in events if e.f == "conflict"}
    rolled = {instant_of(e): e for e in events if e.f == "rollback" and e.type == "ok"}
    last_commit = max(e.time for e in events if e.f == "op" and e.type == "ok")
    early = {instant_of(e) for e in events if e.f == "writer-fail" and e.time < last_commit - 2 * interval}
    assert early and aborted
    assert early <= set(rolled), "every writer that died in its commit is rolled back (by a later clean)"
    for instant in (died | aborted) & set(rolled):
        hb = f".heartbeat/{instant}"
        beats = [e for e in events if e.process == "store" and e.value.get("key", "").endswith(hb)]
        started = [e for e in events if e.f == "rollback" and e.type == "invoke" and instant_of(e) == instant]
        # a rollback begins only after the instant's last heartbeat is older than interval x misses
        assert beats and started[0].time > beats[-1].time + interval - 50, instant
    # a commit aborted by a conflict stops its heartbeat and deletes the file (commitStats' finally)
    for instant in aborted:
        deleted = [e for e in events if e.f == "delete" and e.value["key"].endswith(f".heartbeat/{instant}")]
        assert deleted, instant
    # what a rollback leaves: no base file, requested or inflight file of the instant, and a completed
    # rollback naming it
    for instant in rolled:
        assert not [k for k in run.objects if instant in k and "rollback" not in k]
    rollbacks = [k for k in run.objects if k.endswith(".rollback")]
    named = {c for k in rollbacks for c in decode_instant_metadata(run.objects[k], k)["commitsRollback"]}
    assert set(rolled) <= named
    assert check_timeline_run(ts, events).violations == ()


def test_a_fresh_heartbeat_keeps_a_dead_write_while_a_deleted_one_counts_as_expired() -> None:
    # the same run with heartbeats that do not expire within it: the dead writers' instants (their heartbeat
    # files stay, fresh) are not rolled back; the aborted commits' are (their files were deleted: time 0)
    ts = timeline_loader.load("tl-hudi-lazy-rollback-safe", ["timeline.heartbeat_tolerable_misses=1000"])
    events = simulate_timeline(ts, ts.scenario.seed).events
    died = {instant_of(e) for e in events if e.f == "writer-fail"}
    aborted = {e.value["instant"] for e in events if e.f == "conflict"}
    rolled = {instant_of(e) for e in events if e.f == "rollback" and e.type == "ok"}
    assert died and not died & rolled
    assert rolled and rolled <= aborted


def test_eager_rollback_at_start_removes_the_other_writers_write_in_progress() -> None:
    # SINGLE_WRITER with two writers (unsupported): w2's startCommit rolls back w1's pending instant (EAGER:
    # every pending commit instant), deleting its requested and inflight files; w1's commit then fails the
    # inflight check (ActiveTimelineV2#transitionStateToComplete: "File ... does not exist!")
    tl = TimelineConfig(cc="none", unsupported_single_writer=True, preload=True)
    events, _, ts = run_scripted(
        tl, {"w1": [("k1", "upsert")], "w2": [("k2", "upsert")]}, {"w1": 0, "w2": 800}, work_ms=3_000
    )
    w1_instants = {e.value["key"].split("/")[-1][:17] for e in events if e.node == "w1"
                   and e.process == "store" and e.value["key"].endswith(".commit.requested")}
    rollbacks = [e for e in events if e.f == "rollback" and e.type == "ok"]
    assert [(e.process, instant_of(e) in w1_instants) for e in rollbacks] == [("w2", True)]
    assert outcomes(events)["w1"] == [("fail", "inflight-missing")]
    assert outcomes(events)["w2"] == [("ok", "committed")]
    assert "unsupported" not in ts.models() and "does not support" in ts.models()


def test_eager_rollback_after_a_crash_cleans_the_single_writers_own_failed_write() -> None:
    # the supported case: one writer crashes mid-write; its next incarnation's startCommit rolls back the
    # instant it left pending, and reads stay consistent
    tl = TimelineConfig(cc="none", preload=True, ops_per_writer=4)
    events, objects, ts = run_scripted(
        tl, {"w1": [("k1", "upsert")] * 4}, {"w1": 0}, work_ms=2_000, duration_ms=40_000
    )
    assert not any(e.f == "rollback" for e in events)
    crash = Crash(node="w1", at_ms=1_500, restart_after_ms=1_000)
    crashed = replace(ts.scenario, faults=FaultPlan(crashes=(crash,)))
    run = simulate_timeline(TimelineScenario(crashed, ts.timeline), 1)
    rolled = [e for e in run.events if e.f == "rollback" and e.type == "ok"]
    assert len(rolled) == 1 and rolled[0].time > 2_500
    assert check_timeline_run(TimelineScenario(crashed, ts.timeline), run.events).violations == ()


def test_a_writer_whose_own_heartbeat_expired_aborts_before_taking_the_commit_lock() -> None:
    # HeartbeatUtils#abortIfHeartbeatExpired (commitStats, before beginTransaction): w1's heartbeat writes
    # fail after its first beat, so by commit time its last beat is older than interval x misses
    tl = TimelineConfig(heartbeat_interval_ms=1_000, heartbeat_tolerable_misses=2)
    rule = ErrorRule(node="w1", key="table/.hoodie/.heartbeat/", method="write", status="503", start_ms=1_000)
    events, _, ts = run_scripted(tl, {"w1": [("k1", "upsert")]}, {"w1": 0}, work_ms=5_000)
    assert outcomes(events) == {"w1": [("ok", "committed")]}
    faulty = TimelineScenario(replace(ts.scenario, faults=FaultPlan(errors=(rule,))), ts.timeline)
    run = simulate_timeline(faulty, 1)
    assert outcomes(run.events) == {"w1": [("fail", "heartbeat-expired")]}
    # aborted before beginTransaction: the heartbeat file is left (the client is closed, not stopped)
    assert any(k.startswith("table/.hoodie/.heartbeat/") for k in run.objects)
    assert not any(e.f == "acquire" and e.value.get("for") == "commit" and e.time > 4_000 for e in run.events)


def test_the_heartbeat_file_holds_the_writers_clock() -> None:
    # the model writes the beat's time into the file (Hudi reads the file's modification time)
    tl = TimelineConfig(heartbeat_interval_ms=1_000)
    events, _, _ = run_scripted(tl, {"w1": [("k1", "upsert")]}, {"w1": 0}, work_ms=2_500)
    beats = [e for e in events if e.process == "store" and "/.heartbeat/" in e.value.get("key", "")]
    assert len(beats) >= 3  # the first at start, then one a second while the write works
    times = [json.loads(e.value["body"]) for e in beats]
    assert times == sorted(times) and all(0 <= e.clock - t <= 100 for e, t in zip(beats, times, strict=True))
