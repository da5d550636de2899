"""The records of file slicing: a file group's files, its slices, the write timeline, the rules.

:mod:`model.nbcc.slicing` (the harness's rules and the selections) and :mod:`model.nbcc.filegroup`
(Hudi's ``HoodieFileGroup``) both build on them; ``model.nbcc.slicing`` names them too.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field

from model.timeline.layout import BaseFile, LogFile

CompletionLookup = Callable[[int], int | None]


@dataclass(frozen=True, order=True)
class FileGroupId:
    """Identity of a file group: partition path ('' when not partitioned) and file id."""

    partition: str
    file_id: str


@dataclass(frozen=True)
class WriteTimeline:
    """The table's write timeline as Hudi's file-system view holds it: the requested time of every
    commit, deltacommit and compaction on the active timeline (completed or pending), sorted, and
    which of them are compactions.  Hudi's view keeps completed instants and every compaction, pending
    or not (``filterCompletedAndCompactionInstants().getWriteTimeline()``); Hudi's committed-slice
    check (:mod:`model.nbcc.filegroup`) needs its first instant.  One object is shared by every
    group of a table."""

    instants: tuple[int, ...] = ()
    compactions: frozenset[int] = frozenset()

    def first_visible(self, completion_time: CompletionLookup) -> int | None:
        """The first instant of the view's timeline: the earliest one completed (by ``completion_time``)
        or a compaction; None when the timeline is empty."""
        for i in self.instants:
            if i in self.compactions or completion_time(i) is not None:
                return i
        return None


@dataclass(frozen=True)
class FileGroupFiles:
    """Everything listed for one file group: the input to slicing.  ``timeline`` is the table's
    write timeline (set by the table reader; None for a group built by hand, when Hudi's slicing
    derives it from the group's own files)."""

    partition: str
    file_id: str
    base_files: tuple[BaseFile, ...] = ()
    log_files: tuple[LogFile, ...] = ()
    pending_compactions: tuple[int, ...] = ()
    timeline: WriteTimeline | None = field(default=None, compare=False, repr=False)

    @property
    def group_id(self) -> FileGroupId:
        """The group's identity."""
        return FileGroupId(self.partition, self.file_id)


@dataclass(frozen=True, slots=True)
class FileSlice:
    """A base instant, its base file (None when the slice has only logs, or its compaction is
    still pending) and the completed logs that belong to it.  ``pending_log_files`` holds logs
    that have not completed (attached to the latest slice, never shown by a query), and
    ``pending_base_file`` the base file a compaction still pending wrote (in ``HoodieFileGroup``'s
    slice, never shown by a query)."""

    partition: str
    file_id: str
    base_instant: int
    base_file: BaseFile | None = None
    log_files: tuple[LogFile, ...] = ()
    pending_log_files: tuple[LogFile, ...] = ()
    pending_base_file: BaseFile | None = None

    @property
    def group_id(self) -> FileGroupId:
        """The group's identity."""
        return FileGroupId(self.partition, self.file_id)

    @property
    def is_empty(self) -> bool:
        """True when the slice shows no file at all."""
        return self.base_file is None and not self.log_files


class Rule(enum.Enum):
    """Which slicing rule to apply (a variant's ``slicing``, :mod:`model.nbcc.variants`)."""

    # Hudi's HoodieFileGroup of 1.2.0 (apache/hudi 50fc937e): a log-only group's first slice is keyed
    # on its first log even while that log is pending, and the committed-slice check hides it (#19774)
    HUDI_1_2_0 = "hudi-1.2.0"
    # PR #19785 (apache/hudi 1d3a0aff): the earliest completed log opens a log-only group's first slice
    PR_19785 = "pr-19785"
    # the harness's rule: a group's early completed logs are anchored on the earliest-completing one
    COMPLETION_TIME = "completion-time"
    INSTANT_TIME = "instant-time"  # v6 rule; wrong under NBCC (late logs land in the old slice)


HUDI_RULES = frozenset({Rule.HUDI_1_2_0, Rule.PR_19785})
"""The rules transcribed from Hudi's HoodieFileGroup (:mod:`model.nbcc.filegroup`)."""
