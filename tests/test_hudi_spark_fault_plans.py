"""An entry's faults translated to Hudi's Spark writers: storage faults as the fault proxy's rules
(engines/hudi_spark/storage_faults.py, applied by a real FaultProxy's decision), OCC writers dying in their
commit (``timeline.fail_commit_prob``) as kills at the writer's own in-commit request (plans.py,
launch.FaultInjector's ``then``), and each refusal by field. No Spark: the kills hit ``sleep`` processes."""

from __future__ import annotations

import dataclasses
import json
import signal
from pathlib import Path

import pytest
from writer_faults import exchange, sleeper

from backends.fault_proxy import FaultProxy
from engines.hudi_spark.launch import FaultInjector, WriterFault
from engines.hudi_spark.nbcc_plans import nbcc_entry_plans
from engines.hudi_spark.plans import INFLIGHT, entry_plans
from engines.hudi_spark.storage_faults import proxy_keys, proxy_rules
from model.config import ConfigError, ErrorRule
from scenarios import catalogue

RUN = "hcc-hudi-spark/r1/"  # a run's prefix: its table is RUN + "table/"
NO_TIMED = ("faults.crashes=[]", "faults.pauses=[]")  # nbcc-storage-faults' faults other than errors


def _proxy(tmp_path: Path, rules: tuple[ErrorRule, ...], nodes: tuple[str, ...] = ("w1", "w2")) -> FaultProxy:
    """A proxy (never connected: only its decisions are asked) with ``rules`` placed under RUN."""
    return FaultProxy("http://127.0.0.1:9", nodes, dialect="s3", log_path=tmp_path / "proxy.log",
                      errors=rules, **proxy_keys(RUN))


def test_the_nbcc_storage_faults_entry_becomes_the_proxys_rules_on_the_runs_table(tmp_path: Path) -> None:
    entry = catalogue.load("nbcc-storage-faults", list(NO_TIMED))
    p = nbcc_entry_plans(entry.config.name, entry.config)
    assert [(r.key, r.status, r.method, r.prob) for r in p.errors] == [
        ("table/", "503", "any", 0.05), ("table/", "lost-reply", "write", 0.02)]
    assert any(u.startswith("faults.errors = 2") for u in p.untranslated)
    # a fault on the lock file may leave it dangling: the model's 10 s validity, not Hudi's 300 s default
    assert p.options["hoodie.write.lock.storage.validity.timeout.secs"] == "10"
    # certain rules, to see where they land: the run's table keys, not another run's nor the bucket's root
    sure = tuple(dataclasses.replace(r, prob=1.0) for r in p.errors)
    with _proxy(tmp_path, sure, tuple(p.batches)) as proxy:
        assert proxy.decide("w3", "GET", RUN + "table/.hoodie/timeline/x.deltacommit") == "503"
        assert proxy.decide("w1", "PUT", RUN + "table/p0/.f1_1.log.1") == "503"  # the first rule first
        assert proxy.decide("w1", "PUT", "hcc-hudi-spark/r2/table/p0/x") == "forward"


def test_key_classes_and_prefixes_map_onto_hudis_keys_under_the_run(tmp_path: Path) -> None:
    rules = proxy_rules([ErrorRule(node="w1", key="lock", method="write", status="lost-reply"),
                         ErrorRule(node="w2", key="tbl/.hoodie/timeline/", method="read", status="429"),
                         ErrorRule(node="w2", key="t", status="timeout", count=1)], ["w1", "w2"], "tbl")
    assert [r.key for r in rules] == ["lock", "table/.hoodie/timeline/", ""]  # the entry's base is the run's
    with _proxy(tmp_path, rules) as proxy:
        lock = RUN + "table/.hoodie/.locks/table_lock.json"
        assert proxy.decide("w1", "PUT", lock) == "lost-reply"
        assert proxy.decide("w1", "GET", lock) == "forward"  # writes only
        assert proxy.decide("w1", "PUT", RUN + "table/.hoodie/.locks/audit_enabled.json") == "forward"
        assert proxy.decide("w2", "GET", RUN + "table/.hoodie/timeline/1.commit") == "429"
        assert proxy.decide("w2", "PUT", RUN + "table/p0/b.parquet") == "timeout"  # every key; count 1
        assert proxy.decide("w2", "PUT", RUN + "table/p0/b.parquet") == "forward"


@pytest.mark.parametrize(("rule", "field", "value"), [
    (ErrorRule(key="register"), "faults.errors[0].key", "register"),
    (ErrorRule(key=".hoodie/timeline/"), "faults.errors[0].key", ".hoodie/timeline/"),
    (ErrorRule(node="w9"), "faults.errors[0].node", "w9"),
    (ErrorRule(status="500"), "faults.errors[0].status", "500"),
])
def test_what_has_no_hudi_counterpart_is_refused_by_field(rule: ErrorRule, field: str, value: str) -> None:
    with pytest.raises(ConfigError) as e:
        proxy_rules([rule], ["w1", "w2"], "table")
    assert (e.value.field, e.value.value) == (field, value)


def test_an_occ_entrys_storage_faults_are_translated_and_refused_by_field() -> None:
    rule = 'faults.errors=[{node="w2", key="lock", status="503", count=2}]'
    entry = catalogue.load("tl-hudi-prefer-writer-safe", [rule])
    assert entry_plans(entry.config.name, entry.config, 1).errors == (
        ErrorRule(node="w2", key="lock", status="503", count=2),)
    entry = catalogue.load("tl-hudi-prefer-writer-safe", ['faults.errors=[{key="register"}]'])
    with pytest.raises(ConfigError, match=r"faults\.errors\[0\]\.key"):
        entry_plans(entry.config.name, entry.config, 1)


def _lazy(*overrides: str, max_ops: int = 3):  # type: ignore[no-untyped-def]
    entry = catalogue.load("tl-hudi-lazy-rollback-safe", list(overrides))
    return entry_plans(entry.config.name, entry.config, max_ops)


def test_a_writer_dying_in_its_commit_is_killed_at_its_in_commit_inflight_check() -> None:
    p = _lazy("seed=4", "workload.writers=3")  # w2 dies in its first operation's commit
    (kill,) = p.faults
    assert (kill.writer, kill.fault, kill.key, kill.method, kill.nth, kill.then) == (
        "w2", "kill", INFLIGHT, "PUT", 1, "HEAD")
    assert kill.restart_at == len(p.batches["w2"])  # the model's writer dies for good: it restarts to read
    waiting = [b for w in ("w1", "w3") for b in p.batches[w] if b.get("after_info")]
    assert waiting and all(b["after_info"] == {"process": "w2", "ended": "in-commit"} for b in waiting)
    assert p.options["hoodie.write.lock.storage.validity.timeout.secs"] == "10"  # the dead holds the lock
    assert p.options["hoodie.client.heartbeat.interval_in_ms"] == "10000"  # expires 20 s after, in the run
    assert any("dies in its commit" in u for u in p.untranslated)
    w1 = _lazy("seed=5", "workload.writers=3").faults  # w1 wrote the preload: its op 1 is its 2nd .inflight
    assert [(f.writer, f.nth) for f in w1] == [("w1", 2)]


def test_a_death_past_the_cap_is_said_and_not_injected() -> None:
    p = _lazy()  # seed 1: w3 dies in its 5th operation
    assert p.faults == () and any("no writer dies in its first 3" in u for u in p.untranslated)
    assert [(f.writer, f.nth) for f in _lazy(max_ops=5).faults] == [("w3", 5)]


def test_then_kills_at_the_writers_next_request_of_its_own_instant_file(tmp_path: Path) -> None:
    mine, other = "r/table/.hoodie/timeline/20260101000000001.inflight", \
        "r/table/.hoodie/timeline/20260101000000002.inflight"
    inj = FaultInjector([WriterFault("w1", "kill", INFLIGHT, "PUT", 2, then="HEAD")], tmp_path / "h.jsonl")
    w1 = sleeper(tmp_path, "w1")
    inj.add(w1)
    head = dataclasses.replace(exchange("w1", mine), method="HEAD")
    try:
        inj(exchange("w1", other))  # its first .inflight: not the nth
        inj(dataclasses.replace(exchange("w1", mine), action="error-503", status=503))  # not applied
        inj(exchange("w2", mine))  # another writer's
        inj(exchange("w1", mine))  # the 2nd applied: arms the fault
        inj(dataclasses.replace(head, key=other))  # a HEAD of another instant (a rollback's): no kill
        inj(dataclasses.replace(head, node="w2"))
        assert w1.proc.poll() is None
        inj(head)
        assert w1.proc.wait(timeout=5) == -signal.SIGKILL
        (line,) = [json.loads(x) for x in (tmp_path / "h.jsonl").read_text().splitlines()]
        assert (line["f"], line["value"]["method"], line["value"]["key"]) == ("kill", "HEAD", mine)
        assert line["ended"] == "in-commit"  # what the batches after the death wait for
    finally:
        if w1.proc.poll() is None:
            w1.proc.kill()
            w1.proc.wait()


def test_an_attempt_hudi_aborts_before_the_point_is_spared_and_its_waiters_go_on(tmp_path: Path) -> None:
    mine = "r/table/.hoodie/timeline/20260101000000001.inflight"
    inj = FaultInjector([WriterFault("w1", "kill", INFLIGHT, "PUT", 1, then="HEAD")], tmp_path / "h.jsonl")
    w1 = sleeper(tmp_path, "w1")
    inj.add(w1)
    try:
        inj(exchange("w1", mine))
        beat = "r/table/.hoodie/.heartbeat/2026010100000000"
        inj(dataclasses.replace(exchange("w1", beat + "2"), method="DELETE"))
        # the metadata table's heartbeat of the same instant, deleted in the commit: still armed
        mdt = "r/table/.hoodie/metadata/.hoodie/.heartbeat/20260101000000001"
        inj(dataclasses.replace(exchange("w1", mdt), method="DELETE"))
        assert not (tmp_path / "h.jsonl").exists()  # another instant's heartbeat: still armed
        inj(dataclasses.replace(exchange("w1", beat + "1"), method="DELETE"))
        inj(dataclasses.replace(exchange("w1", mine), method="HEAD"))  # disarmed: no kill
        assert w1.proc.poll() is None
        (line,) = [json.loads(x) for x in (tmp_path / "h.jsonl").read_text().splitlines()]
        assert (line["f"], line["ended"]) == ("spared", "in-commit")
    finally:
        w1.proc.kill()
        w1.proc.wait()


def test_then_must_be_a_method() -> None:
    with pytest.raises(ValueError, match="then"):
        WriterFault("w1", "kill", "x", then="HED").check(["w1"])
