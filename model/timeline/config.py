"""Configuration of a timeline run: the ``[timeline]`` table of a scenario file, beside the lock fields.

A timeline scenario is a lock-model :class:`~model.config.Scenario` (storage, clocks,
faults, the table lock, writers and their timing) plus a :class:`TimelineConfig`.  The
table's base path is ``lock.base_path``, so the table lock sits in ``<base>/.hoodie/.locks/``.
The table is a COPY_ON_WRITE Hudi table of version 8 (layout ``v8``) or 6 (``v6``).
"""

from __future__ import annotations

from dataclasses import dataclass

from model.config import ConfigError, Scenario
from model.timeline.layout import LAYOUTS
from model.timeline.timegen import TimeGenConfig

CC_MODES = ("none", "optimistic", "pessimistic")
WORKLOADS = ("commits", "times")
TIMELINE_CHECKERS = (
    "unique-times",
    "monotonic-times",
    "completed-immutable",
    "completion-order",
    "consistent-read",
)


def _require(cond: bool, name: str, value: object, reason: str) -> None:
    if not cond:
        raise ConfigError(f"timeline.{name}", value, reason)


@dataclass(frozen=True)
class TimelineConfig:
    """How writers generate times and commit to a copy-on-write key-value table.

    ``workload``: ``commits`` (upserts and deletes of ``keys`` keys over ``file_groups`` file
    groups) or ``times`` (each operation only generates an instant time, writes the requested
    file, then generates a completion time and writes the completed file under the lock).
    ``ops_per_writer`` bounds the operations each writer starts (0: until the run ends).
    ``fail_commit_prob``: chance that a writer dies for good in the commit phase (after writing
    its file slice and index, before the completed instant), freeing its locks.
    ``checkers`` decide the verdict; the other timeline checkers are reported as findings.
    """

    layout: str = "v8"
    time_generator: str = "skew-adjusting"
    max_expected_clock_skew_ms: int = 200
    per_process_increase: bool = True
    cc: str = "optimistic"
    put_if_absent: bool = True
    salt: bool = False
    pk_check: bool = True
    workload: str = "commits"
    keys: int = 2
    file_groups: int = 1
    ops_per_writer: int = 3
    delete_prob: float = 0.2
    fail_commit_prob: float = 0.0
    fg_lock_poll_ms: int = 100
    checkers: tuple[str, ...] = TIMELINE_CHECKERS

    @property
    def time_config(self) -> TimeGenConfig:
        return TimeGenConfig(self.time_generator, self.max_expected_clock_skew_ms, self.per_process_increase)

    def validate(self) -> None:
        """Raise ConfigError naming the first bad field."""
        _require(self.layout in LAYOUTS, "layout", self.layout, f"must be one of {', '.join(LAYOUTS)}")
        self.time_config.validate()
        _require(self.cc in CC_MODES, "cc", self.cc, f"must be one of {', '.join(CC_MODES)}")
        _require(
            self.workload in WORKLOADS, "workload", self.workload, f"must be one of {', '.join(WORKLOADS)}"
        )
        _require(1 <= self.keys <= 1000, "keys", self.keys, "must be between 1 and 1000")
        _require(1 <= self.file_groups <= 1000, "file_groups", self.file_groups, "must be between 1 and 1000")
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
        _require(self.fg_lock_poll_ms > 0, "fg_lock_poll_ms", self.fg_lock_poll_ms, "must be > 0")
        for c in self.checkers:
            _require(c in TIMELINE_CHECKERS, "checkers", c, f"must be among {', '.join(TIMELINE_CHECKERS)}")


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
        self.scenario.validate()
        self.timeline.validate()
