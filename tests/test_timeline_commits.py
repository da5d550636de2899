"""The specification's writer (variant ``vanlightly-v5``): copy-on-write commits in the simulated world, and
every timeline checker on an unsafe configuration of it.  (Hudi's writer: tests/test_occ_*.py.)

About 10 s in all.
"""

from __future__ import annotations

import pytest

from model.config import Scenario, WorkloadConfig
from model.protocols.occ import occ_metrics as timeline_metrics
from model.runtime.history import dumps
from model.timeline.config import TimelineConfig, TimelineScenario
from model.timeline.run import check_timeline_run, run_timeline, simulate_timeline
from scenarios import timeline_loader as cmd_timeline

# Both writers start at the same true time with the same clock: local-clock instant times collide.
TOGETHER = Scenario(
    name="t", duration_ms=20_000, workload=WorkloadConfig(writers=2, node_start_ms={"w1": 1_000, "w2": 1_000})
)


def kinds(ts: TimelineScenario, seed: int = 1) -> set[str]:
    verdict = check_timeline_run(ts, run_timeline(ts, seed))
    return {v.kind for v in verdict.violations}


def colliding(seed: int = 1, **tl: object) -> set[str]:
    cfg = TimelineConfig(
        **{
            "variant": "vanlightly-v5",
            "time_generator": "local-clock",
            "ops_per_writer": 3,
            "keys": 1,
            "file_groups": 1,
            "delete_prob": 0.0,
            **tl,
        }
    )  # type: ignore[arg-type]
    return kinds(TimelineScenario(TOGETHER, cfg), seed)


def test_occ_checker_catches_lost_updates_with_cc_none_and_passes_with_occ_and_put_if_absent() -> None:
    ts = cmd_timeline.load("tl-cc-none-lost-update")
    assert kinds(ts) == {"consistent-read"}
    safe = TimelineScenario(
        ts.scenario,
        TimelineConfig(
            variant="vanlightly-v5",
            time_generator="monotonic",
            cc="optimistic",
            put_if_absent=True,
            ops_per_writer=10,
            checkers=ts.timeline.checkers,
        ),
    )
    for seed in range(1, 4):
        events = run_timeline(safe, seed)
        assert check_timeline_run(safe, events).violations == ()
        metrics = timeline_metrics(events)
        assert metrics["ops"]["committed"] >= 5
        assert metrics["abort_reasons"].get("occ-conflict", 0) >= 1  # OCC did have to act


def test_colliding_instant_times_overwrite_completed_instants_without_put_if_absent() -> None:
    found = colliding(layout="v6", cc="none", put_if_absent=False)
    assert {"duplicate-time", "completed-instant-changed", "consistent-read"} <= found


@pytest.mark.parametrize(
    "variant",
    [
        {"cc": "optimistic", "put_if_absent": True},
        {"cc": "optimistic", "put_if_absent": False, "salt": True},
        {"cc": "pessimistic", "put_if_absent": False},
    ],
)
def test_colliding_times_are_survived_by_occ_with_put_if_absent_or_salt_and_by_pessimistic(
    variant: dict[str, object],
) -> None:
    for layout in ("v6", "v8"):
        for seed in (1, 2, 3):
            found = colliding(seed, layout=layout, **variant)
            assert "duplicate-time" in found, (layout, seed)
            assert not found & {"consistent-read", "completed-instant-changed"}, (layout, seed, found)


def test_occ_without_put_if_absent_loses_a_slice_when_times_collide() -> None:
    # the TLA+ row M=F, CC=1, PIA=F: the slice is overwritten before OCC validates
    found = [colliding(seed, cc="optimistic", put_if_absent=False) for seed in (1, 2, 3)]
    assert any("consistent-read" in f for f in found)


def test_without_the_primary_key_check_a_key_lands_in_two_file_groups() -> None:
    def run(pk: bool, seed: int) -> set[str]:
        cfg = TimelineConfig(
            variant="vanlightly-v5",
            time_generator="monotonic",
            cc="optimistic",
            put_if_absent=True,
            pk_check=pk,
            keys=1,
            file_groups=2,
            ops_per_writer=2,
            delete_prob=0.0,
        )
        ts = TimelineScenario(TOGETHER, cfg)
        verdict = check_timeline_run(ts, run_timeline(ts, seed))
        return {str(v.details.get("kind")) for v in verdict.violations}

    assert any("key visible in two file groups with different values" in run(False, s) for s in range(1, 6))
    assert all(run(True, s) == set() for s in range(1, 6))


def test_writers_that_fail_in_the_commit_phase_leave_reads_consistent_under_occ() -> None:
    scenario = Scenario(name="t", duration_ms=60_000, workload=WorkloadConfig(writers=3))
    cfg = TimelineConfig(
        variant="vanlightly-v5",
        time_generator="skew-adjusting",
        cc="optimistic",
        put_if_absent=True,
        keys=2,
        file_groups=2,
        ops_per_writer=6,
        fail_commit_prob=0.3,
    )
    ts = TimelineScenario(scenario, cfg)
    failures = 0
    for seed in (1, 2):
        events = run_timeline(ts, seed)
        failures += timeline_metrics(events)["ops"]["writer_failures"]
        assert check_timeline_run(ts, events).violations == ()
    assert failures >= 1


@pytest.mark.parametrize("name", ["tl-occ-put-if-absent", "tl-hudi-lazy-rollback-safe"])
def test_same_seed_same_history_and_table_bytes(name: str) -> None:
    ts = cmd_timeline.load(name, ["duration_ms=10000"])
    a, b = simulate_timeline(ts, 5), simulate_timeline(ts, 5)
    assert dumps(a.events) == dumps(b.events) and a.objects == b.objects
    assert any(k.endswith(".commit") for k in a.objects)  # completed instants (Avro commit metadata)
