"""The storage-based lock provider (RFC-91) as Apache Hudi implements it, written sans-I/O.

Each public method is a generator of effects (see ``model/effects.py``); run it
with ``result = yield from provider.try_lock(...)`` inside a task of an
interpreter.  One provider is what Hudi's ``LockManager`` creates lazily and
closes after a successful unlock: one owner id (a UUID drawn when the provider
is built), one heartbeat manager, one audit service.  Its writer task is named
``writer`` and its heartbeat task ``heartbeat``.

The code follows ``StorageBasedLockProvider`` and ``LockProviderHeartbeatManager``
of apache/hudi 54cb1a57 (release 1.2.0) branch for branch; the lock clients'
reading of storage answers is ``model/lock_client.py`` and the audit trail
``model/lock_audit.py``.  A variant (``LockConfig.variant``, see
``model/lock_variants.py``) switches individual branches; ``docs/fidelity.md``
maps every branch to the Java and to the test that pins it.

Where Hudi throws (a client exception out of ``tryLock``, ``FAILED_TO_RELEASE``
out of ``unlock``), ``try_lock`` and ``unlock`` return False, record the cause
and set :attr:`StorageLockProvider.error`; ``try_lock_once`` raises as Hudi does.
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Callable, Generator
from typing import Any

from model.config import LockConfig
from model.effects import (
    Cancel,
    CreateIfAbsent,
    Effect,
    Interrupt,
    Interrupted,
    IsAlive,
    Now,
    Outcome,
    Read,
    Record,
    ReplaceIfMatch,
    ShutdownHook,
    Sleep,
    Spawn,
    StoreResult,
)
from model.lock_audit import AuditTrail, enable_key, is_enabled
from model.lock_client import GetResult, LockClientError, UpsertResult, read_result, upsert_result
from model.lock_variants import variant
from model.lockfile import LockData, LockFile

Gen = Generator[Effect, Any, Any]
NOW, NANO_TIME = Now(), Now(monotonic=True)  # System.currentTimeMillis(), System.nanoTime() (in ms)
WRITER_TASK = "writer"
HEARTBEAT_TASK = "heartbeat"


class HoodieLockError(Exception):
    """Hudi's ``HoodieLockException`` thrown by the provider itself."""


class ExpireResult(enum.Enum):
    """``StorageBasedLockProvider.ExpireLockResult``."""

    SUCCESS = 0
    THROTTLED = 1
    FAILED = 2


def is_lock_valid(data: LockData, now_ms: int, allowance_ms: int) -> bool:
    """Hudi's validity test (``isLockStillValid``), the same for the holder and for contenders.

    A lock is valid unless it is marked expired or the reader's own clock is
    certainly past ``validUntil`` (by more than the drift allowance).
    """
    return not data.expired and not now_ms > data.valid_until + allowance_ms


class StorageLockProvider:
    """One provider: tryLock, unlock, close, the heartbeat (renewLock) and the shutdown hook."""

    def __init__(self, config: LockConfig, new_owner_id: Callable[[], str], flavor: str = "s3") -> None:
        self.config = config
        self.flavor = flavor
        self.variant = variant(config.variant)
        self.owner = new_owner_id()  # UUID.randomUUID() in the constructor: one owner id per provider
        self.lock: LockFile | None = None  # currentLockObj: "believesLockMightBeHeld" when not None
        self.heartbeat_active = False  # heartbeatManager.hasActiveHeartbeat()
        self.closed = False
        self.audit: AuditTrail | None = None
        self.acquisitions = 0
        self.error: str | None = None  # why the last try_lock / unlock ended where Hudi throws
        self.key = config.lock_key
        self.validity_ms = config.validity_secs * 1000
        # effects are values: the ones sent on every poll are made once
        self._read_lock_file, self._poll_sleep = Read(self.key), Sleep(config.poll_ms)

    # ---- helpers -----------------------------------------------------------------

    @property
    def hook_key(self) -> str:
        return f"lock-provider/{self.owner}"

    def _valid(self, data: LockData, now: int) -> bool:
        return is_lock_valid(data, now, self.config.drift_allowance_ms)

    def _call(self, effect: Read | CreateIfAbsent | ReplaceIfMatch) -> Gen:
        """One storage call; an interrupt seen by the SDK (AWS SDK v2 ``InterruptMonitor``) is a client-side
        failure without an answer, like a timeout."""
        try:
            result: StoreResult = yield effect
        except Interrupted:
            yield Record("interrupted-call", "info", {"owner": self.owner, "key": effect.key})
            return StoreResult(Outcome.TIMEOUT)
        return result

    def _read(self) -> Gen:
        """readCurrentLockFile: (GetResult, the lock file or None); raises LockClientError."""
        result: StoreResult = yield from self._call(self._read_lock_file)
        got = read_result(self.flavor, result.outcome)
        if got is GetResult.SUCCESS and result.body is not None and result.version is not None:
            return got, LockFile.read(result.body, result.version)
        return got, None

    def _write(self, data: LockData, previous: LockFile | None) -> Gen:
        """tryUpsertLockFile: (UpsertResult, the file written or None); raises LockClientError."""
        body = data.encode()
        effect = (CreateIfAbsent(self.key, body) if previous is None
                  else ReplaceIfMatch(self.key, body, previous.version))
        result: StoreResult = yield from self._call(effect)
        try:
            upsert = upsert_result(self.flavor, result.outcome, previous is None,
                                   self.variant.throttled_result)
        except LockClientError:
            if self.variant.adopt_own_lock and (adopted := (yield from self._recover(data.expired))):
                return UpsertResult.SUCCESS, adopted
            raise
        if upsert is UpsertResult.SUCCESS and result.version is not None:
            return upsert, LockFile(data, result.version)
        unknown_outcome = upsert is UpsertResult.UNKNOWN_ERROR and result.outcome is Outcome.TIMEOUT
        ambiguous_412 = upsert is UpsertResult.ACQUIRED_BY_OTHERS
        if self.variant.adopt_own_lock and (unknown_outcome or ambiguous_412):
            adopted = yield from self._recover(data.expired)
            if adopted is not None:
                return UpsertResult.SUCCESS, adopted
        return upsert, None

    def _recover(self, expired: bool) -> Gen:
        """412-recovery: re-read; a lock file naming this provider's owner id (owner ids are per provider) is
        ours, so the write that left it there was ours."""
        try:
            result: StoreResult = yield Read(self.key)
        except Interrupted:
            return None
        if result.ok and result.body is not None and result.version is not None:
            data = LockData.decode(result.body)
            if data.owner == self.owner and data.expired == expired:
                yield Record("recover-412", "ok", {"owner": self.owner, "version": result.version})
                return LockFile(data, result.version)
        yield Record("recover-412", "fail", {"owner": self.owner})
        return None

    def holds_valid_lock(self) -> Gen:
        """Hudi's private ``actuallyHoldsLock``: we hold a lock object and it is valid by our own clock."""
        if self.lock is None:
            return False
        now: int = yield NOW
        return self._valid(self.lock.data, now)

    def careful_check(self) -> Gen:
        """A hypothetical holder-side check before a write (no Hudi writer makes one).

        ``careful-margin``: the lock is ours and our clock is before validUntil - drift allowance, so
        a contender whose clock is at most the allowance ahead cannot have taken it.  Otherwise Hudi's
        own test (``actuallyHoldsLock``), which grants the holder the allowance too.
        """
        if not self.variant.holder_margin_check:
            return (yield from self.holds_valid_lock())
        if self.lock is None:
            return False
        now: int = yield NOW
        data = self.lock.data
        return not data.expired and now < data.valid_until - self.config.drift_allowance_ms

    def fencing_token(self) -> str | None:
        """The version of the lock we hold, carried by fenced writes."""
        return self.lock.version if self.lock else None

    # ---- audit ---------------------------------------------------------------------

    def _audit(self, state: str, timestamp: int) -> Gen:
        """recordAuditOperation: append a record and rewrite the audit file; failures are only logged."""
        if self.audit is None:
            return
        held = yield from self.holds_valid_lock()
        put = self.audit.record(state, timestamp, held)
        with contextlib.suppress(Interrupted):  # writeObject catches everything: a failed write is logged
            yield put

    def _create_audit(self, transaction_start: int) -> Gen:
        """AuditServiceFactory: an audit service when the table's enable file says so (any error: none)."""
        try:
            got: StoreResult = yield Read(enable_key(self.config.base_path))
        except Interrupted:
            return
        if got.ok and is_enabled(got.body):
            self.audit = AuditTrail(self.config.base_path, self.owner, transaction_start, self.validity_ms)

    # ---- the constructor's hook, tryLock -------------------------------------------

    def open(self) -> Gen:
        """What the constructor does beyond fields: ``Runtime.addShutdownHook(() -> shutdown(true))``."""
        yield ShutdownHook(self.hook_key, self.shutdown_hook)

    def try_lock_once(self) -> Gen:
        """tryLock(): one pass; True when the lock is ours.  Raises HoodieLockError / LockClientError."""
        if self.closed:
            raise HoodieLockError("Lock provider already closed")
        if self.lock is not None and (yield from self.holds_valid_lock()):
            return True  # "Supports reentrant locks"
        if self.heartbeat_active:
            yield Record("try-lock", "fail", {"reason": "heartbeat-without-lock", "owner": self.owner})
            raise HoodieLockError("active heartbeat without a lock being held (FAILED_TO_ACQUIRE)")
        got, current = yield from self._read()
        if got is GetResult.UNKNOWN_ERROR:
            yield Record("try-lock", "fail", {"reason": "read-unknown", "owner": self.owner})
            return False
        now: int = yield NOW
        if current is not None and self._valid(current.data, now):
            if self.variant.adopt_own_lock and current.data.owner == self.owner:
                return (yield from self._acquired(current, now, adopted=True))
            yield Record("try-lock", "fail",
                         {"reason": "held", "holder": current.data.owner, "owner": self.owner})
            return False
        if current is not None and not current.data.expired:
            yield Record("dangling-lock", "info",
                         {"holder": current.data.owner, "valid_until": current.data.valid_until})
        now = yield NOW  # acquisitionTimestamp
        data = LockData(False, now + self.validity_ms, self.owner)
        upsert, written = yield from self._write(data, current)
        if upsert is not UpsertResult.SUCCESS or written is None:
            reason = {UpsertResult.ACQUIRED_BY_OTHERS: "precondition-failed",
                      UpsertResult.THROTTLED: "throttled"}.get(upsert, "write-unknown")
            yield Record("try-lock", "fail", {"reason": reason, "owner": self.owner, "phase": "write"})
            return False
        return (yield from self._acquired(written, now, adopted=False))

    def _acquired(self, lock: LockFile, acquired_at: int, adopted: bool) -> Gen:
        """setLock, start the heartbeat (expire at once if it cannot start), audit START."""
        self.lock = lock
        started: bool = yield Spawn(HEARTBEAT_TASK, self.heartbeat())
        if not started:
            yield Record("heartbeat-start", "fail", {"owner": self.owner})
            yield from self._expire()  # its result is not looked at
            return False
        self.heartbeat_active = True
        self.acquisitions += 1
        yield Record("try-lock", "ok", {"owner": self.owner, "version": lock.version,
                                        "valid_until": lock.data.valid_until, "adopted": adopted})
        if self.audit is None:
            yield from self._create_audit(acquired_at)
        yield from self._audit("START", acquired_at)
        return True

    def try_lock(self, wait_ms: int | None = None) -> Gen:
        """tryLock(time): poll every ``poll_ms`` (Thread.sleep: interruptible) until acquired or out of time.

        True when acquired.  False when the wait ran out, or where Hudi throws (a client exception, an
        interrupt, a closed provider): then :attr:`error` names the cause.
        """
        self.error = None
        wait = self.config.wait_time_ms if wait_ms is None else wait_ms
        start: int = yield NANO_TIME  # System.nanoTime()
        try:
            while True:
                now: int = yield NANO_TIME
                if now - start >= wait:
                    return False
                if (yield from self.try_lock_once()):
                    return True
                yield self._poll_sleep
        except Interrupted:
            self.error, phase = "interrupted while waiting (HoodieLockException FAILED_TO_ACQUIRE)", "sleep"
        except HoodieLockError as e:
            self.error, phase = str(e), "provider"
        except LockClientError as e:
            self.error, phase = str(e), e.op
        yield Record("try-lock", "fail", {"reason": "exception", "owner": self.owner, "error": self.error,
                                          "phase": phase})
        return False

    # ---- unlock, close, shutdown hook ----------------------------------------------

    def _expire(self, from_hook: bool = False) -> Gen:
        """tryExpireCurrentLock: one write of ``expired: true`` over our version.  Raises LockClientError."""
        if not from_hook and self.heartbeat_active:
            raise HoodieLockError("Must stop heartbeat before expire lock file")
        assert self.lock is not None
        data = LockData(True, self.lock.data.valid_until, self.owner)
        stamp: int = yield NOW  # lockExpirationTimeMs, the END record's timestamp
        upsert, _ = yield from self._write(data, self.lock)
        if upsert is UpsertResult.SUCCESS:
            yield from self._audit("END", stamp)
            self.lock = None
            return ExpireResult.SUCCESS
        if upsert is UpsertResult.THROTTLED:
            return ExpireResult.THROTTLED
        if upsert is UpsertResult.ACQUIRED_BY_OTHERS:
            yield Record("release-acquired-by-others", "info", {"owner": self.owner})
            self.lock = None
            fails = self.variant.unlock_acquired_by_others_fails
            return ExpireResult.FAILED if fails else ExpireResult.SUCCESS
        return ExpireResult.FAILED  # UNKNOWN_ERROR: we still believe we might hold the lock

    def unlock(self) -> Gen:
        """unlock(): stop the heartbeat, expire the lock (retrying throttled writes).  True when released.

        False where Hudi throws FAILED_TO_RELEASE: the heartbeat did not stop within
        ``stop_heartbeat_timeout_ms``, the expire write failed or found the lock acquired by others, or
        a client exception; :attr:`error` names it and the provider may still believe it holds the lock.
        """
        self.error = None
        if self.lock is None:
            return True
        try:
            if self.heartbeat_active:
                stopped: bool = yield Cancel(HEARTBEAT_TASK, self.config.stop_heartbeat_timeout_ms)
                if not stopped:
                    raise HoodieLockError("heartbeat still in flight after stopHeartbeat (FAILED_TO_RELEASE)")
                self.heartbeat_active = False
            to_expire = self.lock
            result = yield from self._expire()
            attempt = 0
            while result is ExpireResult.THROTTLED and attempt < self.variant.unlock_throttle_retries:
                attempt += 1
                delay = self.variant.unlock_throttle_base_ms << (attempt - 1)
                yield Record("unlock-retry", "info",
                             {"owner": self.owner, "attempt": attempt, "delay_ms": delay})
                try:
                    yield Sleep(delay)
                except Interrupted:
                    raise HoodieLockError("interrupted in the throttle backoff (FAILED_TO_RELEASE)") from None
                if self.lock is None or self.lock is not to_expire:
                    return True  # cleared or replaced meanwhile: Hudi returns without expiring
                result = yield from self._expire()
            if result is not ExpireResult.SUCCESS:
                raise HoodieLockError(f"expire write {result.name} (FAILED_TO_RELEASE)")
            return True
        except (HoodieLockError, LockClientError) as e:
            self.error = str(e)
            yield Record("release-failed", "info", {"owner": self.owner, "error": self.error,
                                                    "still_believes": self.lock is not None})
            return False

    def close(self) -> Gen:
        """close() = shutdown(false): remove the hook, unlock (a failure only logged), stop the heartbeat."""
        yield ShutdownHook(self.hook_key, None)
        yield from self.unlock()
        if self.heartbeat_active:  # heartbeatManager.close(): stopHeartbeat(true), then the scheduler stops
            yield Cancel(HEARTBEAT_TASK, self.config.stop_heartbeat_timeout_ms)
            self.heartbeat_active = False
        self.closed = True

    def shutdown_hook(self) -> Gen:
        """The JVM shutdown hook, shutdown(true): expire the lock if we actually hold it, heartbeat or not."""
        if not self.closed and (yield from self.holds_valid_lock()):
            yield Record("shutdown-hook", "info", {"owner": self.owner})
            try:
                yield from self._expire(from_hook=True)
            except LockClientError as e:
                yield Record("shutdown-hook", "fail", {"owner": self.owner, "error": str(e)})
        self.closed = True

    # ---- heartbeat -------------------------------------------------------------

    def heartbeat(self) -> Gen:
        """The heartbeat thread: ``scheduleAtFixedRate(task, R, R)`` on the monotonic clock.

        The k-th run is due k x R after the start; a late run (a pause, a slow renewal) fires at once.
        Each run stops the heartbeat when the writer thread is dead or renewLock returns false, and
        then (``hudi``, PR #17870) interrupts the writer.
        """
        interval = self.config.renew_interval_secs * 1000
        start: int = yield NANO_TIME
        runs = 0
        while True:
            runs += 1
            now: int = yield NANO_TIME
            if start + runs * interval > now:
                yield Sleep(start + runs * interval - now)
            if not (yield IsAlive(WRITER_TASK)):
                yield Record("heartbeat-stop", "info", {"owner": self.owner, "reason": "writer-dead"})
                self.heartbeat_active = False
                return
            if (yield from self.renew()):
                continue
            self.heartbeat_active = False
            if self.variant.interrupt_on_renewal_failure:
                yield Record("lock-lost", "info", {"owner": self.owner})
                yield Interrupt(WRITER_TASK)
            else:
                yield Record("heartbeat-stop", "info", {"owner": self.owner, "reason": "renewal-failed"})
            return

    def renew(self) -> Gen:
        """renewLock(): extend validUntil over our cached version.  False stops the heartbeat."""
        if self.lock is None:
            return False
        now: int = yield NOW  # acquisitionTimestamp of the renewal
        data = LockData(False, now + self.validity_ms, self.owner)
        yield Record("renew", "invoke", {"owner": self.owner, "valid_until": data.valid_until})
        try:
            upsert, written = yield from self._write(data, self.lock)
        except LockClientError as e:  # catch (Exception e): return false
            yield Record("renew", "fail", {"owner": self.owner, "status": e.outcome.name, "error": str(e)})
            return False
        if upsert is UpsertResult.SUCCESS and written is not None:
            self.lock = written
            yield Record("renew", "ok", {"owner": self.owner, "version": written.version})
            yield from self._audit("RENEW", now)
            return True
        if upsert is UpsertResult.ACQUIRED_BY_OTHERS:
            yield Record("renew", "fail", {"owner": self.owner, "status": "PRECONDITION_FAILED"})
            return False
        yield Record("renew", "info", {"owner": self.owner, "status": upsert.name})
        if self.variant.renewal_stops_past_expiry:
            now = yield NOW
            if now > self.lock.data.valid_until:
                return False  # RFC-91: "renewal fails past the expiration: log an error, stop the heartbeat"
        return True
