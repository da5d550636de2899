"""How a writer uses its provider across transactions (docs/fidelity.md M1 to M4), step by step.

Hudi: ``LockManager#unlock`` (826de778) calls ``getLockProvider().unlock()`` and only then ``close()``,
so a release that throws FAILED_TO_RELEASE leaves the provider open and kept.  Hudi 1.2.0's
``TransactionManager`` (stored id 138226650, the master version PR #18350's diffs start from) calls
``lockManager.lock()`` in every ``beginStateChange``: a writer that keeps its write client after the
failure (``workload.after_failed_release = "keep-client"``) acquires again on the kept provider, whose
``tryLock`` returns at once from its reentrant branch while its cached lock is still valid.  The unmerged
PR #13577 (``TransactionManager`` at 60f6c0cd, variant ``pr-13577``) keeps ``hasLock`` set after the
failure and skips ``lockManager.lock()`` altogether.  ``LockManager#lock`` retries ``tryLock(wait)`` on
the same provider (RetryHelper, ``hoodie.write.lock.client.num_retries`` and ``...wait_time_ms_between_
retry``) on a HoodieLockException only.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest
from lockdriver import Driver, other_lock

from model.config import ConfigError, Dist, LockConfig, WorkloadConfig
from model.lock.provider import HEARTBEAT_TASK, StorageLockProvider
from model.lock.register_writer import RegisterWriter, lock_manager_lock
from model.runtime.effects import Put, Read, ReplaceIfMatch, Sleep

LOCK = "table/.hoodie/.locks/table_lock.json"
REGISTER = "table/register"
V = 300_000


def writer(d: Driver, after_failed_release: str, variant: str = "hudi", **lock: Any) -> RegisterWriter:
    ids = iter(f"owner-{i}" for i in range(1, 100))
    config = WorkloadConfig(work_ms=Dist("fixed", 0), after_failed_release=after_failed_release)

    def new_provider() -> StorageLockProvider:
        return StorageLockProvider(LockConfig(variant=variant, **lock), lambda: next(ids), d.flavor)

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


# ---- Hudi 1.2.0: every transaction calls lockManager.lock() ----------------------------------------


def test_keep_client_the_next_transaction_reenters_the_kept_providers_valid_lock() -> None:
    d = Driver()
    w = writer(d, "keep-client")
    p = failed_release(d, w)
    assert not w.has_lock and not p.closed and p.lock is not None  # no close(): hook, owner id, lock kept
    assert p.hook_key in d.hooks and not p.heartbeat_active  # unlock stopped the heartbeat first
    cached = p.lock.version
    before, spawned = len(d.requests), dict(d.spawned)
    d.advance(V - 1_000)  # the next micro-batch, inside the remaining lease
    d.script("200", "200", "200")  # register read, register put, expire
    d.run(w.hold_once())
    sent = d.requests[before:]
    assert isinstance(sent[0], Read) and sent[0].key == REGISTER  # tryLock: reentrant, no request
    assert isinstance(sent[1], Put) and sent[1].key == REGISTER
    assert isinstance(sent[2], ReplaceIfMatch) and sent[2].key == LOCK and sent[2].version == cached
    assert d.spawned == spawned  # no heartbeat was started for it: the lock lapses at its old validUntil
    ok = d.recorded("acquire", "ok")
    assert ok[-1].value == {"owner": "owner-1", "version": cached, "reentrant": True}
    assert not d.recorded("try-lock", "ok")[1:]  # only the first acquisition; no START either
    # the release succeeded: LockManager#unlock closed the provider
    assert p.closed and w.provider is None and p.hook_key not in d.hooks


def test_keep_client_after_the_lease_lapsed_the_kept_provider_acquires_as_usual() -> None:
    d = Driver()
    w = writer(d, "keep-client")
    p = failed_release(d, w)
    d.advance(V + 501)  # validUntil + CLOCK_DRIFT_BUFFER_MS passed by the writer's own clock
    before = len(d.requests)
    # lock read (its own lapsed file), overwrite, enable file; register read, put; expire
    d.script("200", "200", "404", "200", "200", "200")
    assert d.run(w.hold_once()) is True
    assert [type(r).__name__ for r in d.requests[before:before + 2]] == ["Read", "ReplaceIfMatch"]
    assert d.recorded("acquire", "ok")[-1].value.get("reentrant") is None
    assert HEARTBEAT_TASK in d.spawned and d.recorded("try-lock", "ok")[-1].value["owner"] == p.owner
    assert d.recorded("dangling-lock")[-1].value["holder"] == p.owner  # its own, not expired


def test_keep_client_a_reentered_lock_that_passed_on_fails_the_release_and_the_next_acquires() -> None:
    d = Driver()
    w = writer(d, "keep-client")
    p = failed_release(d, w)
    d.script("200", "200", "412")  # reentrant; register read, put; the expire's If-Match fails
    d.run(w.hold_once())
    assert d.recorded("release-acquired-by-others") and p.lock is None and not p.closed
    assert w.provider is p and not w.has_lock
    before = len(d.requests)
    d.script("200")  # the next transaction: no cached lock, so tryLock reads the lock file again
    d.run(w.hold_once(), until=lambda: len(d.requests) > before)
    assert d.requests[before] == Read(LOCK) and w.provider is p


# ---- the unmerged PR #13577: hasLock skips lockManager.lock() ----------------------------------------


def test_pr_13577_the_next_transaction_skips_the_acquisition_on_the_kept_provider() -> None:
    d = Driver()
    w = writer(d, "keep-client", variant="pr-13577")
    p = failed_release(d, w)
    assert w.has_lock and not p.closed and p.lock is not None
    cached = p.lock.version
    before, spawned = len(d.requests), dict(d.spawned)
    d.advance(V + 10_000)  # even long after the lease lapsed: no tryLock at all
    d.script("200", "200", "200")  # register read, register put, expire
    d.run(w.hold_once())
    sent = d.requests[before:]
    assert isinstance(sent[0], Read) and sent[0].key == REGISTER  # no lock read: no tryLock at all
    assert isinstance(sent[2], ReplaceIfMatch) and sent[2].version == cached
    assert d.spawned == spawned
    ok = d.recorded("acquire", "ok")[-1].value
    assert ok == {"owner": "owner-1", "version": cached, "skipped": "hasLock"}
    assert p.closed and w.provider is None and not w.has_lock and p.hook_key not in d.hooks


def test_pr_13577_a_second_failure_keeps_skipping_and_the_one_after_closes() -> None:
    d = Driver()
    w = writer(d, "keep-client", variant="pr-13577")
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


# ---- LockManager#lock: RetryHelper around tryLock(wait) on the same provider -------------------------


def contender(d: Driver, **lock: Any) -> StorageLockProvider:
    ids = iter(f"owner-{i}" for i in range(1, 100))
    config = LockConfig(wait_time_ms=2_000, poll_ms=1_000, **lock)
    return StorageLockProvider(config, lambda: next(ids), d.flavor)


def test_lock_manager_retries_a_timed_out_wait_on_the_same_provider() -> None:
    d = Driver()
    other_lock(d, valid_for_ms=3_600_000)
    p = contender(d, client_num_retries=2, client_wait_ms_between_retry=7_000)
    d.script(*["200"] * 6)  # each tryLock(2 s) reads twice (at 0 s and 1 s) and finds the lock held
    assert d.run(lock_manager_lock(p)) is False
    assert d.kinds() == ["Read"] * 6  # three tryLock(wait) calls: the first and two retries
    assert d.sleeps == [1_000, 1_000, 7_000, 1_000, 1_000, 7_000, 1_000, 1_000]
    assert [r.value["retry"] for r in d.recorded("lock-retry")] == [1, 2]
    assert {r.value["owner"] for r in d.recorded("try-lock", "fail")} == {p.owner}  # one provider
    assert p.error_kind == "timeout"


def test_lock_manager_takes_the_lock_on_a_retry() -> None:
    d = Driver()
    other_lock(d, valid_for_ms=2_500)  # lapses (past validUntil + 500 ms) during the retry's wait
    p = contender(d)  # Hudi's defaults: 50 retries, 5 s apart
    d.script("200", "200", "200", "200", "404")  # held, held; then read, overwrite, enable file
    assert d.run(lock_manager_lock(p)) is True
    assert d.sleeps == [1_000, 1_000, 5_000] and len(d.recorded("lock-retry")) == 1


def test_lock_manager_does_not_retry_an_exception_of_the_lock_client() -> None:
    d = Driver()
    p = contender(d, client_num_retries=5)
    d.script("404", "timeout")  # the create's SdkClientException leaves tryLock: not a HoodieLockException
    assert d.run(lock_manager_lock(p)) is False
    assert d.kinds() == ["Read", "CreateIfAbsent"] and not d.recorded("lock-retry")
    assert p.error_kind == "client" and "SdkClientException" in (p.error or "")


def test_lock_manager_retries_at_once_after_an_interrupted_wait() -> None:
    first = [True]

    def interrupt_first_poll(effect: object) -> bool:
        if isinstance(effect, Sleep) and effect.ms == 1_000 and first[0]:
            first[0] = False
            return True
        return False

    d = Driver(interrupt_at=interrupt_first_poll)
    other_lock(d, valid_for_ms=3_600_000)
    p = contender(d, client_num_retries=1, client_wait_ms_between_retry=7_000)
    d.script(*["200"] * 3)
    assert d.run(lock_manager_lock(p)) is False
    # the interrupted poll sleep throws (FAILED_TO_ACQUIRE, flag set again): the retry's sleep ends at
    # once, so the second tryLock starts right away
    assert d.sleeps == [1_000, 1_000] and d.kinds() == ["Read"] * 3
    assert d.recorded("lock-retry")[0].value["after"] == "interrupted"


def test_lock_manager_swallows_an_interrupt_of_its_retry_sleep() -> None:
    d = Driver(interrupt_at=lambda e: isinstance(e, Sleep) and e.ms == 7_000)
    other_lock(d, valid_for_ms=3_600_000)
    p = contender(d, client_num_retries=1, client_wait_ms_between_retry=7_000)
    d.script(*["200"] * 4)
    assert d.run(lock_manager_lock(p)) is False  # RetryHelper: "ignore InterruptedException here"
    assert d.kinds() == ["Read"] * 4 and d.sleeps == [1_000] * 4  # the 7 s sleep ended at once


def test_without_retries_one_wait_fails_the_acquisition() -> None:
    d = Driver()
    other_lock(d, valid_for_ms=3_600_000)
    p = contender(d, client_num_retries=0)
    d.script("200", "200")
    assert d.run(lock_manager_lock(p)) is False and d.kinds() == ["Read", "Read"]


@pytest.mark.parametrize("field,value", [("client_num_retries", -1), ("client_wait_ms_between_retry", -5)])
def test_lock_manager_settings_are_validated(field: str, value: int) -> None:
    with pytest.raises(ConfigError, match=f"lock.{field}"):
        replace(LockConfig(), **{field: value}).validate()


def test_hudis_lock_manager_defaults() -> None:
    config = LockConfig()  # hoodie.write.lock.client.num_retries 50, ...wait_time_ms_between_retry 5000
    assert (config.client_num_retries, config.client_wait_ms_between_retry) == (50, 5_000)


def test_a_failed_acquisition_keeps_the_provider_with_keep_client() -> None:
    d = Driver()
    other_lock(d, valid_for_ms=3_600_000)
    w = writer(d, "keep-client", wait_time_ms=1_000, client_num_retries=0)
    d.script("200")
    assert d.run(w.hold_once()) is False
    kept = w.provider
    assert kept is not None and not kept.closed  # LockManager#lock closes nothing
    d.script("200")
    d.run(w.hold_once())
    assert w.provider is kept and {r.value["owner"] for r in d.recorded("try-lock", "fail")} == {kept.owner}


# ---- catalogue ---------------------------------------------------------------------------------------


def _run(name: str, overrides: list[str] | None = None) -> tuple[Any, Any]:
    from model.checkers.lock_run import check_lock_history
    from model.runtime.sim import SimWorld
    from scenarios import loader

    scenario = loader.load(name, overrides or [])
    events = SimWorld(scenario).run()
    return events, check_lock_history(events, scenario.checkers)


def test_the_hudi_1_2_0_catalogue_scenario_overlaps_a_reentered_lock_that_lapsed() -> None:
    events, verdict = _run("rfc91-failed-release-reuse")
    kinds = {v.kind for v in verdict.violations}
    assert "overlap" in kinds and "stale-write" in kinds
    reentered = [e for e in events if e.f == "acquire" and e.type == "ok" and e.value.get("reentrant")]
    assert reentered and reentered[0].node == "w1"
    assert not [e for e in events if e.f == "acquire" and e.value and e.value.get("skipped")]
    # the reentered transaction started inside the lease and wrote after it lapsed, with no heartbeat
    w1_writes = [e for e in events if e.node == "w1" and e.f == "write" and e.type == "ok"
                 and e.time > reentered[0].time]
    taken = [e for e in events if e.node == "w2" and e.f == "acquire" and e.type == "ok"]
    assert w1_writes and taken and taken[0].time < w1_writes[0].time
    closing_events, closing = _run("rfc91-failed-release-reuse", ['workload.after_failed_release="close"'])
    assert closing.violations == ()


def test_the_pr_13577_catalogue_scenario_skips_the_lock_after_it_lapsed() -> None:
    events, verdict = _run("rfc91-failed-release-reuse-pr-13577")
    assert {v.kind for v in verdict.violations} == {"overlap", "stale-write", "lost-update"}
    skipped = [e for e in events if e.f == "acquire" and e.type == "ok" and e.value.get("skipped")]
    assert skipped and skipped[0].node == "w1"
    # the same faults and timings under Hudi 1.2.0: the kept provider's lock had lapsed, so w1 acquires
    # as usual (it waits while w2 holds the lock) and nothing overlaps
    _, released = _run("rfc91-failed-release-reuse-pr-13577", ['lock.variant="hudi"'])
    assert released.violations == ()
