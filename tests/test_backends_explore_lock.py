"""A counterexample of the lock explorer replayed on a real server: the same schedule, the same violation."""

from __future__ import annotations

from backends.endpoint import Endpoint
from backends.fixtures import fake_gcs_endpoint  # noqa: F401
from backends.replay import replay
from model.explore import Bounds, explore
from model.runtime.sim import run_scenario


def test_the_long_pause_found_by_the_explorer_replays_on_fake_gcs(fake_gcs_endpoint: Endpoint) -> None:  # noqa: F811
    bounds = Bounds(writers=2, holds=1, steps_per_hold=1, phases=False, faults=1, fault_kinds=("pause",),
                    pause_ms=(5_000,), checkers=("stale-write", "lost-update"))
    res = explore(bounds)
    assert res.verdict == "violated" and res.scenario is not None and res.replays_exactly
    sc = res.scenario
    original = run_scenario(sc, sc.seed)
    with fake_gcs_endpoint.backend("explore-lock-replay/", timeout_s=10) as b:
        report = replay(sc, sc.seed, b, original=original)
    assert report.original_verdict == "violation" and report.verdict.verdict == "violation"
    assert report.same_verdict
    assert "stale-write" in {v.kind for v in report.verdict.violations}
