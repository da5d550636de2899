"""Hypothesis strategies and a fast base scenario for lock-model properties.

Timings are scaled down (validity 10 s, renew 1 s, the smallest Hudi accepts)
so that one simulated minute covers many lease periods.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from model.config import (
    ClockSpec,
    Crash,
    Dist,
    ErrorRule,
    FaultPlan,
    LockConfig,
    Pause,
    Scenario,
    StorageConfig,
    WorkloadConfig,
)

VALIDITY_MS = 10_000
RENEW_MS = 1_000
NODES = ("w1", "w2", "w3")


def fast_scenario(**changes: object) -> Scenario:
    """Three writers, validity 10 s, renew 1 s, 60 s of simulated time."""
    base = Scenario(
        name="property",
        duration_ms=60_000,
        lock=LockConfig(
            validity_secs=VALIDITY_MS // 1000, renew_interval_secs=RENEW_MS // 1000, wait_time_ms=20_000
        ),
        storage=StorageConfig(timeout_ms=500, retry_backoff_ms=50),
        workload=WorkloadConfig(
            writers=3, work_ms=Dist("uniform", 50, 400), think_ms=Dist("uniform", 0, 300)
        ),
    )
    return replace(base, **changes)  # type: ignore[arg-type]


nodes = st.sampled_from(NODES)
triggers = st.sampled_from(("time", "acquired", "write"))


def pauses(max_ms: int, min_ms: int = 0) -> st.SearchStrategy[Pause]:
    return st.builds(
        Pause,
        node=nodes,
        at_ms=st.integers(0, 40_000),
        duration_ms=st.integers(min_ms, max_ms),
        trigger=triggers,
    )


@st.composite
def transient_errors(draw: st.DrawFn) -> ErrorRule:
    start = draw(st.integers(0, 50_000))
    return ErrorRule(
        node=draw(st.sampled_from(("any",) + NODES)),
        key=draw(st.sampled_from(("lock", "register", "any"))),
        method=draw(st.sampled_from(("read", "write", "any"))),
        status=draw(st.sampled_from(("409", "429", "503", "timeout"))),
        prob=draw(st.sampled_from((0.2, 0.5, 1.0))),
        start_ms=start,
        end_ms=start + draw(st.integers(0, 1_500)),
    )


clock_specs = st.builds(ClockSpec, offset_ms=st.integers(-250, 250), drift_ppm=st.integers(-100, 100))


@st.composite
def safe_plans(draw: st.DrawFn) -> tuple[int, dict[str, ClockSpec], FaultPlan]:
    """Plans inside RFC-91's assumptions: drift <= 500 ms, short pauses, transient errors, no lost replies."""
    seed = draw(st.integers(0, 2**16))
    clocks = {n: draw(clock_specs) for n in NODES}
    plan = FaultPlan(
        pauses=tuple(draw(st.lists(pauses(2_500), max_size=2))),
        errors=tuple(draw(st.lists(transient_errors(), max_size=2))),
        crashes=tuple(
            draw(
                st.lists(
                    st.builds(
                        Crash,
                        node=nodes,
                        at_ms=st.integers(0, 50_000),
                        restart_after_ms=st.integers(0, 5_000),
                    ),
                    max_size=1,
                )
            )
        ),
    )
    return seed, clocks, plan
