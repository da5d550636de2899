"""The plan of a simulated NBCC run: writers and their batches, compaction slots, crashes, and the
settings of whose behaviour runs (the variant, :mod:`model.nbcc.variants`), the readers' listing
(the metadata table or storage), heartbeats and the clean that rolls back failed writes.

Everything a run does apart from network timing (drawn from the seed) is in a :class:`TablePlan`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from model.config import (
    ConfigError,
    Crash,
    Dist,
    FaultPlan,
    LockConfig,
    Scenario,
    Schedule,
    StorageConfig,
    WorkloadConfig,
)
from model.nbcc.sim_layout import table_spec
from model.nbcc.variants import VARIANTS, NbccVariant, variant
from model.timeline.metadata import TableSpec
from model.timeline.timegen import GENERATORS, TimeGenConfig

HUDI_HEARTBEAT_INTERVAL_MS = 60_000  # hoodie.client.heartbeat.interval_in_ms (HoodieWriteConfig default)

@dataclass(frozen=True)
class BatchPlan:
    """One batch of a writer: its rows as (key number, ordering value), how long the deltacommit
    stays in flight after writing its logs, the pause before the next batch, and injected failures:
    attempt ``i`` fails after writing ``failures[i]`` log files (then the batch is retried)."""

    rows: tuple[tuple[int, int], ...]
    work_ms: int = 200
    think_ms: int = 100
    failures: tuple[int, ...] = ()
    logs_per_group: int = 1


@dataclass(frozen=True)
class WriterPlan:
    """A writer: when it starts and its batches, one deltacommit each (plus retries)."""

    batches: tuple[BatchPlan, ...]
    start_ms: int = 0


@dataclass(frozen=True)
class CompactionSlot:
    """The compaction service schedules a compaction at ``at_ms`` (true ms since the run started).
    ``fail_after``: the executor is killed after writing that many base files (the plan stays pending and is
    finished at a later slot: under Hudi's variants once its heartbeat, left to age, expired).  ``work_ms``:
    time between the base files and the commit."""

    at_ms: int
    fail_after: int | None = None
    work_ms: int = 100


@dataclass(frozen=True)
class ClusteringSlot:
    """The compaction service's node schedules a clustering at ``at_ms`` (true ms since the run started):
    a plan of every eligible file group, whose execution Hudi's bucket layout refuses
    (:mod:`model.nbcc.sim_clustering`)."""

    at_ms: int


@dataclass(frozen=True)
class CrashSpec:
    """Node ``node`` (1-based; ``len(writers) + 1`` is the compaction service) crashes at ``at_ms``
    and restarts ``restart_after_ms`` later."""

    node: int
    at_ms: int
    restart_after_ms: int = 1_000


@dataclass(frozen=True)
class TablePlan:
    """Everything a simulated NBCC run does, apart from network timing (drawn from the seed)."""

    writers: tuple[WriterPlan, ...]
    compactions: tuple[CompactionSlot, ...] = ()
    buckets: int = 2
    time_generator: str = "skew-adjusting"
    crashes: tuple[CrashSpec, ...] = ()
    latency_ms: tuple[int, int] = (5, 40)
    # Time a committer spends between drawing a completion time and creating the completed-instant
    # file (serialising and uploading commit metadata); inside the lock with the lock source.
    commit_gap_ms: int = 0
    duration_ms: int = 600_000
    base: str = "table"
    max_expected_clock_skew_ms: int = 200  # hoodie.time.generator.max_expected_clock_skew_ms
    faults: FaultPlan = field(default_factory=FaultPlan)  # the scenario's fault plan, beside ``crashes``
    variant: str = "hudi"  # whose slicing and defaults run (model/nbcc/variants.py)
    # hoodie.metadata.enable for writers and readers (both default true in Hudi 1.1+): the table records
    # its files partition and readers (and the compaction planner) list through it
    metadata_table: bool = True
    heartbeat_interval_ms: int = HUDI_HEARTBEAT_INTERVAL_MS  # hoodie.client.heartbeat.interval_in_ms
    heartbeat_tolerable_misses: int = -1  # hoodie.client.heartbeat.tolerable.misses; -1: the variant's
    auto_clean: bool = True  # hoodie.clean.automatic: a writer cleans (LAZY: rolls back failed writes)
    read_every_ms: int = 0  # a snapshot reader (node w{N+2}) reads every that many ms; 0: no reader
    read_until_ms: int = 0  # ... until this many ms after the run started
    # the order of the steps due at one instant and the hops' latencies (``model.config.Schedule``): what
    # makes a run found by the explorer replay exactly; empty: drawn from the seed
    schedule: Schedule = field(default_factory=Schedule)
    clusterings: tuple[ClusteringSlot, ...] = ()  # on the compaction service's node, between its slots

    def validate(self) -> None:
        """Raise ConfigError naming the field and value of the first bad setting."""
        if not 1 <= len(self.writers) <= 16:
            raise ConfigError("writers", len(self.writers), "must be between 1 and 16")
        if self.buckets < 1:
            raise ConfigError("buckets", self.buckets, "must be >= 1")
        if self.time_generator not in GENERATORS:
            raise ConfigError(
                "time_generator", self.time_generator, f"must be one of {', '.join(GENERATORS)}"
            )
        if self.max_expected_clock_skew_ms < 0:
            raise ConfigError("max_expected_clock_skew_ms", self.max_expected_clock_skew_ms, "must be >= 0")
        if self.commit_gap_ms < 0:
            raise ConfigError("commit_gap_ms", self.commit_gap_ms, "must be >= 0")
        lo, hi = self.latency_ms
        if not 0 <= lo <= hi:
            raise ConfigError("latency_ms", self.latency_ms, "must be (lo, hi) with 0 <= lo <= hi")
        for i, w in enumerate(self.writers):
            if w.start_ms < 0:
                raise ConfigError(f"writers[{i}].start_ms", w.start_ms, "must be >= 0")
            for j, b in enumerate(w.batches):
                where = f"writers[{i}].batches[{j}]"
                if not b.rows:
                    raise ConfigError(f"{where}.rows", b.rows, "must hold at least one row")
                if min(b.work_ms, b.think_ms) < 0:
                    raise ConfigError(f"{where}.work_ms", (b.work_ms, b.think_ms), "times must be >= 0")
                if b.logs_per_group < 1:
                    raise ConfigError(f"{where}.logs_per_group", b.logs_per_group, "must be >= 1")
                if any(f < 0 for f in b.failures):
                    raise ConfigError(f"{where}.failures", b.failures, "log counts must be >= 0")
        for i, c in enumerate(self.compactions):
            if c.at_ms < 0:
                raise ConfigError(f"compactions[{i}].at_ms", c.at_ms, "must be >= 0")
            if c.fail_after is not None and c.fail_after < 0:
                raise ConfigError(f"compactions[{i}].fail_after", c.fail_after, "must be >= 0")
        for i, cl in enumerate(self.clusterings):
            if cl.at_ms < 0:
                raise ConfigError(f"clusterings[{i}].at_ms", cl.at_ms, "must be >= 0")
        if self.variant not in VARIANTS:
            raise ConfigError("variant", self.variant, f"must be one of {', '.join(VARIANTS)}")
        if self.heartbeat_interval_ms < 1000:  # HoodieHeartbeatClient: "Cannot set heartbeat lower than 1 s"
            raise ConfigError("heartbeat_interval_ms", self.heartbeat_interval_ms, "must be >= 1000")
        if self.heartbeat_tolerable_misses != -1 and self.heartbeat_tolerable_misses < 1:
            raise ConfigError(
                "heartbeat_tolerable_misses", self.heartbeat_tolerable_misses,
                "must be >= 1 (or -1: the variant's)",
            )
        if self.read_every_ms < 0 or self.read_until_ms < 0:
            raise ConfigError("read_every_ms", (self.read_every_ms, self.read_until_ms), "must be >= 0")
        for i, k in enumerate(self.crashes):
            if not 1 <= k.node <= len(self.writers) + 1:
                raise ConfigError(f"crashes[{i}].node", k.node, f"must be in 1..{len(self.writers) + 1}")
            if k.at_ms < 0 or k.restart_after_ms < 0:
                raise ConfigError(f"crashes[{i}].at_ms", (k.at_ms, k.restart_after_ms), "must be >= 0")
        self.scenario(0).faults.validate(list(self.nodes))

    @property
    def time_config(self) -> TimeGenConfig:
        """The time generator every node uses."""
        return TimeGenConfig(self.time_generator, self.max_expected_clock_skew_ms)

    @property
    def spec(self) -> TableSpec:
        """What the table's ``hoodie.properties`` says."""
        return table_spec(self.buckets, self.metadata_table)

    @property
    def nbcc_variant(self) -> NbccVariant:
        """The variant the run follows."""
        return variant(self.variant)

    @property
    def tolerable_misses(self) -> int:
        """hoodie.client.heartbeat.tolerable.misses: the plan's, or the variant's default."""
        if self.heartbeat_tolerable_misses == -1:
            return self.nbcc_variant.heartbeat_tolerable_misses
        return self.heartbeat_tolerable_misses

    @property
    def heartbeat_expiry_ms(self) -> int:
        """How long a heartbeat may be silent before its instant counts as failed
        (``HoodieHeartbeatClient#maxAllowableHeartbeatIntervalInMs``: interval x tolerable misses)."""
        return self.heartbeat_interval_ms * self.tolerable_misses

    @property
    def reader_node(self) -> str | None:
        """The node of the snapshot reader, when the plan has one."""
        return f"w{len(self.writers) + 2}" if self.read_every_ms > 0 else None

    @property
    def nodes(self) -> tuple[str, ...]:
        """Every node: writers, the compaction service, the reader if any."""
        n = len(self.writers) + (2 if self.read_every_ms > 0 else 1)
        return tuple(f"w{i}" for i in range(1, n + 1))

    @property
    def compactor_node(self) -> str:
        """The node that runs the compaction service."""
        return f"w{len(self.writers) + 1}"

    def lock_config(self) -> LockConfig:
        """The table lock with short timings (validity 10 s, renewal every 1 s, polling every 25 ms).

        Without Hudi's lock audit trail: its extra writes would shift every NBCC schedule, and NBCC's
        checkers read the table, not the lock's audit files.
        """
        return LockConfig(
            validity_secs=10, renew_interval_secs=1, wait_time_ms=300_000, poll_ms=25, base_path=self.base,
            audit=False,
        )

    def scenario(self, seed: int) -> Scenario:
        """The simulated world's scenario: short lock timings, the plan's latency, crashes and faults."""
        lo, hi = self.latency_ms
        crashes = tuple(Crash(f"w{k.node}", k.at_ms, k.restart_after_ms) for k in self.crashes)
        return Scenario(
            name="nbcc",
            seed=seed,
            duration_ms=self.duration_ms,
            lock=self.lock_config(),
            # the table's files go through Hudi's storage layer, whose client retries; the lock client
            # is Hudi's own (SDK retries off in Hudi 1.2.0: sdk_retries = -1, the variant's setting)
            storage=StorageConfig(latency_ms=Dist("uniform", lo, hi), timeout_ms=5_000, table_retries=2),
            workload=WorkloadConfig(writers=len(self.nodes)),
            faults=FaultPlan(
                pauses=self.faults.pauses,
                errors=self.faults.errors,
                crashes=crashes + self.faults.crashes,
                writer_deaths=self.faults.writer_deaths,
                cutoffs=self.faults.cutoffs,
                heartbeat_start_failures=self.faults.heartbeat_start_failures,
            ),
            schedule=self.schedule,
        )


@dataclass(frozen=True)
class TableSettings:
    """The plan's settings of whose behaviour runs (what a scenario's ``[nbcc]`` table sets)."""

    variant: str = "hudi"
    metadata_table: bool = True
    heartbeat_interval_ms: int = HUDI_HEARTBEAT_INTERVAL_MS
    heartbeat_tolerable_misses: int = -1
    auto_clean: bool = True
    read_every_ms: int = 0
    read_until_ms: int = 0
    clustering_at_ms: tuple[int, ...] = ()

    def apply(self, plan: TablePlan) -> TablePlan:
        """``plan`` with these settings (a clustering slot at each ``clustering_at_ms``)."""
        return replace(
            plan,
            clusterings=tuple(ClusteringSlot(at) for at in self.clustering_at_ms),
            variant=self.variant,
            metadata_table=self.metadata_table,
            heartbeat_interval_ms=self.heartbeat_interval_ms,
            heartbeat_tolerable_misses=self.heartbeat_tolerable_misses,
            auto_clean=self.auto_clean,
            read_every_ms=self.read_every_ms,
            read_until_ms=self.read_until_ms,
        )


def describe_plan(plan: TablePlan) -> list[str]:
    """A plan as short readable lines (used to print shrunk counterexamples)."""
    lines = [f"{len(plan.writers)} writer(s), {plan.buckets} bucket(s), time generator {plan.time_generator}"]
    for i, w in enumerate(plan.writers, start=1):
        lines.append(f"writer w{i} starts at {w.start_ms} ms")
        for j, b in enumerate(w.batches):
            fails = f", attempts fail after {list(b.failures)} log(s)" if b.failures else ""
            rows = ", ".join(f"k{k}@ts{ts}" for k, ts in b.rows)
            lines.append(f"  batch {j}: rows [{rows}], in flight {b.work_ms} ms, then {b.think_ms} ms{fails}")
    for c in plan.compactions:
        fail = f", fails after {c.fail_after} base file(s)" if c.fail_after is not None else ""
        lines.append(f"compaction scheduled at {c.at_ms} ms{fail}")
    for cl in plan.clusterings:
        lines.append(f"clustering scheduled at {cl.at_ms} ms")
    for k in plan.crashes:
        lines.append(f"node w{k.node} crashes at {k.at_ms} ms, restarts {k.restart_after_ms} ms later")
    lines.append(
        f"variant {plan.variant}, metadata table {'on' if plan.metadata_table else 'off'}, heartbeat every "
        f"{plan.heartbeat_interval_ms} ms (expires after {plan.heartbeat_expiry_ms} ms), "
        f"clean after commits {'on' if plan.auto_clean else 'off'}"
    )
    if plan.reader_node:
        lines.append(
            f"reader {plan.reader_node} reads every {plan.read_every_ms} ms until {plan.read_until_ms} ms"
        )
    return lines


def random_plan(
    rng: random.Random,
    writers: int = 3,
    batches: int = 4,
    buckets: int = 3,
    keys: int = 8,
    compactions: int = 3,
    fail_prob: float = 0.25,
    time_generator: str = "skew-adjusting",
    faults: FaultPlan | None = None,
    settings: TableSettings | None = None,
) -> TablePlan:
    """A random plan for the CLI: overlapping deltacommits, compactions mid-flight, failures.
    ``settings`` (variant, metadata table, heartbeats, clean, reader) draw nothing from ``rng``, so a
    seed draws the same writers and slots whatever they are."""
    ws = []
    for _ in range(writers):
        bs = []
        for _ in range(batches):
            rows = tuple((rng.randrange(keys), rng.randrange(1000)) for _ in range(rng.randint(1, 4)))
            failures = tuple(rng.randrange(3) for _ in range(2) if rng.random() < fail_prob)
            bs.append(BatchPlan(rows, rng.randint(0, 1500), rng.randint(0, 500), failures, rng.randint(1, 2)))
        ws.append(WriterPlan(tuple(bs), rng.randint(0, 1000)))
    horizon = batches * 1500
    slots = tuple(
        CompactionSlot(at, rng.choice([None, None, 0, 1]), rng.randint(0, 300))
        for at in sorted(rng.randint(200, horizon) for _ in range(compactions))
    )
    return (settings or TableSettings()).apply(
        TablePlan(tuple(ws), slots, buckets, time_generator, commit_gap_ms=100, faults=faults or FaultPlan())
    )
