"""Storage steps of the simulated NBCC table's nodes that survive faults, the bracket that makes a
time and its file atomic, and a node's view of the table (sans-I/O generators of effects).

Shared by the writers and the compaction service (``sim_table``), the clean that rolls back failed
writes (``sim_cleaner``) and the snapshot reader (``sim_reader``).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Hashable
from typing import Any

from model.explorable import Keyer
from model.lock.provider import StorageLockProvider
from model.nbcc.sim_layout import load_table, needed_for_load
from model.runtime.effects import (
    CreateIfAbsent,
    Effect,
    ListPrefix,
    Outcome,
    Read,
    Record,
    Sleep,
    StoreResult,
)
from model.timeline.layout import ms_to_instant, properties_key
from model.timeline.timegen import TimeGenConfig, TimeGenerator

Gen = Generator[Effect, Any, Any]

RETRY_MS = 50  # pause before retrying after a storage failure


def create_resolved(key: str, body: bytes) -> Gen:
    """Create ``key`` if absent; True when the object now holds ``body`` because of this call.

    A 412 after an unknown outcome (``ambiguous``), or an unknown outcome itself, may mean our own
    write was applied: the object is read back (until the store answers) and compared.
    """
    res: StoreResult = yield CreateIfAbsent(key, body)
    if res.ok:
        return True
    if res.outcome is Outcome.PRECONDITION_FAILED and not res.ambiguous:
        return False
    while True:
        got: StoreResult = yield Read(key)
        if got.ok:
            return got.body == body
        if got.outcome is Outcome.NOT_FOUND:
            return False
        yield Sleep(RETRY_MS)


def ensure_exists(key: str, body: bytes) -> Gen:
    """Create ``key`` unless it exists, retrying failed requests (table creation by any node)."""
    while True:
        res: StoreResult = yield CreateIfAbsent(key, body)
        if res.ok or res.outcome is Outcome.PRECONDITION_FAILED:
            return
        yield Sleep(RETRY_MS)


def list_until_answered(prefix: str) -> Gen:
    """The keys under ``prefix``, listing again until the store answers."""
    while True:
        listing: StoreResult = yield ListPrefix(prefix)
        if listing.ok:
            return [k for k in (listing.body or b"").decode().split("\n") if k]
        yield Sleep(RETRY_MS)


def read_until_answered(key: str) -> Gen:
    """The body of ``key`` (None when absent), reading again until the store answers."""
    while True:
        got: StoreResult = yield Read(key)
        if got.ok:
            return got.body or b""
        if got.outcome is Outcome.NOT_FOUND:
            return None
        yield Sleep(RETRY_MS)


class Times:
    """The node's time generator, and the bracket that makes a time and its file atomic.

    ``begin()`` .. ``end()`` holds the table lock with the skew-adjusting generator (which then
    generates with the lock already held); with the other generators it does nothing, which is
    the point of those variants.  Each hold has a lock provider of its own, opened at ``begin`` and
    closed at ``end``, as Hudi's ``LockManager`` builds one lazily per transaction and closes it on
    unlock; a provider that cannot take the lock is closed and a new one tries again.
    """

    def __init__(
        self, config: TimeGenConfig, base: str, new_provider: Callable[[], StorageLockProvider]
    ) -> None:
        self.atomic = config.needs_lock
        self.new_provider = new_provider
        self.provider: StorageLockProvider | None = None
        # generations run with the lock held (or need none): this provider is never asked for the lock
        self.gen = TimeGenerator(config, base, new_provider() if self.atomic else None)

    def __explore_state__(self, k: Keyer) -> Hashable:
        """Whether times need the lock, the provider of the hold in progress, the generator."""
        return (self.atomic, k.value(self.new_provider), k.value(self.provider), k.value(self.gen))

    def begin(self) -> Gen:
        """Take the table lock (skew-adjusting), waiting as long as it takes."""
        if not self.atomic:
            return
        while True:
            provider = self.new_provider()
            yield from provider.open()
            if (yield from provider.try_lock()):
                self.provider = provider
                return
            yield Record("lock-wait", "info", {"owner": provider.owner, "error": provider.error})
            yield from provider.close()
            yield Sleep(RETRY_MS)

    def end(self) -> Gen:
        """Release the table lock (skew-adjusting) and close the hold's provider."""
        if self.provider is not None:
            provider, self.provider = self.provider, None
            yield from provider.unlock()
            yield from provider.close()

    def next(self, kind: str) -> Gen:
        """A new time as an instant number (inside ``begin``/``end``)."""
        ms = yield from self.gen.generate(kind, lock_held=self.atomic)
        assert ms is not None  # only a generation that takes the lock itself can time out
        return ms_to_instant(ms)


class TableLoader:
    """A node's view of the table: one listing of the table, then the bodies the reader needs
    (:func:`~model.nbcc.sim_layout.needed_for_load`; with ``metadata_table`` every completed commit,
    whose write stats are what the metadata table lists).  Those bodies never change once written,
    so each is read once per node and kept (as a Hudi client keeps instant details it has read)."""

    def __init__(self, base: str, metadata_table: bool) -> None:
        self.base = base
        self.metadata_table = metadata_table
        self.bodies: dict[str, bytes] = {}

    def __explore_state__(self, k: Keyer) -> Hashable:
        """The table it reads and the bodies it read already (it reads them no more); a body is decided by
        its key (instant and data files are written once, under names no other write takes)."""
        return (self.base, self.metadata_table, tuple(sorted(self.bodies)))

    def load(self) -> Gen:
        """The HudiTable, or None if a request failed (the caller tries again later)."""
        listing: StoreResult = yield ListPrefix(self.base + "/")
        if not listing.ok:
            return None
        keys = [k for k in (listing.body or b"").decode().split("\n") if k]
        if properties_key(self.base) not in keys:  # no table yet
            return None
        objects: dict[str, bytes] = {}
        for _at, k in enumerate(keys):  # _at: the loop's position
            if not needed_for_load(k, self.base, self.metadata_table):
                objects[k] = b""
                continue
            if k not in self.bodies:
                r: StoreResult = yield Read(k)
                if r.outcome is Outcome.NOT_FOUND:  # removed since the listing (a rollback): not there
                    continue
                if not r.ok:
                    return None
                self.bodies[k] = r.body or b""
            objects[k] = self.bodies[k]
        return load_table(objects, self.base)


def load_once(base: str) -> Gen:
    """:meth:`TableLoader.load` without a cache (storage listing)."""
    return (yield from TableLoader(base, False).load())
