"""The bounds of one exploration of the timeline under OCC: the writers' own commit code, every schedule.

The explored runs are the simulated world's timeline runs (``model/timeline/run.py``): each
writer is Hudi 1.2.1's copy-on-write write client (``variant = "hudi"``,
``model/timeline/hudi_writer.py``) or Vanlightly's v5 specification's writer (``vanlightly-v5``,
``model/timeline/v5.py``), committing ``ops`` operations of one upsert each to ``keys`` keys, its
table lock Hudi's storage-based provider with the lock explorer's short timings.  The explorer
takes every decision the simulated world would draw (the order of steps, faults, start phases,
clock offsets) and the timeline's checkers judge every run: lost updates and consistent reads
(``consistent-read``), duplicate keys across file groups, unique and monotonic times, immutable
completed instants, completion and requested order.

What the bounds fix: each operation is an upsert (``delete_prob = 0``), its value unique to the
writer and the operation; with one key every writer writes that key (its random stream draws
nothing that differs, so identical writers are symmetric); ``file_groups`` are v5's file groups
or Hudi's partitions; the time generator waits ``max_skew_ms`` (Hudi's
``max_expected_clock_skew_ms``) with the lock held.  "holds" covers these writers, operations,
keys and faults only, on the bounds' time grid.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from model.checkers.timeline import check_timeline_history
from model.checkers.verdict import Verdict
from model.config import ConfigError, LockConfig, Scenario, WorkloadConfig
from model.explore.bounds import Bounds, _require
from model.lock.variants import VARIANTS as LOCK_VARIANTS
from model.runtime.history import Event
from model.runtime.kernel import Workload
from model.runtime.objectstore import StoredObject
from model.timeline.config import CC_MODES, TIMELINE_CHECKERS, TimelineConfig, TimelineScenario
from model.timeline.run import simulate_timeline, timeline_workload
from model.timeline.variants import COMMIT_VARIANTS, commit_variant

# consistent reads (a committed write lost, a read that misses one) and duplicate keys across file groups
DEFAULT_CHECKERS = ("consistent-read", "duplicate-key")


@dataclass(frozen=True)
class OccBounds(Bounds):
    """One configuration of the OCC explorer (``variant`` is the timeline writer's; see the module doc).

    The lock's timing fields (validity, renewals, polls, drift allowance, client timeout) are the
    commit lock's; ``work_ms`` is the write job's work between tagging and the base file, ``think_ms``
    the pause between operations; ``checkers`` are timeline checkers (default: all decide).
    """

    protocol: ClassVar[str] = "occ"
    checks_liveness: ClassVar[bool] = False
    takes_base: ClassVar[bool] = False
    known_checkers: ClassVar[tuple[str, ...]] = TIMELINE_CHECKERS

    variant: str = "hudi"
    cc: str = "optimistic"
    ops: int = 1
    keys: int = 1
    file_groups: int = 1
    metadata_table: bool | None = None
    time_generator: str | None = None
    put_if_absent: bool | None = None
    pk_check: bool | None = None
    max_skew_ms: int = 500
    heartbeat_ms: int = 1_000
    lock_variant: str = "hudi"

    # ---- the timeline run ------------------------------------------------------------------------

    def timeline(self) -> TimelineConfig:
        """The ``[timeline]`` table of the explored runs (and of the scenario that replays one)."""
        hudi = self.variant == "hudi"
        generator = self.time_generator or ("skew-adjusting" if hudi else "monotonic")
        return TimelineConfig(
            variant=self.variant, layout="v8", time_generator=generator,
            max_expected_clock_skew_ms=self.max_skew_ms, cc=self.cc,
            put_if_absent=None if hudi else self.put_if_absent, pk_check=None if hudi else self.pk_check,
            keys=self.keys, file_groups=None if hudi else self.file_groups,
            partitions=self.file_groups if hudi else None,
            metadata_table=self.metadata_table if hudi else None,
            heartbeat_interval_ms=self.heartbeat_ms if hudi else None,
            unsupported_single_writer=hudi and self.cc == "none" and self.writers > 1,
            ops_per_writer=self.ops, delete_prob=0.0,
            checkers=self.decisive_checkers())

    def lock(self) -> LockConfig:
        return dataclasses.replace(super().lock(), variant=self.lock_variant)

    def workload(self) -> WorkloadConfig:
        return dataclasses.replace(super().workload(), holds=self.ops, steps_per_hold=1)

    def decisive_checkers(self) -> tuple[str, ...]:
        """The timeline checkers that decide (default: consistent reads, lost updates among them, and
        duplicate keys across file groups); the others' violations are findings."""
        return self.checkers if self.checkers is not None else DEFAULT_CHECKERS

    def kernel_workload(self, scenario: Scenario) -> Workload:
        return timeline_workload(TimelineScenario(scenario, self.timeline()))

    def verdict(self, events: list[Event], objects: Mapping[str, StoredObject]) -> Verdict:
        tl = self.timeline()
        return check_timeline_history(events, self.lock().base_path, tl.layout, tl.checkers,
                                      metadata_table=tl.metadata_table_on)

    def replay_scenario(self, scenario: Scenario) -> TimelineScenario:
        """The timeline scenario (``protocol = "occ"``) that replays an explored run."""
        return TimelineScenario(dataclasses.replace(scenario, checkers=()), self.timeline())

    def simulate(self, replay: Any) -> list[Event]:
        """The simulated history, without the transaction records it appends after ``run-end`` (``txn``
        events: the explored world keeps none, so they are no part of the run it replays)."""
        return [e for e in simulate_timeline(replay).events if e.f != "txn"]

    def _constants(self) -> list[int]:
        return [*super()._constants(), self.max_skew_ms, self.heartbeat_ms]

    def hold_ms(self) -> int:
        """An operation's longest stretch without faults: two lock holds with the generator's waits and
        the write job's work."""
        poll: int = self.lock().poll_ms
        return 2 * (self.max_skew_ms + poll) + self.work_ms + self.tick()

    def models(self) -> str:
        return f"OCC writers: {commit_variant(self.variant).models()}"

    def derived_json(self) -> dict[str, Any]:
        return {}  # ``variant`` is a field (the lock's is the explorer's own)

    def describe(self) -> str:
        lock = self.lock()
        kinds = ",".join(self.fault_kinds) if self.faults else "-"
        mt = {None: "default", True: "on", False: "off"}[self.metadata_table]
        return (f"protocol=occ variant={self.variant} cc={self.cc} writers={self.writers} ops={self.ops} "
                f"keys={self.keys} file_groups={self.file_groups} metadata_table={mt} faults={self.faults} "
                f"kinds={kinds} skew={self.skew_ms}ms lock={lock.variant} validity={lock.validity_secs}s "
                f"tick={self.tick()}ms")

    def validate(self) -> None:
        _require(self.variant in COMMIT_VARIANTS, "variant", self.variant,
                 f"must be one of {', '.join(COMMIT_VARIANTS)}")
        _require(self.cc in CC_MODES, "cc", self.cc, f"must be one of {', '.join(CC_MODES)}")
        _require(self.lock_variant in LOCK_VARIANTS, "lock_variant", self.lock_variant,
                 f"must be one of {', '.join(LOCK_VARIANTS)}")
        _require(1 <= self.ops <= 4, "ops", self.ops, "must be between 1 and 4")
        _require(1 <= self.keys <= 4, "keys", self.keys, "must be between 1 and 4")
        _require(1 <= self.file_groups <= 4, "file_groups", self.file_groups, "must be between 1 and 4")
        _require(self.max_skew_ms > 0, "max_skew_ms", self.max_skew_ms, "must be > 0")
        _require(self.holds == 1, "holds", self.holds, "is the lock explorer's: give ops instead")
        try:
            TimelineScenario(self.scenario(), self.timeline()).validate()
        except ConfigError as e:  # a timeline setting the variant cannot have: name the explorer's field
            renamed = {"timeline.partitions": "file_groups", "timeline.file_groups": "file_groups"}
            field = renamed.get(e.field, e.field)
            raise ConfigError(field.removeprefix("timeline."), e.value, e.reason) from None
        super().validate()
