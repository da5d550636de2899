"""A pure reader of real Apache Hudi tables (table versions 6, 8 and 9): no I/O, no Hudi library.

The caller supplies the table's file listing (paths relative to the table base path, with ``/``)
and a function that returns a file's bytes; :mod:`backends.hudi_table_source` does that for a
folder or a zip.  The reader understands:

* ``.hoodie/hoodie.properties`` (Java properties);
* timeline layout 1 (v6: instant files in ``.hoodie/``, no completion times) and layout 2
  (v8/v9: ``.hoodie/timeline/``, completed ``<requested>_<completion>.<action>``, pending
  ``<ts>.<action>.requested|inflight``); a non-empty archive (``.hoodie/archived/`` or
  ``.hoodie/timeline/history/``) makes lookups of older instants raise instead of guessing;
* commit metadata in JSON (v6) or Avro (v8+): replacecommits (``partitionToReplaceFileIds``:
  replaced file groups disappear), compaction commits (``partitionToWriteStats``:
  ``prevCommit`` and ``totalLogFilesCompacted`` per file group) and compaction plans (which log
  files each compaction was planned to take), rollbacks (which instants were rolled back);
* base and log file names, partitions, and the metadata table at ``.hoodie/metadata/`` (itself a
  MERGE_ON_READ table, read recursively).

Slicing uses :mod:`model.nbcc.slicing`: completion time for layout 2; for layout 1 the log's name
carries its base instant and no completion time exists, so the instant-time rule is used with the
request time standing in for the completion time (Hudi 0.x semantics).  Every group carries the
table's write timeline (:class:`~model.nbcc.slicing.WriteTimeline`), which Hudi's committed-slice
check needs (:mod:`model.nbcc.filegroup`).

Listing: ``groups`` are what a storage listing finds.  :meth:`HudiTable.listed_groups` gives, with
``metadata_table``, what the metadata table's ``files`` partition would list instead: the data files
named by the write stats of the completed commits (``HoodieTableMetadataUtil`` turns each commit's
write stats into ``files`` records, and readers take only records of completed data-table instants).
That is derived here from the commit metadata on the active timeline; files of archived commits are
therefore missing from it (real tables with an archive: use the storage listing).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from model.nbcc.completion_times import Timeline
from model.nbcc.slicing import (
    CompletionLookup,
    FileGroupFiles,
    FileGroupId,
    FileSlice,
    Rule,
    WriteTimeline,
    build_file_slices,
)
from model.timeline.layout import (
    PARTITION_METADATA,
    BaseFile,
    Instant,
    LogFile,
    State,
    is_base_file_name,
    is_log_file_name,
    parse_base_file_name,
    parse_instant,
    parse_instant_name,
    parse_log_file_name,
)
from model.timeline.metadata import decode_instant_metadata

ReadBytes = Callable[[str], bytes]

PROPERTIES = ".hoodie/hoodie.properties"
METADATA_DIR = ".hoodie/metadata"
METADATA_PARTITIONS = "hoodie.table.metadata.partitions"
MODEL_METADATA_TABLE = "hcc.model.metadata.table"  # a simulated table's (model/nbcc/sim_layout.py)
WRITE_ACTIONS = frozenset(
    {"commit", "deltacommit", "compaction", "replacecommit", "clustering", "logcompaction"}
)
JUNK_COMPONENTS = frozenset({"__MACOSX", ".DS_Store"})


@dataclass(frozen=True)
class CompactionRecord:
    """What one compaction did to one file group, as Hudi recorded it."""

    compaction: int
    partition: str
    file_id: str
    prev_base_instant: int | None
    total_log_files_compacted: int | None
    planned_log_files: tuple[str, ...] | None


@dataclass(frozen=True)
class RollbackRecord:
    """A completed rollback and the instants it rolled back."""

    instant: int
    rolled_back: tuple[int, ...]
    deleted_files: tuple[str, ...]


@dataclass(frozen=True)
class HudiTable:
    """A Hudi table as read from its listing: timeline, file groups and what the writer recorded."""

    properties: Mapping[str, str]
    table_version: int
    layout_version: int
    table_type: str
    timeline: Timeline
    groups: tuple[FileGroupFiles, ...]
    replaced: Mapping[FileGroupId, int] = field(default_factory=dict)
    compactions: tuple[CompactionRecord, ...] = ()
    rollbacks: tuple[RollbackRecord, ...] = ()
    metadata: HudiTable | None = None
    unrecognized_files: tuple[str, ...] = ()
    # data file names each completed instant's commit metadata records (write stat paths)
    written_files: Mapping[int, tuple[str, ...]] = field(default_factory=dict)

    @property
    def rule(self) -> Rule:
        """The slicing rule of this table version when none is asked for: the harness's completion-time
        rule for layout 2, the instant-time rule for layout 1 (Hudi 0.x)."""
        return Rule.COMPLETION_TIME if self.layout_version >= 2 else Rule.INSTANT_TIME

    @property
    def has_metadata_table(self) -> bool:
        """True when ``hoodie.properties`` records a metadata table with a ``files`` partition (readers
        with ``hoodie.metadata.enable`` then list through it): Hudi's key, or for a simulated table the
        harness's own (``hcc.model.metadata.table``: the writers' metadata table is modelled, not written)."""
        return any("files" in self.properties.get(key, "").split(",")
                   for key in (METADATA_PARTITIONS, MODEL_METADATA_TABLE))

    def listed_groups(self, metadata_table: bool) -> tuple[FileGroupFiles, ...]:
        """The file groups a reader lists: storage's (``groups``), or with ``metadata_table`` only the
        files the completed commits wrote (see the module docstring); pending compactions stay."""
        if not metadata_table:
            return self.groups
        listed = {name for names in self.written_files.values() for name in names}
        out = []
        for g in self.groups:
            kept = replace(
                g,
                base_files=tuple(b for b in g.base_files if b.name in listed),
                log_files=tuple(lf for lf in g.log_files if lf.name in listed),
            )
            if kept.base_files or kept.log_files or kept.pending_compactions:
                out.append(kept)
        return tuple(out)

    def completion_lookup(self) -> CompletionLookup:
        """Completion times (layout 2), or request times of committed instants (layout 1)."""
        if self.timeline.has_completion_times:
            return self.timeline.completion_time
        tl = self.timeline

        def by_request_time(instant: int) -> int | None:
            return instant if tl.is_committed(instant) else None

        return by_request_time

    def all_slices(self, rule: Rule | None = None) -> dict[FileGroupId, tuple[FileSlice, ...]]:
        """Every slice of every file group (replaced groups included), by ``rule`` (for Hudi's rules,
        the slices Hudi calls committed), from the storage listing."""
        return build_file_slices(self.groups, self.completion_lookup(), rule or self.rule)

    def view_slices(
        self, rule: Rule | None = None, metadata_table: bool = False
    ) -> dict[FileGroupId, tuple[FileSlice, ...]]:
        """:meth:`all_slices` from the storage listing or (``metadata_table``) the metadata table's."""
        groups = self.listed_groups(metadata_table)
        return build_file_slices(groups, self.completion_lookup(), rule or self.rule)

    def snapshot(self, rule: Rule | None = None, metadata_table: bool = False) -> list[FileSlice]:
        """The latest snapshot: one slice per live file group, sliced by ``rule`` (default :attr:`rule`)
        from the storage listing or (``metadata_table``) the metadata table's."""
        return self.view(None, rule, metadata_table)

    def as_of(self, t: int, rule: Rule | None = None, metadata_table: bool = False) -> list[FileSlice]:
        """Time travel: the files completed at or before ``t`` (request time on layout 1)."""
        return self.view(t, rule, metadata_table)

    def view(self, t: int | None, rule: Rule | None = None, metadata_table: bool = False) -> list[FileSlice]:
        """What a reader reads as of ``t`` (None: the latest snapshot), ``views.reader_view``."""
        from model.nbcc.views import reader_view  # views build on this module's neighbours, not on it

        groups = self.listed_groups(metadata_table)
        lookup = self.completion_lookup()
        return reader_view(groups, lookup, rule or self.rule, t, self.replaced, metadata_table)


def clean_listing(paths: Iterable[str]) -> list[str]:
    """Drop macOS leftovers (``__MACOSX/``, ``.DS_Store``) and directory entries."""
    out = []
    for p in paths:
        p = p.strip("/")
        if not p or any(part in JUNK_COMPONENTS for part in p.split("/")):
            continue
        out.append(p)
    return out


def find_table_root(paths: Iterable[str]) -> str:
    """The base path ('' for the listing root) of the one table in ``paths``: the shortest folder
    that holds ``.hoodie/hoodie.properties``.  ValueError when there is none."""
    roots = [
        p[: -len(PROPERTIES)].rstrip("/")
        for p in clean_listing(paths)
        if p == PROPERTIES or p.endswith("/" + PROPERTIES)
    ]
    if not roots:
        raise ValueError(f"no {PROPERTIES} found: not a Hudi table")

    def inside(r: str, other: str) -> bool:
        return r != other and (other == "" or r.startswith(other + "/"))

    tops = sorted({r for r in roots if not any(inside(r, o) for o in roots)})
    if len(tops) > 1:
        raise ValueError(f"more than one Hudi table in the listing: {tops[0]!r} and {tops[1]!r}")
    return tops[0]


def parse_properties(text: str) -> dict[str, str]:
    """Parse a Java properties file (``key=value``, ``#``/``!`` comments, backslash escapes)."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        m = re.match(r"((?:\\.|[^=:\s\\])+)\s*[=:\s]\s*(.*)$", line)
        key, value = (m.group(1), m.group(2)) if m else (line, "")
        out[_unescape(key)] = _unescape(value)
    return out


def _unescape(s: str) -> str:
    def sub(m: re.Match[str]) -> str:
        c = m.group(1)
        if c.startswith("u"):
            return chr(int(c[1:], 16))
        return {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(c, c)

    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", sub, s)


@dataclass
class _RawInstant:
    requested: int
    states: dict[str, str] = field(default_factory=dict)  # state -> file name
    actions: dict[str, str] = field(default_factory=dict)  # state -> action
    completed: int | None = None


def _parse_timeline_dir(names: Iterable[str], layout: int, where: str) -> dict[int, _RawInstant]:
    raw: dict[int, _RawInstant] = {}
    for name in names:
        try:
            inst = parse_instant_name(name, "v8" if layout >= 2 else "v6")
        except ValueError as exc:
            raise ValueError(f"{where}/{exc}") from None
        if inst is None:
            continue
        ri = raw.setdefault(inst.requested, _RawInstant(inst.requested))
        ri.states[inst.state.value], ri.actions[inst.state.value] = name, inst.action
        if inst.completed is not None:
            ri.completed = inst.completed
    return raw


def _to_instant(ri: _RawInstant, where: str) -> Instant:
    requested_action = ri.actions.get("requested") or ri.actions.get("inflight") or ri.actions["completed"]
    if "completed" in ri.states:
        if ri.completed is not None and ri.completed < ri.requested:
            raise ValueError(
                f"{where}/{ri.states['completed']}: instant {ri.requested}: completion {ri.completed} "
                "precedes request"
            )
        return Instant(ri.requested, ri.actions["completed"], State.COMPLETED, ri.completed, requested_action)
    state = State.INFLIGHT if "inflight" in ri.states else State.REQUESTED
    return Instant(ri.requested, requested_action, state, None, requested_action)


def _parse_opt_instant(value: Any) -> int | None:
    if value in (None, "", "null"):
        return None
    try:
        return parse_instant(str(value))
    except ValueError:
        return None


def read_table(paths: Iterable[str], read: ReadBytes, *, with_metadata: bool = True) -> HudiTable:
    """Read the Hudi table whose base path is the root of ``paths`` (relative, ``/``-separated).

    ``read(path)`` returns the bytes of a listed file.  ValueError names the file and value on
    bad input.  The metadata table, when present and ``with_metadata``, is read into
    ``HudiTable.metadata``.
    """
    listing = clean_listing(paths)
    if PROPERTIES not in listing:
        raise ValueError(f"no {PROPERTIES} at the table base path: not a Hudi table")
    try:
        props = parse_properties(read(PROPERTIES).decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{PROPERTIES}: not text: {exc}") from None
    try:
        table_version = int(props.get("hoodie.table.version", "0"))
        layout = int(props.get("hoodie.timeline.layout.version", "2" if table_version >= 8 else "1"))
    except ValueError as exc:
        raise ValueError(f"{PROPERTIES}: bad version field: {exc}") from None
    table_type = props.get("hoodie.table.type", "COPY_ON_WRITE")
    tl_dir = ".hoodie/" + props.get("hoodie.timeline.path", "timeline") if layout >= 2 else ".hoodie"
    if layout >= 2:
        archive_dir = tl_dir + "/" + props.get("hoodie.timeline.history.path", "history")
    else:
        archive_dir = ".hoodie/" + props.get("hoodie.archivelog.folder", "archived")

    timeline_names = [p[len(tl_dir) + 1 :] for p in listing if posixpath.dirname(p) == tl_dir]
    raw = _parse_timeline_dir(timeline_names, layout, tl_dir)
    instants = tuple(_to_instant(ri, tl_dir) for ri in raw.values())
    archived = any(p.startswith(archive_dir + "/") for p in listing)
    boundary = None
    if archived:
        boundary = min((i.requested for i in instants), default=10**17)
    timeline = Timeline(instants, boundary, {}, has_completion_times=layout >= 2)

    def meta(ri: _RawInstant, state: str) -> dict[str, Any]:
        name = ri.states.get(state)
        if name is None:
            return {}
        path = f"{tl_dir}/{name}"
        return decode_instant_metadata(read(path), path)

    replaced: dict[FileGroupId, int] = {}
    compactions: list[CompactionRecord] = []
    rollbacks: list[RollbackRecord] = []
    pending_compactions: dict[FileGroupId, list[int]] = {}
    for inst in timeline.instants:
        ri = raw[inst.requested]
        if inst.is_completed and inst.action == "replacecommit":
            for part, fids in (meta(ri, "completed").get("partitionToReplaceFileIds") or {}).items():
                for fid in fids or ():
                    replaced.setdefault(FileGroupId(part, fid), inst.requested)
        if inst.requested_action == "compaction":
            plan = _plan_operations(meta(ri, "requested"))
            if not inst.is_completed:
                for gid in plan:
                    pending_compactions.setdefault(gid, []).append(inst.requested)
            else:
                compactions.extend(_compaction_records(inst.requested, meta(ri, "completed"), plan))
        if inst.is_completed and inst.action == "rollback":
            rollbacks.append(_rollback_record(inst.requested, meta(ri, "completed")))

    write_timeline = WriteTimeline(
        tuple(i.requested for i in timeline.instants if i.requested_action in WRITE_ACTIONS),
        frozenset(i.requested for i in timeline.instants if i.requested_action == "compaction"),
    )
    written: dict[int, tuple[str, ...]] = {}
    for inst in timeline.instants:
        if inst.is_completed and inst.requested_action in WRITE_ACTIONS:
            written[inst.requested] = _written_files(meta(raw[inst.requested], "completed"))
    groups, unrecognized = _data_files(listing, pending_compactions, write_timeline)
    mdt: HudiTable | None = None
    if with_metadata and f"{METADATA_DIR}/{PROPERTIES}" in listing:
        prefix = METADATA_DIR + "/"
        sub = [p[len(prefix) :] for p in listing if p.startswith(prefix)]
        mdt = read_table(sub, lambda p: read(prefix + p), with_metadata=False)
    return HudiTable(
        props,
        table_version,
        layout,
        table_type,
        timeline,
        groups,
        replaced,
        tuple(compactions),
        tuple(rollbacks),
        mdt,
        unrecognized,
        written,
    )


def _plan_operations(plan: Mapping[str, Any]) -> dict[FileGroupId, tuple[str, ...]]:
    out: dict[FileGroupId, tuple[str, ...]] = {}
    for op in plan.get("operations") or ():
        gid = FileGroupId(op.get("partitionPath") or "", str(op.get("fileId")))
        out[gid] = tuple(posixpath.basename(p) for p in op.get("deltaFilePaths") or ())
    return out


def _compaction_records(
    instant: int, commit: Mapping[str, Any], plan: Mapping[FileGroupId, tuple[str, ...]]
) -> list[CompactionRecord]:
    out: list[CompactionRecord] = []
    seen: set[FileGroupId] = set()
    for part, stats in (commit.get("partitionToWriteStats") or {}).items():
        for st in stats or ():
            gid = FileGroupId(part, str(st.get("fileId")))
            seen.add(gid)
            total = st.get("totalLogFilesCompacted")
            out.append(
                CompactionRecord(
                    instant,
                    part,
                    gid.file_id,
                    _parse_opt_instant(st.get("prevCommit")),
                    int(total) if total is not None else None,
                    plan.get(gid),
                )
            )
    for gid, logs in plan.items():  # planned but no output file written
        if gid not in seen:
            out.append(CompactionRecord(instant, gid.partition, gid.file_id, None, None, logs))
    return out


def _written_files(commit: Mapping[str, Any]) -> tuple[str, ...]:
    """The data files a commit's write stats name (their ``path``)."""
    out = []
    for stats in (commit.get("partitionToWriteStats") or {}).values():
        for st in stats or ():
            path = st.get("path")
            if path:
                out.append(posixpath.basename(str(path)))
    return tuple(out)


def _rollback_record(instant: int, md: Mapping[str, Any]) -> RollbackRecord:
    rolled = tuple(
        sorted(i for i in map(_parse_opt_instant, md.get("commitsRollback") or ()) if i is not None)
    )
    deleted: list[str] = []
    for pm in (md.get("partitionMetadata") or {}).values():
        deleted.extend(posixpath.basename(p) for p in pm.get("successDeleteFiles") or ())
    return RollbackRecord(instant, rolled, tuple(sorted(deleted)))


def _data_files(
    listing: Iterable[str],
    pending_compactions: Mapping[FileGroupId, list[int]],
    write_timeline: WriteTimeline | None = None,
) -> tuple[tuple[FileGroupFiles, ...], tuple[str, ...]]:
    bases: dict[FileGroupId, list[BaseFile]] = {}
    logs: dict[FileGroupId, list[LogFile]] = {}
    unrecognized: list[str] = []
    for p in listing:
        if p.startswith(".hoodie/") or p == ".hoodie":
            continue
        part, name = posixpath.split(p)
        if name.startswith(PARTITION_METADATA):
            continue
        if is_base_file_name(name):
            bf = parse_base_file_name(name)
            bases.setdefault(FileGroupId(part, bf.file_id), []).append(bf)
        elif is_log_file_name(name):
            lf = parse_log_file_name(name)
            logs.setdefault(FileGroupId(part, lf.file_id), []).append(lf)
        else:
            unrecognized.append(p)
    groups = tuple(
        FileGroupFiles(
            gid.partition,
            gid.file_id,
            tuple(sorted(bases.get(gid, ()))),
            tuple(sorted(logs.get(gid, ()), key=lambda lf: lf.sort_key)),
            tuple(sorted(pending_compactions.get(gid, ()))),
            write_timeline,
        )
        for gid in sorted(set(bases) | set(logs))
    )
    return groups, tuple(sorted(unrecognized))


# ---- reading real data files (issue 28) ------------------------------------------------------


def ordering_field(properties: Mapping[str, str]) -> str:
    """The field records merge by (``hoodie.table.ordering.fields`` of v9, ``hoodie.table.precombine.field``
    before), or ``""`` when the table merges by commit time (``hoodie.record.merge.mode``)."""
    if properties.get("hoodie.record.merge.mode") == "COMMIT_TIME_ORDERING":
        return ""
    return (properties.get("hoodie.table.ordering.fields") or properties.get("hoodie.table.precombine.field")
            or "").split(",")[0]


def slice_records(table: HudiTable, s: FileSlice, read: ReadBytes) -> dict[str, dict[str, Any]]:
    """The records a reader reads from file slice ``s`` of ``table`` (record key -> record with its meta
    columns): the base file's, then the logs' blocks, the logs in completion-time order (layout 2; Hudi's
    log order on layout 1), merged by the table's ordering field; rolled-back blocks dropped.  The files
    are read through :mod:`model.hudi_files.records` (Hudi's encoding or the model's JSON);
    :class:`~model.hudi_files.errors.HudiFileError` names a file that does not decode."""
    from model.hudi_files.records import merge_slice, read_data_file

    def path(name: str) -> str:
        return f"{s.partition}/{name}" if s.partition else name

    lookup = table.completion_lookup()

    def order(lf: LogFile) -> tuple[int, tuple[int, int, str, str]]:
        tc = lookup(lf.instant) if table.layout_version >= 2 else lf.instant
        return (tc if tc is not None else 2**62, lf.sort_key)

    def content(name: str) -> Any:
        return read_data_file(path(name), read(path(name)))

    base = content(s.base_file.name).records if s.base_file else ()
    logs = [content(lf.name).blocks for lf in sorted(s.log_files, key=order)]
    return merge_slice(base, logs, ordering_field(table.properties))
