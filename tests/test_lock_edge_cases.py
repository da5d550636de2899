"""RFC-91 edge cases, the lost reply, determinism: run catalogue scenarios and read their histories."""

from __future__ import annotations

from dataclasses import replace

from lockstrategies import fast_scenario

from model.checkers.lock_run import check_lock_history
from model.config import FaultPlan, HeartbeatStartFailure, LockConfig, WorkloadConfig, WriterDeath
from model.history import Event, dumps
from model.sim import run_scenario
from scenarios import loader


def _first(events: list[Event], **match: object) -> Event:
    return next(e for e in events if all(getattr(e, k) == v for k, v in match.items()))


def test_same_seed_gives_identical_history_bytes() -> None:
    scenario = loader.load("rfc91-safe")
    assert dumps(run_scenario(scenario, 11)) == dumps(run_scenario(scenario, 11))
    assert dumps(run_scenario(scenario, 11)) != dumps(run_scenario(scenario, 12))


def test_lost_reply_leaves_a_dangling_lock_reported_as_liveness_finding() -> None:
    scenario = loader.load("rfc91-lost-reply")
    events = run_scenario(scenario)
    told = _first(events, f="try-lock", type="fail", node="w2")
    assert told.value["status"] == "PRECONDITION_FAILED" and told.value["ambiguous"]
    owner = told.value["owner"]
    # The store applied the first attempt: the lock file names the writer that was told it failed.
    written = _first(events, process="store", f="lock-file")
    assert written.value["owner"] == owner and not written.value["expired"]
    verdict = check_lock_history(events, scenario.checkers)
    assert verdict.verdict == "ok"
    (finding,) = [f for f in verdict.findings if f.kind == "dangling-lock"]
    validity = scenario.lock.validity_secs * 1000
    assert finding.details["owner"] == owner
    # Nobody else acquires before the dangling lock expires (validity + the 500 ms allowance, minus skew 0).
    assert finding.details["waited_ms"] >= validity + scenario.lock.drift_allowance_ms
    nxt = _first(events, f="acquire", type="ok")
    assert nxt.time >= written.time + validity


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
    plan = loader.load("rfc91-long-pause").faults
    hudi = run_scenario(
        fast_scenario(
            faults=replace(plan, pauses=(replace(plan.pauses[0], at_ms=5_000, duration_ms=20_000),))
        ),
        1,
    )
    as_written = run_scenario(
        fast_scenario(
            lock=LockConfig(
                variant="rfc91-as-written", validity_secs=10, renew_interval_secs=1, wait_time_ms=20_000
            ),
            faults=replace(plan, pauses=(replace(plan.pauses[0], at_ms=5_000, duration_ms=20_000),)),
        ),
        1,
    )
    assert any(e.f == "interrupted" for e in hudi)
    assert not any(e.f == "interrupted" for e in as_written)
    assert any(e.f == "heartbeat-stop" and e.value["reason"] == "renewal-failed" for e in as_written)


def test_catalogue_scenarios_meet_their_expected_verdicts() -> None:
    for name in loader.catalogue_names():
        scenario = loader.load(name)
        verdict = check_lock_history(run_scenario(scenario), scenario.checkers)
        assert verdict.verdict == scenario.expect, (
            f"{name} seed {scenario.seed}: {verdict.to_dict()['violations'][:1]}"
        )
