"""Hudi's own StorageBasedLockProvider on Azurite: the ``hudi`` world with ``storage.flavor = "azure"``.

Each node's JVM runs Hudi's provider (the pinned jars) over the driver's Azure lock client
(``backends/hudi/driver/hcc/driver/AzureLockClient.java``: Hudi's ``AzureStorageLockClient`` as read at
apache/hudi 54cb1a57, written again against azure-storage-blob 12.25.1), every request through the fault
proxy to a launched Azurite 3.35.0. A short two-writer run of ``rfc91-safe`` (as the S3 smoke run: validity
10 s, renewals every second, no faults, no clock skew) must be safe with both writers acquiring; a
one-writer run shows how the client reads a lost create reply (UNKNOWN_ERROR, where S3's client throws)
and a 409 (UNKNOWN_ERROR: on a create, Azure's answer to a lost race, not ACQUIRED_BY_OTHERS).
"""

from __future__ import annotations

from pathlib import Path

from backends.endpoint import Endpoint
from backends.fixtures import azurite_endpoint  # noqa: F401
from backends.hudi.artifacts import default_version
from backends.hudi.world import HudiRunResult, run_hudi_world
from scenarios import loader

PREFIX = "hcc-hudi-azure/"
SHORT = ['storage.flavor="azure"', "lock.validity_secs=10", "lock.renew_interval_secs=1", "clocks={}",
         "faults.errors=[]", "faults.pauses=[]", "lock.wait_time_ms=2000",
         "lock.client_wait_ms_between_retry=200"]


def run(ep: Endpoint, tmp_path: Path, sets: list[str]) -> HudiRunResult:
    scenario = loader.load("rfc91-safe", SHORT + sets)
    return run_hudi_world(scenario, ep, version=default_version(), prefix=PREFIX, log_dir=tmp_path)


def jvm_log(tmp_path: Path) -> str:
    return "\n".join(p.read_text() for p in sorted(tmp_path.glob("jvm-*.log")))


def test_two_writers_run_hudis_provider_on_azurite(azurite_endpoint: Endpoint,  # noqa: F811
                                                   tmp_path: Path) -> None:
    res = run(azurite_endpoint, tmp_path, ["duration_ms=12000", "workload.writers=2"])
    result = res.result
    assert result.verdict.verdict == "ok", [v.message for v in result.verdict.violations]
    assert {e.node for e in result.events if e.f == "acquire" and e.type == "ok"} == {"w1", "w2"}
    lock_files = [e for e in result.events if e.process == "store" and e.f == "lock-file"]
    assert lock_files, "no lock-file store event"
    # the JVMs' writes, seen by the proxy, with Azure's ETags (Hudi's client keeps them quoted)
    assert all(e.value["observed"] == "proxy" and e.value["version"].startswith('"0x') for e in lock_files)
    assert any(e.value["expired"] for e in lock_files)  # releases expire the lock file
    writes = [x for x in res.exchanges if x.method == "PUT" and x.key.endswith("table_lock.json")]
    creates = [x for x in writes if x.if_none_match == "*"]
    assert all(x.if_match or x.if_none_match == "*" for x in writes)
    # one create took the lock; another writer's create that read 404 before it (a race the two writers
    # often run at the start) is Azurite's 409 BlobAlreadyExists, which Hudi's client reads as
    # UNKNOWN_ERROR (#handleUpsertBlobStorageException, 54cb1a57 lines 323-324, 330): tryLock polls on
    assert [x.status for x in creates] == [201] + [409] * (len(creates) - 1)
    assert not [e for e in result.events if e.f == "acquire" and e.type == "fail"]
    assert jvm_log(tmp_path).count("Lock file write answered 409 (BlobAlreadyExists)") == len(creates) - 1
    assert res.jvms["w1"]["jvms"] == res.jvms["w2"]["jvms"] == 1
    assert result.proxy_actions == {"forward": len(res.exchanges)}


def test_a_lost_create_reply_and_a_409_are_unknown_errors(azurite_endpoint: Endpoint,  # noqa: F811
                                                          tmp_path: Path) -> None:
    # w1 alone: its first lock write (the create) is applied and its reply lost; the first lock write
    # after 3 s (the overwrite of the create's lapsed lock, w1 writing nothing to the lock file before)
    # is answered 409 by the proxy, not applied
    res = run(azurite_endpoint, tmp_path, [
        "duration_ms=16000", "workload.writers=1", "workload.node_start_ms={w1=0}",
        'faults.errors=[{node="w1", key="lock", method="write", status="lost-reply", count=1}, '
        '{node="w1", key="lock", method="write", status="409", start_ms=3000, count=1}]'])
    result = res.result
    assert result.verdict.verdict == "ok", [v.message for v in result.verdict.violations]
    writes = [x for x in res.exchanges if x.method == "PUT" and x.key.endswith("table_lock.json")]
    lost, conflict, taken = writes[:3]
    assert (lost.if_none_match, lost.action, lost.status) == ("*", "lost-reply", 201)  # Azurite applied it
    # AzureStorageLockClient#tryUpsertLockFile (54cb1a57, lines 235-237): the broken connection is no
    # HttpResponseException, so `catch (Exception e)` returns UNKNOWN_ERROR, on a create too (S3's client
    # rethrows a create's SdkClientException: the transaction would fail with it). tryLock returns false
    # and polls on: w1 then reads its own lock ("Lock already held by" itself) until it lapses
    assert not [e for e in result.events if e.f == "acquire" and e.type == "fail"]
    assert {e.value["after"] for e in result.events if e.f == "lock-retry"} == {"timeout"}
    # #handleUpsertBlobStorageException (lines 323-324, 330): 409 (Azure's BlobAlreadyExists to a create
    # that lost a race; here the proxy's) is UNKNOWN_ERROR, neither ACQUIRED_BY_OTHERS nor an exception
    assert (conflict.if_match, conflict.action) == (lost.version, "error-409")
    assert (taken.if_match, taken.action, taken.status) == (lost.version, "forward", 201)
    first = next(e for e in result.events if e.f == "acquire" and e.type == "ok")
    assert first.value["version"] == taken.version
    assert first.time >= lost.at_ms + 10_000 and conflict.at_ms >= lost.at_ms + 10_000  # after the lapse
    log = jvm_log(tmp_path)
    assert log.count("Unexpected error while writing lock file") == 1  # the lost reply, as Hudi logs it
    assert "Lock file write answered 409" in log
