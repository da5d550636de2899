"""The ``lock`` protocol: Hudi's storage-based lock provider (RFC-91, ``model/lock/provider.py``) guarding
a register, in the simulated world; its run leaves the lock file and Hudi's lock audit trail."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from model.checkers.lock_run import check_lock_history
from model.checkers.verdict import Verdict
from model.config import Scenario
from model.lock.metrics import LockMetrics, lock_metrics
from model.lock.variants import variant as lock_variant
from model.protocols.base import (
    EntryHead,
    GateMetric,
    HudiTable,
    ModelRun,
    Plugin,
    Sink,
    Transactions,
    World,
    objects_of,
)
from model.runtime.kernel import Workload
from model.runtime.sim import SimWorld
from model.workloads.lock import LockWorkload

GATE_METRICS: Mapping[str, GateMetric] = {
    "acquisitions": GateMetric("lower", 0.10, 0),
    "acquire_latency_ms.p50": GateMetric("higher", 0.10, 50),
    "acquire_latency_ms.p90": GateMetric("higher", 0.10, 50),
    "acquire_latency_ms.p99": GateMetric("higher", 0.10, 50),
    "acquire_timeouts": GateMetric("higher", 0.10, 1),
    "acquire_precondition_failure_per_acquisition": GateMetric("higher", 0.10, 0.02),
    "unknown_outcomes_per_acquisition": GateMetric("higher", 0.10, 0.02),
    "retries_per_acquisition": GateMetric("higher", 0.10, 0.1),
    "dangling_lock_seen": GateMetric("higher", 0.0, 0),
    "renewals_failed": GateMetric("higher", 0.10, 1),
    "min_expiration_deadline_ms": GateMetric("lower", 0.0, 1000),
    "throughput_writes_per_s": GateMetric("lower", 0.10, 0),
    "fairness_jain": GateMetric("lower", 0.0, 0.05),
}


class LockPlugin:
    """The RFC-91 lock guarding a register: writers acquire, read-modify-write the register, release."""

    name = "lock"
    config_type = Scenario
    history = True
    files: Mapping[str, type] = {}
    metrics_type = LockMetrics
    gate_metrics = GATE_METRICS
    hudi_table: HudiTable[Scenario] | None = None
    transactions: Transactions | None = None
    audit_trail = True

    def head(self, config: Scenario) -> EntryHead:
        """The scenario's own name, seed, expectation, description and world."""
        world = cast(World, config.world)  # validated: sim or spark
        return EntryHead(config.name, config.seed, config.expect, config.description, world)

    def models(self, config: Scenario) -> str:
        """The lock variant's Hudi release (and the hypothetical writer, when the scenario has it)."""
        writer = ("; writer: hypothetical (checks its lock before each write, "
                  "workload.check_before_write)" if config.workload.check_before_write else "")
        return f"lock provider: {lock_variant(config.lock.variant).follows}{writer}"

    def run(self, config: Scenario, seed: int, sink: Sink | None) -> ModelRun:
        """Run the scenario in the simulated world."""
        world = SimWorld(config, seed, sink)
        events = world.run()
        return ModelRun(events, objects_of(world.store), config.lock.base_path.rstrip("/") + "/")

    def check(self, config: Scenario, run: ModelRun) -> Verdict:
        """Overlap, stale write, lost update (and the findings) of the lock checkers."""
        return check_lock_history(run.events, config.checkers)

    def metrics(self, config: Scenario, run: ModelRun) -> LockMetrics:
        """Hudi's lock metrics (``model/lock/metrics.py``)."""
        return lock_metrics(run.events)

    def workload(self, run_config: Scenario, scenario: Scenario) -> Workload:
        """The lock workload of ``scenario`` (``run_config``, the entry's own scenario, is not needed)."""
        return LockWorkload(scenario)


PLUGIN: Plugin[Scenario, Scenario] = LockPlugin()
