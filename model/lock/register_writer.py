"""The lock workload's writer (RegisterWriter): a read-modify-write of a shared register (Jepsen's lock idea).

Each writer loops: think -> acquire -> (read register, work, write value+1) x
steps -> release.  If mutual exclusion breaks, two writers read the same value
and both write value+1: a lost update, visible even where the lock's own
events look fine.  The register body is ``{"value": n, "by": owner}``.
"""

from __future__ import annotations

import contextlib
import json
import random
from collections.abc import Callable, Generator, Hashable
from typing import Any

from model.config import WorkloadConfig
from model.explorable import Keyer
from model.lock.provider import StorageLockProvider
from model.runtime.effects import (
    CheckInterrupt,
    Effect,
    FencedPut,
    Interrupted,
    Put,
    Read,
    Record,
    Sleep,
    StoreResult,
)
from model.runtime.sampling import draw

Gen = Generator[Effect, Any, Any]


def register_body(value: int, owner: str) -> bytes:
    """The register's body: the bytes of ``json.dumps({"value": value, "by": owner})``, written out."""
    return f'{{"value": {value}, "by": {json.dumps(owner)}}}'.encode()


def register_value(result: StoreResult) -> int:
    """The register's value in a read answer (0 when the register does not exist yet)."""
    if not result.ok or result.body is None:
        return 0
    value = json.loads(result.body)["value"]
    assert isinstance(value, int)
    return value


def lock_manager_lock(provider: StorageLockProvider) -> Gen:
    """``LockManager#lock``: ``tryLock(wait_time_ms)`` on the same provider, retried by Hudi's RetryHelper.

    A failed tryLock is a HoodieLockException (``tryLock`` returned false: "Unable to acquire the lock";
    an interrupted poll; the provider's own exceptions) and is retried ``client_num_retries`` times, after
    ``client_wait_ms_between_retry`` each (RetryHelper's wait is min(initial x 2^n + jitter, max) with both
    set to that value: always that value); an exception of the lock client is not in the retry list and
    ends it at once.  An interrupt ends the retry's sleep at once and is swallowed (an interrupted poll
    re-sets the thread's flag, so that sleep ends at once).  True when acquired; False where ``lock()``
    throws (:attr:`StorageLockProvider.error` names the last cause).
    """
    config = provider.config
    retries = 0
    while True:
        if (yield from provider.try_lock()):
            return True
        if provider.error_kind == "client" or retries >= config.client_num_retries:
            return False
        retries += 1
        yield Record("lock-retry", "info", {"owner": provider.owner, "retry": retries,
                                            "after": provider.error_kind})
        if provider.error_kind != "interrupted":
            with contextlib.suppress(Interrupted):  # RetryHelper ignores an InterruptedException here
                yield Sleep(config.client_wait_ms_between_retry)


class RegisterWriter:
    """One writer's workload loop: one transaction at a time, each with its own lock provider.

    A transaction builds a provider (Hudi's ``LockManager`` creates one lazily: a new owner id and
    shutdown hook), acquires (``LockManager#lock``: :func:`lock_manager_lock`), runs the critical section,
    releases, and closes the provider: after a successful unlock ``LockManager#unlock`` closes it.
    After a failure, ``workload.after_failed_release`` says what the application does with its write
    client:

    - ``close``: the write ends and the client closes it (``close()`` = ``shutdown(false)``, which tries
      ``unlock()`` once more);
    - ``keep-client``: it writes again through the same client (HoodieStreamingSink's retry, or its next
      micro-batch).  Hudi then keeps what it kept: ``LockManager#unlock`` threw before its ``close()``,
      so the provider stays (same owner id, the lock it still believes held, its heartbeat stopped), and a
      provider whose ``lock()`` failed is kept too (``LockManager#lock`` closes nothing).  Hudi 1.2.0's
      TransactionManager calls ``lockManager.lock()`` for every transaction: the kept provider's
      ``tryLock`` returns at once from its reentrant branch while its cached lock is still valid by its
      own clock (no request, no heartbeat, no audit START), and acquires as usual once it lapsed.  The
      unmerged PR #13577 (variant ``pr-13577``) keeps ``TransactionManager#hasLock`` set after the failed
      release, so the next ``acquireLock`` skips ``lockManager.lock()`` altogether.
    """

    def __init__(
        self,
        new_provider: Callable[[], StorageLockProvider],
        config: WorkloadConfig,
        rng: random.Random,
        fenced: bool,
        start_ms: int | None = None,
    ) -> None:
        self.new_provider = new_provider
        self.config = config
        self.rng = rng
        self.fenced = fenced
        self.start_ms = start_ms
        self.started = False  # its first sleep is over: start_ms no longer decides anything
        self.keep_client = config.after_failed_release == "keep-client"
        self.provider: StorageLockProvider | None = None  # LockManager#lockProvider, kept (keep-client)
        self.has_lock = False  # TransactionManager#hasLock (variant pr-13577, keep-client)

    def __explore_state__(self, k: Keyer) -> Hashable:
        """Its provider factory and settings, its random stream, and what it keeps between transactions (the
        kept provider and ``hasLock``); its start until it has started (only the first sleep reads it, so
        runs that differ only by when the writers started meet once they have)."""
        cfg = self.config
        draws = any(d.kind != "fixed" for d in (cfg.work_ms, cfg.think_ms)) or (
            not self.started and self.start_ms is None and cfg.start_ms.kind != "fixed"
        )  # else its random stream is never read again
        return (k.value(self.new_provider), k.value(cfg), k.value(self.rng) if draws else None, self.fenced,
                None if self.started else self.start_ms, self.started, self.keep_client,
                k.value(self.provider), self.has_lock)

    def run(self) -> Gen:
        """Loop until the run ends, or for ``holds`` acquisition attempts when that is set."""
        yield Sleep(draw(self.rng, self.config.start_ms) if self.start_ms is None else self.start_ms)
        self.started = True
        attempts = 0
        while True:
            yield from self.hold_once()
            attempts += 1
            if attempts == self.config.holds:
                return
            try:
                yield Sleep(draw(self.rng, self.config.think_ms))
            except Interrupted:  # an interrupt that came after the release (the hudi world's heartbeat):
                yield Record("interrupt-late", "info")  # it closes no hold and ends no section

    def hold_once(self) -> Gen:
        """One transaction: acquire, critical section, release, close.  True when the lock was acquired."""
        provider = self.provider
        if provider is None:
            provider = self.new_provider()
            yield from provider.open()
        yield Record("acquire", "invoke")
        # pr-13577: TransactionManager#acquireLock skips lockManager.lock() while hasLock ("Lock already
        # acquired, skipping lock acquisition"); every release calls it
        skipped = self.has_lock
        if not skipped and not (yield from lock_manager_lock(provider)):
            yield Record("acquire", "fail", {"owner": provider.owner, "error": provider.error})
            if self.keep_client:
                self.provider = provider  # LockManager#lock throws without closing its provider
            else:
                yield from provider.close()
            return False
        owner = provider.owner
        acquired: dict[str, object] = {"owner": owner, "version": provider.fencing_token()}
        if skipped:
            acquired["skipped"] = "hasLock"
        elif provider.reentrant:
            acquired["reentrant"] = True  # tryLock's "Supports reentrant locks": no request, no heartbeat
        yield Record("acquire", "ok", acquired)
        try:
            yield from self.critical_section(provider, owner)
        except Interrupted:
            yield Record("interrupted", "info", {"owner": owner})
        yield Record("release", "invoke", {"owner": owner})
        if (yield from provider.unlock()):
            yield Record("release", "ok", {"owner": owner})
        else:
            yield Record("release", "fail", {"owner": owner, "error": provider.error})
            if self.keep_client:  # unlock threw: LockManager#unlock skipped its close()
                self.provider = provider
                # TransactionManager: 1.2.0's endStateChange has reset its state before unlock() threw;
                # PR #13577's releaseLock sets hasLock = false only after unlock() returned
                self.has_lock = provider.variant.transaction_has_lock_skip
                return True
        self.provider, self.has_lock = None, False
        yield from provider.close()
        return True

    def critical_section(self, provider: StorageLockProvider, owner: str) -> Gen:
        """``steps_per_hold`` read-modify-write steps on the register.

        The work between read and write is computation (a Sleep no interrupt ends); with
        ``interrupt = "checkpoints"`` the writer checks for an interrupt before each read and write.
        """
        key = self.config.register_key
        for _ in range(self.config.steps_per_hold):
            yield CheckInterrupt()
            if not (yield from self._still_valid(provider, owner)):
                return
            yield Record("read", "invoke", {"owner": owner})
            read: StoreResult = yield Read(key)
            if not read.ok and read.body is None and read.outcome.unknown:
                yield Record("read", "fail", {"owner": owner, "status": read.outcome.name})
                return
            value = register_value(read)
            yield Record("read", "ok", {"owner": owner, "value": value})
            yield Sleep(draw(self.rng, self.config.work_ms), interruptible=False)
            yield CheckInterrupt()
            if not (yield from self._still_valid(provider, owner)):
                return
            body = register_body(value + 1, owner)
            token = provider.fencing_token()
            op = {"owner": owner, "read": value, "write": value + 1, "token": token}
            yield Record("write", "invoke", op)
            if self.fenced and token is not None:
                result: StoreResult = yield FencedPut(key, body, provider.key, token)
            else:
                result = yield Put(key, body)
            if result.ok:
                yield Record("write", "ok", op)
            elif result.outcome.unknown:
                yield Record("write", "info", {**op, "status": result.outcome.name})
                return
            else:
                yield Record("write", "fail", {**op, "status": result.outcome.name})
                return

    def _still_valid(self, provider: StorageLockProvider, owner: str) -> Gen:
        """A hypothetical careful writer's check (``check_before_write``, or variant ``careful-margin``)."""
        if not (self.config.check_before_write or provider.variant.holder_margin_check):
            return True
        if (yield from provider.careful_check()):
            return True
        yield Record("check", "fail", {"owner": owner})
        return False
