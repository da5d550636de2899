"""RFC-91 edge cases, the lost reply, determinism: run catalogue scenarios and read their histories."""

from __future__ import annotations

from dataclasses import replace

import pytest
from lockstrategies import fast_scenario

from model.checkers.lock_run import check_lock_history
from model.config import (
    ConfigError,
    Crash,
    Dist,
    ErrorRule,
    FaultPlan,
    HeartbeatStartFailure,
    LockConfig,
    Pause,
    StorageConfig,
    WorkloadConfig,
    WriterDeath,
)
from model.runtime.history import Event, dumps
from model.runtime.sim import run_scenario
from scenarios import loader


def _first(events: list[Event], **match: object) -> Event:
    return next(e for e in events if all(getattr(e, k) == v for k, v in match.items()))


def test_same_seed_gives_identical_history_bytes() -> None:
    scenario = loader.load("rfc91-safe")
    assert dumps(run_scenario(scenario, 11)) == dumps(run_scenario(scenario, 11))
    assert dumps(run_scenario(scenario, 11)) != dumps(run_scenario(scenario, 12))


@pytest.mark.parametrize("name,told", [
    ("rfc91-lost-reply", {"reason": "exception", "phase": "create"}),  # no SDK retries: SdkClientException
    ("rfc91-lost-reply-hudi-1.1", {"reason": "precondition-failed"}),  # the SDK's retry meets its own file
    ("rfc91-lost-reply-overwrite", {"reason": "write-unknown"}),  # overwriting: UNKNOWN_ERROR
])
def test_a_lost_acquire_reply_leaves_a_dangling_lock_reported_as_liveness_finding(
        name: str, told: dict[str, str]) -> None:
    scenario = loader.load(name)
    events = run_scenario(scenario)
    failed = next(e for e in events if e.f == "try-lock" and e.type == "fail" and e.node == "w2"
                  and e.value["reason"] != "held")
    assert {k: failed.value.get(k) for k in told} == told
    owner = failed.value["owner"]
    # The store applied the write: the lock file as last written names the writer that was told it failed.
    written = [e for e in events
               if e.process == "store" and e.f == "lock-file" and e.index < failed.index][-1]
    assert written.value["owner"] == owner and not written.value["expired"]
    verdict = check_lock_history(events, scenario.checkers)
    assert verdict.verdict == "ok"
    (finding,) = [f for f in verdict.findings if f.kind == "dangling-lock"]
    validity = scenario.lock.validity_secs * 1000
    assert finding.details["owner"] == owner and finding.details["cause"] == "acquire"
    # Nobody else acquires before the dangling lock expires (validity + the 500 ms allowance, skew 0).
    assert finding.details["waited_ms"] >= validity + scenario.lock.drift_allowance_ms
    nxt = next(e for e in events if e.f == "acquire" and e.type == "ok" and e.value["owner"] != owner
               and e.index > failed.index)
    assert nxt.time >= written.time + validity
    # Meanwhile the writer reads its own owner id in the lock file (isLockStillValid ignores the owner).
    assert any(e.f == "try-lock" and e.value.get("holder") == owner and e.node != "w2" for e in events)


def test_412_recovery_adopts_the_lock_instead_of_leaving_it_dangling() -> None:
    scenario = loader.load("rfc91-lost-reply-recovery")
    events = run_scenario(scenario)
    assert _first(events, f="recover-412", type="ok").node == "w2"
    assert _first(events, f="acquire", type="ok").node == "w2"
    assert not [f for f in check_lock_history(events).findings if f.kind == "dangling-lock"]


def test_writer_thread_death_stops_heartbeat_and_another_writer_acquires_after_expiry() -> None:
    workload = WorkloadConfig(writers=2, steps_per_hold=1_000, node_start_ms={"w1": 0, "w2": 500})
    scenario = fast_scenario(workload=workload, faults=FaultPlan(writer_deaths=(WriterDeath("w1", 3_000),)))
    events = run_scenario(scenario, 1)
    died = _first(events, f="thread-died", node="w1")
    stopped = _first(events, f="heartbeat-stop", node="w1")
    assert stopped.value["reason"] == "writer-dead"
    # It stops at its next tick: within one renew interval (plus a round trip) of the death.
    assert died.time <= stopped.time <= died.time + scenario.lock.renew_interval_secs * 1000 + 100
    last_lock = [e for e in events if e.process == "store" and e.f == "lock-file" and e.time <= died.time][-1]
    w2 = _first(events, f="acquire", type="ok", node="w2")
    w2_clock_at_acquire = w2.clock
    assert w2_clock_at_acquire is not None
    assert w2_clock_at_acquire > last_lock.value["valid_until"] + scenario.lock.drift_allowance_ms
    assert check_lock_history(events).verdict == "ok"


def test_heartbeat_start_failure_releases_the_lock_at_once() -> None:
    workload = WorkloadConfig(writers=2, node_start_ms={"w1": 0, "w2": 300})
    scenario = fast_scenario(
        workload=workload, faults=FaultPlan(heartbeat_start_failures=(HeartbeatStartFailure("w1", 1),))
    )
    events = run_scenario(scenario, 1)
    failed = _first(events, f="heartbeat-start", type="fail", node="w1")
    expired = [
        e
        for e in events
        if e.process == "store"
        and e.f == "lock-file"
        and e.value["owner"] == failed.value["owner"]
        and e.value["expired"]
    ]
    assert expired and expired[0].time - failed.time < 200  # released right away
    acquired = [e for e in events if e.f == "acquire" and e.type == "ok"]
    assert acquired[0].value["owner"] != failed.value["owner"]
    # Nobody waited out a validity period for the lock that had no heartbeat.
    assert acquired[0].time < scenario.lock.validity_secs * 1000


def test_rfc91_as_written_does_not_interrupt_the_writer_on_a_lost_lock() -> None:
    # A holder paused 20 s in the middle of a long transaction: when it wakes, its renewal gets 412.
    plan = FaultPlan(pauses=(Pause("w1", at_ms=5_000, duration_ms=20_000, trigger="write"),))
    workload = WorkloadConfig(writers=3, steps_per_hold=50, work_ms=WorkloadConfig().work_ms)
    lock = LockConfig(validity_secs=10, renew_interval_secs=1, wait_time_ms=20_000)
    hudi = run_scenario(fast_scenario(workload=workload, faults=plan), 1)
    as_written = run_scenario(
        fast_scenario(workload=workload, faults=plan, lock=replace(lock, variant="rfc91-as-written")), 1)
    # Hudi's heartbeat interrupts the writer (heartbeatTaskRunner); it sees it at its next storage request.
    lost = _first(hudi, f="lock-lost", node="w1")
    assert any(e.f == "interrupted" and e.node == "w1" and e.index > lost.index for e in hudi)
    assert not any(e.f in ("interrupted", "interrupted-call", "lock-lost") for e in as_written)
    assert any(e.f == "heartbeat-stop" and e.value["reason"] == "renewal-failed" for e in as_written)


def test_catalogue_scenarios_meet_their_expected_verdicts() -> None:
    for name in loader.catalogue_names(protocol="lock"):
        scenario = loader.load(name)
        verdict = check_lock_history(run_scenario(scenario), scenario.checkers)
        assert verdict.verdict == scenario.expect, (
            f"{name} seed {scenario.seed}: {verdict.to_dict()['violations'][:1]}"
        )


def test_stop_heartbeat_gives_up_after_15_s_and_the_release_fails() -> None:
    """A renewal in flight for 20 s (its request times out) when the writer releases: unlock waits for the
    provider's monitor (renewLock is synchronized) until the renewal returns, then stops the heartbeat
    holding it; the runs that fell due meanwhile have taken the heartbeat semaphore and wait for that
    monitor, so LockProviderHeartbeatManager#stopHeartbeat gives up after 15 s and unlock throws
    FAILED_TO_RELEASE without expiring the lock (tests/test_lock_monitor.py steps it by hand)."""
    workload = WorkloadConfig(writers=1, steps_per_hold=1, work_ms=Dist("fixed", 1_500))
    lock = LockConfig(validity_secs=10, renew_interval_secs=1, wait_time_ms=20_000)
    timeouts = ErrorRule(node="w1", key="lock", method="write", status="timeout", start_ms=900, end_ms=1_100)
    scenario = fast_scenario(lock=lock, workload=replace(workload, node_start_ms={"w1": 0}),
                             storage=StorageConfig(timeout_ms=20_000), faults=FaultPlan(errors=(timeouts,)),
                             duration_ms=40_000)
    events = run_scenario(scenario, 1)
    failed = _first(events, f="release-failed")
    assert "heartbeat still in flight" in failed.value["error"] and failed.value["still_believes"]
    renew = _first(events, f="renew", type="invoke")
    assert failed.time - renew.time >= 20_000 + 15_000  # the renewal's 20 s, then the stop's 15 s
    assert _first(events, f="stop-heartbeat-stalled").time == failed.time - 15_000
    # close() retries the release once the renewal has come back
    assert any(e.f == "lock-file" and e.value["expired"] for e in events if e.time > failed.time)


def test_a_graceful_shutdown_runs_the_hook_that_expires_the_lock() -> None:
    scenario = loader.load("rfc91-graceful-shutdown")
    events = run_scenario(scenario)
    hook = _first(events, f="shutdown-hook", node="w1")
    expired = next(e for e in events if e.process == "store" and e.f == "lock-file" and e.value["expired"]
                   and e.index > hook.index)
    assert expired.value["owner"] == hook.value["owner"] and expired.time - hook.time < 100
    stop = _first(events, f="shutdown-stop")
    assert stop.index > expired.index  # the node stops after its hooks ran
    nxt = next(e for e in events if e.f == "acquire" and e.type == "ok" and e.index > hook.index)
    assert nxt.time - expired.time < 2_000  # the others did not wait for the lease to run out
    assert check_lock_history(events, scenario.checkers).verdict == "ok"
    # a crash instead runs no hook, and the others wait for the lease to run out
    crashed = run_scenario(replace(scenario, faults=FaultPlan(crashes=(Crash("w1", 30_000, 60_000),))))
    assert not any(e.f == "shutdown-hook" for e in crashed)
    taken = next(e for e in crashed if e.f == "acquire" and e.type == "ok" and e.time > 30_000)
    assert taken.time > 30_000 + 200_000


def test_the_jvms_halt_after_its_hooks_keeps_the_holder_running_under_a_freed_lock() -> None:
    # the same shutdown with the JVM halting 300 ms after its hooks (what Hudi's jars showed): the node stops
    # then, not as its hooks end, and a contender takes the lock the hook freed while the holder still runs
    scenario = loader.load("rfc91-graceful-shutdown-halt-window")
    assert scenario.faults.shutdowns[0].halt_after_hooks_ms == 300

    def stop_after_hook(events: list[Event]) -> int:
        return _first(events, f="shutdown-stop").time - _first(events, f="shutdown-hook", node="w1").time

    events = run_scenario(scenario)
    assert stop_after_hook(events) >= 300
    assert "overlap" in {v.kind for v in check_lock_history(events, scenario.checkers).violations}
    # with no halt window (the default) the node stops as its hook ends and the same seed is safe: the
    # verdict rests on the setting
    shutdown = replace(scenario.faults.shutdowns[0], halt_after_hooks_ms=0)
    safe_events = run_scenario(replace(scenario, faults=replace(scenario.faults, shutdowns=(shutdown,))))
    assert stop_after_hook(safe_events) < 300
    assert check_lock_history(safe_events, scenario.checkers).verdict == "ok"


def test_the_hook_that_checks_the_writer_leaves_the_lock_to_lapse_while_it_writes() -> None:
    # the hypothetical fix (variant hook-checks-writer): with the same 300 ms halt the hook keeps the lock
    # while the writer runs, so no one takes it before the lease lapses and the run is safe
    scenario = loader.load("rfc91-hypothetical-hook-checks-writer")
    events = run_scenario(scenario)
    kept = next(e for e in events if e.f == "shutdown-hook" and e.value.get("kept"))
    assert not any(e.process == "store" and e.f == "lock-file" and e.value["expired"] and e.index > kept.index
                   and e.value["owner"] == kept.value["owner"] for e in events)
    taken = next(e for e in events if e.f == "acquire" and e.type == "ok" and e.time > kept.time)
    assert taken.time > kept.time + scenario.lock.validity_secs * 1000 - 1000  # the lease had to lapse
    assert check_lock_history(events, scenario.checkers).verdict == "ok"
    # once the writer thread has died, the same hook expires the lock at once, as Hudi's does
    died = replace(scenario, faults=replace(scenario.faults, writer_deaths=(WriterDeath("w1", 29_000),)))
    died_events = run_scenario(died)
    hook = _first(died_events, f="shutdown-hook", node="w1")
    assert not any(e.f == "shutdown-hook" and e.value.get("kept") for e in died_events)
    assert any(e.process == "store" and e.f == "lock-file" and e.value["expired"] and e.index > hook.index
               and e.value["owner"] == hook.value["owner"] for e in died_events)


def test_a_negative_halt_after_hooks_is_refused_by_field() -> None:
    scenario = loader.load("rfc91-graceful-shutdown-halt-window")
    bad = replace(scenario.faults.shutdowns[0], halt_after_hooks_ms=-1)
    with pytest.raises(ConfigError, match=r"faults\.shutdowns\[0\]\.halt_after_hooks_ms"):
        replace(scenario, faults=replace(scenario.faults, shutdowns=(bad,))).validate()


@pytest.mark.parametrize("policy,interrupted", [("next-storage-call", True), ("checkpoints", True),
                                                ("never", False)])
def test_the_writers_interrupt_policy_decides_when_a_lost_lock_stops_it(policy: str,
                                                                        interrupted: bool) -> None:
    base = loader.load("rfc91-renewals-fail")
    scenario = replace(base, workload=replace(base.workload, interrupt=policy))
    events = run_scenario(scenario)
    lost = _first(events, f="lock-lost", node="w1")
    stops = [e for e in events if e.node == "w1" and e.f == "interrupted" and e.index > lost.index]
    assert bool(stops) is interrupted
    if stops:
        assert stops[0].time - lost.time <= 100  # within a storage call or a check of the fast work loop
    violations = check_lock_history(events).violations
    overlap = max(v.details["overlap_ms"] for v in violations if v.kind == "overlap")
    assert (overlap > 100_000) is (not interrupted)  # never told: it writes to the end of the run


def test_hudi_1_1_does_not_interrupt_the_writer_on_a_lost_lock() -> None:
    base = loader.load("rfc91-renewals-fail")
    old = run_scenario(replace(base, lock=replace(base.lock, variant="hudi-1.1")))
    assert not any(e.f == "interrupted" for e in old) and not any(e.f == "lock-lost" for e in old)
    assert any(e.f == "heartbeat-stop" and e.value["reason"] == "renewal-failed" for e in old)
