"""A lock scenario with its times divided by a factor: Hudi's timings, run in real time in minutes.

The catalogue's lock entries keep Hudi's defaults (a 300 s lease renewed every 30 s) and last 7 to 30
minutes; a world that runs in real time (the ``hudi`` world of Hudi's own provider) runs them shorter:
``scale(scenario, 30)`` turns the lease into Hudi's smallest (10 s, renewed every 1 s: Hudi requires
validity >= 10 s and >= 10 x the renew interval) and divides every other time by the same factor (the
run's duration, LockManager's wait and retry sleep, the storage client's timeout, the workload's
start, think and work times, every fault's time, window and duration), rounded to whole ms (seconds
for the lease).

What does not scale, and why: what Hudi fixes in its code (the 1 s poll of ``tryLock``, the 500 ms
clock-drift allowance, the 15 s heartbeat stop), so a scaled run polls 30 times less often and its
allowance is 30 times wider relative to the lease; clock offsets and drift (they are measured against
that fixed allowance); counts (retries, steps, writers). A verdict of a scaled run names its factor.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from model.config import (
    ConfigError,
    Crash,
    Cutoff,
    Dist,
    ErrorRule,
    Pause,
    Scenario,
    Shutdown,
    WriterDeath,
)


def scale(scenario: Scenario, factor: int) -> Scenario:
    """``scenario`` with its times divided by ``factor`` (1: unchanged); ConfigError when the lease would
    fall below what Hudi accepts."""
    if factor < 1:
        raise ConfigError("--time-scale", factor, "must be a whole number >= 1")
    if factor == 1:
        return scenario

    def ms(v: int) -> int:
        return v if v >= 2**62 else round(v / factor)  # an open end stays open

    def dist(d: Dist) -> Dist:
        return dataclasses.replace(d, lo=ms(d.lo), hi=ms(d.hi))

    lock, wl, st, f = scenario.lock, scenario.workload, scenario.storage, scenario.faults
    validity = lock.validity_secs / factor
    renew = lock.renew_interval_secs / factor
    if validity < 10 or renew < 1 or validity != int(validity) or renew != int(renew):
        raise ConfigError("--time-scale", factor,
                          f"gives a lease of {validity:g} s renewed every {renew:g} s (lock.validity_secs "
                          f"{lock.validity_secs} / {factor}); Hudi takes whole seconds, validity >= 10 s "
                          f"and renew >= 1 s")
    faults = dataclasses.replace(
        f,
        pauses=tuple(_times(p, ms, "at_ms", "duration_ms") for p in f.pauses),
        errors=tuple(_times(e, ms, "start_ms", "end_ms") for e in f.errors),
        crashes=tuple(_times(c, ms, "at_ms", "restart_after_ms") for c in f.crashes),
        writer_deaths=tuple(_times(d, ms, "at_ms") for d in f.writer_deaths),
        cutoffs=tuple(_times(c, ms, "start_ms", "end_ms") for c in f.cutoffs),
        shutdowns=tuple(_times(s, ms, "at_ms", "restart_after_ms") for s in f.shutdowns),
    )
    return dataclasses.replace(
        scenario,
        duration_ms=ms(scenario.duration_ms),
        lock=dataclasses.replace(lock, validity_secs=int(validity), renew_interval_secs=int(renew),
                                 wait_time_ms=ms(lock.wait_time_ms),
                                 client_wait_ms_between_retry=ms(lock.client_wait_ms_between_retry)),
        storage=dataclasses.replace(st, timeout_ms=ms(st.timeout_ms)),
        workload=dataclasses.replace(wl, work_ms=dist(wl.work_ms), think_ms=dist(wl.think_ms),
                                     start_ms=dist(wl.start_ms),
                                     node_start_ms={n: ms(v) for n, v in wl.node_start_ms.items()}),
        faults=faults,
    )


Timed = Pause | ErrorRule | Crash | WriterDeath | Cutoff | Shutdown


def _times(item: Any, ms: Any, *names: str) -> Any:
    """``item`` with the named ms fields scaled (a negative restart, "never", stays as it is)."""
    return dataclasses.replace(item, **{n: ms(getattr(item, n)) if getattr(item, n) >= 0 else getattr(item, n)
                                        for n in names})
