"""Hudi's ``HoodieFileGroup``, transcribed: how Hudi builds the file slices of one file group from a
listing, which of them it calls committed, and what a reader of table version 8+ then shows.

Two releases of the one class (lines of the stored text at each commit):

* Hudi 1.2.0, ``HoodieFileGroup`` at apache/hudi ``50fc937e``: the file-system view adds a group's
  logs one at a time in log order (``addLogFile``, 111-117) and ``getBaseInstantTime`` (120-139)
  keys a log-only group's first slice on that log's delta-commit time *even while it is pending*;
  ``isFileSliceCommitted`` (153-159) then hides the whole slice, committed logs included (issue
  #19774);
* PR #19785, merged to master as ``1d3a0aff`` (after 1.2.0): ``addLogFiles`` (137-147) sorts the
  logs and, when the group has no slice yet, opens one at the earliest *completed* log's delta-commit
  time before adding them; ``isFileSliceCommitted`` (179-185) is unchanged.

The view (``AbstractTableFileSystemView#buildFileGroups``, stored 1.x text, index id 40071447)
adds, per group: every listed base file (``addBaseFile``: a slice at its instant, committed or not),
then the group's pending compaction (``addNewFileSliceAtInstant``: "must be added before log
files"), then the logs in ``HoodieLogFile.getLogFileComparator()`` order.  Placement of a log
(``getBaseInstantTime``): with no slice, the log's own instant; a completed log goes to the newest
slice keyed at or before its completion time, or (none) to a new slice at its own instant; a pending
log goes to the newest slice.  A slice is committed when the view's write timeline (completed
commits and deltacommits and every compaction, :class:`~model.nbcc.slicing.WriteTimeline`) is not
empty and contains the slice's key or the key precedes the timeline's first instant
(``containsOrBeforeTimelineStarts``; the "at or before the last instant" test of line 154 never
decides once those hold).  A table version 8+ reader then drops uncommitted files from a committed
slice (``filterUncommittedFiles`` / ``filterUncommittedLogs``): here a :class:`FileSlice` shows only
a committed base file and completed logs, and keeps the others in ``pending_log_files``.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass

from model.nbcc.slices import (
    CompletionLookup,
    FileGroupFiles,
    FileSlice,
    Rule,
    WriteTimeline,
)
from model.timeline.layout import BaseFile, LogFile


@dataclass(frozen=True)
class HudiFileGroup:
    """One group as Hudi's view holds it: every slice (``getAllFileSlicesIncludingInflight``,
    oldest first) and the keys of those it calls committed (``getAllFileSlices``)."""

    raw: tuple[FileSlice, ...]
    committed_keys: frozenset[int]

    @property
    def committed(self) -> tuple[FileSlice, ...]:
        """The committed slices, oldest first, as a version-8 reader shows them."""
        return tuple(s for s in self.raw if s.base_instant in self.committed_keys)

    @property
    def hidden(self) -> tuple[FileSlice, ...]:
        """The slices Hudi does not call committed (a 1.2.0 slice keyed on a pending log among them)."""
        return tuple(s for s in self.raw if s.base_instant not in self.committed_keys)


def _in_log_order(logs: tuple[LogFile, ...] | list[LogFile]) -> tuple[LogFile, ...] | list[LogFile]:
    """``HoodieLogFile.getLogFileComparator()`` order: instant, version, write token (the listing's
    order already, for the table reader: then nothing is sorted)."""
    keys = [lf.sort_key for lf in logs]
    if all(a <= b for a, b in zip(keys, keys[1:], strict=False)):
        return logs
    return sorted(logs, key=lambda lf: lf.sort_key)


def _timeline_of(group: FileGroupFiles) -> WriteTimeline:
    """The table's write timeline, or (a group built by hand) one made of the group's own instants."""
    if group.timeline is not None:
        return group.timeline
    compactions = frozenset(group.pending_compactions) | {b.instant for b in group.base_files}
    instants = {lf.instant for lf in group.log_files} | compactions
    return WriteTimeline(tuple(sorted(instants)), compactions)


class HoodieFileGroupModel:
    """``HoodieFileGroup``'s slice-building methods, one for one: slices keyed by base instant, filled
    in the order the caller adds files (the file-system view adds base files, then the pending
    compaction, then the logs, :func:`build_group`)."""

    def __init__(self, completion_time: CompletionLookup) -> None:
        self.completion_time = completion_time
        self.keys: list[int] = []  # ascending (Hudi's TreeMap is descending)
        self.base_at: dict[int, BaseFile] = {}
        self.members: dict[int, list[LogFile]] = {}

    def _slice_at(self, key: int) -> None:
        if key not in self.members:
            bisect.insort(self.keys, key)
            self.members[key] = []

    def add_new_file_slice_at_instant(self, instant: int) -> None:
        """``addNewFileSliceAtInstant`` (50fc937e, 90-94): an empty slice (a pending compaction's)."""
        self._slice_at(instant)

    def add_base_file(self, bf: BaseFile) -> None:
        """``addBaseFile`` (99-104): a slice at the base file's instant, whose base it becomes."""
        self._slice_at(bf.instant)
        self.base_at[bf.instant] = bf

    def base_instant_time(self, lf: LogFile) -> int:
        """``getBaseInstantTime`` (120-139)."""
        if not self.keys:
            return lf.instant  # "no base file in the file group, use the log file delta commit time"
        tc = self.completion_time(lf.instant)
        if tc is None:
            return self.keys[-1]  # "the log file is still pending, it always belongs to the latest ..."
        i = bisect.bisect_right(self.keys, tc) - 1
        return self.keys[i] if i >= 0 else lf.instant

    def add_log_file(self, lf: LogFile) -> None:
        """``addLogFile`` (111-117; private since PR #19785)."""
        key = self.base_instant_time(lf)
        self._slice_at(key)
        self.members[key].append(lf)

    def add_log_files(self, logs: tuple[LogFile, ...] | list[LogFile]) -> None:
        """PR #19785's ``addLogFiles`` (1d3a0aff, 137-147): sort; with no slice yet, the earliest
        completed log opens one at its instant; then every log through :meth:`add_log_file`."""
        ordered = _in_log_order(logs)
        if not self.keys:
            for lf in ordered:
                if self.completion_time(lf.instant) is not None:
                    self.add_new_file_slice_at_instant(lf.instant)
                    break
        for lf in ordered:
            self.add_log_file(lf)

    def result(self, timeline: WriteTimeline, pending_compactions: frozenset[int], partition: str = "",
               file_id: str = "") -> HudiFileGroup:
        """Every slice, and the keys ``isFileSliceCommitted`` (153-159) accepts against ``timeline``."""
        ct = self.completion_time
        first = timeline.first_visible(ct)
        committed = frozenset(
            k for k in self.keys
            if first is not None and (k in pending_compactions or ct(k) is not None or k < first)
        )
        raw = []
        for k in self.keys:
            base = self.base_at.get(k)
            shown_base = base if ct(k) is not None else None  # filterUncommittedFiles
            done: list[LogFile] = []
            waiting: list[LogFile] = []
            for lf in self.members[k]:
                (waiting if ct(lf.instant) is None else done).append(lf)
            raw.append(FileSlice(partition, file_id, k, shown_base, tuple(done), tuple(waiting),
                                 pending_base_file=None if shown_base else base))
        return HudiFileGroup(tuple(raw), committed)


def build_group(
    group: FileGroupFiles, completion_time: CompletionLookup, *, fix_19785: bool
) -> HudiFileGroup:
    """Build ``group`` as Hudi's file-system view does (1.2.0, or with PR #19785's ``addLogFiles``)."""
    fg = HoodieFileGroupModel(completion_time)
    for bf in group.base_files:
        fg.add_base_file(bf)
    for pc in group.pending_compactions:
        fg.add_new_file_slice_at_instant(pc)
    if fix_19785:
        fg.add_log_files(group.log_files)
    else:
        for lf in _in_log_order(group.log_files):  # the view sorts, then adds one at a time
            fg.add_log_file(lf)
    pending = frozenset(group.pending_compactions)
    return fg.result(_timeline_of(group), pending, group.partition, group.file_id)


def slices_hudi_1_2_0(group: FileGroupFiles, completion_time: CompletionLookup) -> tuple[FileSlice, ...]:
    """The committed slices of ``group`` as Hudi 1.2.0 builds them."""
    return build_group(group, completion_time, fix_19785=False).committed


def slices_pr_19785(group: FileGroupFiles, completion_time: CompletionLookup) -> tuple[FileSlice, ...]:
    """The committed slices of ``group`` as Hudi with PR #19785 builds them."""
    return build_group(group, completion_time, fix_19785=True).committed


def hudi_slicer(rule: Rule) -> Callable[[FileGroupFiles, CompletionLookup], tuple[FileSlice, ...]]:
    """The slicing function of one of Hudi's rules (``Rule.HUDI_1_2_0`` or ``Rule.PR_19785``)."""
    if rule is Rule.HUDI_1_2_0:
        return slices_hudi_1_2_0
    if rule is Rule.PR_19785:
        return slices_pr_19785
    raise ValueError(f"{rule} is not one of Hudi's HoodieFileGroup rules")


def merged_latest(slices: tuple[FileSlice, ...], pending_compactions: frozenset[int]) -> FileSlice | None:
    """The slice a snapshot reader reads (``getLatestMergedFileSlicesBeforeOrOn``): the latest
    committed slice; when it is keyed on a pending compaction, merged with the committed slice before
    it (``fetchMergedFileSlice``: that slice's base file and the logs of both)."""
    if not slices:
        return None
    latest = slices[-1]
    if latest.base_instant not in pending_compactions or len(slices) < 2:
        return latest
    prev = slices[-2]
    return FileSlice(
        latest.partition,
        latest.file_id,
        prev.base_instant,
        prev.base_file,
        prev.log_files + latest.log_files,
        prev.pending_log_files + latest.pending_log_files,
    )
