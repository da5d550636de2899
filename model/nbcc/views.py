"""What a reader reads: the slice of each file group a snapshot (or a time-travel read as of a
completion time) shows, under any slicing rule and either listing.

* The harness's completion-time rule: :func:`model.nbcc.slicing.as_of`.
* Hudi's rules (``HoodieFileGroup`` of 1.2.0 or with PR #19785, :mod:`model.nbcc.filegroup`): the
  latest slice Hudi calls committed, merged with the one before it when it is keyed on a pending
  compaction (``AbstractTableFileSystemView#getLatestMergedFileSlicesBeforeOrOn``, ``#fetchMergedFileSlice``),
  its uncommitted files dropped (``#filterUncommittedLogs``).
* The version-6 instant-time rule: the latest slice of :func:`model.nbcc.slicing.slice_by_instant_time`.

A read as of ``t`` sees the table as a reader did when ``t`` was the newest completion time: an
instant completed after ``t`` counts as pending, and a file whose instant was requested after ``t``
did not exist yet.  With the metadata table's listing, a file is listed only once its instant
completed (so, as of ``t``, only files of instants completed at or before ``t``); with the storage
listing, pending files are listed too.  The model takes both listings from the final table (a file
a rollback deleted before the end is therefore in neither: the in-run reader, ``sim_reader``, sees
the table as it was).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from model.nbcc.filegroup import merged_latest
from model.nbcc.slicing import (
    HUDI_RULES,
    CompletionLookup,
    FileGroupFiles,
    FileGroupId,
    FileSlice,
    Rule,
    as_of,
    slicer,
)


def restricted(completion_time: CompletionLookup, t: int | None) -> CompletionLookup:
    """``completion_time`` as a reader saw it when ``t`` was the newest completion time (None: now)."""
    if t is None:
        return completion_time

    def lookup(instant: int) -> int | None:
        tc = completion_time(instant)
        return tc if tc is not None and tc <= t else None

    return lookup


def as_listed(
    group: FileGroupFiles, lookup: CompletionLookup, t: int | None, metadata_table: bool
) -> FileGroupFiles:
    """``group`` as a reader listed it as of ``t``: without files requested after ``t``; with the
    metadata table, without files whose instant had not completed (``lookup`` is as of ``t``); a
    compaction requested by ``t`` that had not completed by then is a pending compaction."""
    if t is None and not metadata_table:
        return group

    def listed(instant: int) -> bool:
        if t is not None and instant > t:
            return False
        return not metadata_table or lookup(instant) is not None

    bases = tuple(b for b in group.base_files if listed(b.instant))
    logs = tuple(lf for lf in group.log_files if listed(lf.instant))
    pending = set(p for p in group.pending_compactions if t is None or p <= t)
    if t is not None:  # a compaction that completed after t was pending at t (its base file is not shown)
        pending.update(b.instant for b in group.base_files if b.instant <= t and lookup(b.instant) is None)
    return replace(group, base_files=bases, log_files=logs, pending_compactions=tuple(sorted(pending)))


def group_view(group: FileGroupFiles, completion_time: CompletionLookup, rule: Rule, t: int | None,
               metadata_table: bool) -> FileSlice | None:
    """The slice of ``group`` a reader reads as of ``t`` under ``rule`` (None: nothing to read)."""
    lookup = restricted(completion_time, t)
    if rule in HUDI_RULES:
        g = as_listed(group, lookup, t, metadata_table)
        s = merged_latest(slicer(rule)(g, lookup), frozenset(g.pending_compactions))
    else:
        g = replace(as_listed(group, lookup, None, metadata_table), pending_compactions=())
        slices = slicer(rule)(g, lookup)
        s = slices[-1] if slices else None
    if s is None or s.is_empty:
        return None
    return replace(s, pending_log_files=())


def reader_view(
    groups: Iterable[FileGroupFiles],
    completion_time: CompletionLookup,
    rule: Rule,
    t: int | None = None,
    replaced: Mapping[FileGroupId, int] | None = None,
    metadata_table: bool = False,
) -> list[FileSlice]:
    """One slice per visible group, as of ``t`` (None: the latest snapshot), sorted by group.
    Replaced groups (``replaced``: group -> replacecommit instant) are hidden once it completed."""
    if rule is Rule.COMPLETION_TIME and not metadata_table:
        return as_of(groups, completion_time, t, replaced)
    out = []
    for g in groups:
        rc = (replaced or {}).get(g.group_id)
        if rc is not None and restricted(completion_time, t)(rc) is not None:
            continue
        s = group_view(g, completion_time, rule, t, metadata_table)
        if s is not None:
            out.append(s)
    return sorted(out, key=lambda s: (s.partition, s.file_id))
