"""Instant-time generation: a monotonic provider, a node's local clock, or Hudi's skew-adjusting generator.

- ``monotonic``: an external token provider, a counter shared by every node (never collides).
- ``local-clock``: the node's wall clock (``Now``); collides or runs backwards under skew.
- ``skew-adjusting``: Hudi's ``WaitBasedTimeGenerator``: take the table lock (the RFC-91
  storage lock of ``model/storage_lock.py``), read the clock, sleep
  ``hoodie.time.generator.max_expected_clock_skew_ms``, release.  While every two clocks
  differ by less than that sleep and the lock excludes, a generation that starts after
  another one returned reads a later time.  A completion time is generated with the lock
  already held (``lock_held=True``): the caller writes the completed instant before releasing.

Within one process (one incarnation of a node) times are forced to increase at millisecond
resolution, as Hudi's ``HoodieInstantTimeGenerator`` does: a time not above the last one is
thrown away and generation repeats (a restart forgets the last time).

Every generation is recorded: ``time`` ``invoke`` ``{kind}``, then ``ok`` ``{kind, time}``
or ``fail`` ``{kind, reason}``; the timeline checkers read these events.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from model.clock import EPOCH_MS
from model.config import ConfigError
from model.effects import Effect, Interrupted, Now, Record, Sleep
from model.storage_lock import StorageLockProvider
from model.timeline.instants import format_time

Gen = Generator[Effect, Any, Any]

GENERATORS = ("monotonic", "local-clock", "skew-adjusting")


@dataclass(frozen=True)
class TimeGenConfig:
    """Which generator, and its settings."""

    kind: str = "skew-adjusting"
    max_expected_clock_skew_ms: int = 200  # hoodie.time.generator.max_expected_clock_skew_ms
    per_process_increase: bool = True

    def validate(self, prefix: str = "timeline") -> None:
        if self.kind not in GENERATORS:
            raise ConfigError(
                f"{prefix}.time_generator", self.kind, f"must be one of {', '.join(GENERATORS)}"
            )
        if self.max_expected_clock_skew_ms < 0:
            raise ConfigError(
                f"{prefix}.max_expected_clock_skew_ms", self.max_expected_clock_skew_ms, "must be >= 0"
            )

    @property
    def needs_lock(self) -> bool:
        return self.kind == "skew-adjusting"


class MonotonicSource:
    """The monotonic provider: one counter shared by all nodes of a run (an external token service)."""

    def __init__(self, start_ms: int = EPOCH_MS) -> None:
        self.last = start_ms

    def take(self) -> int:
        self.last += 1
        return self.last


def release(lock: StorageLockProvider) -> Gen:
    """Unlock; when the heartbeat interrupts us while we stop it, unlock again.  True when released."""
    try:
        released: bool = yield from lock.unlock()
    except Interrupted:
        released = yield from lock.unlock()
    return released


class TimeGenerator:
    """One process's time generator; ``lock`` is the table lock (needed by ``skew-adjusting``)."""

    def __init__(
        self,
        config: TimeGenConfig,
        lock: StorageLockProvider | None = None,
        source: MonotonicSource | None = None,
    ) -> None:
        if config.needs_lock and lock is None:
            raise ValueError("the skew-adjusting generator needs the table lock")
        if config.kind == "monotonic" and source is None:
            raise ValueError("the monotonic generator needs a shared source")
        self.config = config
        self.lock = lock
        self.source = source
        self.last: int | None = None

    def generate(self, kind: str, lock_held: bool = False) -> Gen:
        """A new time (epoch ms), or None when the table lock could not be taken.

        ``kind`` (``instant`` or ``completion``) only labels the history events.  Raises
        :class:`Interrupted` when the heartbeat reports the lock lost during the sleep
        (after releasing a lock this call took).
        """
        yield Record("time", "invoke", {"kind": kind})
        while True:
            t = yield from self._raw(lock_held)
            if t is None:
                yield Record("time", "fail", {"kind": kind, "reason": "lock-timeout"})
                return None
            if not self.config.per_process_increase or self.last is None or t > self.last:
                break
            if not self.config.needs_lock:
                yield Sleep(1)  # Hudi spins until the clock passes the last time
        self.last = t
        yield Record("time", "ok", {"kind": kind, "time": t, "instant": format_time(t)})
        return t

    def _raw(self, lock_held: bool) -> Gen:
        """One reading of the underlying generator."""
        if self.config.kind == "monotonic":
            assert self.source is not None
            return self.source.take()
        if self.config.kind == "local-clock":
            now: int = yield Now()
            return now
        assert self.lock is not None
        if not lock_held:
            if not (yield from self.lock.try_lock()):
                return None
            yield Record("acquire", "ok", {"owner": self.lock.owner, "for": "time"})
        try:
            now = yield Now()
            yield Sleep(self.config.max_expected_clock_skew_ms)
        except Interrupted:
            if not lock_held:
                yield from release(self.lock)
            raise
        if not lock_held:
            yield from release(self.lock)
            yield Record("release", "ok", {"owner": self.lock.owner, "for": "time"})
        return now
