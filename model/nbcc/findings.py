"""Compare the model's slicing of a real table with what Hudi recorded or what hudi-rs returned.

* :func:`compaction_disagreements`: for every compaction Hudi committed, the logs the model puts
  in the slice that the compaction read, against the compaction plan (``deltaFilePaths``) and the
  writer's ``totalLogFilesCompacted``.  Completion-time slicing must agree everywhere; on the
  metadata tables instant-time slicing disagrees exactly on the late logs.
* :func:`as_of_findings`: the differences between the model's time travel and hudi-rs's
  ``get_file_slices(as_of=T)``, each classified as a known, deliberate deviation of hudi-rs or as
  ``unexplained``, with the smallest example of each kind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from model.nbcc.slicing import FileGroupId, FileSlice, Rule
from model.nbcc.timeline_reader import HudiTable
from model.timeline.layout import parse_instant, parse_log_file_name

BASE_BY_REQUEST_TIME = "base-by-request-time"
LOG_AFTER_AS_OF = "log-after-as-of"
REPLACED_BY_REQUEST_TIME = "replaced-by-request-time"
UNEXPLAINED = "unexplained"

KNOWN_HUDI_RS_DEVIATIONS = {
    BASE_BY_REQUEST_TIME: "hudi-rs picks the slice by base request time <= T: it shows a base file "
    "whose commit completed after T",
    LOG_AFTER_AS_OF: "hudi-rs lists logs that completed after T in the as-of slice",
    REPLACED_BY_REQUEST_TIME: "hudi-rs drops a replaced file group once the replacecommit was "
    "requested at or before T, although it completed after T",
}


@dataclass(frozen=True)
class CompactionMismatch:
    """The model's pre-compaction slice differs from what the compaction actually took."""

    compaction: int
    partition: str
    file_id: str
    recorded: tuple[str, ...]
    sliced: tuple[str, ...]
    recorded_count: int | None

    @property
    def extra(self) -> tuple[str, ...]:
        """Logs the model put in the compacted slice that the compaction did not take."""
        return tuple(sorted(set(self.sliced) - set(self.recorded)))

    @property
    def missing(self) -> tuple[str, ...]:
        """Logs the compaction took that the model did not put in the compacted slice."""
        return tuple(sorted(set(self.recorded) - set(self.sliced)))


def _slice_before(slices: Sequence[FileSlice], instant: int) -> FileSlice | None:
    before = [s for s in slices if s.base_instant < instant]
    return before[-1] if before else None


def compaction_disagreements(table: HudiTable, rule: Rule = Rule.COMPLETION_TIME) -> list[CompactionMismatch]:
    """For each compaction record, compare the logs of the slice just before the compaction's
    slice (under ``rule``) with the plan's log list and the writer's log count."""
    all_slices = table.all_slices(rule)
    out: list[CompactionMismatch] = []
    for rec in table.compactions:
        gid = FileGroupId(rec.partition, rec.file_id)
        prev = _slice_before(all_slices.get(gid, ()), rec.compaction)
        sliced = tuple(lf.name for lf in prev.log_files) if prev else ()
        recorded = rec.planned_log_files or ()
        if rec.total_log_files_compacted is None:  # planned, but no output file: only the plan counts
            ok = set(recorded) <= set(sliced)
        else:
            ok = len(sliced) == rec.total_log_files_compacted and (
                rec.planned_log_files is None or set(recorded) == set(sliced)
            )
        if not ok:
            out.append(
                CompactionMismatch(
                    rec.compaction,
                    rec.partition,
                    rec.file_id,
                    recorded,
                    sliced,
                    rec.total_log_files_compacted,
                )
            )
    return out


@dataclass(frozen=True)
class ObservedSlice:
    """A file slice as an external reader (hudi-rs) reported it.

    ``log_files`` are compared as a set, kept in name order: hudi-rs lists a slice's logs in
    completion-time order, the model in Hudi's log order (instant, version, write token)."""

    partition: str
    file_id: str
    base_instant: int
    base_file: str | None
    log_files: tuple[str, ...]

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> ObservedSlice:
        """From ``[partition, fileId, baseInstant, baseFile, [logs]]`` (the observations format)."""
        part, fid, base_instant, base_file, logs = row
        return cls(
            str(part), str(fid), parse_instant(str(base_instant)), base_file or None, tuple(sorted(logs))
        )

    @classmethod
    def from_model(cls, s: FileSlice) -> ObservedSlice:
        """The same shape, from a model slice."""
        return cls(
            s.partition,
            s.file_id,
            s.base_instant,
            s.base_file.name if s.base_file else None,
            tuple(sorted(lf.name for lf in s.log_files)),
        )


@dataclass(frozen=True)
class Finding:
    """One difference between the model and hudi-rs for time travel as of ``t``."""

    kind: str
    t: int
    partition: str
    file_id: str
    model: ObservedSlice | None
    hudi_rs: ObservedSlice | None
    detail: str

    @property
    def size(self) -> int:
        """How many files the example involves (smaller is a better example)."""
        n = 0
        for s in (self.model, self.hudi_rs):
            if s is not None:
                n += (s.base_file is not None) + len(s.log_files)
        return n


def as_of_findings(table: HudiTable, t: int, observed: Iterable[ObservedSlice]) -> list[Finding]:
    """Classify every difference between ``table.as_of(t)`` and hudi-rs's slices as of ``t``."""
    lookup = table.completion_lookup()
    model = {FileGroupId(s.partition, s.file_id): ObservedSlice.from_model(s) for s in table.as_of(t)}
    theirs = {FileGroupId(s.partition, s.file_id): s for s in observed}
    out: list[Finding] = []
    for gid in sorted(set(model) | set(theirs)):
        m, h = model.get(gid), theirs.get(gid)
        if m == h:
            continue
        kind, detail = _classify(table, t, gid, m, h, lookup)
        out.append(Finding(kind, t, gid.partition, gid.file_id, m, h, detail))
    return out


def _classify(
    table: HudiTable,
    t: int,
    gid: FileGroupId,
    m: ObservedSlice | None,
    h: ObservedSlice | None,
    lookup: Any,
) -> tuple[str, str]:
    if h is not None and (m is None or m.base_instant != h.base_instant):
        tc = lookup(h.base_instant)
        if h.base_instant <= t and (tc is None or tc > t):
            return BASE_BY_REQUEST_TIME, f"base {h.base_instant} requested <= {t} but completed at {tc}"
        return UNEXPLAINED, "different base instant"
    if h is None and m is not None:
        rc = table.replaced.get(gid)
        tc = lookup(rc) if rc is not None else None
        if rc is not None and rc <= t and tc is not None and tc > t:
            return REPLACED_BY_REQUEST_TIME, f"replacecommit {rc} requested <= {t}, completed at {tc}"
        return UNEXPLAINED, "group missing from hudi-rs"
    assert m is not None and h is not None
    if m.base_file == h.base_file and set(m.log_files) <= set(h.log_files):
        extra = sorted(set(h.log_files) - set(m.log_files))
        late = [x for x in extra if (tc := lookup(parse_log_file_name(x).instant)) is not None and tc > t]
        if late == extra:
            return LOG_AFTER_AS_OF, f"{len(extra)} log(s) completed after {t}: {', '.join(extra)}"
    return UNEXPLAINED, "different files"


def smallest_by_kind(findings: Iterable[Finding]) -> dict[str, Finding]:
    """The smallest example of each kind (fewest files, then earliest time, then name)."""
    best: dict[str, Finding] = {}
    for f in findings:
        key = (f.size, f.t, f.partition, f.file_id)
        cur = best.get(f.kind)
        if cur is None or key < (cur.size, cur.t, cur.partition, cur.file_id):
            best[f.kind] = f
    return best


def late_logs(table: HudiTable) -> dict[FileGroupId, tuple[str, ...]]:
    """Logs whose instant precedes the instant of a compaction of their group but whose completion
    follows it, per group: exactly where instant-time and completion-time slicing disagree."""
    lookup = table.completion_lookup()
    comps: dict[FileGroupId, set[int]] = {}
    for rec in table.compactions:
        comps.setdefault(FileGroupId(rec.partition, rec.file_id), set()).add(rec.compaction)
    out: dict[FileGroupId, tuple[str, ...]] = {}
    for g in table.groups:
        names = []
        for lf in g.log_files:
            tc = lookup(lf.instant)
            if tc is not None and any(lf.instant < c <= tc for c in comps.get(g.group_id, ())):
                names.append(lf.name)
        if names:
            out[g.group_id] = tuple(names)
    return out


def mapping_of(rows: Mapping[str, Any]) -> dict[int, list[ObservedSlice]]:
    """Parse an observations ``as_of`` block ``{T: {"file_slices": rows}}`` or ``{T: rows}``."""
    out: dict[int, list[ObservedSlice]] = {}
    for t, v in rows.items():
        slices = v["file_slices"] if isinstance(v, Mapping) else v
        out[parse_instant(t)] = [ObservedSlice.from_row(r) for r in slices]
    return out
