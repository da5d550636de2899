"""The storage-based lock provider (RFC-91) as Apache Hudi implements it, written sans-I/O.

Each public method is a generator of effects (see ``model/runtime/effects.py``); run it
with ``result = yield from provider.try_lock(...)`` inside a task of an
interpreter.  One provider is what Hudi's ``LockManager`` creates lazily and
closes after a successful unlock: one owner id (a UUID drawn when the provider
is built), one heartbeat manager, one audit service.  Its writer task is named
``writer`` and its heartbeat task ``heartbeat``.

The code follows ``StorageBasedLockProvider`` and ``LockProviderHeartbeatManager``
of apache/hudi 54cb1a57 (release 1.2.0) branch for branch; the lock clients'
reading of storage answers is ``model/lock/storage_clients.py`` and the audit trail
``model/lock/audit.py``.  A variant (``LockConfig.variant``, see
``model/lock/variants.py``) switches individual branches; ``docs/fidelity.md``
maps every branch to the Java and to the test that pins it.

Where Hudi throws (a client exception out of ``tryLock``, ``FAILED_TO_RELEASE``
out of ``unlock``), ``try_lock`` and ``unlock`` return False, record the cause
and set :attr:`StorageLockProvider.error`; ``try_lock_once`` raises as Hudi does.

The provider's monitor (Java's ``synchronized``) is modelled between the writer and
the heartbeat: ``tryLock()``, ``unlock()``'s two synchronized blocks, ``close()``
and ``renewLock()`` hold it, a task that finds it held waits for it (it cannot be
interrupted out of that wait), and the holder hands it to the first waiter on
release.  ``stopHeartbeat`` is called holding it: a heartbeat run that has taken
the heartbeat semaphore and waits for the monitor cannot finish, so the stop waits
its 15 s and fails (``unlock`` throws FAILED_TO_RELEASE); the renewal then runs
with the interrupt flag that the stop set.  The shutdown hook's thread does not
take part in the modelled monitor.
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Callable, Generator, Hashable
from typing import Any

from model.config import LockConfig
from model.explorable import Keyer
from model.lock.audit import AuditTrail, enable_key, is_enabled
from model.lock.lockfile import LockData, LockFile
from model.lock.storage_clients import GetResult, LockClientError, UpsertResult, read_result, upsert_result
from model.lock.variants import variant
from model.runtime.effects import (
    WRITER_TASK,
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

Gen = Generator[Effect, Any, Any]
NOW, NANO_TIME = Now(), Now(monotonic=True)  # System.currentTimeMillis(), System.nanoTime() (in ms)
HEARTBEAT_TASK = "heartbeat"
# LockProviderHeartbeatManager#close: scheduler.awaitTermination(5, SECONDS) before shutdownNow().
SCHEDULER_TERMINATION_MS = 5_000
# A task waiting for the monitor is woken by the holder's hand-over; it re-checks after this long anyway
# (longer than the longest a live holder keeps the monitor in one piece but close()'s, and off the grid of
# whole seconds), so that a holder that died holding it cannot leave it waiting for ever.
_RECHECK_MS = 20_001


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

    def __init__(self, config: LockConfig, new_owner_id: Callable[[], str], flavor: str = "s3", *,
                 writer_wakes_on_interrupt: bool = True) -> None:
        """``writer_wakes_on_interrupt``: the writer task's interrupt policy ends an interruptible sleep
        (every policy but ``never``); the monitor's hand-over wakes a waiting writer that way, and a
        writer that never wakes on an interrupt polls for the monitor every millisecond instead."""
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
        # what the last try_lock threw (LockManager retries all but "client"): "timeout" (the wait ran out;
        # LockManager throws HoodieLockException), "interrupted", "provider" (a HoodieLockException of the
        # provider), "client" (an exception of the lock client); None after an acquisition
        self.error_kind: str | None = None
        self.reentrant = False  # the last try_lock returned from the reentrant branch (no request)
        # the provider's monitor: the task holding it, how often (reentrant), the tasks waiting for it in
        # arrival order, the task it was handed to and that has not run since, and the interrupts that
        # came while a task waited for it (Java keeps the flag; the task sees it once it has the monitor)
        self._monitor: str | None = None
        self._depth = 0
        self._waiting: list[str] = []
        self._handed: str | None = None
        self._flags: set[str] = set()
        self._writer_poll_ms = _RECHECK_MS if writer_wakes_on_interrupt else 1
        # LockProviderHeartbeatManager: a run holds heartbeatSemaphore; stopRequested
        self._hb_semaphore = False
        self._hb_stop_requested = False
        self.key = config.lock_key
        self.validity_ms = config.validity_secs * 1000
        # effects are values: the ones sent on every poll are made once
        self._read_lock_file, self._poll_sleep = Read(self.key), Sleep(config.poll_ms)

    __explore_excluded__ = {  # not in its state, each with why it does not decide the run's future
        "variant": "variant(config.variant): the variant's constants (config is in the state)",
        "key": "config.lock_key (config is in the state)",
        "validity_ms": "config.validity_secs * 1000 (config is in the state)",
        "_read_lock_file": "the Read of key, made once from config",
        "_poll_sleep": "the Sleep of config.poll_ms, made once from config",
    }

    # what its writer, heartbeat and shutdown-hook tasks share (``model/explore/shared.py``): the writer's own
    # results (error, error_kind, reentrant, acquisitions) are no other task's
    __explore_shared__ = {
        "config": "c", "flavor": "c", "variant": "c", "owner": "c", "key": "c", "validity_ms": "c",
        "_writer_poll_ms": "c", "_read_lock_file": "c", "_poll_sleep": "c",
        "lock": "r", "heartbeat_active": "r", "closed": "r", "audit": "r", "_monitor": "r", "_depth": "r",
        "_handed": "r", "_hb_semaphore": "r", "_hb_stop_requested": "r", "_waiting": "m", "_flags": "m",
    }

    def __explore_state__(self, k: Keyer) -> Hashable:
        """What decides this provider's future: its owner id, the lock it believes it holds, its flags and
        counters, the monitor and the heartbeat manager's state.  The rest follows from ``config`` (a
        constant of the run) and the flavor: the variant, the key, the validity, the effects made once."""
        return (k.value(self.config), self.flavor, k.name(self.owner), k.value(self.lock),
                self.heartbeat_active, self.closed, k.value(self.audit), self.acquisitions, self.error,
                self.error_kind, self.reentrant, self._monitor, self._depth, tuple(self._waiting),
                self._handed, tuple(sorted(self._flags)), self._writer_poll_ms, self._hb_semaphore,
                self._hb_stop_requested)

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
        # no local holds the encoded body: the state key reads it in the effect as the lock data it is (its
        # validUntil a wall time, relative), where a local's bytes would be absolute
        effect = (CreateIfAbsent(self.key, data.encode()) if previous is None
                  else ReplaceIfMatch(self.key, data.encode(), previous.version))
        result: StoreResult = yield from self._call(effect)
        try:
            upsert = upsert_result(self.flavor, result.outcome, previous is None,
                                   self.variant.throttled_result)
        except LockClientError as e:  # bound: the explorer keeps a suspended handler's exception in a local
            if self.variant.adopt_own_lock and (adopted := (yield from self._recover(data.expired))):
                return UpsertResult.SUCCESS, adopted
            raise e
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

    # ---- the monitor (synchronized) ----------------------------------------------------

    @property
    def monitor_holder(self) -> str | None:
        """The task holding the provider's monitor (``writer``, ``heartbeat``), or None."""
        return self._monitor

    def _synchronized(self, me: str, body: Gen) -> Gen:
        """Run ``body`` holding the provider's monitor as task ``me`` (waiting for it first if held)."""
        if self._monitor is None:  # uncontended: no effect at all
            self._monitor, self._depth = me, 1
        elif self._monitor == me:
            self._depth += 1
        else:
            yield from self._wait_for_monitor(me)
        try:
            result = yield from body
        except GeneratorExit:  # the task died holding it: Java releases it; nobody can be woken from here
            self._release(me, dead=True)
            raise
        except BaseException as e:  # bound, as in _write: the explorer keeps the exception in a local
            yield from self._exit(me)
            raise e
        yield from self._exit(me)
        return result

    def _wait_for_monitor(self, me: str) -> Gen:
        """Block entering the monitor until it is handed to ``me``; an interrupt does not end the wait."""
        self._waiting.append(me)
        yield Record("monitor-wait", "info", {"owner": self.owner, "task": me, "holder": self._monitor})
        poll = self._writer_poll_ms if me == WRITER_TASK else _RECHECK_MS
        try:
            while self._monitor != me:
                with contextlib.suppress(Interrupted):  # the holder's hand-over; a chunk's end re-checks
                    yield Sleep(poll)
        except GeneratorExit:
            self._release(me, dead=True)
            raise
        self._handed, self._depth = None, 1
        if me in self._flags:  # an interrupt came meanwhile: the task sees it at its next interruptible point
            self._flags.discard(me)
            yield Interrupt(me)

    def _exit(self, me: str) -> Gen:
        """Leave the monitor; the last exit hands it to the first waiter and wakes that task."""
        self._depth -= 1
        if self._depth:
            return
        nxt = self._release(me, dead=False)
        if nxt is not None:
            yield Interrupt(nxt)

    def _release(self, me: str, dead: bool) -> str | None:
        """Give up the monitor (or a place in its queue): the task it passes to, or None."""
        if self._monitor != me:
            if me in self._waiting:
                self._waiting.remove(me)
            return None
        self._depth = 0
        if not self._waiting:
            self._monitor = None
            return None
        nxt = self._monitor = self._waiting.pop(0)
        self._handed = nxt
        return None if dead else nxt

    def _interrupt(self, task: str) -> Gen:
        """Thread.interrupt of ``task``: a flag kept for it while it waits for the monitor, else delivered."""
        if task in self._waiting or task == self._handed:
            self._flags.add(task)
            return
        yield Interrupt(task)

    def _stop_heartbeat(self) -> Gen:
        """heartbeatManager.stopHeartbeat(true), called holding the monitor: True when the heartbeat stopped.

        A run that took the heartbeat semaphore now waits for our monitor (it cannot be in renewLock):
        ``cancel(true)`` only sets its interrupt flag, the semaphore wait runs out after 15 s and the stop
        fails.  Otherwise the run is asleep (or there is none): cancelled at once.
        """
        if self._hb_semaphore:
            self._hb_stop_requested = True
            yield Record("stop-heartbeat-stalled", "info", {"owner": self.owner})
            yield from self._interrupt(HEARTBEAT_TASK)  # scheduledFuture.cancel(true)
            try:
                yield Sleep(self.config.stop_heartbeat_timeout_ms)  # heartbeatSemaphore.tryAcquire(15 s)
            except Interrupted:
                yield Interrupt(WRITER_TASK)  # the wait ends, the flag is set again, still in flight
            return False
        stopped: bool = yield Cancel(HEARTBEAT_TASK, self.config.stop_heartbeat_timeout_ms)
        if stopped:
            self.heartbeat_active = False
        return stopped

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
        """tryLock() (synchronized): one pass; True when the lock is ours.  Raises HoodieLockError /
        LockClientError."""
        return (yield from self._synchronized(WRITER_TASK, self._try_lock_once()))

    def _try_lock_once(self) -> Gen:
        self.reentrant = False
        if self.closed:
            raise HoodieLockError("Lock provider already closed")
        if self.lock is not None and (yield from self.holds_valid_lock()):
            self.reentrant = True
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
        self._hb_stop_requested = False  # startHeartbeatForThread: stopRequested = false
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
        self.error = self.error_kind = None
        wait = self.config.wait_time_ms if wait_ms is None else wait_ms
        start: int = yield NANO_TIME  # System.nanoTime()
        try:
            while True:
                now: int = yield NANO_TIME
                if now - start >= wait:
                    self.error_kind = "timeout"
                    return False
                if (yield from self.try_lock_once()):
                    return True
                yield self._poll_sleep
        except Interrupted:
            self.error, phase = "interrupted while waiting (HoodieLockException FAILED_TO_ACQUIRE)", "sleep"
            self.error_kind = "interrupted"
        except HoodieLockError as e:
            self.error, phase, self.error_kind = str(e), "provider", "provider"
        except LockClientError as e:
            self.error, phase, self.error_kind = str(e), e.op, "client"
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
        try:
            return (yield from self._unlock())
        except (HoodieLockError, LockClientError) as e:
            self.error = str(e)
            yield Record("release-failed", "info", {"owner": self.owner, "error": self.error,
                                                    "still_believes": self.lock is not None})
            return False

    def _unlock(self) -> Gen:
        """unlock() as Hudi writes it: raises where it throws; True when released or nothing was held."""
        result = yield from self._synchronized(WRITER_TASK, self._stop_and_expire())
        if result is None:
            return True  # no lock believed held
        to_expire, result = result
        attempt = 0
        while result is ExpireResult.THROTTLED and attempt < self.variant.unlock_throttle_retries:
            attempt += 1
            delay = self.variant.unlock_throttle_base_ms << (attempt - 1)
            yield Record("unlock-retry", "info", {"owner": self.owner, "attempt": attempt, "delay_ms": delay})
            try:
                yield Sleep(delay)  # outside the monitor
            except Interrupted:
                raise HoodieLockError("interrupted in the throttle backoff (FAILED_TO_RELEASE)") from None
            result = yield from self._synchronized(WRITER_TASK, self._expire_again(to_expire))
            if result is None:
                return True  # cleared or replaced meanwhile: Hudi returns without expiring
        if result is not ExpireResult.SUCCESS:
            raise HoodieLockError(f"expire write {result.name} (FAILED_TO_RELEASE)")
        return True

    def _stop_and_expire(self) -> Gen:
        """unlock()'s first synchronized block: None when no lock is believed held, else (the lock it
        expired, the expire's result)."""
        if self.lock is None:
            return None
        if self.heartbeat_active and not (yield from self._stop_heartbeat()):
            raise HoodieLockError("heartbeat still in flight after stopHeartbeat (FAILED_TO_RELEASE)")
        to_expire = self.lock
        return to_expire, (yield from self._expire())

    def _expire_again(self, to_expire: LockFile) -> Gen:
        """unlock()'s retry block: None when the lock was cleared or replaced meanwhile (identity check)."""
        if self.lock is None or self.lock is not to_expire:
            return None
        return (yield from self._expire())

    def close(self) -> Gen:
        """close() = synchronized shutdown(false): remove the hook, unlock (a failure only logged), stop the
        heartbeat (heartbeatManager.close(): stopHeartbeat, then the scheduler's 5 s termination wait)."""
        yield from self._synchronized(WRITER_TASK, self._close())

    def _close(self) -> Gen:
        yield ShutdownHook(self.hook_key, None)
        yield from self.unlock()
        if self.heartbeat_active and not (yield from self._stop_heartbeat()):
            yield Sleep(SCHEDULER_TERMINATION_MS, interruptible=False)  # awaitTermination, then shutdownNow()
            yield from self._interrupt(HEARTBEAT_TASK)
        self.heartbeat_active = False
        self.closed = True

    def shutdown_hook(self) -> Gen:
        """The JVM shutdown hook, shutdown(true): expire the lock if we actually hold it, heartbeat or not
        (the hypothetical ``hook-checks-writer``: only once the writer thread has ended)."""
        if not self.closed and (yield from self.holds_valid_lock()):
            yield Record("shutdown-hook", "info", {"owner": self.owner})
            if self.variant.hook_checks_writer and (yield IsAlive(WRITER_TASK)):
                yield Record("shutdown-hook", "info", {"owner": self.owner, "kept": "the writer still runs"})
                self.closed = True
                return
            try:
                yield from self._expire(from_hook=True)
            except LockClientError as e:
                yield Record("shutdown-hook", "fail", {"owner": self.owner, "error": str(e)})
        self.closed = True

    # ---- heartbeat -------------------------------------------------------------

    def heartbeat(self) -> Gen:
        """The heartbeat thread: ``scheduleAtFixedRate(task, R, R)`` on the monotonic clock.

        The k-th run is due k x R after the start; a late run (a pause, a slow renewal) fires at once.
        Each run takes the heartbeat semaphore for its isAlive check and renewLock (which waits for the
        provider's monitor), stops the heartbeat when the writer thread is dead or renewLock returns
        false, and then (``hudi``, PR #17870) interrupts the writer unless a stop was requested.  A run
        that a stop cancelled while it waited (``stopRequested``) is the last one.
        """
        interval = self.config.renew_interval_secs * 1000
        start: int = yield NANO_TIME
        runs = 0
        while True:
            runs += 1
            now: int = yield NANO_TIME
            if start + runs * interval > now:
                yield Sleep(start + runs * interval - now)
            self._hb_semaphore = True  # heartbeatSemaphore.tryAcquire()
            if not (yield IsAlive(WRITER_TASK)):
                self._hb_semaphore = False
                yield Record("heartbeat-stop", "info", {"owner": self.owner, "reason": "writer-dead"})
                self.heartbeat_active = False
                return
            try:
                renewed = yield from self.renew()
            except Interrupted:
                # stopHeartbeat's cancel(true) interrupts this run; it sees the interrupt at an interruptible
                # point inside the renewal (a retry's backoff, after waiting for the monitor): the cancelled
                # Java task's run ends there
                self._hb_semaphore = False
                return
            self._hb_semaphore = False
            if self._hb_stop_requested:  # cancelled: no further run, no interrupt of the writer
                if not renewed:
                    self.heartbeat_active = False  # heartbeatTaskUnscheduleItself
                return
            if renewed:
                continue
            self.heartbeat_active = False
            if self.variant.interrupt_on_renewal_failure:
                yield Record("lock-lost", "info", {"owner": self.owner})
                yield from self._interrupt(WRITER_TASK)
            else:
                yield Record("heartbeat-stop", "info", {"owner": self.owner, "reason": "renewal-failed"})
            return

    def renew(self) -> Gen:
        """renewLock() (synchronized): extend validUntil over our cached version; False stops heartbeats."""
        return (yield from self._synchronized(HEARTBEAT_TASK, self._renew()))

    def _renew(self) -> Gen:
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
