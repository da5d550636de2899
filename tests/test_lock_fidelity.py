"""The provider, step by step against scripted store answers: Hudi's next request and result, per branch.

Each test pins one row of docs/fidelity.md (the row names the test).  The Java is apache/hudi
54cb1a57 (release 1.2.0) unless a test names the ``hudi-1.1`` variant.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from typing import Any

import pytest
from lockdriver import Driver, other_lock, provider

from model.config import LockConfig, Scenario, StorageConfig, WorkloadConfig, client_settings
from model.lock.audit import enable_body, enable_key
from model.lock.lockfile import LockData
from model.lock.provider import HEARTBEAT_TASK, HoodieLockError, StorageLockProvider
from model.lock.storage_clients import GetResult, LockClientError, UpsertResult, read_result, upsert_result
from model.lock.variants import VARIANTS, variant
from model.runtime.clock import EPOCH_MS
from model.runtime.effects import (
    WRITER_TASK,
    Cancel,
    CheckInterrupt,
    CreateIfAbsent,
    Effect,
    Interrupt,
    Interrupted,
    Outcome,
    Put,
    Read,
    Record,
    ReplaceIfMatch,
    Sleep,
    Spawn,
    StoreResult,
)
from model.runtime.kernel import WriterContext
from model.runtime.sim import SimWorld
from model.runtime.taskloop import any_action

V = 300_000  # Hudi's default validity (ms)
R = 30_000  # Hudi's default renew interval (ms)
LOCK = "table/.hoodie/.locks/table_lock.json"


def acquired(d: Driver, p: StorageLockProvider) -> None:
    """Acquire through a fresh file (no audit enable file): read 404, create 200, enable-file read 404."""
    d.script("404", "200", "404")
    assert d.run(p.try_lock_once()) is True


# ---- tryLock() -------------------------------------------------------------------------


def test_trylock_creates_the_lock_file_when_none_exists() -> None:
    d = Driver()
    p = provider(d)
    acquired(d, p)
    assert d.kinds() == ["Read", "CreateIfAbsent", "Read"]  # the lock, If-None-Match:*, audit_enabled.json
    assert d.requests[0] == Read(LOCK) and d.requests[2] == Read(enable_key("table"))
    assert d.lock_data() == LockData(False, EPOCH_MS + V, p.owner)
    assert HEARTBEAT_TASK in d.spawned and p.heartbeat_active and p.lock is not None


def test_trylock_does_not_write_while_another_valid_lock_is_held() -> None:
    d = Driver()
    other_lock(d, valid_for_ms=10_000)
    p = provider(d)
    d.script("200")
    assert d.run(p.try_lock_once()) is False
    assert d.kinds() == ["Read"] and d.recorded("try-lock", "fail")[0].value["holder"] == "other"


def test_trylock_overwrites_an_expired_lock_file_with_if_match() -> None:
    d = Driver()
    version = other_lock(d, expired=True)
    p = provider(d)
    d.script("200", "200", "404")
    assert d.run(p.try_lock_once()) is True
    write = d.requests[1]
    assert isinstance(write, ReplaceIfMatch) and write.version == version
    assert d.lock_data() == LockData(False, EPOCH_MS + V, p.owner)


@pytest.mark.parametrize("past_valid_until,takes", [(500, False), (501, True)])
def test_trylock_takes_a_lapsed_lock_only_past_valid_until_plus_500_ms(past_valid_until: int,
                                                                        takes: bool) -> None:
    d = Driver()
    other_lock(d, valid_for_ms=0)
    d.advance(past_valid_until)
    p = provider(d)
    d.script("200", *(("200", "404") if takes else ()))
    assert d.run(p.try_lock_once()) is takes
    assert d.kinds() == (["Read", "ReplaceIfMatch", "Read"] if takes else ["Read"])


@pytest.mark.parametrize("flavor,status,expect", [
    ("s3", "409", "unknown"), ("s3", "429", "unknown"), ("s3", "503", "unknown"), ("s3", "timeout", "throws"),
    ("gcs", "429", "unknown"), ("gcs", "503", "unknown"), ("gcs", "409", "throws"),
    ("gcs", "timeout", "throws"),
])
def test_trylock_read_answers(flavor: str, status: str, expect: str) -> None:
    d = Driver(flavor=flavor)
    p = provider(d)
    d.script(status)
    if expect == "throws":
        with pytest.raises(LockClientError):
            d.run(p.try_lock_once())
    else:
        assert d.run(p.try_lock_once()) is False
        assert d.recorded("try-lock", "fail")[0].value["reason"] == "read-unknown"
    assert d.kinds() == ["Read"]


# (flavor, creating, status, variant) -> the try-lock failure reason, or "throws"
WRITE_CASES = [
    ("s3", True, "412", "hudi", "precondition-failed"),
    ("s3", True, "429", "hudi", "throttled"),
    ("s3", True, "429", "hudi-1.1", "write-unknown"),
    ("s3", True, "503", "hudi", "write-unknown"),
    ("s3", True, "409", "hudi", "write-unknown"),
    ("s3", True, "timeout", "hudi", "throws"),
    ("s3", False, "timeout", "hudi", "write-unknown"),
    ("s3", False, "404", "hudi", "write-unknown"),
    ("s3", False, "412", "hudi", "precondition-failed"),
    ("gcs", True, "412", "hudi", "precondition-failed"),
    ("gcs", True, "429", "hudi", "throttled"),
    ("gcs", True, "429", "hudi-1.1", "write-unknown"),
    ("gcs", True, "503", "hudi", "write-unknown"),
    ("gcs", True, "409", "hudi", "throws"),
    ("gcs", True, "timeout", "hudi", "throws"),
    ("gcs", False, "timeout", "hudi", "throws"),
]


@pytest.mark.parametrize("flavor,creating,status,name,expect", WRITE_CASES)
def test_trylock_write_answers(flavor: str, creating: bool, status: str, name: str, expect: str) -> None:
    d = Driver(flavor=flavor)
    if not creating:
        other_lock(d, expired=True)
    p = provider(d, variant=name)
    d.script("404" if creating else "200", status)
    if expect == "throws":
        with pytest.raises(LockClientError):
            d.run(p.try_lock_once())
    else:
        assert d.run(p.try_lock_once()) is False
        assert d.recorded("try-lock", "fail")[0].value["reason"] == expect
    assert d.kinds() == ["Read", "CreateIfAbsent" if creating else "ReplaceIfMatch"]
    assert p.lock is None and not d.spawned


def test_a_lost_create_reply_throws_and_the_writer_then_reads_its_own_lock_until_it_lapses() -> None:
    d = Driver()
    p = provider(d)
    d.script("404", "lost")
    with pytest.raises(LockClientError, match="SdkClientException on create"):
        d.run(p.try_lock_once())
    assert d.lock_data() == LockData(False, EPOCH_MS + V, p.owner)  # the write was applied
    d.advance(V + 500)
    d.script("200")
    assert d.run(p.try_lock_once()) is False  # "Lock already held by" its own owner id
    assert d.recorded("try-lock", "fail")[-1].value["holder"] == p.owner
    d.advance(1)
    d.script("200", "200", "404")
    assert d.run(p.try_lock_once()) is True  # its own lapsed lock is overwritten
    assert d.kinds()[-2:] == ["ReplaceIfMatch", "Read"]


def test_a_lost_overwrite_reply_is_unknown_and_the_next_poll_reads_itself() -> None:
    d = Driver()
    other_lock(d, expired=True)
    p = provider(d)
    d.script("200", "lost")
    assert d.run(p.try_lock_once()) is False
    assert d.recorded("try-lock", "fail")[0].value["reason"] == "write-unknown"
    d.advance(1_000)
    d.script("200")
    assert d.run(p.try_lock_once()) is False
    assert d.recorded("try-lock", "fail")[-1].value == {"reason": "held", "holder": p.owner, "owner": p.owner}


def test_with_sdk_retries_a_lost_reply_comes_back_as_412() -> None:
    """hudi-1.1: the SDK retries the timed-out write; the retry meets the first attempt's lock file: 412."""
    d = Driver()
    p = provider(d, variant="hudi-1.1")
    d.script("404", "lost")
    d.answers[1:] = []
    d.script()
    results = iter([StoreResult(Outcome.NOT_FOUND), None])

    def retrying(effect: object) -> object:
        first = next(results)
        if first is not None:
            return first
        d.store.apply(effect)  # type: ignore[arg-type]  # the first attempt is applied, its reply lost
        return StoreResult(Outcome.PRECONDITION_FAILED, attempts=2, ambiguous=True)

    d._storage = retrying  # type: ignore[method-assign,assignment]
    assert d.run(p.try_lock_once()) is False
    assert [r.value["reason"] for r in d.recorded("try-lock", "fail")] == ["precondition-failed"]
    assert d.lock_data() is not None and d.lock_data().owner == p.owner  # type: ignore[union-attr]


def test_412_recovery_adopts_a_lock_file_that_names_its_own_owner_id() -> None:
    d = Driver()
    p = provider(d, variant="412-recovery")
    d.script("404", "lost", "200", "404")  # read, lost create, re-read, enable-file read
    assert d.run(p.try_lock_once()) is True
    assert d.kinds() == ["Read", "CreateIfAbsent", "Read", "Read"] and p.lock is not None
    assert d.recorded("recover-412", "ok") and p.heartbeat_active
    # and a poll that finds a valid lock naming its own owner id adopts it (owner ids are per provider)
    d2 = Driver()
    q = provider(d2, variant="412-recovery")
    other_lock(d2, owner=q.owner, valid_for_ms=V)
    d2.script("200", "404")
    assert d2.run(q.try_lock_once()) is True and d2.kinds() == ["Read", "Read"]


def test_heartbeat_start_failure_expires_the_lock_at_once() -> None:
    d = Driver(spawn_ok=False)
    p = provider(d)
    d.script("404", "200", "200")
    assert d.run(p.try_lock_once()) is False
    assert d.kinds() == ["Read", "CreateIfAbsent", "ReplaceIfMatch"]
    assert d.lock_data() == LockData(True, EPOCH_MS + V, p.owner) and p.lock is None


def test_reentrant_trylock_sends_nothing() -> None:
    d = Driver()
    p = provider(d)
    acquired(d, p)
    n = len(d.requests)
    assert d.run(p.try_lock_once()) is True and len(d.requests) == n


def test_an_active_heartbeat_without_a_valid_lock_throws() -> None:
    d = Driver()
    p = provider(d)
    acquired(d, p)
    d.advance(V + 501)  # past validUntil + 500 ms by our own clock, heartbeat still scheduled
    with pytest.raises(HoodieLockError, match="active heartbeat"):
        d.run(p.try_lock_once())


def test_one_owner_id_per_provider() -> None:
    d = Driver()
    other_lock(d, valid_for_ms=V)
    p = provider(d, owners=["first", "second"])
    d.script("200", "200")
    d.run(p.try_lock_once())
    d.run(p.try_lock_once())
    assert {r.value["owner"] for r in d.recorded("try-lock", "fail")} == {"first"}
    assert provider(d, owners=["third"]).owner == "third"


def test_a_closed_provider_throws() -> None:
    d = Driver()
    p = provider(d)
    d.run(p.close())
    with pytest.raises(HoodieLockError, match="closed"):
        d.run(p.try_lock_once())


# ---- tryLock(time) ------------------------------------------------------------------------


@pytest.mark.parametrize("wait,attempts", [(2_500, 3), (3_000, 3), (3_001, 4), (0, 0)])
def test_trylock_with_a_wait_polls_every_second(wait: int, attempts: int) -> None:
    d = Driver()
    other_lock(d, valid_for_ms=V)
    p = provider(d)
    d.script(*["200"] * attempts)
    assert d.run(p.try_lock(wait)) is False
    assert d.kinds() == ["Read"] * attempts and d.sleeps == [1_000] * attempts


def test_trylock_with_a_wait_ends_at_an_exception() -> None:
    d = Driver()
    p = provider(d)
    d.script("timeout")
    assert d.run(p.try_lock(60_000)) is False
    assert p.error is not None and "SdkClientException" in p.error and d.kinds() == ["Read"]
    assert d.recorded("try-lock", "fail")[-1].value["phase"] == "read"


def test_trylock_interrupted_in_its_poll_sleep_fails() -> None:
    d = Driver(interrupt_at=lambda e: isinstance(e, Sleep))
    other_lock(d, valid_for_ms=V)
    p = provider(d)
    d.script("200")
    assert d.run(p.try_lock(60_000)) is False
    assert p.error is not None and "interrupted" in p.error


def test_an_interrupt_seen_at_a_request_is_a_client_exception() -> None:
    """AWS SDK v2 checks the interrupt flag before a request: SdkInterruptedException, like a timeout."""
    d = Driver(interrupt_at=lambda e: isinstance(e, CreateIfAbsent))
    p = provider(d)
    d.script("404")
    with pytest.raises(LockClientError):
        d.run(p.try_lock_once())
    assert d.kinds() == ["Read"]  # the create was never sent


# ---- unlock() -------------------------------------------------------------------------------


def test_unlock_stops_the_heartbeat_then_expires_the_lock() -> None:
    d = Driver()
    p = provider(d)
    acquired(d, p)
    version = p.lock.version  # type: ignore[union-attr]
    d.script("200")
    assert d.run(p.unlock()) is True
    assert d.cancels == [Cancel(HEARTBEAT_TASK, 15_000)]
    last = d.requests[-1]
    assert isinstance(last, ReplaceIfMatch) and last.version == version
    assert d.lock_data() == LockData(True, EPOCH_MS + V, p.owner) and p.lock is None


def test_unlock_fails_without_expiring_when_the_heartbeat_does_not_stop_within_15_s() -> None:
    d = Driver()
    p = provider(d)
    acquired(d, p)
    d.cancel_ok = False
    n = len(d.requests)
    assert d.run(p.unlock()) is False
    assert len(d.requests) == n and p.lock is not None and "heartbeat" in (p.error or "")


@pytest.mark.parametrize("answers,released,sleeps", [
    (["429", "200"], True, [1_000]),
    (["429", "429", "429", "200"], True, [1_000, 2_000, 4_000]),
    (["429", "429", "429", "429"], False, [1_000, 2_000, 4_000]),
])
def test_unlock_retries_a_throttled_expire_three_times(answers: list[str], released: bool,
                                                        sleeps: list[int]) -> None:
    d = Driver()
    p = provider(d)
    acquired(d, p)
    d.sleeps.clear()
    d.script(*answers)
    assert d.run(p.unlock()) is released
    assert d.sleeps == sleeps and d.kinds()[3:] == ["ReplaceIfMatch"] * len(answers)
    assert (p.lock is None) is released


def test_before_1_2_a_throttled_expire_is_not_retried() -> None:
    d = Driver()
    p = provider(d, variant="hudi-1.1")
    acquired(d, p)
    d.script("429")
    assert d.run(p.unlock()) is False and d.kinds()[3:] == ["ReplaceIfMatch"] and p.lock is not None


def test_the_throttle_retry_stops_when_the_lock_was_cleared_or_replaced_meanwhile() -> None:
    d = Driver()
    p = provider(d)
    acquired(d, p)

    def replaced(_: Sleep) -> None:
        p.lock = p.lock and type(p.lock)(p.lock.data, "another-version")

    d.on_sleep = replaced
    d.script("429")
    assert d.run(p.unlock()) is True and d.kinds()[3:] == ["ReplaceIfMatch"]


def test_unlock_interrupted_in_the_throttle_backoff_fails() -> None:
    d = Driver()
    p = provider(d)
    acquired(d, p)
    d.interrupt_at = lambda e: isinstance(e, Sleep)
    d.script("429")
    assert d.run(p.unlock()) is False and "interrupted" in (p.error or "")


@pytest.mark.parametrize("name,released", [("hudi", False), ("hudi-1.1", True)])
def test_unlock_finding_the_lock_acquired_by_others(name: str, released: bool) -> None:
    d = Driver()
    p = provider(d, variant=name)
    acquired(d, p)
    d.script("412")
    assert d.run(p.unlock()) is released
    assert p.lock is None and d.recorded("release-acquired-by-others")


@pytest.mark.parametrize("flavor,status",
                         [("s3", "503"), ("s3", "timeout"), ("gcs", "503"), ("gcs", "timeout")])
def test_unlock_with_an_unknown_expire_fails_and_keeps_the_lock(flavor: str, status: str) -> None:
    d = Driver(flavor=flavor)
    p = provider(d)
    acquired(d, p)
    d.script(status)
    assert d.run(p.unlock()) is False
    assert p.lock is not None  # believesLockMightBeHeld: the file may still name us
    assert d.recorded("release-failed")[-1].value["still_believes"] is True
    if flavor == "gcs" and status == "timeout":
        assert "StorageException" in (p.error or "")  # GCSStorageLockClient rethrows code 0


def test_close_removes_the_shutdown_hook_and_unlocks() -> None:
    d = Driver()
    p = provider(d)
    d.run(p.open())
    assert list(d.hooks) == [p.hook_key]
    acquired(d, p)
    d.script("200")
    d.run(p.close())
    assert not d.hooks and p.closed and p.lock is None and d.kinds()[-1] == "ReplaceIfMatch"


# ---- the heartbeat: LockProviderHeartbeatManager + renewLock ----------------------------------


def test_the_heartbeat_runs_at_a_fixed_rate() -> None:
    d = Driver(latency_ms=5_000)  # every request takes 5 s
    p = provider(d)
    acquired(d, p)
    hb = d.spawned[HEARTBEAT_TASK]
    d.sleeps.clear()
    d.script("200", "200", "200")
    start_mono = d.mono
    d.run(hb, until=lambda: len(d.sleeps) == 4)
    # scheduleAtFixedRate(R, R): sleeps are R minus the time the previous renewal took, not R after it
    assert d.sleeps[:3] == [R, R - 5_000, R - 5_000]
    assert d.mono - start_mono >= 3 * R
    late = Driver(latency_ms=R + 10_000)  # a renewal slower than R: the next run fires at once
    q = provider(late)
    late.script("404", "200", "404")
    late.run(q.try_lock_once())
    late.sleeps.clear()
    late.script("200", "200")
    late.run(late.spawned[HEARTBEAT_TASK], until=lambda: not late.answers)
    assert late.sleeps == [R]  # the second run came 40 s after the first: no sleep before it


@pytest.mark.parametrize("flavor,status,name,keeps_going,interrupts", [
    ("s3", "200", "hudi", True, False),
    ("s3", "412", "hudi", False, True),
    ("s3", "412", "hudi-1.1", False, False),
    ("s3", "503", "hudi", True, False),
    ("s3", "429", "hudi", True, False),
    ("s3", "timeout", "hudi", True, False),  # UNKNOWN_ERROR: "could be transient"
    ("gcs", "timeout", "hudi", False, True),  # StorageException rethrown: renewLock catches it, false
    ("gcs", "409", "hudi", False, True),
    ("gcs", "timeout", "hudi-1.1", False, False),
])
def test_renewal_answers(flavor: str, status: str, name: str, keeps_going: bool, interrupts: bool) -> None:
    d = Driver(flavor=flavor)
    p = provider(d, variant=name)
    acquired(d, p)
    first = p.lock
    d.script(status)
    d.run(d.spawned[HEARTBEAT_TASK], until=lambda: len(d.sleeps) == 2)
    assert d.kinds()[3:] == ["ReplaceIfMatch"]
    assert d.interrupts == ([WRITER_TASK] if interrupts else [])
    assert p.heartbeat_active is keeps_going
    assert (p.lock is not first) is (status == "200")  # only a success replaces the cached lock


def test_the_heartbeat_stops_when_the_writer_thread_is_dead() -> None:
    d = Driver()
    p = provider(d)
    acquired(d, p)
    d.writer_alive = False
    d.run(d.spawned[HEARTBEAT_TASK])
    assert d.kinds() == ["Read", "CreateIfAbsent", "Read"] and not p.heartbeat_active
    assert d.recorded("heartbeat-stop")[0].value["reason"] == "writer-dead"


def test_rfc91_as_written_stops_renewing_past_expiry_without_an_interrupt() -> None:
    d = Driver(flavor="s3")
    p = provider(d, variant="rfc91-as-written")
    acquired(d, p)
    d.script(*["503"] * 11)
    d.run(d.spawned[HEARTBEAT_TASK])
    assert not p.heartbeat_active and not d.interrupts
    # the runs at R, 2R, ..., 10R = V keep going (not yet past validUntil); the one at 11R stops it
    assert len(d.requests) - 3 == V // R + 1 and d.now == EPOCH_MS + V + R


# ---- the shutdown hook ------------------------------------------------------------------------


def test_the_shutdown_hook_expires_a_held_lock_even_with_the_heartbeat_running() -> None:
    d = Driver()
    p = provider(d)
    acquired(d, p)
    d.script("200")
    d.run(p.shutdown_hook())
    assert p.heartbeat_active and p.closed  # tryExpireCurrentLock(true) does not stop the heartbeat
    assert d.lock_data() == LockData(True, EPOCH_MS + V, p.owner)


def test_the_shutdown_hook_does_nothing_without_a_valid_lock() -> None:
    d = Driver()
    p = provider(d)
    d.run(p.shutdown_hook())
    assert d.requests == [] and p.closed


# ---- the audit trail ----------------------------------------------------------------------------


def test_the_audit_trail_is_written_as_hudis_audit_service_writes_it() -> None:
    d = Driver()
    d.store.apply(Put(enable_key("table"), enable_body()))
    p = provider(d)
    d.script("404", "200", "200", "200")  # read, create, enable file, START
    assert d.run(p.try_lock_once()) is True
    start = EPOCH_MS
    key = f"table/.hoodie/.locks/audit/{start}_{p.owner}.jsonl"
    assert d.requests[-1] == Put(key, d.store.peek(key).body)  # type: ignore[union-attr]
    d.script("200", "200")  # the renewal at R, RENEW
    d.run(d.spawned[HEARTBEAT_TASK], until=lambda: not d.answers and p.monitor_holder is None)
    d.advance(1_000)
    d.script("200", "200")  # the expire write, END
    assert d.run(p.unlock()) is True
    lines = [json.loads(x) for x in d.store.peek(key).body.decode().splitlines()]  # type: ignore[union-attr]
    assert [x["state"] for x in lines] == ["START", "RENEW", "END"]
    assert [list(x) for x in lines] == [
        ["ownerId", "transactionStartTime", "timestamp", "state", "lockExpiration", "lockHeld"]] * 3
    assert all(x["ownerId"] == p.owner and x["transactionStartTime"] == start for x in lines)
    assert [x["timestamp"] for x in lines] == [start, start + R, start + R + 1_000]
    assert all(x["lockExpiration"] == x["timestamp"] + V and x["lockHeld"] is True for x in lines)


def test_no_end_record_when_the_expire_write_fails() -> None:
    d = Driver()
    d.store.apply(Put(enable_key("table"), enable_body()))
    p = provider(d)
    d.script("404", "200", "200", "200")
    d.run(p.try_lock_once())
    d.script("412")
    d.run(p.unlock())
    assert d.kinds()[-1] == "ReplaceIfMatch"  # no audit PUT after it


def test_without_the_enable_file_no_audit_and_the_next_acquisition_checks_again() -> None:
    d = Driver()
    p = provider(d)
    acquired(d, p)
    d.script("200")
    d.run(p.unlock())
    d.store.apply(Put(enable_key("table"), enable_body()))
    d.script("200", "200", "200", "200")  # read, overwrite, enable file (now there), START
    assert d.run(p.try_lock_once()) is True
    assert d.kinds()[-2:] == ["Read", "Put"] and p.audit is not None


# ---- the lock clients' mapping, the variants, the client settings ----------------------------------


@pytest.mark.parametrize("flavor", ["s3", "gcs"])
@pytest.mark.parametrize("outcome", list(Outcome))
def test_read_results_follow_the_java(flavor: str, outcome: Outcome) -> None:
    expected = {
        Outcome.OK: GetResult.SUCCESS, Outcome.NOT_FOUND: GetResult.NOT_EXISTS,
        Outcome.THROTTLED: GetResult.UNKNOWN_ERROR, Outcome.UNAVAILABLE: GetResult.UNKNOWN_ERROR,
        Outcome.CONFLICT: GetResult.UNKNOWN_ERROR if flavor == "s3" else None,
    }.get(outcome)
    if expected is None:
        with pytest.raises(LockClientError):
            read_result(flavor, outcome)
    else:
        assert read_result(flavor, outcome) is expected


@pytest.mark.parametrize("flavor", ["s3", "gcs"])
@pytest.mark.parametrize("creating", [True, False])
@pytest.mark.parametrize("throttled", [True, False])
@pytest.mark.parametrize("outcome", list(Outcome))
def test_upsert_results_follow_the_java(flavor: str, creating: bool, throttled: bool,
                                        outcome: Outcome) -> None:
    if outcome is Outcome.OK:
        expected: UpsertResult | None = UpsertResult.SUCCESS
    elif outcome is Outcome.PRECONDITION_FAILED:
        expected = UpsertResult.ACQUIRED_BY_OTHERS
    elif outcome is Outcome.THROTTLED:
        expected = UpsertResult.THROTTLED if throttled else UpsertResult.UNKNOWN_ERROR
    elif outcome is Outcome.UNAVAILABLE:
        expected = UpsertResult.UNKNOWN_ERROR
    elif flavor == "s3":  # any other S3Exception is UNKNOWN_ERROR; an SdkClientException throws when creating
        expected = None if outcome is Outcome.TIMEOUT and creating else UpsertResult.UNKNOWN_ERROR
    else:  # GCS rethrows every other StorageException
        expected = None
    if expected is None:
        with pytest.raises(LockClientError):
            upsert_result(flavor, outcome, creating, throttled)
    else:
        assert upsert_result(flavor, outcome, creating, throttled) is expected


def test_the_variants_differ_only_where_hudi_changed() -> None:
    new, old = variant("hudi"), variant("hudi-1.1")
    assert (new.interrupt_on_renewal_failure, new.throttled_result, new.unlock_throttle_retries,
            new.unlock_acquired_by_others_fails, new.sdk_retries("s3"), new.sdk_retries("gcs")) == (
        True, True, 3, True, 0, 0)
    assert (old.interrupt_on_renewal_failure, old.throttled_result, old.unlock_throttle_retries,
            old.unlock_acquired_by_others_fails, old.sdk_retries("s3"), old.sdk_retries("gcs")) == (
        False, False, 0, False, 3, 5)
    assert set(VARIANTS) == {"hudi", "hudi-1.1", "rfc91-as-written", "fenced", "412-recovery",
                             "pr-13577", "careful-margin", "hook-checks-writer"}
    assert variant("careful-margin").hypothetical and not variant("hudi").hypothetical
    assert variant("hook-checks-writer").hypothetical
    # no release has TransactionManager#hasLock: only the variant of the unmerged PR skips lock()
    assert [v for v in VARIANTS if variant(v).transaction_has_lock_skip] == ["pr-13577"]
    assert variant("pr-13577").unmerged_pr == 13577 and variant("hudi").unmerged_pr is None
    assert new.azure_client and not old.azure_client and new.sdk_retries("azure") == 0


@pytest.mark.parametrize("name,flavor,storage,expected", [
    ("hudi", "s3", {}, (60_000, 0)),  # apiCallTimeout = validity / 5, maxAttempts(1)
    ("hudi", "gcs", {}, (20_000, 0)),
    ("hudi-1.1", "s3", {}, (60_000, 3)),
    ("hudi-1.1", "gcs", {}, (20_000, 5)),
    ("hudi", "s3", {"timeout_ms": 400, "sdk_retries": 1}, (400, 1)),  # explicit values win
    ("hudi", "azure", {}, (60_000, 0)),  # max(1, validity / 5) s response/read timeouts, setMaxRetries(0)
])
def test_client_settings(name: str, flavor: str, storage: dict[str, int], expected: tuple[int, int]) -> None:
    sc = Scenario(lock=LockConfig(variant=name), storage=StorageConfig(flavor=flavor, **storage))
    got = client_settings(sc)
    assert (got.timeout_ms, got.sdk_retries) == expected


def test_s3_timeout_is_validity_over_5_in_whole_seconds() -> None:
    sc = Scenario(lock=LockConfig(validity_secs=12, renew_interval_secs=1))
    assert client_settings(sc).timeout_ms == 2_000
    # Azure: Math.max(1, validity / 5) seconds, so at least 1 s where S3's would be 0
    short = LockConfig(validity_secs=4, renew_interval_secs=1, enforce_hudi_limits=False)
    assert client_settings(Scenario(lock=short, storage=StorageConfig(flavor="azure"))).timeout_ms == 1_000
    # S3's would be 0 s, in which no call completes: refused, naming the setting to change
    from model.config import ConfigError

    with pytest.raises(ConfigError, match="lock.validity_secs = 4"):
        client_settings(Scenario(lock=short))


def test_a_variant_without_hudis_azure_client_is_refused_on_azure() -> None:
    from model.config import ConfigError

    with pytest.raises(ConfigError, match="storage.flavor = 'azure'.*hudi-1.1"):
        client_settings(Scenario(lock=LockConfig(variant="hudi-1.1"), storage=StorageConfig(flavor="azure")))


def test_the_lock_client_and_the_table_storage_retry_apart() -> None:
    from model.runtime.sim import retry_policy

    sc = Scenario(lock=LockConfig(variant="hudi"), storage=StorageConfig(table_retries=2))
    policy = retry_policy(sc)
    folder = sc.lock.lock_key.rsplit("/", 1)[0]
    for key in (sc.lock.lock_key, f"{folder}/audit/1_owner.jsonl", f"{folder}/audit_enabled.json"):
        assert policy(key).retries == 0, key  # Hudi 1.2.0's lock client: SDK retries off
    for key in (sc.workload.register_key, "table/.hoodie/timeline/1.deltacommit.requested"):
        assert policy(key).retries == 2, key
    same = retry_policy(Scenario(lock=LockConfig(variant="hudi-1.1"), storage=StorageConfig(flavor="gcs")))
    assert same(sc.lock.lock_key) == same(sc.workload.register_key)  # -1: the lock client's setting


@pytest.mark.parametrize("name,at,ok", [
    ("careful-margin", V - 501, True), ("careful-margin", V - 500, False),
    ("hudi", V + 500, True), ("hudi", V + 501, False),
])
def test_the_hypothetical_holder_checks(name: str, at: int, ok: bool) -> None:
    d = Driver()
    p = provider(d, variant=name)
    acquired(d, p)
    d.advance(at)
    assert d.run(p.careful_check()) is ok


# ---- interrupt policies of the task loop ------------------------------------------------------------


class _InterruptedWriter:
    """A workload whose writer gets an interrupt while it works, then passes a checkpoint, more work and
    two reads, recording each one it passes (the kernel's task loop decides where the interrupt lands)."""

    def writer(self, ctx: WriterContext) -> Generator[Effect, Any, Any]:
        yield Spawn("pester", self._pester())
        yield Sleep(10, interruptible=False)  # the interrupt comes during this work: it stays pending
        try:
            for step in (CheckInterrupt(), Sleep(100, interruptible=False), Read("k"), Read("after")):
                yield step
                yield Record("passed", "info", type(step).__name__)
        except Interrupted:
            yield Record("interrupted", "info")

    @staticmethod
    def _pester() -> Generator[Effect, Any, Any]:
        yield Interrupt(WRITER_TASK)

    pause_triggers: dict[tuple[str, str], str] = {}  # no triggered pause

    def key_class(self, key: str) -> str:
        return "other"

    def observe(self, key: str, body: bytes, version: str | None) -> None:
        return None


@pytest.mark.parametrize("name,passed,interrupted", [
    ("next-storage-call", ["CheckInterrupt", "Sleep"], True),  # lands at the read, after the work
    ("checkpoints", [], True),  # lands at the checkpoint
    ("never", ["CheckInterrupt", "Sleep", "Read", "Read"], False),
])
def test_interrupt_policies(name: str, passed: list[str], interrupted: bool) -> None:
    scenario = Scenario(duration_ms=10_000, workload=WorkloadConfig(writers=1, interrupt=name))
    events = [e for e in SimWorld(scenario, workload=_InterruptedWriter()).run() if e.process == "w1"]
    assert [e.value for e in events if e.f == "passed"] == passed
    assert any(e.f == "interrupted" for e in events) is interrupted
    assert any_action(Read("k")) and not any_action(Sleep(1, interruptible=False))


def test_expiring_with_the_heartbeat_running_throws_unless_from_the_shutdown_hook() -> None:
    d = Driver()
    p = provider(d)
    acquired(d, p)
    with pytest.raises(HoodieLockError, match="Must stop heartbeat"):
        d.run(p._expire())
    assert d.kinds() == ["Read", "CreateIfAbsent", "Read"]  # nothing sent


def test_renewing_without_a_lock_returns_false_without_a_request() -> None:
    d = Driver()
    p = provider(d)
    assert d.run(p.renew()) is False and d.requests == []
