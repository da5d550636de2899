"""The commit variants as data (model/timeline/variants.py): what each follows, the settings each refuses
(ConfigError naming field, value and variant), Hudi's inferred defaults, and the line saying whose behaviour
a run is.  Also: every tl-* catalogue entry names its variant and reader, and its comment the Java (or the
specification) it rests on."""

from __future__ import annotations

import re
import tomllib

import pytest

from model.config import ConfigError, Scenario, WorkloadConfig
from model.timeline.config import TimelineConfig, TimelineScenario
from model.timeline.variants import COMMIT_VARIANTS, HUDI_RELEASE, commit_variant
from scenarios import timeline_loader


def test_the_variants_say_what_they_follow() -> None:
    assert COMMIT_VARIANTS == ("hudi", "vanlightly-v5")
    hudi, v5 = commit_variant("hudi"), commit_variant("vanlightly-v5")
    assert hudi.follows.startswith(f"Hudi {HUDI_RELEASE} (apache/hudi ") and not hudi.hypothetical
    assert v5.hypothetical and "specification" in v5.follows
    assert hudi.requested_in_lock and not v5.requested_in_lock
    assert TimelineConfig().variant == "hudi"  # the default


@pytest.mark.parametrize(
    ("setting", "field"),
    [
        ({"cc": "pessimistic"}, "timeline.cc"),
        ({"salt": True}, "timeline.salt"),
        ({"pk_check": True}, "timeline.pk_check"),
        ({"put_if_absent": True}, "timeline.put_if_absent"),
        ({"put_if_absent": False}, "timeline.put_if_absent"),
        ({"time_generator": "local-clock"}, "timeline.time_generator"),
        ({"time_generator": "monotonic"}, "timeline.time_generator"),
        ({"file_groups": 2}, "timeline.file_groups"),
        ({"failed_writes": "eager"}, "timeline.failed_writes"),
    ],
)
def test_hudi_refuses_the_specifications_settings(setting: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError) as err:
        TimelineConfig(**setting).validate()  # type: ignore[arg-type]
    text = str(err.value)
    assert text.startswith(field) and "hudi" in text and repr(next(iter(setting.values()))) in text


@pytest.mark.parametrize(
    ("setting", "field"),
    [
        ({"partitions": 2}, "timeline.partitions"),
        ({"preload": True}, "timeline.preload"),
        ({"conflict_strategy": "prefer-writer"}, "timeline.conflict_strategy"),
        ({"heartbeat_interval_ms": 1000}, "timeline.heartbeat_interval_ms"),
        ({"metadata_table": True}, "timeline.metadata_table"),
    ],
)
def test_the_specification_refuses_hudis_settings(setting: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError) as err:
        TimelineConfig(variant="vanlightly-v5", **setting).validate()  # type: ignore[arg-type]
    assert str(err.value).startswith(field) and "vanlightly-v5" in str(err.value)


def test_hudis_inferred_defaults() -> None:
    # HoodieWriteConfig.Builder#autoAdjustConfigsForConcurrencyMode: LAZY for OCC; the policy's default EAGER
    assert TimelineConfig().failed_writes_policy == "lazy"
    assert TimelineConfig(cc="none").failed_writes_policy == "eager"
    assert TimelineConfig(cc="none", failed_writes="lazy").failed_writes_policy == "lazy"
    assert TimelineConfig(variant="vanlightly-v5").failed_writes_policy is None
    # hoodie.client.heartbeat.*: 60 s, 10 tolerable misses in 1.2.1 (2 in 1.2.0)
    assert (TimelineConfig().heartbeat_ms, TimelineConfig().tolerable_misses) == (60_000, 10)
    # SimpleConcurrentFileWritesConflictResolutionStrategy by default; the metadata table on
    assert TimelineConfig().strategy == "simple" and TimelineConfig().metadata_table_on
    assert not TimelineConfig(variant="vanlightly-v5").metadata_table_on
    # the specification's defaults stay as they were
    v5 = TimelineConfig(variant="vanlightly-v5")
    assert v5.pk_check_on and v5.put_if_absent_on and v5.file_group_count == 1


def test_prefer_writer_needs_completion_times_and_conflicts_need_occ() -> None:
    with pytest.raises(ConfigError, match="timeline.conflict_strategy"):
        TimelineConfig(conflict_strategy="prefer-writer", layout="v6").validate()
    with pytest.raises(ConfigError, match="timeline.conflict_strategy"):
        TimelineConfig(conflict_strategy="simple", cc="none").validate()


def test_several_single_writers_only_as_a_labelled_unsupported_configuration() -> None:
    three = Scenario(name="t", workload=WorkloadConfig(writers=3))
    with pytest.raises(ConfigError) as err:
        TimelineScenario(three, TimelineConfig(cc="none")).validate()
    assert str(err.value).startswith("timeline.cc") and "unsupported_single_writer" in str(err.value)
    ts = TimelineScenario(three, TimelineConfig(cc="none", unsupported_single_writer=True))
    ts.validate()
    assert "SINGLE_WRITER" in ts.models() and "does not support" in ts.models()
    one = TimelineScenario(Scenario(name="t", workload=WorkloadConfig(writers=1)), TimelineConfig(cc="none"))
    one.validate()
    assert "does not support" not in one.models()


def test_models_says_whose_behaviour_the_run_is() -> None:
    base = Scenario(name="t")
    hudi = TimelineScenario(base, TimelineConfig()).models()
    assert hudi.startswith(f"Hudi {HUDI_RELEASE} (apache/hudi ") and "writers under OCC" in hudi
    assert "SimpleConcurrentFileWritesConflictResolutionStrategy" in hudi and "metadata table" in hudi
    listing = TimelineScenario(base, TimelineConfig(metadata_table=False, conflict_strategy="prefer-writer"))
    assert "PreferWriter" in listing.models() and listing.models().endswith("readers list storage")
    v5 = TimelineScenario(base, TimelineConfig(variant="vanlightly-v5")).models()
    assert v5.startswith("Vanlightly's v5 specification (hypothetical writer)")


def test_a_resolved_scenario_loads_back_equal(tmp_path: object) -> None:
    from pathlib import Path

    for name in timeline_loader.timeline_names():
        ts = timeline_loader.load(name)
        path = Path(str(tmp_path)) / f"{name}.toml"
        path.write_text(timeline_loader.to_toml(ts))
        assert timeline_loader.load(str(path)) == ts, name
        assert path.read_text().startswith(f"# models: {ts.models()}\n")


_JAVA = re.compile(r"\b[A-Z][A-Za-z0-9]+#[a-z][A-Za-z0-9]+\b")  # Class#method


@pytest.mark.parametrize("name", timeline_loader.timeline_names())
def test_every_entry_names_its_variant_reader_and_what_it_rests_on(name: str) -> None:
    text = timeline_loader.resolve(name).read_text()
    raw = tomllib.loads(text)
    table = raw["timeline"]
    assert table.get("variant") in COMMIT_VARIANTS, name
    assert "metadata_table" in table, f"{name} names no reader configuration"
    comment = " ".join(line.lstrip("# ") for line in text.splitlines() if line.startswith("#"))
    if table["variant"] == "hudi":
        assert _JAVA.search(comment), f"{name}: its comment cites no Java method"
        assert "Hudi" in comment
    else:
        assert "specification" in comment.lower(), f"{name}: its comment does not say it is the specification"
