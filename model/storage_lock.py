"""The storage-based lock provider (RFC-91) as Apache Hudi implements it, written sans-I/O.

Each public method is a generator of effects (see ``model/effects.py``); run it
with ``result = yield from provider.try_lock(...)`` inside a task of an
interpreter.  One provider instance belongs to one node (one writer process);
its writer task is named ``writer`` and its heartbeat task ``heartbeat``.

Variants (``LockConfig.variant``):

- ``hudi``: Hudi's behaviour (a 412 on renewal stops the heartbeat and
  interrupts the writer; unknown renewal errors keep the heartbeat going);
- ``rfc91-as-written``: the RFC's text: no writer interrupt; a renewal that
  fails past the expiration stops the heartbeat;
- ``fenced``: as ``hudi``, and the critical-section write carries the lock's
  version as a fencing token (see ``model/workload.py``);
- ``412-recovery``: as ``hudi``, and a 412 after an attempt with an unknown
  outcome re-reads the lock and adopts it if it names us.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from model.config import LockConfig
from model.effects import (
    Cancel,
    CreateIfAbsent,
    Effect,
    Interrupt,
    IsAlive,
    Now,
    Outcome,
    Read,
    Record,
    ReplaceIfMatch,
    Sleep,
    Spawn,
    StoreResult,
)
from model.lockfile import LockData, LockFile

Gen = Generator[Effect, Any, Any]

WRITER_TASK = "writer"
HEARTBEAT_TASK = "heartbeat"


def is_lock_valid(data: LockData, now_ms: int, allowance_ms: int) -> bool:
    """Hudi's validity test, the same for the holder and for contenders.

    A lock is valid unless it is marked expired or the reader's own clock is
    certainly past ``validUntil`` (by more than the drift allowance).
    """
    return not data.expired and not now_ms > data.valid_until + allowance_ms


class StorageLockProvider:
    """One writer's lock provider: tryLock, unlock, heartbeat (renewLock)."""

    def __init__(self, config: LockConfig, new_owner_id: Callable[[], str]) -> None:
        self.config = config
        self._new_owner_id = new_owner_id
        self.owner = ""  # the owner id of the current (or last) acquisition
        self.lock: LockFile | None = None  # "believesLockMightBeHeld" when not None
        self.heartbeat_active = False
        self.acquisitions = 0

    # ---- helpers -----------------------------------------------------------------

    @property
    def key(self) -> str:
        return self.config.lock_key

    @property
    def validity_ms(self) -> int:
        return self.config.validity_secs * 1000

    def _valid(self, data: LockData, now: int) -> bool:
        return is_lock_valid(data, now, self.config.drift_allowance_ms)

    def _upsert(self, data: LockData, current: LockFile | None) -> Gen:
        """Create-if-absent when there is no file, else replace-if-version-matches; returns StoreResult."""
        if current is None:
            result: StoreResult = yield CreateIfAbsent(self.key, data.encode())
        else:
            result = yield ReplaceIfMatch(self.key, data.encode(), current.version)
        if (
            result.outcome is Outcome.PRECONDITION_FAILED
            and result.ambiguous
            and self.config.variant == "412-recovery"
        ):
            result = yield from self._adopt_if_mine(data)
        return result

    def _adopt_if_mine(self, written: LockData) -> Gen:
        """412-recovery: after an ambiguous write, re-read; if the file holds what we wrote, it is ours."""
        read: StoreResult = yield Read(self.key)
        if read.ok and read.body is not None and LockData.decode(read.body) == written:
            yield Record("recover-412", "ok", {"owner": written.owner, "version": read.version})
            return StoreResult(Outcome.OK, version=read.version, attempts=read.attempts, ambiguous=True)
        yield Record("recover-412", "fail", {"owner": written.owner})
        return StoreResult(Outcome.PRECONDITION_FAILED, ambiguous=True)

    # ---- tryLock ---------------------------------------------------------------

    def holds_valid_lock(self) -> Gen:
        """Hudi's ``actuallyHoldsLock``: we hold a lock object and it is valid by our own clock."""
        if self.lock is None:
            return False
        now: int = yield Now()
        return self._valid(self.lock.data, now)

    def try_lock_once(self) -> Gen:
        """One pass of tryLock(); returns True when the lock is ours."""
        if (yield from self.holds_valid_lock()):
            return True
        if self.heartbeat_active:
            yield Record("try-lock", "fail", {"reason": "heartbeat-without-lock"})
            return False
        read: StoreResult = yield Read(self.key)
        current: LockFile | None = None
        if read.ok and read.body is not None and read.version is not None:
            current = LockFile(LockData.decode(read.body), read.version)
            now: int = yield Now()
            if self._valid(current.data, now):
                yield Record("try-lock", "fail", {"reason": "held", "holder": current.data.owner})
                return False
            if not current.data.expired:
                yield Record(
                    "dangling-lock",
                    "info",
                    {"holder": current.data.owner, "valid_until": current.data.valid_until},
                )
        elif read.outcome is not Outcome.NOT_FOUND:
            yield Record("try-lock", "fail", {"reason": "read-unknown", "status": read.outcome.name})
            return False

        owner = self._new_owner_id()
        now = yield Now()
        data = LockData(False, now + self.validity_ms, owner)
        result: StoreResult = yield from self._upsert(data, current)
        if not result.ok or result.version is None:
            reason = (
                "precondition-failed" if result.outcome is Outcome.PRECONDITION_FAILED else "write-unknown"
            )
            yield Record(
                "try-lock",
                "fail",
                {
                    "reason": reason,
                    "status": result.outcome.name,
                    "owner": owner,
                    "attempts": result.attempts,
                    "ambiguous": result.ambiguous,
                },
            )
            return False
        self.owner = owner
        self.lock = LockFile(data, result.version)
        self.acquisitions += 1
        started: bool = yield Spawn(HEARTBEAT_TASK, self.heartbeat())
        if not started:
            yield Record("heartbeat-start", "fail", {"owner": owner})
            yield from self._expire()
            return False
        self.heartbeat_active = True
        yield Record(
            "try-lock",
            "ok",
            {
                "owner": owner,
                "version": result.version,
                "valid_until": data.valid_until,
                "attempts": result.attempts,
            },
        )
        return True

    def try_lock(self, wait_ms: int | None = None) -> Gen:
        """tryLock(time): poll every ``poll_ms`` until the lock is ours or the wait is over."""
        wait = self.config.wait_time_ms if wait_ms is None else wait_ms
        start: int = yield Now()
        while True:
            if (yield from self.try_lock_once()):
                return True
            now: int = yield Now()
            if now - start + self.config.poll_ms > wait:
                return False
            yield Sleep(self.config.poll_ms)

    # ---- unlock ------------------------------------------------------------------

    def _expire(self) -> Gen:
        """tryExpireCurrentLock: write ``expired: true`` over our version; never delete."""
        assert self.lock is not None
        data = LockData(True, self.lock.data.valid_until, self.owner)
        result: StoreResult = yield from self._upsert(data, self.lock)
        if result.ok:
            self.lock = None
            return True
        if result.outcome is Outcome.PRECONDITION_FAILED:
            yield Record("release-acquired-by-others", "info", {"owner": self.owner})
            self.lock = None
            return True
        return False  # unknown: we still believe we might hold the lock

    def unlock(self) -> Gen:
        """unlock(): stop the heartbeat, then expire the lock file.  True when released."""
        if self.lock is None:
            return True
        if self.heartbeat_active:
            yield Cancel(HEARTBEAT_TASK)
            self.heartbeat_active = False
        return (yield from self._expire())

    # ---- heartbeat -------------------------------------------------------------

    def heartbeat(self) -> Gen:
        """The heartbeat task: renew every interval; stop on loss or when the writer is dead."""
        interval = self.config.renew_interval_secs * 1000
        while True:
            yield Sleep(interval)
            if not (yield IsAlive(WRITER_TASK)):
                yield Record("heartbeat-stop", "info", {"owner": self.owner, "reason": "writer-dead"})
                self.heartbeat_active = False
                return
            keep_going = yield from self.renew()
            if not keep_going:
                self.heartbeat_active = False
                if self.config.variant != "rfc91-as-written":
                    yield Record("lock-lost", "info", {"owner": self.owner})
                    yield Interrupt(WRITER_TASK)
                else:
                    yield Record("heartbeat-stop", "info", {"owner": self.owner, "reason": "renewal-failed"})
                return

    def renew(self) -> Gen:
        """renewLock(): extend validUntil over our cached version.  False stops the heartbeat."""
        if self.lock is None:
            return False
        now: int = yield Now()
        data = LockData(False, now + self.validity_ms, self.owner)
        yield Record("renew", "invoke", {"owner": self.owner, "valid_until": data.valid_until})
        result: StoreResult = yield from self._upsert(data, self.lock)
        if result.ok and result.version is not None:
            self.lock = LockFile(data, result.version)
            yield Record("renew", "ok", {"owner": self.owner, "version": result.version})
            return True
        if result.outcome is Outcome.PRECONDITION_FAILED:
            yield Record("renew", "fail", {"owner": self.owner, "status": result.outcome.name})
            return False
        yield Record("renew", "info", {"owner": self.owner, "status": result.outcome.name})
        if self.config.variant == "rfc91-as-written":
            now = yield Now()
            if now > self.lock.data.valid_until:
                return False  # "renewal fails past the expiration: log an error, stop the heartbeat"
        return True

    def fencing_token(self) -> str | None:
        """The version of the lock we hold, carried by fenced writes."""
        return self.lock.version if self.lock else None
