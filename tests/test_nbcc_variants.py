"""The NBCC variants as data, the scenario's settings of whose behaviour runs, and the catalogue:
every ``nbcc-*`` entry names its variant and its readers' listing, and gives its stated verdict."""

from __future__ import annotations

import tomllib

import pytest

from model.config import ConfigError
from model.nbcc.config import NbccConfig, NbccScenario
from model.nbcc.slicing import Rule
from model.nbcc.variants import HUDI, RULE_REPLACEMENTS, VARIANTS, variant
from model.protocols import PROTOCOLS
from scenarios import catalogue, loader


def test_hudi_is_the_newest_release_and_slices_as_pr_19785() -> None:
    # 1.2.1's class files carry PR #19785's HoodieFileGroup#addLogFiles (hcc fidelity --compare)
    assert VARIANTS[0] == "hudi" and variant("hudi") is HUDI
    assert HUDI.follows.startswith("Hudi 1.2.1") and not HUDI.hypothetical
    assert HUDI.slicing is Rule.PR_19785 and HUDI.heartbeat_tolerable_misses == 10
    old = variant("hudi-1.2.0")
    assert old.slicing is Rule.HUDI_1_2_0 and old.heartbeat_tolerable_misses == 2
    # pr-19785 is 1.2.0 with the fix alone: its entries differ from their hudi-1.2.0 twins by that fix
    fixed = variant("pr-19785")
    assert fixed.slicing is Rule.PR_19785 and fixed.heartbeat_tolerable_misses == 2
    assert "1d3a0aff" in fixed.follows
    for name in ("pr-19786", "v6-instant-time"):
        assert variant(name).hypothetical and variant(name).follows.startswith("hypothetical")
    assert {v: variant(v).hypothetical for v in VARIANTS} == {
        "hudi": False, "hudi-1.2.0": False, "pr-19785": False, "pr-19786": True, "v6-instant-time": True}


@pytest.mark.parametrize(("old", "new"), sorted(RULE_REPLACEMENTS.items()))
def test_a_file_that_still_sets_rule_is_told_the_variant_to_write(old: str, new: str) -> None:
    with pytest.raises(ConfigError) as err:
        catalogue.load("nbcc-completion-time-safe", [f'nbcc.rule="{old}"'])
    assert err.value.field == "nbcc.rule" and f'variant = "{new}"' in str(err.value)


def test_bad_settings_name_field_and_value() -> None:
    for override, field in (('nbcc.variant="hudi-9"', "nbcc.variant"),
                            ("nbcc.heartbeat_interval_ms=10", "nbcc.heartbeat_interval_ms"),
                            ("nbcc.heartbeat_tolerable_misses=0", "nbcc.heartbeat_tolerable_misses"),
                            ("nbcc.read_every_ms=-1", "nbcc.read_every_ms")):
        with pytest.raises(ConfigError) as err:
            catalogue.load("nbcc-completion-time-safe", [override])
        assert err.value.field == field


def test_models_says_whose_behaviour_and_which_listing() -> None:
    line = NbccScenario(nbcc=NbccConfig(variant="pr-19785", metadata_table=False)).models()
    assert line.startswith("Hudi 1.2.0 with PR #19785")
    assert "readers list storage (hoodie.metadata.enable=false)" in line
    hypo = NbccScenario(nbcc=NbccConfig(variant="pr-19786")).models()
    assert hypo.startswith("hypothetical") and "through the metadata table" in hypo
    assert NbccConfig(variant="v6-instant-time").slicing_rule is Rule.INSTANT_TIME


NBCC = catalogue.names("nbcc")


@pytest.mark.parametrize("name", NBCC)
def test_entry_names_variant_and_listing_and_gives_its_verdict(name: str) -> None:
    raw = tomllib.loads(loader.resolve(name).read_text())
    assert {"variant", "metadata_table"} <= set(raw["nbcc"]), name  # explicit, not defaults
    entry = catalogue.load(name)
    text = loader.resolve(name).read_text()
    v = variant(entry.config.nbcc.variant)
    if v.hypothetical:
        assert "ypothetical" in text.split("protocol =")[0]
    plugin = PROTOCOLS["nbcc"]
    sim = plugin.run(entry.config, entry.seed, None)
    verdict = plugin.check(entry.config, sim)
    got = "violation" if verdict.violations else "ok"
    assert got == entry.expect, [x.message for x in verdict.violations[:2]]


def test_the_catalogue_covers_the_anchor_bug_with_and_without_the_metadata_table() -> None:
    entries = {n: catalogue.load(n) for n in NBCC}
    bug = {(e.config.nbcc.variant, e.config.nbcc.metadata_table): e.expect
           for n, e in entries.items()
           if n.startswith("nbcc-uncommitted-anchor") and not n.endswith("window")}
    assert bug == {("hudi-1.2.0", False): "violation", ("hudi-1.2.0", True): "ok", ("pr-19785", False): "ok"}
    safe = {(e.config.nbcc.variant, e.config.nbcc.metadata_table)
            for e in entries.values() if e.expect == "ok"}
    assert {("hudi-1.2.0", True), ("pr-19785", False)} <= safe
