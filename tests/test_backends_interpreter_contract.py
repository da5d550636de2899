"""The interpreter contract through a real server: a lost acquire reply, decided alike in both worlds.

The lock workload runs in simulation and in the real-world interpreter on fake-gcs-server with the
fault proxy in front; the fault is one error rule (a lost reply of the lock's first write) that the
simulated network and the proxy match with the same code (``model/runtime/faults.py``), and the client's
retry is the same policy (``model/runtime/client.py``).  Under ``412-recovery`` both worlds go the same way
(retry, ambiguous 412, re-read, adopt); under ``hudi`` both give up on the ambiguous 412.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from backends.endpoint import Endpoint
from backends.fixtures import fake_gcs_endpoint  # noqa: F401
from backends.realworld import run_realworld
from model.config import Dist, ErrorRule, FaultPlan, LockConfig, Scenario, StorageConfig, WorkloadConfig
from model.runtime.sim import SimWorld

pytestmark = pytest.mark.backends


def lost_reply_scenario() -> Scenario:
    """One writer of the 412-recovery variant whose first lock write loses its reply."""
    return Scenario(
        name="contract-lost-reply", duration_ms=4_000, seed=3,
        lock=LockConfig(variant="412-recovery", validity_secs=10, renew_interval_secs=1, base_path="t"),
        storage=StorageConfig(flavor="gcs", timeout_ms=1_000, sdk_retries=1, retry_backoff_ms=20),
        workload=WorkloadConfig(writers=1, work_ms=Dist("fixed", 50), think_ms=Dist("fixed", 200),
                                start_ms=Dist("fixed", 0), register_key="t/register"),
        faults=FaultPlan(errors=(ErrorRule(node="w1", key="lock", method="write", status="lost-reply",
                                           count=1),)),
    )


def first_hold(events: list) -> list[tuple[str, str]]:
    """The writer's steps from its first acquire to its first release: (f, type)."""
    steps = [(e.f, e.type) for e in events if e.process == "w1"]
    end = steps.index(("release", "ok")) + 1
    return steps[:end]


def test_a_lost_acquire_reply_is_recovered_alike(fake_gcs_endpoint: Endpoint, tmp_path: Path) -> None:  # noqa: F811
    sc = lost_reply_scenario()
    sim = SimWorld(sc).run()
    real = run_realworld(sc, fake_gcs_endpoint, prefix="contract-lr/", log_dir=tmp_path).events
    assert first_hold(sim) == first_hold(real)
    assert ("recover-412", "ok") in first_hold(real)
    fails = [e.value for e in real if e.f == "try-lock" and e.type == "fail"]
    assert not fails  # the retry's 412 was recognised as our own write, not a lost race


def test_without_recovery_the_worlds_agree_on_the_failure(fake_gcs_endpoint: Endpoint,  # noqa: F811
                                                          tmp_path: Path) -> None:
    sc = lost_reply_scenario()
    sc = dataclasses.replace(sc, lock=dataclasses.replace(sc.lock, variant="hudi"), duration_ms=2_500)
    sim = [(e.f, e.type, e.value.get("reason"), e.value.get("phase"))
           for e in SimWorld(sc).run() if e.process == "w1" and e.f == "try-lock"]
    real = [(e.f, e.type, e.value.get("reason"), e.value.get("phase"))
            for e in run_realworld(sc, fake_gcs_endpoint, prefix="contract-lr2/", log_dir=tmp_path).events
            if e.process == "w1" and e.f == "try-lock"]
    # the first attempt: the client's retry meets the lock file its lost first attempt created (412) and
    # Hudi's provider gives up; then it polls and finds its own lock, held until validUntil + 500 ms
    # (longer than this run)
    assert sim[0] == real[0] and sim[0][:3] == ("try-lock", "fail", "precondition-failed")
    assert {s[2] for s in sim[1:]} == {s[2] for s in real[1:]} == {"held"}
