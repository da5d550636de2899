"""The lock catalogue's findings replayed on Apache Hudi's own StorageBasedLockProvider (the ``hudi`` world).

``hcc run ENTRY --world hudi --time-scale 30 --backend URL``: each node's lock is Hudi's provider from the
pinned jars (the newest pinned release) in a JVM of its own, over the harness's S3 lock client (Hudi's
``S3StorageLockClient`` written again: hudi-aws is not served by the Maven Central this project reaches),
every request through the fault proxy to one SeaweedFS launched for the module. Time scale 30: Hudi's
300 s lease becomes its 10 s minimum renewed every second; the 1 s poll, the 500 ms drift allowance and
the 15 s heartbeat stop do not scale.

Each run is shortened with ``--set duration_ms`` to where its finding shows, and the entries whose start
order matters give the other writers a later start. The world warms each JVM's lock path before the run
(a JVM's first call loads Hudi's and the SDK's classes, 0.4 to 1.8 s on a loaded 2-core machine), but a
scaled start offset of 33 to 200 ms is still short beside a thread's scheduling on a loaded machine.

Asserted: the verdict Hudi gives, with its mechanism where it is cheap to see in the history (the paused
node writes after its lease passed on; a lost create reply leaves ``tryLock`` as an SdkClientException
and the lock file names the failed owner until validUntil + 500 ms; the shutdown hook expires the lock and
another writer acquires before it would have lapsed; a holder whose renewals fail writes on until Hudi's
heartbeat interrupts it). What the world cannot express is refused with one line and exit 2.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from backends.endpoint import Endpoint
from backends.fixtures import minio_endpoint, seaweedfs_endpoint  # noqa: F401
from backends.hudi.artifacts import checksums, default_version, driver_classpath
from cli.main import main

SCALE = ["--world", "hudi", "--time-scale", "30"]
LATER = 90_000  # a later writer's start, unscaled (3 s at time scale 30)


def _url(ep: Endpoint) -> str:
    """The launched SeaweedFS as a ``--backend`` URL (credentials in the userinfo)."""
    assert ep.url is not None
    host = ep.url.split("://", 1)[1]
    return f"http://{ep.access_key}:{ep.secret_key}@{host}/{ep.bucket}"


def run(ep: Endpoint, out: Path, entry: str, *sets: str) -> tuple[int, dict[str, Any], list[dict[str, Any]]]:
    """``hcc run ENTRY --world hudi --time-scale 30`` on ``ep``: exit code, verdict.json, the history."""
    argv = ["run", entry, *SCALE, "--backend", _url(ep), "--out", str(out), "--json"]
    for s in sets:
        argv += ["--set", s]
    code = main(argv)
    verdict = json.loads((out / "verdict.json").read_text())
    history = [json.loads(line) for line in (out / "history.jsonl").read_text().splitlines() if line.strip()]
    return code, verdict, history


def of(history: list[dict[str, Any]], f: str, type_: str | None = None, node: str | None = None,
       process: str | None = None) -> list[dict[str, Any]]:
    return [e for e in history if e["f"] == f and (type_ is None or e["type"] == type_)
            and (node is None or e["node"] == node) and (process is None or e["process"] == process)]


def owners_of(history: list[dict[str, Any]], node: str) -> set[str]:
    """The owner ids of ``node``'s providers (one per transaction)."""
    return {e["value"]["owner"] for e in of(history, "acquire", "ok", node)}


def kinds(verdict: dict[str, Any]) -> set[str]:
    return {v["kind"] for v in verdict["violations"]}


def test_rfc91_safe_is_safe_on_hudi(seaweedfs_endpoint: Endpoint, tmp_path: Path,  # noqa: F811
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Safe, as in the model; a release whose expire write fails (503 or a timeout) throws FAILED_TO_RELEASE
    and its lock dangles. Clock drift is refused (a JVM's clock can only be offset): 40 ppm over the
    scaled minute is 2.4 ms, so it is set to 0. 22 s scaled: both pauses (w2's at 600 s) fall inside."""
    version = default_version()
    code, verdict, history = run(seaweedfs_endpoint, tmp_path / "safe", "rfc91-safe", "duration_ms=660000",
                                 "clocks.w1.drift_ppm=0", "clocks.w2.drift_ppm=0")
    capsys.readouterr()
    assert code == 0 and verdict["verdict"] == "ok", [v["message"] for v in verdict["violations"]]
    assert verdict["matches_expectation"] and verdict["world"] == "hudi"
    assert verdict["hudi"]["version"] == version and verdict["hudi"]["time_scale"] == 30
    # the sha256 of each Hudi jar that ran: the pins, and the files on the driver's classpath
    jars = verdict["hudi"]["jars"]
    assert jars and jars == checksums(version)
    assert all(re.fullmatch(r"[0-9a-f]{64}", h) for h in jars.values())
    by_name = {p.name: p for p in driver_classpath(version)}
    for coordinate, sha in jars.items():
        _group, artifact, v = coordinate.split(":")
        assert hashlib.sha256(by_name[f"{artifact}-{v}.jar"].read_bytes()).hexdigest() == sha
    assert set(verdict["hudi"]["jvms"]) == {"w1", "w2", "w3"}
    assert f"Hudi {version}'s StorageBasedLockProvider" in verdict["models"]
    assert "times / 30" in verdict["models"]
    assert verdict["proxy"].get("error-503", 0) > 0  # the transient errors were applied (5 % of requests)
    assert of(history, "pause-start", process="nemesis")  # and a pause
    failed = of(history, "release-failed", "info")
    dangling = [f for f in verdict["findings"] if f["kind"] == "dangling-lock"]
    assert all("FAILED_TO_RELEASE" in e["value"]["error"] for e in failed)
    if failed:  # an expire write that got a 503 or timed out: the lock file still names its owner
        assert any(f["details"]["cause"] == "release" for f in dangling)


@pytest.mark.parametrize("server", ["seaweedfs", "minio"])
def test_rfc91_long_pause_overlaps_on_hudi(server: str, tmp_path: Path, request: pytest.FixtureRequest,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A violation, as in the model, on SeaweedFS and on MinIO (the card's S3 server; skipped, with the
    reason, where it cannot be built): w1's JVM is stopped (SIGSTOP) for 13.3 s, longer than the 10 s
    lease, at its first register write after 2 s; the lock passes on, and the write lands when w1 wakes.
    The others start at 3 s: with the fixed 1 s poll against scaled think times of 0-33 ms, a writer
    that polls while two others take turns may wait 15 s for its first acquisition."""
    endpoint: Endpoint = request.getfixturevalue(f"{server}_endpoint")
    code, verdict, history = run(endpoint, tmp_path / "pause", "rfc91-long-pause",
                                 "duration_ms=600000", "workload.node_start_ms.w1=0",
                                 f"workload.node_start_ms.w2={LATER}", f"workload.node_start_ms.w3={LATER}")
    capsys.readouterr()
    assert code == 0 and verdict["verdict"] == "violation"
    assert {"overlap", "stale-write"} <= kinds(verdict)
    w1 = owners_of(history, "w1")
    (woke,) = [e["time"] for e in of(history, "pause-end", process="nemesis", node="w1")]
    stale = [v["details"] for v in verdict["violations"] if v["kind"] == "stale-write"]
    # the stale write is the paused holder's, sent after it woke, over another owner's lock
    assert stale and all(d["writer"] in w1 and d["holder"] not in w1 and d["time"] >= woke for d in stale)
    overlaps = [v["details"] for v in verdict["violations"] if v["kind"] == "overlap"]
    assert overlaps and all("w1" in d["nodes"] for d in overlaps)
    assert not verdict["violations"][0]["audit_visible"]  # Hudi's audit validator does not see it


def test_rfc91_lost_reply_throws_and_the_lock_dangles_on_hudi(seaweedfs_endpoint: Endpoint,  # noqa: F811
                                                              tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Safe, as in the model: w2's create is applied but its reply lost; the client (one attempt) throws an
    SdkClientException out of tryLock, and the lock file names w2's failed provider until it lapses: a
    dangling-lock finding. The proxy closes the connection at once, so the exception comes at once (the
    model waits the timeout)."""
    code, verdict, history = run(seaweedfs_endpoint, tmp_path / "lost", "rfc91-lost-reply",
                                 "duration_ms=450000", f"workload.node_start_ms.w1={LATER}",
                                 f"workload.node_start_ms.w3={LATER}")
    capsys.readouterr()
    assert code == 0 and verdict["verdict"] == "ok", [v["message"] for v in verdict["violations"]]
    assert verdict["proxy"].get("lost-reply") == 1
    (failed,) = [e for e in of(history, "try-lock", "fail", "w2") if e["value"]["reason"] == "exception"]
    assert "SdkClientException" in failed["value"]["error"]
    owner = failed["value"]["owner"]
    (created,) = [e for e in of(history, "lock-file", process="store")
                  if e["value"]["owner"] == owner and e["time"] <= failed["time"]]
    assert created["value"]["replaces"] is None and not created["value"]["expired"]  # the applied create
    later = [e for e in of(history, "acquire", "ok") if e["index"] > failed["index"]]
    assert later and all(e["value"]["owner"] != owner for e in later)  # nobody adopts the dangling lock
    # the dangling-lock checker names it: tryLock threw while the lock file named its owner
    dangling = [f["details"] for f in verdict["findings"] if f["kind"] == "dangling-lock"]
    assert any(d["owner"] == owner and d["cause"] == "acquire" for d in dangling)
    # everyone, w2's next provider included, waits until validUntil + 500 ms by its own clock
    assert later[0]["clock"] >= created["value"]["valid_until"] + 500


def test_rfc91_graceful_shutdown_expires_the_lock_on_hudi(seaweedfs_endpoint: Endpoint,  # noqa: F811
                                                          tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Safe, as in the model: SIGTERM to the holder's JVM runs Hudi's shutdown hook, which writes the lock
    file expired; another writer acquires at its next poll, long before the lease would have lapsed.
    The shutdown at 3 s (90 s unscaled), the others from 1.5 s: w1 holds (its JVM warmed up alone)."""
    code, verdict, history = run(seaweedfs_endpoint, tmp_path / "term", "rfc91-graceful-shutdown",
                                 "duration_ms=300000", "workload.node_start_ms.w2=45000",
                                 "workload.node_start_ms.w3=45000", "faults.shutdowns.0.at_ms=90000")
    capsys.readouterr()
    assert code == 0 and verdict["verdict"] == "ok", [v["message"] for v in verdict["violations"]]
    (shutdown,) = of(history, "shutdown", process="nemesis", node="w1")
    files = of(history, "lock-file", process="store")
    held = [e for e in files if e["index"] < shutdown["index"]][-1]["value"]
    assert held["owner"] in owners_of(history, "w1") and not held["expired"]  # w1 held the lock
    expired = next(e for e in files if e["index"] > shutdown["index"])
    assert expired["node"] == "w1" and expired["value"]["expired"]
    assert expired["value"]["owner"] == held["owner"]  # written by the shutdown hook of w1's provider
    nxt = next(e for e in of(history, "acquire", "ok") if e["index"] > expired["index"])
    assert nxt["node"] != "w1" and nxt["clock"] < held["valid_until"]  # at once, not after the lease lapsed


def test_rfc91_renewals_fail_writes_on_until_interrupted_on_hudi(seaweedfs_endpoint: Endpoint,  # noqa: F811
                                                                 tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A violation, as in the model: w1's renewals get 503 (UNKNOWN_ERROR: renewLock returns true), so it
    writes on after a contender took the lapsed lock, until a renewal after the errors gets 412 and
    Hudi's heartbeat interrupts it. The others start at 3 s and the errors run from 3 s to 14.7 s (the
    entry's 350 s window): w1 must hold its lease first (see the module doc)."""
    code, verdict, history = run(seaweedfs_endpoint, tmp_path / "renew", "rfc91-renewals-fail",
                                 "duration_ms=540000",
                                 *(f"workload.node_start_ms.{n}={LATER}" for n in ("w2", "w3", "w4")),
                                 f"faults.errors.0.start_ms={LATER}", "faults.errors.0.end_ms=440000")
    capsys.readouterr()
    assert code == 0 and verdict["verdict"] == "violation"
    assert {"overlap", "stale-write"} <= kinds(verdict)
    assert verdict["proxy"].get("error-503", 0) >= 5  # renewals failed
    (interrupted,) = of(history, "interrupted", "info", "w1")  # the heartbeat's 412 interrupted the writer
    overlaps = [v["details"] for v in verdict["violations"]
                if v["kind"] == "overlap" and "w1" in v["details"]["nodes"]]
    assert overlaps and all(d["end"] <= interrupted["time"] for d in overlaps)
    assert max(d["end"] for d in overlaps) == interrupted["time"]  # the overlap lasted until that interrupt
    w1 = owners_of(history, "w1")
    stale = [v["details"] for v in verdict["violations"] if v["kind"] == "stale-write"]
    assert stale and all(d["writer"] in w1 and d["time"] <= interrupted["time"] for d in stale)


@pytest.mark.parametrize(("entry", "named"), [
    ("rfc91-fenced-long-pause", "lock.variant = 'fenced'"),
    ("rfc91-failed-release-reuse-pr-13577", "lock.variant = 'pr-13577'"),
    ("rfc91-lost-reply-hudi-1.1", "lock.variant = 'hudi-1.1'"),
    ("rfc91-lost-reply-recovery", "lock.variant = '412-recovery'"),
    ("rfc91-hypothetical-careful-margin", "lock.variant = 'careful-margin'"),
    ("rfc91-hypothetical-careful-writer", "workload.check_before_write"),
    ("rfc91-heartbeat-start-failure", "faults.heartbeat_start_failures"),
    ("rfc91-safe", "clocks.w1"),  # its clock drifts
])
def test_what_the_hudi_world_cannot_express_is_one_line_and_exit_2(
        entry: str, named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", entry, *SCALE, "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert named in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_an_unpinned_hudi_version_is_one_line_and_exit_2(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "x")
    assert main(["run", "rfc91-long-pause", *SCALE, "--hudi-version", "9.9", "--out", out]) == 2
    err = capsys.readouterr().err
    assert "'9.9'" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
