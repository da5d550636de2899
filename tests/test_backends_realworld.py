"""Real-world runs: the lock workload on threads and real clocks against fake-gcs-server via the proxy."""

from __future__ import annotations

import argparse
import json
import threading
import time
from pathlib import Path

import pytest

from backends.endpoint import Endpoint
from backends.fixtures import fake_gcs_endpoint  # noqa: F401
from backends.hudi_audit import read_backend, validate
from backends.realworld import clear_prefix, merge_histories, run_node, run_realworld
from backends.registry import open_endpoint
from cli import realworld as cmd_realworld
from model.checkers.lock_run import check_lock_history
from model.runtime.effects import Put
from model.runtime.history import loads
from scenarios import loader

# validity of a few seconds; Hudi's limits off; client timeout well below the renew interval
SHORT = ["lock.validity_secs=4", "lock.renew_interval_secs=1", "lock.enforce_hudi_limits=false",
         "storage.timeout_ms=400", "lock.wait_time_ms=10000"]


def _acquirers(events: list) -> set[str]:  # type: ignore[type-arg]
    return {e.node for e in events if e.f == "acquire" and e.type == "ok"}


def test_rfc91_safe_shows_no_violation(fake_gcs_endpoint: Endpoint, tmp_path: Path) -> None:  # noqa: F811
    sc = loader.load("rfc91-safe", [*SHORT, "duration_ms=12000"])
    res = run_realworld(sc, fake_gcs_endpoint, prefix="rw-safe/", log_dir=tmp_path)
    assert res.verdict.verdict == "ok", [v.message for v in res.verdict.violations]
    assert len(_acquirers(res.events)) >= 2
    writes = [e for e in res.events if e.process == "store" and e.f == "register"]
    assert len(writes) >= 3 and all(e.value["observed"] == "client" for e in writes)
    assert res.events[0].f == "run-start" and res.events[-1].f == "run-end"
    assert res.proxy_actions.get("forward", 0) > 0  # the plan's error rules put the proxy in between
    assert (tmp_path / "proxy.log").is_file()
    # skew from the scenario's clocks: w2 reads ~240 ms ahead of w3's -200 ms
    w2 = [e.clock - e.time for e in res.events if e.node == "w2" and e.clock is not None]
    w3 = [e.clock - e.time for e in res.events if e.node == "w3" and e.clock is not None]
    assert min(w2) - max(w3) > 300


def test_long_pause_violates_in_the_real_world(fake_gcs_endpoint: Endpoint, tmp_path: Path) -> None:  # noqa: F811
    sc = loader.load("rfc91-long-pause", [
        *SHORT, "lock.validity_secs=3", "duration_ms=10000", "faults.pauses[0].at_ms=500",
        "faults.pauses[0].duration_ms=5000", "workload.work_ms.hi=300", "workload.think_ms.hi=0",
        # w1 alone until 1 s, and with no think time it keeps the lock (the others poll once a second),
        # so its first write after 500 ms pauses
        "workload.node_start_ms.w1=0", "workload.node_start_ms.w2=1000", "workload.node_start_ms.w3=1000"])
    res = run_realworld(sc, fake_gcs_endpoint, prefix="rw-pause/", log_dir=tmp_path)
    assert res.verdict.verdict == "violation"
    kinds = {v.kind for v in res.verdict.violations}
    assert "overlap" in kinds
    pause = next(e for e in res.events if e.f == "pause-start")
    assert pause.node == "w1" and pause.time < 1500
    assert any(e.f == "pause-start" and e.node == "w1" for e in res.events)


def test_one_writer_per_call_merges_into_one_history(fake_gcs_endpoint: Endpoint,  # noqa: F811
                                                     tmp_path: Path) -> None:
    sc = loader.load("rfc91-safe", [*SHORT, "workload.writers=2", "clocks={}"])
    url = f"gs+{fake_gcs_endpoint.url}/{fake_gcs_endpoint.bucket}"
    clear_prefix(fake_gcs_endpoint, "rw-node/")
    start = time.time() + 0.5
    out: dict[str, list] = {}  # type: ignore[type-arg]

    def one(node: str) -> None:
        out[node] = run_node(sc, node, url, prefix="rw-node/", duration_ms=6000, start_epoch=start,
                             log_dir=tmp_path / node)

    threads = [threading.Thread(target=one, args=(n,)) for n in ("w1", "w2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert set(out) == {"w1", "w2"}
    assert {e.node for e in out["w1"] if e.node != "-"} <= {"w1"}
    merged = merge_histories(list(out.values()))
    assert [e.index for e in merged] == list(range(len(merged)))
    assert all(a.time <= b.time for a, b in zip(merged, merged[1:], strict=False))
    assert _acquirers(merged) == {"w1", "w2"}
    assert check_lock_history(merged, sc.checkers).verdict == "ok"


def test_server_killed_mid_run_gives_a_clear_error_and_keeps_the_history(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with open_endpoint("fake-gcs") as ep:
        assert ep.process is not None and ep.url is not None
        killer = threading.Timer(3.0, ep.process.kill)
        killer.start()
        ap = argparse.ArgumentParser()
        cmd_realworld.register(ap.add_subparsers())
        out = tmp_path / "run"
        args = ap.parse_args(["realworld", "rfc91-safe", "--backend", f"gs+{ep.url}/{ep.bucket}",
                              "--out", str(out), *[x for s in SHORT for x in ("--set", s)],
                              "--set", "duration_ms=30000"])
        t0 = time.monotonic()
        code = args.func(args)
        elapsed = time.monotonic() - t0
        killer.join()
    assert code == 1
    assert elapsed < 25  # stopped by the dead server, not by the 30 s duration
    err = capsys.readouterr().err
    assert "storage server died mid-run" in err and "refuses connections" in err
    events = loads((out / "history.jsonl").read_text())
    assert events[0].f == "run-start" and any(e.f == "server-died" for e in events)
    assert any(e.f == "acquire" and e.type == "ok" for e in events)  # work done before the kill is kept
    verdict = json.loads((out / "verdict.json").read_text())
    assert verdict["error"] and verdict["matches_expectation"] is False


def test_a_real_world_run_leaves_its_table_and_audit_trail(fake_gcs_endpoint: Endpoint,  # noqa: F811
                                                           tmp_path: Path) -> None:
    ep = fake_gcs_endpoint
    ap = argparse.ArgumentParser()
    cmd_realworld.register(ap.add_subparsers())
    out = tmp_path / "run"
    args = ap.parse_args(["realworld", "rfc91-safe", "--backend", f"gs+{ep.url}/{ep.bucket}", "--prefix",
                          "rw-table/", "--out", str(out), *[x for s in SHORT for x in ("--set", s)],
                          "--set", "duration_ms=4000"])
    assert args.func(args) == 0
    table = out / "table"
    assert (table / ".hoodie" / ".locks" / "table_lock.json").is_file()
    trail = sorted((table / ".hoodie" / ".locks" / "audit").glob("*.jsonl"))
    assert trail  # Hudi's audit service wrote one file per transaction, as in simulation
    verdict = json.loads((out / "verdict.json").read_text())
    assert verdict["audit"] is not None and verdict["audit"]["windows"] >= 1


def test_audit_files_read_from_a_bucket(fake_gcs_endpoint: Endpoint) -> None:  # noqa: F811
    with fake_gcs_endpoint.backend("wh/") as b:
        folder = "wh/t1/.hoodie/.locks/audit/"
        a = ['{"ownerId":"a","transactionStartTime":1,"timestamp":1000,"state":"START","lockExpiration":9000,'
             '"lockHeld":true}',
             '{"ownerId":"a","transactionStartTime":1,"timestamp":5000,"state":"END","lockExpiration":9000,'
             '"lockHeld":false}']
        c = ['{"ownerId":"b","transactionStartTime":2,"timestamp":4000,"state":"START","lockExpiration":9000,'
             '"lockHeld":true}']
        assert b.perform(Put(folder + "1_a.jsonl", "\n".join(a).encode())).ok
        assert b.perform(Put(folder + "2_b.jsonl", "\n".join(c).encode())).ok
        result = validate(read_backend(b, "wh/t1"))
    assert result.result == "FAILED"
    assert [(o.earlier.owner, o.later.owner) for o in result.overlaps] == [("a", "b")]


@pytest.mark.parametrize("name,sets,marks", [
    ("rfc91-holder-crash", ["faults.crashes[0].at_ms=2000", "faults.crashes[0].restart_after_ms=2500"],
     {"crash", "restart"}),
    ("rfc91-writer-thread-dies", ["faults.writer_deaths[0].at_ms=2000", "workload.node_start_ms.w2=1000"],
     {"writer-death", "thread-died"}),
])
def test_crashes_and_thread_deaths_kill_threads_safely(fake_gcs_endpoint: Endpoint,  # noqa: F811
                                                       tmp_path: Path, name: str, sets: list[str],
                                                       marks: set[str]) -> None:
    sc = loader.load(name, [*SHORT, "duration_ms=8000", *sets])
    res = run_realworld(sc, fake_gcs_endpoint, prefix=f"rw-{name}/", log_dir=tmp_path)
    assert marks <= {e.f for e in res.events if e.node == "w1"}
    assert res.verdict.verdict == "ok", [v.message for v in res.verdict.violations]
    died = next(e.time for e in res.events if e.f in ("crash", "writer-death"))
    # another writer gets the lock after the dead holder's lease (4 s) ran out
    assert any(e.f == "acquire" and e.type == "ok" and e.node != "w1" and e.time > died for e in res.events)
