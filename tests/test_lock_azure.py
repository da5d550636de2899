"""Hudi's AzureStorageLockClient (apache/hudi 54cb1a57, hudi-azure) in the lock model: docs/fidelity.md Z1-Z5.

``#readCurrentLockFile`` / ``#handleGetStorageException``: 404 NOT_EXISTS; 429, 5xx UNKNOWN_ERROR; any
other status rethrown; only a ``BlobStorageException`` is caught (a timeout is thrown).
``#tryUpsertLockFile`` / ``#handleUpsertBlobStorageException``: 412 or ``CONDITION_NOT_MET``
ACQUIRED_BY_OTHERS; 429 THROTTLED; 409, 5xx and any other status UNKNOWN_ERROR; any other exception
(a timeout) UNKNOWN_ERROR, also on a create.  A create on an existing blob is Azure's 409
BlobAlreadyExists, which the model's store (and ``backends/azure_blob.py``) report as PRECONDITION_FAILED:
Hudi reads it as UNKNOWN_ERROR.  The client: no SDK retries, timeouts max(1, validity / 5) s.
"""

from __future__ import annotations

import pytest
from lockdriver import Driver, other_lock, provider

from model.checkers.lock_run import check_lock_history
from model.config import Scenario, StorageConfig, client_settings
from model.lock.storage_clients import GetResult, LockClientError, UpsertResult, read_result, upsert_result
from model.runtime.effects import CreateIfAbsent, Outcome, ReplaceIfMatch
from model.runtime.sim import SimWorld
from scenarios import loader

THROWS = None
# (outcome, the Java's GetResult or THROWS) for a read of the lock file
READ_ROWS = [
    (Outcome.OK, GetResult.SUCCESS),
    (Outcome.NOT_FOUND, GetResult.NOT_EXISTS),  # status 404 / BLOB_NOT_FOUND
    (Outcome.THROTTLED, GetResult.UNKNOWN_ERROR),  # 429
    (Outcome.UNAVAILABLE, GetResult.UNKNOWN_ERROR),  # >= 500
    (Outcome.CONFLICT, THROWS),  # any other status: throw e
    (Outcome.PRECONDITION_FAILED, THROWS),
    (Outcome.TIMEOUT, THROWS),  # no BlobStorageException: not caught at all
]
# (creating, outcome, throttled_result, the Java's UpsertResult) for a conditional write
UPSERT_ROWS = [
    (True, Outcome.OK, True, UpsertResult.SUCCESS),
    (True, Outcome.PRECONDITION_FAILED, True, UpsertResult.UNKNOWN_ERROR),  # Azure's 409 BlobAlreadyExists
    (True, Outcome.CONFLICT, True, UpsertResult.UNKNOWN_ERROR),  # 409
    (True, Outcome.THROTTLED, True, UpsertResult.THROTTLED),  # 429 (PR #18439)
    (True, Outcome.THROTTLED, False, UpsertResult.UNKNOWN_ERROR),  # 429 before PR #18439 (7bd19f0e)
    (True, Outcome.UNAVAILABLE, True, UpsertResult.UNKNOWN_ERROR),  # 5xx
    (True, Outcome.TIMEOUT, True, UpsertResult.UNKNOWN_ERROR),  # catch (Exception e): no rethrow on create
    (True, Outcome.NOT_FOUND, True, UpsertResult.UNKNOWN_ERROR),  # any other status
    (False, Outcome.OK, True, UpsertResult.SUCCESS),
    (False, Outcome.PRECONDITION_FAILED, True, UpsertResult.ACQUIRED_BY_OTHERS),  # If-Match: 412
    (False, Outcome.CONFLICT, True, UpsertResult.UNKNOWN_ERROR),
    (False, Outcome.THROTTLED, True, UpsertResult.THROTTLED),
    (False, Outcome.THROTTLED, False, UpsertResult.UNKNOWN_ERROR),
    (False, Outcome.UNAVAILABLE, True, UpsertResult.UNKNOWN_ERROR),
    (False, Outcome.TIMEOUT, True, UpsertResult.UNKNOWN_ERROR),
    (False, Outcome.NOT_FOUND, True, UpsertResult.UNKNOWN_ERROR),
]


@pytest.mark.parametrize("outcome,expected", READ_ROWS)
def test_azure_read_results_follow_the_java(outcome: Outcome, expected: GetResult | None) -> None:
    if expected is THROWS:
        with pytest.raises(LockClientError) as raised:
            read_result("azure", outcome)
        kind = "RuntimeException" if outcome is Outcome.TIMEOUT else "BlobStorageException"
        assert str(raised.value).startswith(f"{kind} on read")
    else:
        assert read_result("azure", outcome) is expected


@pytest.mark.parametrize("creating,outcome,throttled,expected", UPSERT_ROWS)
def test_azure_upsert_results_follow_the_java(creating: bool, outcome: Outcome, throttled: bool,
                                              expected: UpsertResult) -> None:
    assert upsert_result("azure", outcome, creating, throttled) is expected


def test_every_answer_has_a_row() -> None:
    assert {o for o, _ in READ_ROWS} == set(Outcome)
    for creating in (True, False):
        assert {o for c, o, _, _ in UPSERT_ROWS if c is creating} == set(Outcome)


# ---- the provider on Azure ------------------------------------------------------------------------


def test_a_lost_create_reply_is_unknown_and_the_next_poll_reads_its_own_lock() -> None:
    """S3 rethrows a client-side failure of a create (the transaction fails); Azure's client returns
    UNKNOWN_ERROR, so tryLock(wait) polls on and finds its own lock, valid, held "by" itself."""
    d = Driver(flavor="azure")
    p = provider(d)
    d.script("404", "lost")
    assert d.run(p.try_lock_once()) is False
    assert d.recorded("try-lock", "fail")[0].value["reason"] == "write-unknown"
    assert isinstance(d.requests[1], CreateIfAbsent) and d.lock_data() is not None
    d.script("200")
    assert d.run(p.try_lock_once()) is False
    assert d.recorded("try-lock", "fail")[-1].value["holder"] == p.owner


def test_losing_a_create_race_is_unknown_error_not_acquired_by_others() -> None:
    d = Driver(flavor="azure")
    p = provider(d)
    d.script("404", "412")  # another writer created it between our read and our create: 409 BlobAlreadyExists
    assert d.run(p.try_lock_once()) is False
    assert d.recorded("try-lock", "fail")[0].value["reason"] == "write-unknown"
    d3 = Driver(flavor="s3")
    q = provider(d3)
    d3.script("404", "412")
    assert d3.run(q.try_lock_once()) is False
    assert d3.recorded("try-lock", "fail")[0].value["reason"] == "precondition-failed"  # S3: 412


def test_an_overwrite_that_lost_the_race_is_acquired_by_others() -> None:
    d = Driver(flavor="azure")
    other_lock(d, expired=True)
    p = provider(d)
    d.script("200", "412")
    assert d.run(p.try_lock_once()) is False
    assert d.recorded("try-lock", "fail")[0].value["reason"] == "precondition-failed"
    assert isinstance(d.requests[1], ReplaceIfMatch)


def test_a_409_read_throws() -> None:
    d = Driver(flavor="azure")
    p = provider(d)
    d.script("409")
    with pytest.raises(LockClientError, match="BlobStorageException on read"):
        d.run(p.try_lock_once())


def test_the_azure_store_versions_are_etags() -> None:
    d = Driver(flavor="azure")
    p = provider(d)
    d.script("404", "200", "404")
    assert d.run(p.try_lock_once()) is True
    assert p.lock is not None and p.lock.version.startswith('"0x')


# ---- simulated runs --------------------------------------------------------------------------------


def test_a_simulated_azure_run_is_safe_and_uses_the_azure_client_settings() -> None:
    scenario = loader.load("rfc91-safe", ['storage.flavor="azure"'])
    assert client_settings(scenario).timeout_ms == 60_000 and client_settings(scenario).sdk_retries == 0
    events = SimWorld(scenario).run()
    assert check_lock_history(events, scenario.checkers).verdict == "ok"
    acquirers = {e.node for e in events if e.f == "acquire" and e.type == "ok"}
    assert len(acquirers) == 3
    versions = [e.value["version"] for e in events if e.process == "store" and e.f == "lock-file"]
    assert versions and all(v.startswith('"0x') for v in versions)
    assert SimWorld(scenario).run() == events  # one seed, one history


def test_a_simulated_azure_long_pause_still_overlaps() -> None:
    scenario = loader.load("rfc91-long-pause", ['storage.flavor="azure"'])
    verdict = check_lock_history(SimWorld(scenario).run(), scenario.checkers)
    assert "overlap" in {v.kind for v in verdict.violations}


def test_storage_flavor_azure_runs_where_it_used_to_crash() -> None:
    """Before the Azure client was modelled, any Azure answer the provider looked at raised KeyError."""
    sc = Scenario(storage=StorageConfig(flavor="azure"))
    sc.validate()
    assert client_settings(sc).timeout_ms == 60_000
    with pytest.raises(LockClientError):
        upsert_result("gcs", Outcome.TIMEOUT, True, True)  # GCS still rethrows
    LockClientError("azure", "read", Outcome.CONFLICT)  # no KeyError for the flavor
