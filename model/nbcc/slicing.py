"""File slicing by completion time (RFC-66), compaction plans, and the snapshot, time-travel and
incremental selections; the slicing rules a variant can choose (:class:`Rule`).

Hudi's own file-group building (``HoodieFileGroup`` of Hudi 1.2.0 and of PR #19785) is transcribed
in :mod:`model.nbcc.filegroup`; :func:`slicer` and :func:`build_file_slices` dispatch to it for
:attr:`Rule.HUDI_1_2_0` and :attr:`Rule.PR_19785`.  Both build on the records of
:mod:`model.nbcc.slices` (named here too).  The rest of this module is the harness's own
completion-time rule (the ``pr-19786`` variant) and the version-6 instant-time rule.

All functions are pure.  Instants are instant numbers (:mod:`model.timeline.layout`).  A completion-time
lookup is any ``Callable[[int], int | None]`` (e.g. :meth:`Timeline.completion_time`): it returns
the completion time of the instant requested at the given time, None when that instant has not
completed, and raises (never returns None) when the answer lies in an unloaded archive.

Rules implemented by :func:`slice_by_completion_time` (the harness's rule, ``Rule.COMPLETION_TIME``), for
one file group:

* a committed base file (its instant completed) starts a slice at its instant; so does a
  *requested* compaction that covers the group (``pending_compactions``), even before its base
  file exists;
* a completed log joins the newest slice whose start is at or before the log's completion time;
* a log that has not completed is attached to the latest slice, but kept apart in
  ``FileSlice.pending_log_files`` so that no query ever shows it;
* a group with completed logs that precede every slice start (or with no base file at all) is
  anchored on the instant time of its earliest *completed* log; an uncommitted log never anchors.

Slices are returned oldest first.  Log files inside a slice are in Hudi's log order (instant,
version, write token).

Speed: slicing makes one pass over a group's logs in their log order (as the reader lists them),
looking each instant's completion time up once per call of :func:`build_file_slices` and placing
each log by bisection among the slice starts; nothing is sorted unless a group's logs come out of
order.  ``benchmarks/bench_slicing.py`` compares it with a plain sort of the same logs.
"""

from __future__ import annotations

import bisect
import gc
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace

from model.nbcc.filegroup import hudi_slicer
from model.nbcc.slices import HUDI_RULES as HUDI_RULES
from model.nbcc.slices import CompletionLookup as CompletionLookup
from model.nbcc.slices import FileGroupFiles as FileGroupFiles
from model.nbcc.slices import FileGroupId as FileGroupId
from model.nbcc.slices import FileSlice as FileSlice
from model.nbcc.slices import Rule as Rule
from model.nbcc.slices import WriteTimeline as WriteTimeline
from model.timeline.layout import BaseFile, LogFile


def _log_order(logs: Iterable[LogFile]) -> tuple[LogFile, ...]:
    return tuple(sorted(logs, key=lambda lf: lf.sort_key))


def _visible_bases(group: FileGroupFiles, completion_time: CompletionLookup) -> dict[int, BaseFile]:
    """Committed base files by instant (the smallest name when several share an instant)."""
    out: dict[int, BaseFile] = {}
    for bf in group.base_files:
        if completion_time(bf.instant) is not None:
            cur = out.get(bf.instant)
            if cur is None or bf < cur:
                out[bf.instant] = bf
    return out


def _out_of_order(prev: LogFile, lf: LogFile) -> bool:
    """True when ``lf`` precedes ``prev`` in Hudi's log order."""
    return lf.instant < prev.instant or (
        lf.instant == prev.instant
        and (lf.version, lf.write_token, lf.suffix) < (prev.version, prev.write_token, prev.suffix)
    )


def _cached(completion_time: CompletionLookup) -> CompletionLookup:
    """``completion_time`` asked at most once per instant (lookups may be costly or raise)."""
    cache: dict[int, int | None] = {}

    def lookup(instant: int) -> int | None:
        try:
            return cache[instant]
        except KeyError:
            tc = cache[instant] = completion_time(instant)
            return tc

    return lookup


def _slices(
    group: FileGroupFiles, completion_time: CompletionLookup, by_completion: bool
) -> tuple[FileSlice, ...]:
    """One pass over the group's logs in log order, keyed by completion time (RFC-66) or by
    instant time (the v6 rule): a log keyed at or after the first slice start is placed by
    bisection at once; the others (keyed before every start) form the anchored first slice."""
    bases = _visible_bases(group, completion_time)
    starts = set(bases)
    starts.update(group.pending_compactions)
    barriers = sorted(starts)
    members: list[list[LogFile]] = [[] for _ in barriers]
    first_start = barriers[0] if barriers else None
    early: list[LogFile] = []  # completed logs keyed before every start
    first: tuple[int, LogFile] | None = None  # the earliest of them (by key, then log order)
    pending: list[LogFile] = []
    prev: LogFile | None = None
    for lf in group.log_files:
        instant = lf.instant
        if prev is not None and instant <= prev.instant and _out_of_order(prev, lf):
            # not in log order (the reader lists logs in order; other callers may not): sort once
            return _slices(
                replace(group, log_files=_log_order(group.log_files)), completion_time, by_completion
            )
        prev = lf
        tc = completion_time(instant)
        if tc is None:
            pending.append(lf)
            continue
        key = tc if by_completion else instant
        if first_start is not None and key >= first_start:
            members[bisect.bisect_right(barriers, key) - 1].append(lf)
            continue
        early.append(lf)
        if first is None or key < first[0]:
            first = (key, lf)
    if first is not None:  # the anchor: the instant of the earliest completed log
        anchor = first[1].instant
        if anchor > first[0]:  # a Timeline never completes an instant before its request
            raise AssertionError(f"log {first[1].name} completed before it was requested")
        barriers.insert(0, anchor)
        members.insert(0, early)
    if not barriers:
        return ()
    last = len(barriers) - 1
    pid, fid = group.partition, group.file_id
    return tuple(
        FileSlice(pid, fid, b, bases.get(b), tuple(members[i]), tuple(pending) if i == last else ())
        for i, b in enumerate(barriers)
    )


def slice_by_completion_time(
    group: FileGroupFiles, completion_time: CompletionLookup
) -> tuple[FileSlice, ...]:
    """RFC-66 file slicing of one file group (see the module docstring for the rules)."""
    return _slices(group, _cached(completion_time), by_completion=True)


def slice_by_instant_time(group: FileGroupFiles, completion_time: CompletionLookup) -> tuple[FileSlice, ...]:
    """The legacy (table version 6) rule: a log joins the newest slice whose start is at or before
    the log's *instant time*.  Correct for v6 names (the instant is the base instant); wrong under
    NBCC, where a log requested before a compaction but completed after it lands in the old slice
    although the compaction never read it.  Uncommitted logs are still kept out of the slices."""
    return _slices(group, _cached(completion_time), by_completion=False)


_RULES: dict[Rule, Callable[[FileGroupFiles, CompletionLookup], tuple[FileSlice, ...]]] = {
    Rule.COMPLETION_TIME: slice_by_completion_time,
    Rule.INSTANT_TIME: slice_by_instant_time,
}


def slicer(rule: Rule) -> Callable[[FileGroupFiles, CompletionLookup], tuple[FileSlice, ...]]:
    """The slicing function for ``rule``: one group and a completion-time lookup in, its slices out
    (for Hudi's rules, the slices Hudi calls committed, :mod:`model.nbcc.filegroup`)."""
    if rule in HUDI_RULES:
        return hudi_slicer(rule)
    return _RULES[rule]


def build_file_slices(
    groups: Iterable[FileGroupFiles], completion_time: CompletionLookup, rule: Rule = Rule.COMPLETION_TIME
) -> dict[FileGroupId, tuple[FileSlice, ...]]:
    """Slice every group with ``rule``; groups that end up with no slice are left out.  Each
    instant's completion time is looked up once for all groups."""
    lookup = _cached(completion_time)
    out: dict[FileGroupId, tuple[FileSlice, ...]] = {}
    fn = slicer(rule) if rule in HUDI_RULES else None
    with _collector_paused():
        for g in groups:
            if fn is not None:
                slices = fn(g, lookup)
            else:
                slices = _slices(g, lookup, by_completion=rule is Rule.COMPLETION_TIME)
            if slices:
                out[FileGroupId(g.partition, g.file_id)] = slices
    return out


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for a bulk slicing call.

    Slicing makes no reference cycles, so a collection could free nothing; but every slice it
    builds survives, and each young-generation collection (one per 700 allocations) rescans all of
    them: on 10,000 groups that doubled the time of the call.  Reference counting still frees
    everything as usual; the collector resumes when the call ends (unless it was already off).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# --- compaction plans --------------------------------------------------------------------------


def _restricted(completion_time: CompletionLookup, before: int, inclusive: bool) -> CompletionLookup:
    """A lookup that treats every instant completed after the cut as not completed."""

    def lookup(instant: int) -> int | None:
        tc = completion_time(instant)
        if tc is None:
            return None
        return tc if (tc <= before if inclusive else tc < before) else None

    return lookup


def plan_compaction(
    group: FileGroupFiles, completion_time: CompletionLookup, plan_instant: int
) -> FileSlice | None:
    """The operation a compaction requested at ``plan_instant`` schedules for ``group``: the latest
    slice built from files that completed *strictly before* the plan time (RFC-66), or None when
    the group had no completed file then.  Its ``log_files`` are exactly the logs compacted."""
    earlier = replace(
        group,
        pending_compactions=tuple(p for p in group.pending_compactions if p < plan_instant),
        base_files=tuple(b for b in group.base_files if b.instant != plan_instant),
    )
    slices = slice_by_completion_time(earlier, _restricted(completion_time, plan_instant, inclusive=False))
    if not slices:
        return None
    return replace(slices[-1], pending_log_files=())


def plan_by_instant_time(
    group: FileGroupFiles, completion_time: CompletionLookup, plan_instant: int
) -> tuple[LogFile, ...]:
    """What an instant-time reader believes a compaction at ``plan_instant`` took: the completed
    logs of the slice just before the compaction's slice under :func:`slice_by_instant_time`."""
    slices = slice_by_instant_time(group, completion_time)
    before = [s for s in slices if s.base_instant < plan_instant]
    return before[-1].log_files if before else ()


# --- queries -----------------------------------------------------------------------------------


def _is_replaced(
    gid: FileGroupId, replaced: Mapping[FileGroupId, int], completion_time: CompletionLookup, t: int | None
) -> bool:
    rc = replaced.get(gid)
    if rc is None:
        return False
    tc = completion_time(rc)
    return tc is not None and (t is None or tc <= t)


def as_of(
    groups: Iterable[FileGroupFiles],
    completion_time: CompletionLookup,
    t: int | None,
    replaced: Mapping[FileGroupId, int] | None = None,
) -> list[FileSlice]:
    """Time travel as of ``t`` (``None``: the latest snapshot), one slice per visible group.

    Only files whose instant completed at or before ``t`` are seen (RFC-66: everything up to the
    largest completion time <= t).  Slicing those files and taking the latest slice merges a
    compaction that had not completed by ``t`` into the slice before it, as Hudi does for pending
    compactions; so a base file is never shown before it completed.  A group is hidden once a
    replacecommit listing it (``replaced`` maps the group to the replacecommit's instant)
    completed at or before ``t``.  Groups with no visible file are left out.
    """
    lookup = completion_time if t is None else _restricted(completion_time, t, inclusive=True)
    out: list[FileSlice] = []
    for g in groups:
        if _is_replaced(g.group_id, replaced or {}, completion_time, t):
            continue
        slices = slice_by_completion_time(replace(g, pending_compactions=()), lookup)
        if slices and not slices[-1].is_empty:
            out.append(replace(slices[-1], pending_log_files=()))
    return sorted(out, key=lambda s: (s.partition, s.file_id))


def snapshot(
    groups: Iterable[FileGroupFiles],
    completion_time: CompletionLookup,
    replaced: Mapping[FileGroupId, int] | None = None,
) -> list[FileSlice]:
    """The latest snapshot: :func:`as_of` with no time bound."""
    return as_of(groups, completion_time, None, replaced)


@dataclass(frozen=True)
class IncrementalView:
    """Result of an incremental query over the completion-time range (start, end]."""

    start: int
    end: int
    instants: tuple[int, ...]
    slices: tuple[FileSlice, ...]


def incremental(
    groups: Iterable[FileGroupFiles],
    completion_time: CompletionLookup,
    instants: Iterable[int],
    start: int,
    end: int,
) -> IncrementalView:
    """RFC-66 incremental query: the instants (from ``instants``, requested times) whose completion
    time lies in (start, end], and the file slices built from the files those instants wrote.
    Records are to be filtered by the returned instants."""
    if end < start:
        raise ValueError(f"incremental range end {end} is before start {start}")

    def in_range(instant: int) -> int | None:
        tc = completion_time(instant)
        return tc if tc is not None and start < tc <= end else None

    valid = tuple(sorted(i for i in set(instants) if in_range(i) is not None))
    slices: list[FileSlice] = []
    for g in groups:
        for s in slice_by_completion_time(replace(g, pending_compactions=()), in_range):
            if not s.is_empty:
                slices.append(replace(s, pending_log_files=()))
    return IncrementalView(start, end, valid, tuple(sorted(slices, key=lambda s: (s.partition, s.file_id))))
