"""Instant-time generation, one generator for every writer of the harness (OCC and NBCC alike).

- ``monotonic``: an external token provider: a counter object in the table's store
  (``.hoodie/.aux/instant_time_counter``, holding the last time issued as ``yyyyMMddHHmmssSSS``),
  taken by a compare-and-swap loop of effects (Read, then CreateIfAbsent or ReplaceIfMatch, again
  on a 412 or an unknown outcome).  It issues ``max(own clock, last + 1 ms)``: never a collision,
  always after every time issued before, on simulated and real storage alike.
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

from model.config import ConfigError
from model.effects import (
    CreateIfAbsent,
    Effect,
    Interrupted,
    Now,
    Outcome,
    Read,
    Record,
    ReplaceIfMatch,
    Sleep,
    StoreResult,
)
from model.storage_lock import StorageLockProvider
from model.timeline.layout import aux_key, format_time, parse_time

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


COUNTER = "instant_time_counter"
RETRY_MS = 10  # pause before retrying the counter after a failed request


def counter_key(base: str) -> str:
    """The store key of the monotonic generator's counter for the table at ``base``."""
    return aux_key(base, COUNTER)


def take_counter(base: str) -> Gen:
    """Take the next time from the counter: ``max(Now, last + 1)``, installed by compare-and-swap.

    Retries until its own write is acknowledged; a write whose outcome was unknown may have been
    applied, and then the next round simply issues a later time (the lost one is never used).
    """
    key = counter_key(base)
    while True:
        read: StoreResult = yield Read(key)
        now: int = yield Now()
        if read.ok and read.body is not None and read.version is not None:
            t = max(now, parse_time(read.body.decode()) + 1)
            res: StoreResult = yield ReplaceIfMatch(key, format_time(t).encode(), read.version)
        elif read.outcome is Outcome.NOT_FOUND:
            t = now
            res = yield CreateIfAbsent(key, format_time(t).encode())
        else:
            yield Sleep(RETRY_MS)
            continue
        if res.ok:
            return t
        if res.outcome not in (Outcome.PRECONDITION_FAILED, Outcome.NOT_FOUND):
            yield Sleep(RETRY_MS)


def release(lock: StorageLockProvider) -> Gen:
    """Unlock; when the heartbeat interrupts us while we stop it, unlock again.  True when released."""
    try:
        released: bool = yield from lock.unlock()
    except Interrupted:
        released = yield from lock.unlock()
    return released


class TimeGenerator:
    """One process's time generator for the table at ``base``; ``lock`` is the table lock (needed
    by ``skew-adjusting``)."""

    def __init__(self, config: TimeGenConfig, base: str, lock: StorageLockProvider | None = None) -> None:
        if config.needs_lock and lock is None:
            raise ValueError("the skew-adjusting generator needs the table lock")
        self.config = config
        self.base = base
        self.lock = lock
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
            taken: int = yield from take_counter(self.base)
            return taken
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
