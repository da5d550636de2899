"""Per-node wall clocks of the simulated world: offset, drift rate and jumps.

All times are integer milliseconds.  True time starts at 0 when a run starts;
a node's clock reads ``EPOCH_MS + true + offset + drift + jumps``.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable
from dataclasses import dataclass, field

from model.explorable import Keyer

# 2026-01-01T00:00:00Z: clock readings look like real epoch milliseconds.
EPOCH_MS = 1_767_225_600_000


@dataclass(frozen=True)
class ClockJump:
    """At true time ``at_ms`` the clock steps by ``by_ms`` (NTP step, VM migration)."""

    at_ms: int
    by_ms: int


@dataclass(frozen=True)
class NodeClock:
    """A node's clock.  ``drift_ppm`` is the rate error in parts per million."""

    offset_ms: int = 0
    drift_ppm: int = 0
    jumps: tuple[ClockJump, ...] = field(default_factory=tuple)

    __explore_excluded__ = {  # not in its state, each with why it does not decide the run's future
        "steady_skew": "a cache (cached_property) of the offset when the clock neither drifts nor jumps, "
                       "made from the fields",
    }

    def __explore_state__(self, k: Keyer) -> Hashable:
        """Its offset relative to the run's least (a uniform shift of every clock is none), drift, jumps."""
        return (k.offset(self.offset_ms), self.drift_ppm, k.value(self.jumps))

    def read(self, true_ms: int) -> int:
        """The wall-clock reading (epoch ms) of this node at ``true_ms``."""
        drift = (true_ms * self.drift_ppm) // 1_000_000
        if not self.jumps:
            return EPOCH_MS + true_ms + self.offset_ms + drift
        jumped = sum(j.by_ms for j in self.jumps if j.at_ms <= true_ms)
        return EPOCH_MS + true_ms + self.offset_ms + drift + jumped

    @functools.cached_property
    def steady_skew(self) -> int | None:
        """How far the clock reads from true time when that never changes (no drift, no jumps): the offset.

        None when it changes; ``read(t) - EPOCH_MS - t`` is then the skew at ``t``.
        """
        return None if self.drift_ppm or self.jumps else self.offset_ms

    def monotonic(self, true_ms: int) -> int:
        """The node's monotonic clock (System.nanoTime, ms) at ``true_ms``: drifts, never jumps, origin 0."""
        return true_ms + (true_ms * self.drift_ppm) // 1_000_000

    def true_duration(self, local_ms: int) -> int:
        """True milliseconds that pass while this node sleeps ``local_ms`` of its own time."""
        if local_ms <= 0:
            return 0
        if not self.drift_ppm:
            return local_ms
        # ceil(local * 1e6 / (1e6 + ppm)) with integers only
        denom = 1_000_000 + self.drift_ppm
        return max(1, -(-local_ms * 1_000_000 // denom))
