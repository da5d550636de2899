"""Hudi's own StorageBasedLockProvider on fake-gcs-server: the ``hudi`` world with ``storage.flavor = "gcs"``.

Each node's JVM runs Hudi's provider (the pinned jars) over the driver's GCS lock client
(``backends/hudi/driver/hcc/driver/GcsLockClient.java``: Hudi's ``GCSStorageLockClient`` as read at
apache/hudi 54cb1a57, written again against google-cloud-storage 2.63.0 over its HTTP transport), every
request through the fault proxy to a launched fake-gcs-server. A short two-writer run of ``rfc91-safe``
(validity 10 s, renewals every second, no faults, no clock skew) must be safe with both writers acquiring,
its lock writes conditional uploads (``ifGenerationMatch``, 0 for a create) as the model's GCS client's.
"""

from __future__ import annotations

from pathlib import Path

from backends.endpoint import Endpoint
from backends.fixtures import fake_gcs_endpoint  # noqa: F401
from backends.hudi.artifacts import default_version
from backends.hudi.world import HudiRunResult, run_hudi_world
from scenarios import loader

PREFIX = "hcc-hudi-gcs/"
SHORT = ['storage.flavor="gcs"', "lock.validity_secs=10", "lock.renew_interval_secs=1", "clocks={}",
         "faults.errors=[]", "faults.pauses=[]", "lock.wait_time_ms=2000",
         "lock.client_wait_ms_between_retry=200"]


def run(ep: Endpoint, tmp_path: Path, sets: list[str]) -> HudiRunResult:
    scenario = loader.load("rfc91-safe", SHORT + sets)
    return run_hudi_world(scenario, ep, version=default_version(), prefix=PREFIX, log_dir=tmp_path)


def test_two_writers_run_hudis_provider_on_fake_gcs(fake_gcs_endpoint: Endpoint,  # noqa: F811
                                                    tmp_path: Path) -> None:
    res = run(fake_gcs_endpoint, tmp_path, ["duration_ms=12000", "workload.writers=2"])
    result = res.result
    assert result.verdict.verdict == "ok", [v.message for v in result.verdict.violations]
    assert {e.node for e in result.events if e.f == "acquire" and e.type == "ok"} == {"w1", "w2"}
    # Hudi's client reads the lock object's metadata, then its media: the first read finds none
    reads = [x for x in res.exchanges if x.method == "GET" and x.key.endswith("table_lock.json")]
    assert reads[0].status == 404 and all(x.status in (200, 404) for x in reads)
    # its lock writes are multipart uploads (POST), their bodies gzipped by google-http-client
    assert [x for x in res.exchanges if x.method == "POST" and x.body[:2] == b"\x1f\x8b"]
    assert res.jvms["w1"]["jvms"] == res.jvms["w2"]["jvms"] == 1
    assert all(n["peak_rss_mb"] < 512 for n in res.jvms.values()), res.jvms
    assert result.proxy_actions == {"forward": len(res.exchanges)}


def test_the_jvms_lock_writes_are_judged(fake_gcs_endpoint: Endpoint,  # noqa: F811
                                         tmp_path: Path) -> None:
    # the proxy names a gzipped multipart upload's object, and each successful lock upload is a store event
    # with its generation chain: a create (ifGenerationMatch=0) replaces nothing, each renewal or release
    # replaces the generation before it
    res = run(fake_gcs_endpoint, tmp_path, ["duration_ms=8000", "workload.writers=1"])
    writes = [x for x in res.exchanges if x.method == "POST" and x.key.endswith("table_lock.json")
              and x.status == 200]
    assert writes, "the proxy saw no lock write"
    lock_files = [e for e in res.result.events if e.process == "store" and e.f == "lock-file"]
    assert len(lock_files) == len(writes)
    assert all(e.value["observed"] == "proxy" and e.value["version"].isdigit() for e in lock_files)
    assert lock_files[0].value["replaces"] is None
    for before, after in zip(lock_files, lock_files[1:], strict=False):
        assert after.value["replaces"] in (None, before.value["version"])
    assert any(e.value["expired"] for e in lock_files)  # the release expires the lock file
    assert res.result.verdict.verdict == "ok"
