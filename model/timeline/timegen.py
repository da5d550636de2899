"""Instant-time generation, one generator for every writer of the harness (OCC and NBCC alike).

- ``monotonic``: an external token provider: a counter object in the table's store
  (``.hoodie/.aux/instant_time_counter``, holding the last time issued as ``yyyyMMddHHmmssSSS``),
  taken by a compare-and-swap loop of effects (Read, then CreateIfAbsent or ReplaceIfMatch, again
  on a 412 or an unknown outcome).  It issues ``max(own clock, last + 1 ms)``: never a collision,
  always after every time issued before, on simulated and real storage alike.
- ``local-clock``: the node's wall clock (``Now``); collides or runs backwards under skew.
- ``skew-adjusting``: Hudi's ``WaitBasedTimeGenerator``: take the table lock (the RFC-91
  storage lock of ``model/lock/provider.py``), read the clock, sleep
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

from collections.abc import Generator, Hashable
from dataclasses import dataclass
from typing import Any

from model.config import ConfigError
from model.explorable import Keyer
from model.lock.provider import StorageLockProvider
from model.runtime.effects import (
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
        self.config = config
        self.base = base
        self.lock = lock
        self.last: int | None = None

    def __explore_state__(self, k: Keyer) -> Hashable:
        """The generator's kind, the table, its lock and the last time it gave (a time: typed as the clock
        read it; a counter's value: a plain number)."""
        return (k.value(self.config), self.base, k.value(self.lock), k.value(self.last))

    def generate(self, kind: str, lock_held: bool = False, force_increase: bool | None = None) -> Gen:
        """A new time (epoch ms), or None when the table lock could not be taken.

        ``kind`` (``instant``, ``completion``, ...) only labels the history events.  ``lock_held``: the
        caller holds the table lock, or runs without one (Hudi's ``skipLocking``), so the skew-adjusting
        generator takes none.  ``force_increase`` (default: ``per_process_increase``) applies the
        per-process forced increase; Hudi applies it to instant times only
        (``HoodieInstantTimeGenerator#createNewInstantTime``), not to completion times
        (``ActiveTimelineV2#createCompleteFileInMetaPath`` formats the generator's time directly).
        Raises :class:`Interrupted` when the heartbeat reports the lock lost during the sleep (after
        releasing a lock this call took).
        """
        force = self.config.per_process_increase if force_increase is None else force_increase
        yield Record("time", "invoke", {"kind": kind})
        while True:
            t = yield from self._raw(lock_held)
            if t is None:
                yield Record("time", "fail", {"kind": kind, "reason": "lock-timeout"})
                return None
            if not force or self.last is None or t > self.last:
                break
            if not self.config.needs_lock:
                yield Sleep(1)  # Hudi spins until the clock passes the last time
        if force:
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
        lock = None if lock_held else self.lock
        if not lock_held:
            if lock is None:
                raise ValueError("the skew-adjusting generator needs the table lock")
            if not (yield from lock.try_lock()):
                return None
            yield Record("acquire", "ok", {"owner": lock.owner, "for": "time"})
        interrupted: Interrupted | None = None
        try:
            now = yield Now()
            yield Sleep(self.config.max_expected_clock_skew_ms)
        except Interrupted as e:
            interrupted = e  # released below: the explorer's stack model reads no suspension in a handler
        if lock is not None:
            yield from release(lock)
            if interrupted is None:
                yield Record("release", "ok", {"owner": lock.owner, "for": "time"})
        if interrupted is not None:
            raise interrupted
        return now
