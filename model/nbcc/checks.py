"""Checkers for file slicing (RFC-66): each returns the violations it finds, never raises.

They take one file group's listing, the slices some rule built for it and a completion-time
lookup, so they can judge any slicing rule (the correct one or a buggy alternative) and any
source of files (a simulated history or a real table).

Properties checked:

* ``membership``: every completed log is in exactly one slice; no uncommitted file is shown;
* ``order-1`` .. ``order-4``: the four temporal-order rules of the RFC-66 appendix, read as
  "if Y temporally follows X then Y's slice is not before X's slice" (strictly after, when Y is
  a base file);
* ``coverage``: no committed write is lost by the latest slice: each completed log is either in
  the latest slice or completed before that slice's base instant (so its compaction read it);
* ``plan``: a compaction plan takes every log that completed strictly before the plan time and
  after the base it compacts, and no other log.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from model.nbcc.slicing import CompletionLookup, FileGroupFiles, FileSlice
from model.timeline.layout import BaseFile, LogFile


@dataclass(frozen=True)
class Violation:
    """One broken property, with the files that prove it."""

    prop: str
    file_id: str
    files: tuple[str, ...]
    message: str


def _slice_index(slices: Sequence[FileSlice]) -> tuple[dict[LogFile, list[int]], dict[BaseFile, int]]:
    logs: dict[LogFile, list[int]] = {}
    bases: dict[BaseFile, int] = {}
    for i, s in enumerate(slices):
        for lf in s.log_files:
            logs.setdefault(lf, []).append(i)
        if s.base_file is not None:
            bases[s.base_file] = i
    return logs, bases


def check_membership(
    group: FileGroupFiles, slices: Sequence[FileSlice], completion_time: CompletionLookup
) -> list[Violation]:
    """Every completed log in exactly one slice; no uncommitted log or base file shown."""
    out: list[Violation] = []
    where, _ = _slice_index(slices)
    for lf in group.log_files:
        n = len(where.get(lf, []))
        committed = completion_time(lf.instant) is not None
        if committed and n != 1:
            out.append(Violation("membership", group.file_id, (lf.name,), f"completed log is in {n} slices"))
        if not committed and n:
            out.append(Violation("membership", group.file_id, (lf.name,), "uncommitted log is visible"))
    for s in slices:
        if s.base_file is not None and completion_time(s.base_file.instant) is None:
            out.append(
                Violation(
                    "membership", group.file_id, (s.base_file.name,), "uncommitted base file is visible"
                )
            )
    return out


def check_temporal_order(
    group: FileGroupFiles, slices: Sequence[FileSlice], completion_time: CompletionLookup
) -> list[Violation]:
    """The four temporal-order rules of the RFC-66 appendix, for every pair of files."""
    out: list[Violation] = []
    where, base_at = _slice_index(slices)
    logs = [(lf, completion_time(lf.instant), where[lf][0]) for lf in group.log_files if lf in where]
    bases = [(bf, completion_time(bf.instant), i) for bf, i in base_at.items()]
    for fx, _, ix in bases:
        for ly, _, iy in logs:  # rule 1: Ts_Fx < Ts_Ly => Ly not before Fx
            if fx.instant < ly.instant and iy < ix:
                out.append(
                    Violation("order-1", group.file_id, (fx.name, ly.name), "log placed before its base")
                )
        for fy, _, iy in bases:  # rule 2: Ts_Fx < Tc_Fx < Ts_Fy => Fy after Fx
            tcx = completion_time(fx.instant)
            if tcx is not None and fx.instant < tcx < fy.instant and iy <= ix:
                out.append(Violation("order-2", group.file_id, (fx.name, fy.name), "base files out of order"))
    for lx, tcx, ix in logs:
        assert tcx is not None
        for ly, _, iy in logs:  # rule 3: Ts_Lx < Tc_Lx < Ts_Ly => Ly not before Lx
            if lx.instant < tcx < ly.instant and iy < ix:
                out.append(Violation("order-3", group.file_id, (lx.name, ly.name), "logs out of order"))
        for fy, _, iy in bases:  # rule 4: Ts_Lx < Tc_Lx < Ts_Fy => Fy strictly after Lx
            if lx.instant < tcx < fy.instant and iy <= ix:
                out.append(
                    Violation(
                        "order-4", group.file_id, (lx.name, fy.name), "base file not after a log it follows"
                    )
                )
    return out


def check_coverage(
    group: FileGroupFiles, slices: Sequence[FileSlice], completion_time: CompletionLookup
) -> list[Violation]:
    """No completed log is lost: it is in the latest slice or completed before that slice's base
    instant (so the compaction that wrote the base read it)."""
    if not slices:
        return [
            Violation("coverage", group.file_id, (lf.name,), "completed log but the group has no slice")
            for lf in group.log_files
            if completion_time(lf.instant) is not None
        ][:1]
    latest = slices[-1]
    out: list[Violation] = []
    for lf in group.log_files:
        tc = completion_time(lf.instant)
        if tc is None or lf in latest.log_files:
            continue
        if not tc < latest.base_instant:
            out.append(
                Violation(
                    "coverage",
                    group.file_id,
                    (lf.name,),
                    f"log {lf.name} completed at {tc}, after the latest slice's base "
                    f"{latest.base_instant}, but is not in that slice: its data is lost",
                )
            )
    return out


def expected_plan_logs(
    group: FileGroupFiles, completion_time: CompletionLookup, plan_instant: int
) -> set[LogFile]:
    """Independent spec of a compaction plan: the logs completed strictly before ``plan_instant``
    and at or after the instant of the newest base file committed before the plan (the compaction
    that wrote that base already read every log completed before its instant)."""
    prior = [
        bf.instant
        for bf in group.base_files
        if bf.instant < plan_instant and (tc := completion_time(bf.instant)) is not None and tc < plan_instant
    ]
    floor = max(prior, default=None)
    out: set[LogFile] = set()
    for lf in group.log_files:
        tc = completion_time(lf.instant)
        if tc is not None and tc < plan_instant and (floor is None or tc >= floor):
            out.add(lf)
    return out


def check_plan(
    group: FileGroupFiles, plan_logs: Sequence[LogFile], completion_time: CompletionLookup, plan_instant: int
) -> list[Violation]:
    """A plan takes no log completed at/after its time and misses none completed before it."""
    out: list[Violation] = []
    want = expected_plan_logs(group, completion_time, plan_instant)
    for lf in plan_logs:
        tc = completion_time(lf.instant)
        if tc is None or tc >= plan_instant:
            out.append(
                Violation("plan", group.file_id, (lf.name,), f"plan at {plan_instant} takes log done at {tc}")
            )
    for lf in sorted(want - set(plan_logs), key=lambda x: x.sort_key):
        out.append(
            Violation("plan", group.file_id, (lf.name,), f"plan at {plan_instant} misses a completed log")
        )
    return out


def check_slices(
    group: FileGroupFiles, slices: Sequence[FileSlice], completion_time: CompletionLookup
) -> list[Violation]:
    """All slice properties (membership, temporal order, coverage) for one group."""
    return (
        check_membership(group, slices, completion_time)
        + check_temporal_order(group, slices, completion_time)
        + check_coverage(group, slices, completion_time)
    )
