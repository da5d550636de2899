"""The provider's monitor (docs/fidelity.md M5, M6): ``synchronized`` tryLock, unlock, close and renewLock.

StorageBasedLockProvider (apache/hudi 54cb1a57) holds its monitor in ``unlock`` while it calls
``heartbeatManager.stopHeartbeat(true)``, and ``renewLock`` is ``synchronized``.  A heartbeat run that
took ``heartbeatSemaphore`` (LockProviderHeartbeatManager d5e5c40b, ``#heartbeatTaskRunner``) and waits to
enter ``renewLock`` cannot be interrupted out of that wait: ``cancel(true)`` only sets its flag, the
stop's ``heartbeatSemaphore.tryAcquire(15 s)`` runs out, ``stopHeartbeat`` returns false and ``unlock``
throws FAILED_TO_RELEASE; then the renewal runs with the interrupt flag set (the AWS SDK refuses to send
it: UNKNOWN_ERROR on S3).  The tests step the writer and the heartbeat by hand with the scripted driver.
"""

from __future__ import annotations

from dataclasses import replace

from lockdriver import Driver, provider
from lockstrategies import fast_scenario

from model.config import Dist, ErrorRule, FaultPlan, LockConfig, StorageConfig, WorkloadConfig
from model.lock.provider import HEARTBEAT_TASK, StorageLockProvider
from model.runtime.effects import WRITER_TASK, ReplaceIfMatch
from model.runtime.sim import SimWorld

R = 30_000


def acquired(d: Driver, p: StorageLockProvider) -> None:
    d.script("404", "200", "404")  # lock read, create, audit_enabled.json
    assert d.run(p.try_lock_once()) is True and p.monitor_holder is None


def waiting(d: Driver, task: str) -> bool:
    return any(r.value["task"] == task for r in d.recorded("monitor-wait"))


def test_unlock_waits_for_a_renewal_in_flight_and_then_stalls_on_the_runs_that_fell_due() -> None:
    d = Driver()
    p = provider(d)
    acquired(d, p)
    hb = p.heartbeat()  # the spawned body, driven by hand
    d.spawned.clear()
    # the first run at R renews; stop it inside renewLock, holding the monitor
    d.script("200")
    d.run(hb, until=lambda: bool(d.recorded("renew", "ok")))
    assert p.monitor_holder == HEARTBEAT_TASK
    # the writer's unlock blocks entering its synchronized block (no request, no stop yet)
    unlock = p.unlock()
    d.run(unlock, until=lambda: waiting(d, WRITER_TASK))
    assert d.cancels == [] and p.monitor_holder == HEARTBEAT_TASK
    # meanwhile the renewal ran long: the next run is due when it returns
    d.advance(R)
    d.run(hb, until=lambda: waiting(d, HEARTBEAT_TASK))
    assert p.monitor_holder == WRITER_TASK  # handed to the first waiter, and woken
    assert d.interrupts == [WRITER_TASK]
    # the writer now stops the heartbeat: the run holds the semaphore and waits for our monitor
    n, mono = len(d.requests), d.mono
    assert d.run(unlock) is False
    assert d.mono - mono == 15_000 and d.sleeps[-1] == 15_000  # the stop's semaphore wait ran out
    assert d.recorded("stop-heartbeat-stalled") and d.cancels == []  # cancel(true) cannot end the wait
    assert len(d.requests) == n and p.lock is not None  # FAILED_TO_RELEASE before any expire
    assert "heartbeat still in flight" in (p.error or "")
    assert p.monitor_holder == HEARTBEAT_TASK and d.interrupts == [WRITER_TASK, HEARTBEAT_TASK]
    # the renewal then runs with the interrupt flag the stop set: the SDK sends nothing (UNKNOWN_ERROR)
    d.interrupt_at = lambda effect: isinstance(effect, ReplaceIfMatch)
    d.run(hb)
    assert d.recorded("interrupted-call") and len(d.requests) == n
    assert p.monitor_holder is None and p.heartbeat_active  # scheduledFuture stays: hasActiveHeartbeat
    assert d.interrupts.count(HEARTBEAT_TASK) == 2  # the flag re-armed once it had the monitor
    # a later release stops the (finished) heartbeat at once and expires the lock
    d.interrupt_at = lambda effect: False
    d.script("200")
    assert d.run(p.unlock()) is True and p.lock is None
    assert isinstance(d.requests[-1], ReplaceIfMatch) and len(d.cancels) == 1


def test_without_a_run_waiting_the_stop_is_a_cancel_as_before() -> None:
    """The uncontended release: stopHeartbeat cancels the sleeping run at once (no semaphore wait)."""
    d = Driver()
    p = provider(d)
    acquired(d, p)
    d.script("200")
    assert d.run(p.unlock()) is True
    assert not d.recorded("monitor-wait") and not d.recorded("stop-heartbeat-stalled")
    assert len(d.cancels) == 1 and 15_000 not in d.sleeps


def test_close_holds_the_monitor_through_both_stops_and_the_termination_wait() -> None:
    """close() = synchronized shutdown(false): unlock's stop stalls, heartbeatManager.close()'s stop stalls
    again and the scheduler's awaitTermination(5 s) runs out before the heartbeat gets the monitor."""
    d = Driver()
    p = provider(d)
    d.run(p.open())
    acquired(d, p)
    hb = p.heartbeat()
    d.spawned.clear()
    close = p.close()
    d.run(close, until=lambda: not d.hooks)  # holding the monitor, the hook removed
    assert p.monitor_holder == WRITER_TASK
    d.run(hb, until=lambda: waiting(d, HEARTBEAT_TASK))  # the first run falls due and waits
    mono = d.mono
    d.run(close)
    assert d.mono - mono == 15_000 + 15_000 + 5_000 and p.closed
    assert d.recorded("release-failed") and p.lock is not None
    assert p.monitor_holder == HEARTBEAT_TASK  # released only when close() returns


def test_the_heartbeat_waits_for_a_trylock_that_holds_the_monitor() -> None:
    """tryLock() is synchronized: a run that falls due while the writer is still inside it (its audit
    enable-file read is slow) waits, and renews once tryLock returns."""
    d = Driver()
    p = provider(d)
    d.script("404", "200")
    try_lock = p.try_lock_once()
    d.run(try_lock, until=lambda: bool(d.recorded("try-lock", "ok")))  # the enable-file read is next
    hb = d.spawned.pop(HEARTBEAT_TASK)
    d.run(hb, until=lambda: waiting(d, HEARTBEAT_TASK))
    assert d.requests[-1].key.endswith("table_lock.json")  # type: ignore[union-attr]  # no renewal sent
    d.script("404")
    assert d.run(try_lock) is True and p.monitor_holder == HEARTBEAT_TASK
    assert d.interrupts == [HEARTBEAT_TASK]  # the hand-over wakes it
    d.script("200")
    d.run(hb, until=lambda: bool(d.recorded("renew", "ok")))
    assert isinstance(d.requests[-1], ReplaceIfMatch)


def test_a_writer_that_never_wakes_on_an_interrupt_polls_for_the_monitor() -> None:
    d = Driver()
    ids = iter(["owner-1"])
    p = StorageLockProvider(LockConfig(), lambda: next(ids), writer_wakes_on_interrupt=False)
    acquired(d, p)
    hb = p.heartbeat()
    d.spawned.clear()
    d.script("200")
    d.run(hb, until=lambda: bool(d.recorded("renew", "ok")))
    unlock = p.unlock()
    d.run(unlock, until=lambda: len(d.sleeps) == 4)
    assert d.sleeps[-3:] == [1, 1, 1]  # re-checks every millisecond (a woken writer sleeps until handed)


def test_in_simulation_a_release_during_a_slow_renewal_stalls_then_close_releases() -> None:
    """A renewal whose request times out after 20 s (renew interval 1 s): the writer's release waits for
    the monitor, the runs that fell due meanwhile take the semaphore, the stop stalls 15 s and the
    release fails; the renewal runs with the interrupt flag; close() then releases."""
    workload = WorkloadConfig(writers=1, steps_per_hold=1, work_ms=Dist("fixed", 1_500), holds=1,
                              node_start_ms={"w1": 0})
    lock = LockConfig(validity_secs=10, renew_interval_secs=1, wait_time_ms=20_000)
    timeouts = ErrorRule(node="w1", key="lock", method="write", status="timeout", start_ms=900, end_ms=1_100)
    scenario = fast_scenario(lock=lock, workload=workload, storage=StorageConfig(timeout_ms=20_000),
                             faults=FaultPlan(errors=(timeouts,)), duration_ms=60_000)
    events = SimWorld(scenario).run()
    renew = next(e for e in events if e.f == "renew" and e.type == "invoke")
    wait = next(e for e in events if e.f == "monitor-wait" and e.value["task"] == "writer")
    stalled = next(e for e in events if e.f == "stop-heartbeat-stalled")
    failed = next(e for e in events if e.f == "release-failed")
    assert renew.time < wait.time < renew.time + 20_000  # the release came during the renewal
    assert stalled.time >= renew.time + 20_000  # the writer got the monitor once the renewal returned
    assert failed.time - stalled.time == 15_000 and "heartbeat still in flight" in failed.value["error"]
    flagged = next(e for e in events if e.f == "interrupted-call" and e.index > failed.index)
    assert flagged.process == "w1/heartbeat" and flagged.time == failed.time
    expired = [e for e in events if e.process == "store" and e.f == "lock-file" and e.value["expired"]]
    assert expired and expired[0].time > failed.time  # close() released it
    # the same run without the monitor's stall (no overdue run: a renew interval longer than the renewal)
    calm = replace(scenario, lock=replace(lock, renew_interval_secs=30, validity_secs=300))
    assert not [e for e in SimWorld(calm).run() if e.f == "stop-heartbeat-stalled"]


def test_the_catalogue_entry_stalls_the_release_and_only_a_slow_renewal_does() -> None:
    from model.checkers.lock_run import check_lock_history
    from scenarios import loader

    scenario = loader.load("rfc91-release-stall")
    events = SimWorld(scenario).run()
    assert check_lock_history(events, scenario.checkers).verdict == "ok"
    failed = next(e for e in events if e.f == "release-failed")
    stalled = next(e for e in events if e.f == "stop-heartbeat-stalled")
    assert failed.node == "w1" and failed.time - stalled.time == 15_000 and stalled.time > 90_000
    taken = next(e for e in events if e.node == "w2" and e.f == "acquire" and e.type == "ok")
    assert taken.time > failed.time  # w2 waited for the stall and close()'s release
    quick = loader.load("rfc91-release-stall", ["storage.timeout_ms=1000"])
    assert not [e for e in SimWorld(quick).run() if e.f in ("stop-heartbeat-stalled", "release-failed")]
