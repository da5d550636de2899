"""Hudi's Azure storage lock client (docs/fidelity.md Z1-Z5) against a launched Azurite.

The provider's own generators run against Azurite through ``backends/azure_blob.py`` (the same code as
the simulation, the answers real): every answer the lock client sees is mapped as
``AzureStorageLockClient`` (apache/hudi 54cb1a57) maps it.  Azurite answers a create on an existing blob
with 409 BlobAlreadyExists (which the backend reports as PRECONDITION_FAILED, keeping the raw 409), and
Hudi's client reads that as UNKNOWN_ERROR; an If-Match on a moved ETag is 412 ConditionNotMet:
ACQUIRED_BY_OTHERS.  Then a whole real-world run of the lock workload with ``storage.flavor = "azure"``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from lockdriver import Driver

from backends.endpoint import Endpoint
from backends.fixtures import azurite_endpoint  # noqa: F401
from backends.realworld import clear_prefix, run_realworld
from model.config import LockConfig
from model.lock.lockfile import LockData
from model.lock.provider import StorageLockProvider
from model.lock.storage_clients import UpsertResult, upsert_result
from model.runtime.effects import CreateIfAbsent, Outcome, ReplaceIfMatch, StorageEffect, StoreResult
from scenarios import loader

PREFIX = "hcc-azure-lock/"


class AzuriteDriver(Driver):
    """The scripted driver's clocks and tasks, but every storage request goes to Azurite."""

    def __init__(self, backend: Any) -> None:
        super().__init__(flavor="azure", now=int(time.time() * 1000))
        self.backend = backend
        self.raw: list[list[Any]] = []

    def _storage(self, effect: StorageEffect) -> StoreResult:
        self.requests.append(effect)
        result: StoreResult = self.backend.perform(effect)
        self.raw.append(self.backend.last_answers())
        return result


def provider(d: Driver, owner: str) -> StorageLockProvider:
    config = LockConfig(base_path=f"{PREFIX}t", validity_secs=60, renew_interval_secs=5, audit=False)
    return StorageLockProvider(config, lambda: owner, "azure")


def test_hudis_azure_client_reads_azurites_answers(azurite_endpoint: Endpoint) -> None:  # noqa: F811
    clear_prefix(azurite_endpoint, PREFIX)
    backend = azurite_endpoint.backend(PREFIX)
    d = AzuriteDriver(backend)
    a, b = provider(d, "owner-a"), provider(d, "owner-b")
    assert d.run(a.try_lock_once()) is True  # read 404, create (If-None-Match: *), enable-file read 404
    assert [type(r).__name__ for r in d.requests] == ["Read", "CreateIfAbsent", "Read"]
    assert a.lock is not None and a.lock.version.startswith('"0x')  # an Azure ETag
    # b finds a's lock valid: "Lock already held by owner-a", no write
    assert d.run(b.try_lock_once()) is False
    assert d.recorded("try-lock", "fail")[-1].value["holder"] == "owner-a"
    # a create racing a's: Azurite says 409 BlobAlreadyExists; Hudi's client: UNKNOWN_ERROR
    body = LockData(False, d.now + 60_000, "owner-b").encode()
    lost = backend.perform(CreateIfAbsent(a.key, body))
    raw = backend.last_answers()
    assert lost.outcome is Outcome.PRECONDITION_FAILED
    assert (raw[0].status, raw[0].code) == (409, "BlobAlreadyExists")
    assert upsert_result("azure", lost.outcome, True, True) is UpsertResult.UNKNOWN_ERROR
    # an If-Match on a version that moved on: 412 ConditionNotMet, ACQUIRED_BY_OTHERS
    stale = backend.perform(ReplaceIfMatch(a.key, body, '"0x1"'))
    raw = backend.last_answers()
    assert stale.outcome is Outcome.PRECONDITION_FAILED and raw[0].status == 412
    assert upsert_result("azure", stale.outcome, False, True) is UpsertResult.ACQUIRED_BY_OTHERS
    # a's renewal and release over the real ETags
    before = a.lock.version
    assert d.run(a.renew()) is True and a.lock.version != before
    assert d.run(a.unlock()) is True and a.lock is None
    final = backend.perform(CreateIfAbsent(a.key, body))
    assert final.outcome is Outcome.PRECONDITION_FAILED  # the expired lock file stays (Hudi never deletes)
    assert d.run(b.try_lock_once()) is True  # b overwrites the expired file with If-Match
    assert isinstance(d.requests[-2], ReplaceIfMatch)


def test_a_real_world_azure_run_keeps_the_lock(azurite_endpoint: Endpoint, tmp_path: Path) -> None:  # noqa: F811
    sc = loader.load("rfc91-safe", [
        'storage.flavor="azure"', "lock.validity_secs=4", "lock.renew_interval_secs=1",
        "lock.enforce_hudi_limits=false", "storage.timeout_ms=800", "lock.wait_time_ms=10000",
        "duration_ms=10000", "workload.writers=2", "clocks={}"])
    res = run_realworld(sc, azurite_endpoint, prefix="rw-azure/", log_dir=tmp_path)
    assert res.verdict.verdict == "ok", [v.message for v in res.verdict.violations]
    acquirers = {e.node for e in res.events if e.f == "acquire" and e.type == "ok"}
    assert acquirers == {"w1", "w2"}
    lock_files = [e for e in res.events if e.process == "store" and e.f == "lock-file"]
    assert lock_files and all(e.value["version"].startswith('"0x') for e in lock_files)
    assert any(e.value["expired"] for e in lock_files)  # releases expired the file
