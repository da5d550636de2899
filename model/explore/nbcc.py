"""The bounds of one exploration of a MERGE_ON_READ table under NBCC: the simulated table's own code.

The explored runs are the simulated world's NBCC runs (``model/nbcc/sim_table.py``): ``writers``
writers append logs to ``buckets`` shared file groups, ``batches`` deltacommits each of ``rows`` rows,
a compaction service on node ``w{N+1}`` schedules ``compactions`` compactions (the first at
``compaction_ms``, then every ``compaction_ms``), each writer cleans (rolls back the deltacommits
whose heartbeat expired) after its commits; whose behaviour runs is the ``variant``
(``hudi-1.2.0``, ``pr-19785``, ``hudi``: 1.2.1, ...) and readers list through the metadata table or
storage (``metadata_table``).  The table lock is Hudi's provider with the plan's timings.  The
explorer takes every decision the simulated world would draw (the order of steps, storage faults,
pauses, crashes) and the NBCC checkers judge the table every run leaves: file slicing
(membership and the slice rules), compaction plans, durability of acknowledged deltacommits, what a
snapshot and time travel show and incremental reads.

What the bounds fix: the plan (:meth:`NbccBounds.table_plan`: who writes which rows when, the
compaction slots), the planned failures (``failed_attempts``: the first attempts of writer ``w1``'s
last batch fail after writing their logs, as the simulated world's ``fail_prob`` makes a batch fail
part-way; by default none, and a deltacommit fails only when a fault makes it fail), every writer
starting at 0.  The plan names absolute instants (compaction slots), so a state here is also
*when* it is (``absolute_time``): no merging of states met at other times.  "holds" covers this
plan and these faults only.  A found run replays as an NBCC scenario with the plan given in full
(``plan_given``) and the schedule (``hcc run FILE``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from model.checkers.verdict import Verdict
from model.config import Dist, LockConfig, Scenario, WorkloadConfig
from model.explore.bounds import NO_PARKING, Bounds, ParkedRuns, _require
from model.nbcc.config import NbccConfig, NbccScenario
from model.nbcc.sim_checks import check_history
from model.nbcc.sim_io import RETRY_MS
from model.nbcc.sim_layout import bucket_of
from model.nbcc.sim_table import (
    BatchPlan,
    CompactionSlot,
    TablePlan,
    WriterPlan,
    nbcc_workload,
    run_table,
)
from model.nbcc.variants import VARIANTS as NBCC_VARIANTS
from model.nbcc.variants import variant as nbcc_variant
from model.runtime.history import Event
from model.runtime.kernel import Workload
from model.runtime.objectstore import StoredObject


@dataclass(frozen=True)
class NbccBounds(Bounds):
    """One configuration of the NBCC explorer (see the module doc).

    ``work_ms`` is how long a deltacommit stays in flight after its logs, ``think_ms`` the pause before a
    writer's next batch; the lock's timings are the plan's (``TablePlan.lock_config``).
    """

    protocol: ClassVar[str] = "nbcc"
    # the NBCC checkers read the table a run leaves (slices, plans, snapshots, time travel, incremental
    # reads, and durability: every acknowledged deltacommit is a completed instant in it), all of it in the
    # final store, which two runs through one state reach alike: a run is judged at its end
    judge_at_points: ClassVar[bool] = False
    checks_liveness: ClassVar[bool] = False
    takes_base: ClassVar[bool] = False
    known_checkers: ClassVar[tuple[str, ...]] = ()
    absolute_time: ClassVar[bool] = True

    variant: str = "hudi-1.2.0"
    metadata_table: bool = True
    batches: int = 1
    rows: int = 1
    buckets: int = 1
    compactions: int = 0
    failed_attempts: int = 0  # w1's last batch: this many attempts fail after writing their logs
    compaction_ms: int = 1_000
    heartbeat_ms: int = 1_000
    heartbeat_misses: int = -1
    max_skew_ms: int = 500
    phases: bool = False
    work_ms: int = 500

    @property
    def parked_runs(self) -> ParkedRuns:
        """Parked runs where a fault is allowed: a faulted run polls the lock every 25 ms for seconds
        (a 5 s client timeout, a 10 s window of 503s), so resuming from a parked copy costs less than a
        replay (NBCC storage K = 1: 60.8 against 145.5 CPU s); a run without one is as short as a fork costs
        (NBCC storage K = 0, brute force: 131 s parked against 18 s replaying), so none is parked."""
        return ParkedRuns() if self.faults else NO_PARKING

    # ---- the table's plan ------------------------------------------------------------------------

    def batch_keys(self) -> tuple[tuple[int, ...], ...]:
        """The key numbers of each batch: ``rows`` keys of their own, in bucket ``b mod buckets`` (the least
        numbers with that bucket), so that with several buckets each batch writes to a group of its own."""
        used: set[int] = set()
        out = []
        for b in range(self.batches):
            keys: list[int] = []
            n = 0
            while len(keys) < self.rows:
                if n not in used and bucket_of(f"k{n}", self.buckets) == b % self.buckets:
                    keys.append(n)
                    used.add(n)
                n += 1
            out.append(tuple(keys))
        return tuple(out)

    def table_plan(self) -> TablePlan:
        """The plan of every explored run: writer ``i`` writes, in batch ``b``, the keys of
        :meth:`batch_keys` with ordering values ``100 i + 10 b + j`` (every writer writes the same keys, so
        file groups are shared); the first ``failed_attempts`` attempts of writer 1's last batch fail after
        writing every log of the batch (the batch is then retried as a new deltacommit)."""
        keys = self.batch_keys()

        def failures(i: int, b: int) -> tuple[int, ...]:
            logs = len({bucket_of(f"k{key}", self.buckets) for key in keys[b]})  # one log per file group
            return (logs,) * self.failed_attempts if (i, b) == (1, self.batches - 1) else ()

        writers = tuple(
            WriterPlan(tuple(BatchPlan(tuple((key, 100 * i + 10 * b + j) for j, key in enumerate(keys[b])),
                                       work_ms=self.work_ms, think_ms=self.think_ms, failures=failures(i, b))
                             for b in range(self.batches)), start_ms=0)
            for i in range(1, self.writers + 1))
        slots = tuple(CompactionSlot(self.compaction_ms * (n + 1), None, self.work_ms)
                      for n in range(self.compactions))
        return TablePlan(writers, slots, self.buckets, "skew-adjusting", latency_ms=(0, 0), commit_gap_ms=0,
                         duration_ms=self.time_guard(), max_expected_clock_skew_ms=self.max_skew_ms,
                         variant=self.variant, metadata_table=self.metadata_table,
                         heartbeat_interval_ms=self.heartbeat_ms,
                         heartbeat_tolerable_misses=self.heartbeat_misses)

    def lock(self) -> LockConfig:
        return TablePlan((WriterPlan((BatchPlan(((0, 0),)),)),)).lock_config()

    def workload(self) -> WorkloadConfig:
        return WorkloadConfig(writers=self.writers + 1, work_ms=Dist("fixed", self.work_ms),
                              think_ms=Dist("fixed", self.think_ms), start_ms=Dist("fixed", 0),
                              holds=self.batches)

    def scenario(self, name: str = "nbcc") -> Scenario:
        """The plan's world, named as the simulated NBCC run names it (so a replay's history is the same)."""
        sc = self._plan_scenario()
        return dataclasses.replace(sc, name=name,
                                   description=f"hcc explore --protocol nbcc: {self.describe()}")

    def _plan_scenario(self) -> Scenario:
        # the plan's world, hops held by the explorer (no drawn latency)
        sc = dataclasses.replace(self.table_plan(), duration_ms=self.time_guard()).scenario(1)
        return dataclasses.replace(sc, storage=dataclasses.replace(sc.storage, latency_ms=Dist("fixed", 0)),
                                   workload=self.workload())

    def decisive_checkers(self) -> tuple[str, ...]:
        return ()  # every NBCC check decides

    def kernel_workload(self, scenario: Scenario) -> Workload:
        return nbcc_workload(self.table_plan(), scenario)

    def triggers(self) -> dict[tuple[str, str], str]:
        """A writer's acquisition of the table lock (for a time) may start a pause; NBCC writers record no
        register write."""
        return {("acquire", "ok"): "acquired"}

    def verdict(self, events: list[Event], objects: Mapping[str, StoredObject]) -> Verdict:
        plan = self.table_plan()
        return check_history(events, {k: o.body for k, o in objects.items()}, plan.base,
                             plan.nbcc_variant.slicing)

    def replay_scenario(self, scenario: Scenario) -> NbccScenario:
        """The NBCC scenario (``protocol = "nbcc"``) with this plan given in full and the run's schedule."""
        plan = dataclasses.replace(self.table_plan(), schedule=scenario.schedule,
                                   duration_ms=scenario.duration_ms)
        config = NbccConfig(writers=self.writers, batches=self.batches, buckets=self.buckets,
                            compactions=self.compactions, fail_prob=0.0, variant=self.variant,
                            metadata_table=self.metadata_table, heartbeat_interval_ms=self.heartbeat_ms,
                            heartbeat_tolerable_misses=self.heartbeat_misses)
        return NbccScenario(name=scenario.name, description=scenario.description, seed=scenario.seed,
                            expect=scenario.expect, nbcc=config, faults=scenario.faults, plan_given=plan)

    def simulate(self, replay: Any) -> list[Event]:
        """The simulated history, without the transaction records it appends after ``run-end`` (``txn``
        events: the explored world keeps none, so they are no part of the run it replays)."""
        return [e for e in run_table(replay.plan(replay.seed), replay.seed).events if e.f != "txn"]

    # ---- time ------------------------------------------------------------------------------------

    def _constants(self) -> list[int]:
        lock = self.lock()
        out = [lock.validity_secs * 1000, lock.renew_interval_secs * 1000, lock.poll_ms,
               lock.drift_allowance_ms, self.work_ms, self.think_ms, self.heartbeat_ms, self.compaction_ms,
               self.max_skew_ms, RETRY_MS, self._plan_storage_timeout(), self.skew_ms]
        return [c for c in out if c > 0]

    @staticmethod
    def _plan_storage_timeout() -> int:
        return int(TablePlan((WriterPlan((BatchPlan(((0, 0),)),)),)).scenario(1).storage.timeout_ms)

    def boundaries(self) -> dict[str, int]:
        """The durations a pause can cross: a heartbeat's expiry (its instant is then failed and rolled
        back), and a lease with its drift allowance (the table lock passes on)."""
        lock = self.lock()
        misses = (self.heartbeat_misses if self.heartbeat_misses != -1
                  else nbcc_variant(self.variant).heartbeat_tolerable_misses)
        return {"heartbeat expiry": self.heartbeat_ms * misses,
                "validity + drift allowance": lock.validity_secs * 1000 + lock.drift_allowance_ms}

    def pause_durations(self) -> tuple[int, ...]:
        if self.pause_ms is not None:
            return self.pause_ms
        return tuple(sorted(b + self.tick() for b in self.boundaries().values()))

    def hold_ms(self) -> int:
        return self.batches * (self.work_ms + self.think_ms + 2 * self.max_skew_ms) + self.tick()

    def time_guard(self) -> int:
        if self.guard_ms is not None:
            return self.guard_ms
        expiry = max(self.boundaries().values())
        per = (self.hold_ms() + expiry + max(self.pause_ms or (0,))
               + self.compaction_ms * (self.compactions + 1))
        return 10 * (self.writers + 1) * per

    def models(self) -> str:
        return f"NBCC: {nbcc_variant(self.variant).follows}"

    def derived_json(self) -> dict[str, Any]:
        return {}  # ``variant`` is a field (the lock's is the explorer's own)

    def describe(self) -> str:
        kinds = ",".join(self.fault_kinds) if self.faults else "-"
        listing = "on" if self.metadata_table else "off"
        return (f"protocol=nbcc variant={self.variant} metadata_table={listing} "
                f"writers={self.writers} batches={self.batches} rows={self.rows} buckets={self.buckets} "
                f"compactions={self.compactions} failed_attempts={self.failed_attempts} faults={self.faults} "
                f"kinds={kinds} tick={self.tick()}ms")

    def validate(self) -> None:
        _require(self.variant in NBCC_VARIANTS, "variant", self.variant,
                 f"must be one of {', '.join(NBCC_VARIANTS)}")
        _require(1 <= self.writers <= 3, "writers", self.writers, "must be between 1 and 3")
        for name in ("batches", "rows", "buckets"):
            _require(1 <= getattr(self, name) <= 4, name, getattr(self, name), "must be between 1 and 4")
        _require(0 <= self.compactions <= 3, "compactions", self.compactions, "must be between 0 and 3")
        _require(0 <= self.failed_attempts <= 2, "failed_attempts", self.failed_attempts,
                 "must be between 0 and 2")
        _require(self.compaction_ms > 0, "compaction_ms", self.compaction_ms, "must be > 0")
        _require(self.heartbeat_ms >= 1000, "heartbeat_ms", self.heartbeat_ms,
                 "must be >= 1000 (HoodieHeartbeatClient refuses less than a second)")
        _require(self.skew_ms == 0, "skew_ms", self.skew_ms, "the NBCC plan runs every node on one clock")
        _require(not self.checkers, "checkers", self.checkers, "every NBCC check decides (none named)")
        _require(self.holds == 1, "holds", self.holds, "is the lock explorer's: give batches instead")
        self.table_plan().validate()
        _require(math.gcd(*self._constants()) > 0, "tick_ms", self.tick(), "must be > 0")
        super().validate()
