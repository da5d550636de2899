"""An NBCC scenario file: a MERGE_ON_READ table under NBCC (RFC-66), whose behaviour runs (its
variant), how readers list it, how failed writes are cleaned, and its faults.

The ``[nbcc]`` table sizes a random plan (``sim_plan.random_plan``, drawn from the scenario's seed):
writers with a bucket index append logs to shared file groups while a compaction service runs.

* ``variant`` (:mod:`model.nbcc.variants`): ``hudi`` (the default: Hudi's newest release, 1.2.1),
  ``hudi-1.2.0``, ``pr-19785``, and the hypothetical ``pr-19786`` and ``v6-instant-time``;
* ``metadata_table`` (default true, Hudi's default for writers and readers): the writers keep the
  metadata table's ``files`` partition and readers, the compaction planner among them, list through it
  (only files of completed instants); false: they list storage (pending and failed files too);
* ``heartbeat_interval_ms`` (default 60000), ``heartbeat_tolerable_misses`` (-1: the variant's default,
  10 in 1.2.1, 2 in 1.2.0), ``auto_clean`` (default true): after each commit a writer rolls back the
  deltacommits whose heartbeat expired (LAZY failed-writes cleaning);
* ``read_every_ms`` / ``read_until_ms``: a snapshot reader that reads while the writers run (0: none).
* ``clustering_at_ms``: clusterings the compaction service's node schedules at those times (ms since
  the run started): Hudi 1.2.x plans them and refuses to execute them on the bucket layout, and the plan
  then refuses updates of its file groups (:mod:`model.nbcc.sim_clustering`).

``rule`` (before variants) is no longer accepted: a file that sets it gets a ConfigError naming the
variant to write instead (``completion`` -> ``pr-19786``, ``instant`` -> ``v6-instant-time``,
``uncommitted-anchor-bug`` -> ``hudi-1.2.0``); none of those is a one-for-one mapping, which is why
the file is refused rather than read.  ``[faults]`` is the lock scenarios' fault plan (nodes ``w1``..
``wN`` write, ``w{N+1}`` compacts, ``w{N+2}`` reads).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from model.config import ConfigError, FaultPlan
from model.nbcc.sim_plan import HUDI_HEARTBEAT_INTERVAL_MS, TablePlan, TableSettings, random_plan
from model.nbcc.slicing import Rule
from model.nbcc.variants import RULE_REPLACEMENTS, VARIANTS, NbccVariant, variant
from model.timeline.timegen import GENERATORS


@dataclass(frozen=True)
class NbccConfig:
    """What the random plan is made of, whose behaviour runs and how readers list the table."""

    writers: int = 3
    batches: int = 4  # deltacommits per writer
    buckets: int = 3  # file groups
    compactions: int = 3  # compaction slots
    fail_prob: float = 0.25  # chance a batch has injected failures
    variant: str = "hudi"
    metadata_table: bool = True  # hoodie.metadata.enable (writers and readers)
    time_generator: str = "skew-adjusting"
    heartbeat_interval_ms: int = HUDI_HEARTBEAT_INTERVAL_MS
    heartbeat_tolerable_misses: int = -1  # -1: the variant's default
    auto_clean: bool = True
    read_every_ms: int = 0
    read_until_ms: int = 0
    clustering_at_ms: tuple[int, ...] = ()  # clusterings scheduled (model/nbcc/sim_clustering.py)
    # removed (before variants): a file that sets it gets a ConfigError naming the variant to write
    # instead; the metadata asks writers of TOML (scenarios.loader.to_dict) to leave it out
    rule: str = field(default="", metadata={"removed": "nbcc.variant"})

    def validate(self) -> None:
        """Raise ConfigError naming the first bad field (``nbcc.<field>``) and its value."""
        if self.rule:
            instead = RULE_REPLACEMENTS.get(self.rule)
            hint = f'write variant = "{instead}"' if instead else f"choose one of {', '.join(VARIANTS)}"
            raise ConfigError("nbcc.rule", self.rule, f"was replaced by nbcc.variant: {hint} "
                              "(model/nbcc/variants.py says whose behaviour each runs)")
        if not 1 <= self.writers <= 16:
            raise ConfigError("nbcc.writers", self.writers, "must be between 1 and 16")
        for name in ("batches", "buckets"):
            if getattr(self, name) < 1:
                raise ConfigError(f"nbcc.{name}", getattr(self, name), "must be >= 1")
        if self.compactions < 0:
            raise ConfigError("nbcc.compactions", self.compactions, "must be >= 0")
        if not 0.0 <= self.fail_prob <= 1.0:
            raise ConfigError("nbcc.fail_prob", self.fail_prob, "must be in [0, 1]")
        if self.variant not in VARIANTS:
            raise ConfigError("nbcc.variant", self.variant, f"must be one of {', '.join(VARIANTS)}")
        if self.time_generator not in GENERATORS:
            raise ConfigError("nbcc.time_generator", self.time_generator,
                              f"must be one of {', '.join(GENERATORS)}")
        if self.heartbeat_interval_ms < 1000:
            raise ConfigError("nbcc.heartbeat_interval_ms", self.heartbeat_interval_ms,
                              "must be >= 1000 (HoodieHeartbeatClient refuses less than a second)")
        if self.heartbeat_tolerable_misses != -1 and self.heartbeat_tolerable_misses < 1:
            raise ConfigError("nbcc.heartbeat_tolerable_misses", self.heartbeat_tolerable_misses,
                              "must be >= 1, or -1 for the variant's default")
        for name in ("read_every_ms", "read_until_ms"):
            if getattr(self, name) < 0:
                raise ConfigError(f"nbcc.{name}", getattr(self, name), "must be >= 0")
        if any(at < 0 for at in self.clustering_at_ms):
            raise ConfigError("nbcc.clustering_at_ms", list(self.clustering_at_ms), "times must be >= 0")

    @property
    def nbcc_variant(self) -> NbccVariant:
        """The variant the readers and writers follow."""
        return variant(self.variant)

    @property
    def slicing_rule(self) -> Rule:
        """The readers' (and the compaction planner's) slicing rule: the variant's."""
        return self.nbcc_variant.slicing

    @property
    def settings(self) -> TableSettings:
        """The plan's settings of whose behaviour runs."""
        return TableSettings(self.variant, self.metadata_table, self.heartbeat_interval_ms,
                             self.heartbeat_tolerable_misses, self.auto_clean, self.read_every_ms,
                             self.read_until_ms, tuple(self.clustering_at_ms))


def reader_configuration(metadata_table: bool) -> str:
    """How readers list the table, in Hudi's terms."""
    if metadata_table:
        return "readers list through the metadata table (hoodie.metadata.enable=true)"
    return "readers list storage (hoodie.metadata.enable=false)"


@dataclass(frozen=True)
class NbccScenario:
    """A catalogue entry of protocol ``nbcc``."""

    name: str = "nbcc"
    description: str = ""
    seed: int = 1
    expect: str = "ok"
    nbcc: NbccConfig = field(default_factory=NbccConfig)
    faults: FaultPlan = field(default_factory=FaultPlan)
    # a plan given in full (a run the explorer found: ``hcc explore --protocol nbcc --out FILE``) instead of
    # one drawn from the seed; the ``[nbcc]`` settings and ``faults`` still apply to it
    plan_given: TablePlan | None = None

    def validate(self) -> None:
        """Check every field; the plan's own rules too (``TablePlan.validate``)."""
        if not self.name:
            raise ConfigError("name", self.name, "must not be empty")
        if self.expect not in ("ok", "violation"):
            raise ConfigError("expect", self.expect, "must be ok or violation")
        self.nbcc.validate()
        self.plan(self.seed).validate()

    def plan(self, seed: int) -> TablePlan:
        """The run's plan, drawn from ``seed`` (the same seed also drives the network), or the plan given."""
        n = self.nbcc
        if self.plan_given is not None:
            return n.settings.apply(replace(self.plan_given, faults=self.faults))
        return random_plan(random.Random(seed), n.writers, n.batches, n.buckets, compactions=n.compactions,
                           fail_prob=n.fail_prob, time_generator=n.time_generator, faults=self.faults,
                           settings=n.settings)

    def models(self) -> str:
        """One line: whose behaviour the run is, and how its readers list the table."""
        n = self.nbcc
        v = n.nbcc_variant
        misses = n.heartbeat_tolerable_misses
        if misses == -1:
            misses = v.heartbeat_tolerable_misses
        clean = "a clean after each commit" if n.auto_clean else "no clean (failed writes stay)"
        return (f"{v.follows}: file slicing, compaction planning and failed-write handling (heartbeat "
                f"{n.heartbeat_interval_ms} ms x {misses} misses, {clean}) on this harness's writers; "
                f"{reader_configuration(n.metadata_table)}")
