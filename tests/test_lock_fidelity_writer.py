"""How a writer uses its provider across transactions (docs/fidelity.md M1, M2), step by step.

Hudi: ``LockManager#unlock`` (826de778) calls ``getLockProvider().unlock()`` and only then ``close()``,
so a release that throws FAILED_TO_RELEASE leaves the provider open and kept; ``TransactionManager``
(60f6c0cd) sets ``hasLock = false`` only after ``lockManager.unlock()`` returns, and ``acquireLock``
returns at once while ``hasLock`` is true.  A writer that keeps its write client after the failure
(``workload.after_failed_release = "keep-client"``) therefore runs its next transaction with no
acquisition; one that closes it (``"close"``) starts the next with a new provider.
"""

from __future__ import annotations

import random

import pytest
from lockdriver import Driver

from model.config import ConfigError, Dist, LockConfig, WorkloadConfig
from model.effects import Put, Read, ReplaceIfMatch
from model.storage_lock import StorageLockProvider
from model.workload import RegisterWriter

LOCK = "table/.hoodie/.locks/table_lock.json"
REGISTER = "table/register"


def writer(d: Driver, after_failed_release: str) -> RegisterWriter:
    ids = iter(f"owner-{i}" for i in range(1, 100))
    config = WorkloadConfig(work_ms=Dist("fixed", 0), after_failed_release=after_failed_release)

    def new_provider() -> StorageLockProvider:
        return StorageLockProvider(LockConfig(), lambda: next(ids), d.flavor)

    return RegisterWriter(new_provider, config, random.Random(1), fenced=False)


def failed_release(d: Driver, w: RegisterWriter) -> StorageLockProvider:
    """One transaction whose expire write gets 503: acquired, register written, FAILED_TO_RELEASE."""
    # lock read 404, create, audit_enabled.json 404; register read 404, register put; expire 503
    d.script("404", "200", "404", "404", "200", "503")
    assert d.run(w.hold_once()) is True
    assert d.recorded("release", "fail") and d.recorded("release-failed")[-1].value["still_believes"]
    p = w.provider
    assert p is not None
    return p


def test_keep_client_the_next_transaction_skips_the_acquisition_on_the_kept_provider() -> None:
    d = Driver()
    w = writer(d, "keep-client")
    p = failed_release(d, w)
    assert w.has_lock and not p.closed and p.lock is not None  # no close(): hook, owner id, lock kept
    assert p.hook_key in d.hooks and not p.heartbeat_active  # unlock stopped the heartbeat first
    cached = p.lock.version
    before, spawned = len(d.requests), dict(d.spawned)
    d.script("200", "200", "200")  # register read, register put, expire
    d.run(w.hold_once())
    sent = d.requests[before:]
    assert isinstance(sent[0], Read) and sent[0].key == REGISTER  # no lock read: no tryLock at all
    assert isinstance(sent[1], Put) and sent[1].key == REGISTER
    assert isinstance(sent[2], ReplaceIfMatch) and sent[2].key == LOCK and sent[2].version == cached
    assert d.spawned == spawned  # no heartbeat was started for it
    ok = d.recorded("acquire", "ok")
    assert ok[-1].value == {"owner": "owner-1", "version": cached, "skipped": "hasLock"}
    # the release succeeded: LockManager#unlock closed the provider, hasLock = false
    assert p.closed and w.provider is None and not w.has_lock and p.hook_key not in d.hooks


def test_keep_client_a_second_failure_keeps_skipping_and_the_one_after_closes() -> None:
    d = Driver()
    w = writer(d, "keep-client")
    p = failed_release(d, w)
    d.store.apply(Put(LOCK, b'{"expired": false, "validUntil": 0, "owner": "w2"}'))  # another writer's
    d.script("200", "200", "412")  # register read, put; the expire's If-Match fails: the file moved on
    d.run(w.hold_once())
    assert d.recorded("release-acquired-by-others") and w.has_lock and p.lock is None and not p.closed
    before = len(d.requests)
    d.script("200", "200")  # register read and put, still without an acquisition
    d.run(w.hold_once())
    assert [type(r).__name__ for r in d.requests[before:]] == ["Read", "Put"]  # unlock: no lock, returns
    assert p.closed and w.provider is None and not w.has_lock
    before = len(d.requests)
    d.script("200")  # the next transaction tries to acquire again, on a new provider
    d.run(w.hold_once(), until=lambda: len(d.requests) > before)
    assert d.requests[before] == Read(LOCK) and w.provider is None


def test_close_the_next_transaction_acquires_on_a_new_provider() -> None:
    d = Driver()
    w = writer(d, "close")
    d.script("404", "200", "404", "404", "200", "503", "503")  # ... expire 503, close()'s unlock 503
    assert d.run(w.hold_once()) is True
    assert w.provider is None and not w.has_lock
    before = len(d.requests)
    d.script("200", "412")  # the lock read finds owner-1's file still valid: "Lock already held by"
    d.run(w.hold_once(), until=lambda: len(d.requests) >= before + 1)
    assert d.requests[before] == Read(LOCK)


def test_after_failed_release_is_validated() -> None:
    with pytest.raises(ConfigError, match="workload.after_failed_release"):
        WorkloadConfig(after_failed_release="reuse").validate()


def test_the_catalogue_scenario_shows_the_consequence() -> None:
    from model.checkers.lock_run import check_lock_history
    from model.sim import SimWorld
    from scenarios import loader

    scenario = loader.load("rfc91-failed-release-reuse", [])
    events = SimWorld(scenario).run()
    kinds = {v.kind for v in check_lock_history(events, scenario.checkers).violations}
    assert kinds == {"overlap", "stale-write", "lost-update"}, f"seed {scenario.seed}"
    skipped = [e for e in events if e.f == "acquire" and e.type == "ok" and e.value.get("skipped")]
    assert skipped and skipped[0].node == "w1"
    closing = loader.load("rfc91-failed-release-reuse", ['workload.after_failed_release="close"'])
    assert check_lock_history(SimWorld(closing).run(), closing.checkers).violations == ()
