"""The simulated world's hooks for the lock explorer: a scripted schedule, bounded writers, a 412 answer."""

from __future__ import annotations

import dataclasses

import pytest

from model.config import (
    ConfigError,
    Dist,
    ErrorRule,
    FaultPlan,
    LockConfig,
    Scenario,
    Schedule,
    StorageConfig,
    WorkloadConfig,
)
from model.runtime.history import Event
from model.runtime.sim import SimWorld

# Two writers that both try to take the lock at 0 ms with zero latency: who wins is the order of steps.
RACE = Scenario(
    name="race", duration_ms=1_500,
    lock=LockConfig(validity_secs=2, renew_interval_secs=1, enforce_hudi_limits=False),
    storage=StorageConfig(latency_ms=Dist("fixed", 0), timeout_ms=500, sdk_retries=1),
    workload=WorkloadConfig(writers=2, steps_per_hold=1, work_ms=Dist("fixed", 1_000),
                            think_ms=Dist("fixed", 500), start_ms=Dist("fixed", 0)),
)


def first_owner(events: list[Event]) -> str:
    return next(e.node for e in events if e.f == "acquire" and e.type == "ok")


def test_without_a_schedule_the_simulated_world_is_unchanged_and_w1_wins() -> None:
    assert RACE.schedule == Schedule()
    assert first_owner(SimWorld(RACE).run()) == "w1"


def test_ranks_order_the_steps_due_at_one_instant() -> None:
    # timers and hops in creation order: w1's start, w2's start, then the hops of their requests.
    # Ranking w2's start first lets w2 read and create the lock file before w1 does.
    ranked = dataclasses.replace(RACE, schedule=Schedule(ranks=(1, 0, *range(2, 60))))
    events = SimWorld(ranked).run()
    assert first_owner(events) == "w2"
    assert SimWorld(ranked).run() == events  # a schedule is as deterministic as a seed


def test_scripted_latencies_replace_the_draws() -> None:
    storage = dataclasses.replace(RACE.storage, latency_ms=Dist("uniform", 5, 40))
    drawn = dataclasses.replace(RACE, storage=storage)
    # hops in creation order: w1's read and w2's read leave at 0 ms; w2's takes 200 ms, every other none
    scripted = dataclasses.replace(drawn, schedule=Schedule(latencies_ms=(0, 200, *([0] * 60))))
    events = SimWorld(scripted).run()
    assert first_owner(events) == "w1"
    w2_fail = next(e for e in events if e.node == "w2" and e.f == "try-lock")
    assert w2_fail.time == 200 and w2_fail.value["reason"] == "held"
    assert all(e.time % 100 == 0 for e in events)  # nothing drawn: every time is a sum of round constants
    assert any(e.time % 100 for e in SimWorld(drawn).run())


def test_holds_bounds_each_writers_attempts() -> None:
    bounded = dataclasses.replace(RACE, duration_ms=20_000,
                                  workload=dataclasses.replace(RACE.workload, holds=1))
    events = SimWorld(bounded).run()
    attempts = [e.node for e in events if e.f == "acquire" and e.type == "invoke"]
    assert sorted(attempts) == ["w1", "w2"]
    unbounded = SimWorld(dataclasses.replace(RACE, duration_ms=20_000)).run()
    assert sum(1 for e in unbounded if e.f == "acquire" and e.type == "invoke") > 2


def test_an_injected_412_is_answered_without_applying_the_write() -> None:
    rule = ErrorRule(node="w1", key="lock", method="write", status="412", count=1)
    events = SimWorld(dataclasses.replace(RACE, faults=FaultPlan(errors=(rule,)))).run()
    fail = next(e for e in events if e.node == "w1" and e.f == "try-lock")
    assert fail.type == "fail" and fail.value["reason"] == "precondition-failed"
    assert first_owner(events) == "w2"  # w1's create never reached the store


def test_a_412_on_a_read_is_refused_by_name() -> None:
    # a GET has no precondition: only a conditional write is answered 412
    rule = ErrorRule(node="w1", key="register", method="read", status="412")
    with pytest.raises(ConfigError) as err:
        dataclasses.replace(RACE, faults=FaultPlan(errors=(rule,))).validate()
    assert err.value.field == "faults.errors[0].method" and err.value.value == "read"
