"""scenarios/time_scale.py: a lock entry's times divided by a factor, for worlds that run in real time."""

from __future__ import annotations

import pytest

from model.config import ConfigError
from scenarios import loader
from scenarios.time_scale import scale


def test_hudi_defaults_become_hudis_smallest_lease_and_every_time_shrinks() -> None:
    sc = loader.load("rfc91-long-pause")
    small = scale(sc, 30)
    assert (small.lock.validity_secs, small.lock.renew_interval_secs) == (10, 1)
    assert small.duration_ms == sc.duration_ms // 30
    assert small.lock.wait_time_ms == sc.lock.wait_time_ms // 30
    p, q = sc.faults.pauses[0], small.faults.pauses[0]
    assert (q.at_ms, q.duration_ms, q.trigger) == (round(p.at_ms / 30), round(p.duration_ms / 30), p.trigger)
    assert small.workload.work_ms.hi == round(sc.workload.work_ms.hi / 30)
    # what Hudi fixes does not scale
    fixed = (sc.lock.poll_ms, sc.lock.drift_allowance_ms)
    assert (small.lock.poll_ms, small.lock.drift_allowance_ms) == fixed
    small.validate()


def test_windows_restarts_and_open_ends() -> None:
    sc = loader.load("rfc91-renewals-fail")
    e = scale(sc, 30).faults.errors[0]
    assert (e.start_ms, e.end_ms) == (round(10_000 / 30), 12_000)
    assert scale(loader.load("rfc91-graceful-shutdown"), 30).faults.shutdowns[0].restart_after_ms == 2_000
    open_rule = loader.load("rfc91-safe").faults.errors[0]
    assert scale(loader.load("rfc91-safe"), 30).faults.errors[0].end_ms == open_rule.end_ms


def test_a_factor_that_breaks_hudis_limits_is_refused() -> None:
    sc = loader.load("rfc91-long-pause")
    assert scale(sc, 1) is sc
    with pytest.raises(ConfigError, match="--time-scale = 60"):
        scale(sc, 60)  # a 5 s lease
    with pytest.raises(ConfigError, match="--time-scale = 7"):
        scale(sc, 7)  # not whole seconds
    with pytest.raises(ConfigError, match="--time-scale = 0"):
        scale(sc, 0)
