"""Hudi Spark writer plans from catalogue OCC entries (engines/hudi_spark/plans.py): the simulated run's
operations, in order, with values told apart; entries Hudi cannot run refused by the field."""

from __future__ import annotations

import pytest

from engines.hudi_spark.plans import entry_plans, hudi_value
from model.config import ConfigError
from scenarios import catalogue


def _plans(name: str, *overrides: str, max_ops: int = 3):  # type: ignore[no-untyped-def]
    entry = catalogue.load(name, list(overrides))
    return entry_plans(name, entry.config, max_ops)


def test_the_duplicate_key_entry_is_one_insert_of_k1_per_writer() -> None:
    p = _plans("tl-hudi-occ-duplicate-key")

    def one(value: int) -> list[dict[str, object]]:
        row = {"key": "k1", "partition": "p0", "value": value}
        return [{"op": "upsert", "after_commits": 0, "rows": [row]}]

    assert p.batches == {"w1": one(1001), "w2": one(2001)}
    assert p.options["hoodie.metadata.enable"] == "true"


def test_a_preloaded_entry_seeds_every_key_first_and_follows_the_simulated_order() -> None:
    p = _plans("tl-skew-adjusting-safe", max_ops=2)
    seed, *rest = p.batches["w1"]
    assert [r["key"] for r in seed["rows"]] == ["k1", "k2"] and {r["value"] for r in seed["rows"]} == {0}
    assert all(b["after_commits"] == 1 for w in p.batches for b in p.batches[w][(w == "w1"):])
    assert all(len(p.batches[w]) == 2 for w in ("w2", "w3")) and len(rest) == 2
    values = [r["value"] for w in p.batches for b in p.batches[w] for r in b["rows"] if r["value"]]
    assert len(values) == len(set(values))  # every write told apart
    assert any("first 2 operations" in u for u in p.untranslated)
    assert p == _plans("tl-skew-adjusting-safe", max_ops=2)  # the entry's seed: the same plans


def test_prefer_writer_becomes_hudis_strategy_class() -> None:
    p = _plans("tl-hudi-prefer-writer-safe", max_ops=1)
    assert p.options["hoodie.write.lock.conflict.resolution.strategy"].endswith(
        "PreferWriterConflictResolutionStrategy")


@pytest.mark.parametrize(("name", "field"), [
    ("tl-occ-put-if-absent", "timeline.variant"),
    ("tl-lock-long-pause", "timeline.workload"),
    ("tl-lock-long-pause", "timeline.workload"),
])
def test_entries_hudi_cannot_run_are_refused_by_field(name: str, field: str) -> None:
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        _plans(name)


def test_a_pause_at_the_completion_write_pauses_the_jvm_after_its_inflight_check() -> None:
    p = _plans("tl-hudi-heartbeat-expiry-rollback")
    (fault,) = p.faults
    # w1 seeded the table: its first operation's commit is its second, whose in-flight check is its 4th HEAD
    assert (fault.writer, fault.fault, fault.method, fault.nth) == ("w1", "pause", "HEAD", 4)
    assert p.batches["w2"][0]["after_info"] == {"process": "w1", "f": "pause"}
    assert p.options["hoodie.write.lock.storage.validity.timeout.secs"] == "10"
    assert any("the pause" in u for u in p.untranslated)


def test_a_pause_with_another_trigger_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"faults\.pauses\[0\]\.trigger"):
        _plans("tl-hudi-heartbeat-expiry-rollback", "faults.pauses.0.trigger=time")


def test_values() -> None:
    assert (hudi_value("w2.7"), hudi_value("preload.k1")) == (2007, 0)
