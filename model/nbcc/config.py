"""An NBCC scenario file: a MERGE_ON_READ table under NBCC (RFC-66), its readers' slicing rule and faults.

The ``[nbcc]`` table sizes a random plan (``sim_table.random_plan``, drawn from the scenario's seed):
writers with a bucket index append logs to shared file groups while a compaction service runs;
``rule`` is the slicing rule every reader applies (``completion``: Hudi 1.x, table version 8;
``instant``: the version-6 rule; ``uncommitted-anchor-bug``: a pending first log anchors a slice).
``[faults]`` is the lock scenarios' fault plan (nodes ``w1``..``wN`` write, ``w{N+1}`` compacts).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from model.config import ConfigError, FaultPlan
from model.nbcc.sim_table import TablePlan, random_plan
from model.nbcc.slicing import Rule
from model.timeline.timegen import GENERATORS

RULES = {
    "completion": Rule.COMPLETION_TIME,
    "instant": Rule.INSTANT_TIME,
    "uncommitted-anchor-bug": Rule.UNCOMMITTED_ANCHOR_BUG,
}


@dataclass(frozen=True)
class NbccConfig:
    """What the random plan is made of, and how readers slice."""

    writers: int = 3
    batches: int = 4  # deltacommits per writer
    buckets: int = 3  # file groups
    compactions: int = 3  # compaction slots
    fail_prob: float = 0.25  # chance a batch has injected failures
    rule: str = "completion"
    time_generator: str = "skew-adjusting"

    def validate(self) -> None:
        """Raise ConfigError naming the first bad field (``nbcc.<field>``) and its value."""
        if not 1 <= self.writers <= 16:
            raise ConfigError("nbcc.writers", self.writers, "must be between 1 and 16")
        for name in ("batches", "buckets"):
            if getattr(self, name) < 1:
                raise ConfigError(f"nbcc.{name}", getattr(self, name), "must be >= 1")
        if self.compactions < 0:
            raise ConfigError("nbcc.compactions", self.compactions, "must be >= 0")
        if not 0.0 <= self.fail_prob <= 1.0:
            raise ConfigError("nbcc.fail_prob", self.fail_prob, "must be in [0, 1]")
        if self.rule not in RULES:
            raise ConfigError("nbcc.rule", self.rule, f"must be one of {', '.join(RULES)}")
        if self.time_generator not in GENERATORS:
            raise ConfigError("nbcc.time_generator", self.time_generator,
                              f"must be one of {', '.join(GENERATORS)}")

    @property
    def slicing_rule(self) -> Rule:
        """The readers' slicing rule."""
        return RULES[self.rule]


@dataclass(frozen=True)
class NbccScenario:
    """A catalogue entry of protocol ``nbcc``."""

    name: str = "nbcc"
    description: str = ""
    seed: int = 1
    expect: str = "ok"
    nbcc: NbccConfig = field(default_factory=NbccConfig)
    faults: FaultPlan = field(default_factory=FaultPlan)

    def validate(self) -> None:
        """Check every field; the plan's own rules too (``TablePlan.validate``)."""
        if not self.name:
            raise ConfigError("name", self.name, "must not be empty")
        if self.expect not in ("ok", "violation"):
            raise ConfigError("expect", self.expect, "must be ok or violation")
        self.nbcc.validate()
        self.plan(self.seed).validate()

    def plan(self, seed: int) -> TablePlan:
        """The run's plan, drawn from ``seed`` (the same seed also drives the network)."""
        n = self.nbcc
        return random_plan(random.Random(seed), n.writers, n.batches, n.buckets, compactions=n.compactions,
                           fail_prob=n.fail_prob, time_generator=n.time_generator, faults=self.faults)
