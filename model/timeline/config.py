"""Configuration of a timeline run: the ``[timeline]`` table of a scenario file, beside the lock fields.

A timeline scenario is a lock-model :class:`~model.config.Scenario` (storage, clocks,
faults, the table lock, writers and their timing) plus a :class:`TimelineConfig`.  The
table's base path is ``lock.base_path``, so the table lock sits in ``<base>/.hoodie/.locks/``.
The table is a COPY_ON_WRITE Hudi table of version 8 (layout ``v8``) or 6 (``v6``).

``variant`` picks the writer (``model/timeline/variants.py``): ``hudi`` (Hudi 1.2.1's commit path, the
default) or ``vanlightly-v5`` (the TLA+ specification).  A setting only one of them has is refused for
the other, naming the field, the value and the variant.  Settings left unset (``None``) take the
variant's default (the ``*_on`` / ``*_count`` properties of :class:`TimelineConfig`).
"""

from __future__ import annotations

from dataclasses import dataclass

from model.config import ConfigError, Scenario
from model.timeline.layout import LAYOUTS
from model.timeline.timegen import TimeGenConfig
from model.timeline.variants import COMMIT_VARIANTS, CommitVariant, commit_variant

CC_MODES = ("none", "optimistic", "pessimistic")
WORKLOADS = ("commits", "times")
STRATEGIES = ("simple", "prefer-writer")
CLUSTERING_UPDATES = ("reject", "allow")
# Hypothetical writers, each with one of Hudi's replace handlings taken out (Hudi 1.2 has all three):
# a conflict check that leaves pending clustering / replace instants out of its candidates; one that
# does not count a completed replacecommit's replaced file ids as mutated; a writer's view that shows
# replaced file groups.
HYPOTHETICAL_REPLACE = ("ignore-pending-clustering", "ignore-replaced-ids", "show-replaced")
# Hudi's class for each clustering_updates value (hoodie.clustering.updates.strategy).
UPDATE_STRATEGY_CLASS = {"reject": "SparkRejectUpdateStrategy", "allow": "SparkAllowUpdateStrategy"}
FAILED_WRITES = ("eager", "lazy")
TIMELINE_CHECKERS = (
    "unique-times",
    "monotonic-times",
    "completed-immutable",
    "completion-order",
    "consistent-read",
    "duplicate-key",
    "requested-order",
)
# Hudi's class for each conflict_strategy value (hoodie.write.lock.conflict.resolution.strategy).
STRATEGY_CLASS = {
    "simple": "SimpleConcurrentFileWritesConflictResolutionStrategy",
    "prefer-writer": "PreferWriterConflictResolutionStrategy",
}
# Settings of one writer only: the field, and the variant writer that has it.
_HUDI_ONLY = ("partitions", "preload", "small_file_records", "conflict_strategy", "failed_writes",
              "heartbeat_interval_ms", "heartbeat_tolerable_misses", "unsupported_single_writer",
              "clustering_writers", "overwrite_writers", "clustering_updates", "hypothetical_replace")
_V5_ONLY = ("file_groups", "fg_lock_poll_ms")


def _require(cond: bool, name: str, value: object, reason: str) -> None:
    if not cond:
        raise ConfigError(f"timeline.{name}", value, reason)


@dataclass(frozen=True)
class TimelineConfig:
    """How writers generate times and commit to a copy-on-write key-value table.

    ``variant``: ``hudi`` or ``vanlightly-v5`` (see ``model/timeline/variants.py``).
    ``workload``: ``commits`` (upserts and deletes of ``keys`` keys) or ``times`` (each operation only
    generates an instant time, writes the requested file, then generates a completion time and writes
    the completed file under the lock).  ``ops_per_writer`` bounds the operations each writer starts
    (0: until the run ends).  ``fail_commit_prob``: chance that a writer dies for good in the commit
    phase (after writing its data file, before the completed instant), freeing its table lock.
    ``checkers`` decide the verdict; the other timeline checkers are reported as findings.

    ``vanlightly-v5`` only: ``file_groups`` (file group ``n`` is partition ``fg<n>``), ``fg_lock_poll_ms``
    (pessimistic), and the specification's switches ``pk_check``, ``put_if_absent`` (instant and slice
    files created if absent), ``salt``.

    ``hudi`` only: ``partitions`` (key ``k<i>`` lives in partition ``p<(i-1) mod partitions>``),
    ``preload`` (the table starts with every key committed, one base file per partition, as after a bulk
    insert before the run), ``small_file_records`` (a file group takes inserts while it holds fewer
    records; 0: always, as Hudi's 100 MB small-file limit does for tiny records), ``conflict_strategy``
    (``simple`` or ``prefer-writer``), ``metadata_table`` (readers and writers list files through the
    metadata table, i.e. only committed files; false: they list storage), ``failed_writes`` (``eager`` or
    ``lazy``; unset: Hudi's inference, LAZY under OCC, EAGER for a single writer),
    ``heartbeat_interval_ms`` and ``heartbeat_tolerable_misses`` (``hoodie.client.heartbeat.*``), and
    ``unsupported_single_writer`` (run several writers with ``cc = "none"``: Hudi's SINGLE_WRITER mode,
    which Hudi does not support for several writers).

    ``hudi`` only, replacecommits (table version 8, SimpleConcurrentFileWrites, preloaded table):
    ``clustering_writers`` (nodes whose operations are clusterings: each schedules a plan of a partition's
    file groups under the lock as ``<t>.clustering.requested``, rewrites their rows into one new file
    group and completes ``<t>_<c>.replacecommit`` replacing them), ``overwrite_writers`` (nodes whose
    operations are insert_overwrites of the key's partition: the key's new value in a new file group, every
    file group of the partition replaced), ``clustering_updates`` (``hoodie.clustering.updates.strategy``:
    ``reject``, Hudi's inference under SimpleConcurrentFileWrites, or ``allow``) and
    ``hypothetical_replace`` (a hypothetical writer with one of Hudi's replace handlings taken out, one of
    :data:`HYPOTHETICAL_REPLACE`).
    """

    variant: str = "hudi"
    layout: str = "v8"
    time_generator: str = "skew-adjusting"
    max_expected_clock_skew_ms: int = 200
    per_process_increase: bool = True
    cc: str = "optimistic"
    put_if_absent: bool | None = None
    salt: bool = False
    pk_check: bool | None = None
    workload: str = "commits"
    keys: int = 2
    file_groups: int | None = None
    partitions: int | None = None
    preload: bool = False
    small_file_records: int | None = None
    conflict_strategy: str | None = None
    metadata_table: bool | None = None
    failed_writes: str | None = None
    heartbeat_interval_ms: int | None = None
    heartbeat_tolerable_misses: int | None = None
    unsupported_single_writer: bool = False
    clustering_writers: tuple[str, ...] = ()
    overwrite_writers: tuple[str, ...] = ()
    clustering_updates: str | None = None
    hypothetical_replace: str | None = None
    ops_per_writer: int = 3
    delete_prob: float = 0.2
    fail_commit_prob: float = 0.0
    fg_lock_poll_ms: int | None = None
    checkers: tuple[str, ...] = TIMELINE_CHECKERS

    # ---- the variant and its defaults ----------------------------------------------------

    @property
    def spec(self) -> CommitVariant:
        """The commit variant (``model/timeline/variants.py``)."""
        return commit_variant(self.variant)

    @property
    def time_config(self) -> TimeGenConfig:
        return TimeGenConfig(self.time_generator, self.max_expected_clock_skew_ms, self.per_process_increase)

    @property
    def pk_check_on(self) -> bool:
        """The specification's primary-key check under the lock (v5 default on; Hudi has none)."""
        return self.spec.default_pk_check if self.pk_check is None else self.pk_check

    @property
    def put_if_absent_on(self) -> bool:
        """(v5) instant and slice files created if absent."""
        return self.spec.default_put_if_absent if self.put_if_absent is None else self.put_if_absent

    @property
    def file_group_count(self) -> int:
        """(v5) the number of file groups, one per partition."""
        return 1 if self.file_groups is None else self.file_groups

    @property
    def fg_poll_ms(self) -> int:
        """(v5, pessimistic) how often a file-group lock is polled."""
        return 100 if self.fg_lock_poll_ms is None else self.fg_lock_poll_ms

    @property
    def partition_count(self) -> int:
        """(hudi) the number of partitions keys are spread over."""
        return 1 if self.partitions is None else self.partitions

    @property
    def small_file_limit(self) -> int:
        """(hudi) records below which a file group takes inserts (0: no limit)."""
        return 0 if self.small_file_records is None else self.small_file_records

    @property
    def strategy(self) -> str:
        """(hudi) the conflict resolution strategy: Hudi's default is SimpleConcurrentFileWrites."""
        return "simple" if self.conflict_strategy is None else self.conflict_strategy

    @property
    def metadata_table_on(self) -> bool:
        """Whether readers and writers list files through the metadata table (committed files only)."""
        return self.spec.default_metadata_table if self.metadata_table is None else self.metadata_table

    @property
    def failed_writes_policy(self) -> str | None:
        """(hudi) EAGER or LAZY as Hudi resolves it; None for the specification (no rollback).

        ``HoodieWriteConfig.Builder#autoAdjustConfigsForConcurrencyMode`` sets LAZY whenever the
        concurrency mode supports several writers; ``hoodie.clean.failed.writes.policy`` defaults to EAGER.
        """
        if not self.spec.rolls_back_failed_writes:
            return None
        if self.cc == "optimistic":
            return "lazy"
        return "eager" if self.failed_writes is None else self.failed_writes

    @property
    def heartbeat_ms(self) -> int:
        """(hudi) ``hoodie.client.heartbeat.interval_in_ms`` (default 60 s)."""
        return 60_000 if self.heartbeat_interval_ms is None else self.heartbeat_interval_ms

    @property
    def tolerable_misses(self) -> int:
        """(hudi) ``hoodie.client.heartbeat.tolerable.misses`` (1.2.1: 10; 1.2.0: 2)."""
        if self.heartbeat_tolerable_misses is None:
            return self.spec.default_heartbeat_tolerable_misses
        return self.heartbeat_tolerable_misses

    @property
    def update_strategy(self) -> str:
        """(hudi) ``hoodie.clustering.updates.strategy``: Hudi infers SparkAllowUpdateStrategy under
        PreferWriter, SparkRejectUpdateStrategy otherwise (``HoodieClusteringConfig#UPDATES_STRATEGY``)."""
        if self.clustering_updates is not None:
            return self.clustering_updates
        return "allow" if self.strategy == "prefer-writer" else "reject"

    def role(self, node: str) -> str:
        """(hudi) What ``node``'s operations are: ``clustering``, ``insert-overwrite`` or ``upsert``."""
        if node in self.clustering_writers:
            return "clustering"
        return "insert-overwrite" if node in self.overwrite_writers else "upsert"

    @property
    def replaces(self) -> bool:
        """Whether a run writes replacecommits (clusterings or insert_overwrites)."""
        return bool(self.clustering_writers or self.overwrite_writers)

    # ---- validation -----------------------------------------------------------------------

    def validate(self) -> None:
        """Raise ConfigError naming the first bad field (and the variant, for a setting it cannot have)."""
        _require(self.variant in COMMIT_VARIANTS, "variant", self.variant,
                 f"must be one of {', '.join(COMMIT_VARIANTS)}")
        _require(self.layout in LAYOUTS, "layout", self.layout, f"must be one of {', '.join(LAYOUTS)}")
        self.time_config.validate()
        _require(self.cc in CC_MODES, "cc", self.cc, f"must be one of {', '.join(CC_MODES)}")
        _require(
            self.workload in WORKLOADS, "workload", self.workload, f"must be one of {', '.join(WORKLOADS)}"
        )
        _require(1 <= self.keys <= 1000, "keys", self.keys, "must be between 1 and 1000")
        _require(
            self.ops_per_writer >= 0, "ops_per_writer", self.ops_per_writer, "must be >= 0 (0: unbounded)"
        )
        _require(0.0 <= self.delete_prob <= 1.0, "delete_prob", self.delete_prob, "must be in [0, 1]")
        _require(
            0.0 <= self.fail_commit_prob <= 1.0,
            "fail_commit_prob",
            self.fail_commit_prob,
            "must be in [0, 1]",
        )
        for c in self.checkers:
            _require(c in TIMELINE_CHECKERS, "checkers", c, f"must be among {', '.join(TIMELINE_CHECKERS)}")
        if self.spec.writer == "hudi":
            self._validate_hudi()
        else:
            self._validate_v5()

    def _refuse(self, name: str, value: object, why: str) -> None:
        raise ConfigError(f"timeline.{name}", value, f"variant {self.variant} cannot have it: {why}")

    def _validate_v5(self) -> None:
        for name in _HUDI_ONLY:
            value = getattr(self, name)
            if value not in (None, False, ()):
                self._refuse(name, value, "a setting of the hudi writer (model/timeline/hudi_writer.py)")
        if self.metadata_table:
            self._refuse("metadata_table", True, "the specification's readers see the slices the store holds")
        _require(1 <= self.file_group_count <= 1000, "file_groups", self.file_groups,
                 "must be between 1 and 1000")
        if self.fg_lock_poll_ms is not None:
            _require(self.fg_lock_poll_ms > 0, "fg_lock_poll_ms", self.fg_lock_poll_ms, "must be > 0")

    def _validate_hudi(self) -> None:
        spec = self.spec
        if self.time_generator not in spec.time_generators:
            self._refuse("time_generator", self.time_generator,
                         "Hudi 1.2's only instant-time generator is skew-adjusting (WaitBasedTimeGenerator)")
        if self.cc not in spec.cc_modes:
            self._refuse("cc", self.cc, "Hudi's concurrency modes are SINGLE_WRITER (none) and "
                         "OPTIMISTIC_CONCURRENCY_CONTROL (optimistic); it has no file-group locks")
        if self.salt:
            self._refuse("salt", True, "Hudi names instants by their time alone")
        if self.pk_check:
            self._refuse("pk_check", True, "Hudi's conflict check compares (partition, fileId) only "
                         "(SimpleConcurrentFileWritesConflictResolutionStrategy#hasConflict)")
        if self.put_if_absent is not None:
            self._refuse("put_if_absent", self.put_if_absent, "Hudi creates instant files with "
                         "create(path, overwrite=false) and writes data files of unique names plainly")
        for name in _V5_ONLY:
            value = getattr(self, name)
            if value is not None:
                self._refuse(name, value, "a setting of the specification's writer (model/timeline/v5.py); "
                             "Hudi picks file groups by its index and small-file handling "
                             "(timeline.partitions)")
        _require(1 <= self.partition_count <= 100, "partitions", self.partitions, "must be between 1 and 100")
        _require(self.small_file_limit >= 0, "small_file_records", self.small_file_records,
                 "must be >= 0 (0: no limit)")
        if self.conflict_strategy is not None:
            _require(self.conflict_strategy in STRATEGIES, "conflict_strategy", self.conflict_strategy,
                     f"must be one of {', '.join(STRATEGIES)}")
            if self.cc != "optimistic":
                self._refuse("conflict_strategy", self.conflict_strategy, "conflicts are resolved only under "
                             "OCC (HoodieWriteConfig#needResolveWriteConflict is false for SINGLE_WRITER)")
            if self.conflict_strategy == "prefer-writer" and self.layout == "v6":
                raise ConfigError("timeline.conflict_strategy", self.conflict_strategy,
                                  "prefer-writer orders candidates by completion time, which a v6 timeline "
                                  "keeps only as file modification times (not modelled)")
        if self.failed_writes is not None:
            _require(self.failed_writes in FAILED_WRITES, "failed_writes", self.failed_writes,
                     f"must be one of {', '.join(FAILED_WRITES)}")
            if self.cc == "optimistic" and self.failed_writes == "eager":
                self._refuse("failed_writes", "eager", "Hudi sets LAZY under OCC "
                             "(HoodieWriteConfig.Builder#autoAdjustConfigsForConcurrencyMode)")
        if self.heartbeat_interval_ms is not None:
            _require(self.heartbeat_interval_ms >= 1000, "heartbeat_interval_ms", self.heartbeat_interval_ms,
                     "must be >= 1000 (HoodieHeartbeatClient: 'Cannot set heartbeat lower than 1 second')")
        _require(self.tolerable_misses >= 1, "heartbeat_tolerable_misses", self.heartbeat_tolerable_misses,
                 "must be >= 1")
        if self.preload and self.workload != "commits":
            raise ConfigError("timeline.preload", True, "needs workload = \"commits\" (there are no keys)")
        if self.unsupported_single_writer and self.cc != "none":
            raise ConfigError("timeline.unsupported_single_writer", True, "only with cc = \"none\"")
        self._validate_replace()

    def _validate_replace(self) -> None:
        if self.clustering_updates is not None:
            _require(self.clustering_updates in CLUSTERING_UPDATES, "clustering_updates",
                     self.clustering_updates, f"must be one of {', '.join(CLUSTERING_UPDATES)}")
        if self.hypothetical_replace is not None:
            _require(self.hypothetical_replace in HYPOTHETICAL_REPLACE, "hypothetical_replace",
                     self.hypothetical_replace, f"must be one of {', '.join(HYPOTHETICAL_REPLACE)}")
        both = sorted(set(self.clustering_writers) & set(self.overwrite_writers))
        _require(not both, "overwrite_writers", list(self.overwrite_writers),
                 f"{', '.join(both)} also in timeline.clustering_writers (a node has one role)")
        if not self.replaces:
            for name in ("clustering_updates", "hypothetical_replace"):
                if getattr(self, name) is not None:
                    raise ConfigError(f"timeline.{name}", getattr(self, name),
                                      "needs timeline.clustering_writers or timeline.overwrite_writers")
            return
        field = "clustering_writers" if self.clustering_writers else "overwrite_writers"
        value = list(getattr(self, field))
        _require(self.layout == "v8", field, value, "replacecommits are modelled in table version 8 only "
                 "(layout v8: clustering as a clustering instant)")
        _require(self.cc == "optimistic", field, value, "replacecommits are modelled under OCC only")
        _require(self.strategy == "simple", field, value, "replacecommits are modelled with "
                 "SimpleConcurrentFileWrites only (PreferWriter checks a clustering's own commit, "
                 "not modelled)")
        _require(self.workload == "commits" and self.preload, field, value,
                 "needs workload = \"commits\" and preload = true (a clustering rewrites committed "
                 "file groups)")

    # ---- what a run of it is ---------------------------------------------------------------

    def reader_text(self) -> str:
        """How readers find the table's files."""
        if self.spec.writer == "v5":
            return "readers see the slices the store holds"
        if self.metadata_table_on:
            return "readers list files through the metadata table"
        return "readers list storage"


@dataclass(frozen=True)
class TimelineScenario:
    """A lock-model scenario (world, clocks, faults, lock, writers) and its timeline settings."""

    scenario: Scenario
    timeline: TimelineConfig

    @property
    def name(self) -> str:
        return self.scenario.name

    @property
    def base_path(self) -> str:
        return self.scenario.lock.base_path

    def validate(self) -> None:
        """Validate both parts; several hudi writers with ``cc = "none"`` need
        ``unsupported_single_writer``."""
        self.scenario.validate()
        self.timeline.validate()
        tl = self.timeline
        writers = self.scenario.workload.writers
        nodes = self.scenario.workload.nodes()
        for name in ("clustering_writers", "overwrite_writers"):
            for node in getattr(tl, name):
                if node not in nodes:
                    raise ConfigError(f"timeline.{name}", node, f"not a writer node ({', '.join(nodes)})")
        if tl.spec.writer == "hudi" and tl.cc == "none" and writers > 1 and not tl.unsupported_single_writer:
            raise ConfigError("timeline.cc", "none", f"variant hudi with {writers} writers: Hudi's "
                              "SINGLE_WRITER mode does not support several writers; set "
                              "timeline.unsupported_single_writer = true to run it as an unsupported "
                              "configuration")

    def models(self) -> str:
        """One line saying whose behaviour the run is (for ``hcc list``, reports and the README)."""
        return models_text(self.timeline, self.scenario.workload.writers)


def models_text(tl: TimelineConfig, writers: int) -> str:
    """Whose behaviour a run of ``tl`` with ``writers`` writers is, in one line: the variant's writers (and,
    for Hudi's, the concurrency mode and strategy), and how readers list files."""
    spec = tl.spec
    if spec.writer == "v5":
        return f"{spec.models()}; {tl.reader_text()}"
    if tl.cc == "optimistic":
        mode = f"under OCC ({STRATEGY_CLASS[tl.strategy]})"
        kinds = ((tl.clustering_writers, f"clustering ({UPDATE_STRATEGY_CLASS[tl.update_strategy]})"),
                 (tl.overwrite_writers, "insert_overwrite"))
        roles = [f"{len(names)} {what}" for names, what in kinds if names]
        if roles:
            mode += f", {' and '.join(roles)}"
        if tl.hypothetical_replace is not None:
            return (f"a hypothetical writer ({tl.hypothetical_replace}) on {spec.models()} {mode}; "
                    f"{tl.reader_text()}")
    elif writers > 1:
        mode = f"in SINGLE_WRITER mode, {writers} of them: a configuration Hudi does not support"
    else:
        mode = "in SINGLE_WRITER mode"
    return f"{spec.models()} {mode}; {tl.reader_text()}"
