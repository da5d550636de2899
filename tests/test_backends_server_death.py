"""A server that dies mid-run gives clear TIMEOUT/UNAVAILABLE outcomes and a failing report, never a hang."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from backends.client import call
from backends.conformance import run_suite
from backends.launchers.process import LaunchError, ServerProcess
from backends.registry import open_endpoint
from model.checkers import linearizable as lin
from model.runtime.client import RetryPolicy
from model.runtime.effects import CreateIfAbsent, Outcome, Read, StoreResult

pytestmark = pytest.mark.backends

DEAD = (Outcome.TIMEOUT, Outcome.UNAVAILABLE)


@pytest.mark.parametrize("name", ["fake-gcs", "moto", "azurite"])
def test_killed_server_gives_unknown_outcomes_quickly(name: str) -> None:
    with open_endpoint(name) as ep:
        assert ep.process is not None
        b = ep.backend("t/", timeout_s=2)
        assert b.perform(CreateIfAbsent("t/a", b"1")).ok
        ep.process.kill()
        t0 = time.monotonic()
        res = call(b, CreateIfAbsent("t/b", b"1"), RetryPolicy(2, 10))
        assert res.outcome in DEAD
        assert res.attempts == 3 and res.ambiguous
        assert all(a.outcome in DEAD for a in b.last_answers())
        assert b.perform(Read("t/a")).outcome in DEAD
        assert time.monotonic() - t0 < 15
        b.close()


def test_server_killed_during_a_race_keeps_the_history_and_checks_it() -> None:
    with open_endpoint("fake-gcs") as ep:
        assert ep.process is not None
        b = ep.backend("race/", timeout_s=2)
        events: list[lin.OpEvent] = []
        results: list[StoreResult] = []
        lock = threading.Lock()
        stop = time.monotonic() + 20

        def client(i: int) -> None:
            n = 0
            while time.monotonic() < stop:
                body = f"c{i}-{n}".encode()
                t0 = time.monotonic()
                res = b.perform(CreateIfAbsent(f"race/k{n}", body))
                t1 = time.monotonic()
                with lock:
                    results.append(res)
                    if n == 0:
                        lost = res.outcome is Outcome.PRECONDITION_FAILED
                        typ = "ok" if res.ok else ("fail" if lost else "info")
                        events.extend([lin.OpEvent(i, "invoke", "cas", (None, body), t0),
                                       lin.OpEvent(i, typ, "cas", None, t1)])
                if res.outcome in DEAD:
                    return
                n += 1

        threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(16)]
        for t in threads:
            t.start()
        time.sleep(1.0)
        ep.process.kill()
        for t in threads:
            t.join(timeout=30)
        assert not any(t.is_alive() for t in threads), "clients hang after the server died"
        assert {r.outcome for r in results} <= {Outcome.OK, Outcome.PRECONDITION_FAILED, *DEAD}
        assert sum(r.outcome in DEAD for r in results) >= 16
        # the history written before the crash is kept and still checkable
        assert len(events) == 32
        assert lin.check(events).valid
        b.close()


def test_conformance_on_a_dead_server_fails_clearly() -> None:
    with open_endpoint("fake-gcs") as ep:
        assert ep.process is not None
        ep.process.kill()
        t0 = time.monotonic()
        rep = run_suite("fake-gcs", ep, rounds=2, clients=4)
        print(rep.table())
        assert time.monotonic() - t0 < 60
        assert not rep.passed
        for p in rep.properties:
            assert not p.passed, p
        assert "TIMEOUT" in rep.property("create-existing").detail


def test_launcher_failure_points_at_the_log(tmp_path: Path) -> None:
    proc = ServerProcess("broken", ["sh", "-c", "echo cannot bind port; exit 3"], tmp_path / "broken.log")
    proc.start()
    with pytest.raises(LaunchError) as err:
        proc.wait_ready(lambda: False, 5)
    assert "broken.log" in str(err.value) and "cannot bind port" in str(err.value)
    slow = ServerProcess("slow", ["sleep", "30"], tmp_path / "slow.log")
    slow.start()
    t0 = time.monotonic()
    with pytest.raises(LaunchError, match="not ready after 0.5s"):
        slow.wait_ready(lambda: False, 0.5)
    slow.stop()
    assert not slow.alive() and time.monotonic() - t0 < 10
