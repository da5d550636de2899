"""Checkers over simulated NBCC runs: a history plus the final object store.

The final store is read with the real-table reader (:func:`model.nbcc.sim_layout.load_table`);
the *specification* side comes from the history alone: the rows each writer says it wrote
(``write-log`` events) and, from the final timeline, which deltacommits completed and when.  A
slicing ``Rule`` is plugged into every reader view, so a buggy rule can be judged on the same run.
Readers list through the metadata table when the table records one (``hoodie.table.metadata.partitions``
has ``files``, what the writers of a run with ``nbcc.metadata_table`` write), else storage.

Violation kinds (each names the history events that prove it):

* ``membership``, ``order-1`` .. ``order-4``, ``coverage``: :mod:`model.nbcc.checks` over every
  file group of the final table, sliced by the rule;
* ``plan``: for every file group a compaction plan names, the plan takes exactly the logs that
  completed strictly before its requested time (:func:`model.nbcc.checks.check_plan`); a group the
  plan leaves out is not compacted, which is no violation (Hudi's planner leaves out groups in a
  pending compaction, and Hudi 1.2.0's a group whose only slice it hides);
* ``snapshot``: the snapshot equals applying every committed write in completion-time order,
  merging by the ordering field;
* ``time-travel``: as of T the view equals the writes completed at or before T, and shows no file
  completed after T;
* ``incremental``: (t1, t2] returns exactly the writes completed in that range; adjacent ranges
  share none; together they return every committed write;
* ``durability``: every deltacommit or compaction a node saw succeed is completed in the store
  with the completion time it saw;
* ``read``: every snapshot an in-run reader recorded (``read`` events, ``model/nbcc/sim_reader.py``)
  equals the committed writes of the instants that reader saw completed: this catches what a reader
  saw while failed writes were still on storage, before a clean rolled them back.

:func:`check_same_outcome` compares the snapshots of several runs of one plan (different
interleavings): they must be equal when ordering values are distinct per key.

Finding (reported, not a violation): ``clustering-blocks-updates`` (:func:`clustering_findings`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from model.checkers.verdict import Verdict, Violation
from model.nbcc import checks
from model.nbcc.sim_clustering import UPDATE_REJECTED
from model.nbcc.sim_layout import (
    Row,
    load_table,
    merge_rows,
    parse_plan,
    read_slice_rows,
    requested_key,
    rows_reader,
)
from model.nbcc.slicing import (
    CompletionLookup,
    FileGroupFiles,
    FileSlice,
    Rule,
    incremental,
    slicer,
)
from model.nbcc.timeline_reader import HudiTable
from model.nbcc.views import reader_view
from model.runtime.clock import EPOCH_MS
from model.runtime.history import Event
from model.timeline.layout import BaseFile, LogFile, instant_to_ms, parse_instant, parse_log_file_name

MAX_PER_KIND = 5  # violations kept per kind (the first ones, in time order)


def rel_ms(t: int) -> int:
    """An instant number as milliseconds since the run started (the number itself when it is no date)."""
    try:
        return instant_to_ms(t) - EPOCH_MS
    except ValueError:
        return t


def rel(t: int | None) -> str:
    """An instant number as ``t<ms since the run started>`` (:func:`rel_ms`); ``-`` for none."""
    return "-" if t is None else f"t{rel_ms(t)}"


@dataclass(frozen=True)
class WrittenLog:
    """A log file as its writer recorded it: name, rows, and the history event."""

    log: LogFile
    rows: tuple[Row, ...]
    event: int


def written_logs(events: Iterable[Event]) -> dict[str, WrittenLog]:
    """Every log a writer set out to write (``write-log`` invoke events), by file name."""
    out: dict[str, WrittenLog] = {}
    for e in events:
        if e.f == "write-log" and e.type == "invoke" and isinstance(e.value, dict):
            lf = parse_log_file_name(e.value["file"])
            out[lf.name] = WrittenLog(lf, tuple(Row.from_json(r) for r in e.value["rows"]), e.index)
    return out


def spec_rows(
    logs: Iterable[WrittenLog], completion_time: CompletionLookup, upto: int | None
) -> dict[str, Row]:
    """The specification: committed writes (completed at or before ``upto``) applied in completion
    time order (then Hudi's log order, then row order), merged by the ordering field."""
    done = []
    for w in logs:
        tc = completion_time(w.log.instant)
        if tc is not None and (upto is None or tc <= upto):
            done.append((tc, w.log.sort_key, w))
    done.sort(key=lambda x: (x[0], x[1]))
    rows: dict[str, Row] = {}
    for _, _, w in done:
        rows = merge_rows(w.rows, rows)
    return rows


def _restrict(completion_time: CompletionLookup, lo: int | None, hi: int | None) -> CompletionLookup:
    def lookup(instant: int) -> int | None:
        tc = completion_time(instant)
        if tc is None or (hi is not None and tc > hi) or (lo is not None and tc <= lo):
            return None
        return tc

    return lookup


def latest_view(
    groups: Sequence[FileGroupFiles],
    completion_time: CompletionLookup,
    rule: Rule,
    t: int | None,
    metadata_table: bool = False,
) -> list[FileSlice]:
    """Snapshot (t None) or time travel as of t, with ``rule`` plugged into the slicing
    (:func:`model.nbcc.views.reader_view`)."""
    return reader_view(groups, completion_time, rule, t, None, metadata_table)


def incremental_writes(
    groups: Sequence[FileGroupFiles],
    completion_time: CompletionLookup,
    rule: Rule,
    instants: Iterable[int],
    t1: int,
    t2: int,
    rows_of: Callable[[Any], list[Row]],
) -> list[tuple[int, str]]:
    """The writes (commit instant, record id) an incremental query over (t1, t2] returns: rows of the
    view's file slices whose commit time is one of the instants completed in the range."""
    if rule is Rule.COMPLETION_TIME:
        view = incremental(groups, completion_time, instants, t1, t2)
        slices, valid = list(view.slices), set(view.instants)
    else:
        lookup = _restrict(completion_time, t1, t2)
        valid = {i for i in instants if lookup(i) is not None}
        # RFC-66: the view is built from the files written by instants completed in the range only
        in_range = [
            replace(
                g,
                pending_compactions=(),
                base_files=tuple(b for b in g.base_files if lookup(b.instant) is not None),
                log_files=tuple(lf for lf in g.log_files if lookup(lf.instant) is not None),
            )
            for g in groups
        ]
        slices = [s for g in in_range for s in slicer(rule)(g, lookup) if not s.is_empty]
    found: set[tuple[int, str]] = set()
    for s in slices:
        files: list[Any] = ([s.base_file] if s.base_file else []) + list(s.log_files)
        for f in files:
            found.update(r.write for r in rows_of(f) if r.commit in valid)
    return sorted(found)


class _Collector:
    def __init__(self) -> None:
        self.out: list[Violation] = []
        self.count: dict[str, int] = {}

    def add(self, kind: str, message: str, events: Iterable[int], **details: Any) -> None:
        self.count[kind] = self.count.get(kind, 0) + 1
        if self.count[kind] <= MAX_PER_KIND:
            self.out.append(Violation(kind, message, tuple(sorted(set(events))), details))


def check_history(
    events: Sequence[Event],
    objects: Mapping[str, bytes],
    base: str = "table",
    rule: Rule = Rule.COMPLETION_TIME,
    stop_early: bool = False,
) -> Verdict:
    """Check one simulated run; ``rule`` is the slicing rule the readers use.  With ``stop_early``
    the checkers run cheapest first and stop after the first one that finds a violation (for
    searches that only need to know whether a run is bad)."""
    table = load_table(objects, base)
    logs = written_logs(events)
    ev_of: dict[str, int] = {name: w.event for name, w in logs.items()}
    for e in events:
        if e.f == "write-base" and isinstance(e.value, dict):
            ev_of.setdefault(e.value["file"], e.index)
        if e.f in ("deltacommit", "compaction-plan") and e.type == "ok" and isinstance(e.value, dict):
            ev_of.setdefault(f"instant:{parse_instant(e.value['instant'])}", e.index)
    found = _Collector()

    def evs(names: Iterable[str]) -> list[int]:
        return [ev_of[n] for n in names if n in ev_of]

    rows_of = rows_reader(objects, base)
    mdt = table.has_metadata_table
    steps: list[Callable[[], None]] = [
        lambda: _check_slices(table, logs, rule, found, evs),
        lambda: _check_reads(events, table, logs, found),
        lambda: _check_plans(table, objects, base, found, evs),
        lambda: _check_durability(events, table, found),
        lambda: _check_views(table, logs, rows_of, rule, found, evs, mdt),
        lambda: _check_incremental(table, logs, rows_of, rule, found, evs, mdt),
    ]
    for step in steps:
        step()
        if stop_early and found.out:
            break
    return Verdict(tuple(found.out), clustering_findings(events), dict(sorted(found.count.items())))


def clustering_findings(events: Sequence[Event]) -> tuple[Violation, ...]:
    """Finding ``clustering-blocks-updates``: deltacommits refused because their file groups are in a
    clustering plan that Hudi's bucket layout never executes (:mod:`model.nbcc.sim_clustering`), with the
    plan's events; none when no deltacommit was refused."""
    refused = [e for e in events if e.f == "deltacommit" and e.type == "fail" and isinstance(e.value, dict)
               and e.value.get("reason") == UPDATE_REJECTED]
    if not refused:
        return ()
    plans = [e.index for e in events if e.f in ("clustering-plan", "clustering") and e.type in ("ok", "fail")]
    groups = sorted({g for e in refused for g in e.value.get("file_groups", ())})
    message = (f"{len(refused)} deltacommit(s) refused (HoodieClusteringUpdateException): file groups "
               f"{', '.join(groups)} are in a clustering plan that HoodieSimpleBucketLayout never executes")
    proof = tuple(sorted([*plans, *(e.index for e in refused)]))
    return (Violation("clustering-blocks-updates", message, proof, {"refused": len(refused),
                                                                   "file_groups": groups}),)


def _check_slices(
    table: HudiTable, logs: Mapping[str, WrittenLog], rule: Rule, found: _Collector, evs: Any
) -> None:
    ct = table.timeline.completion_time
    in_slices: set[str] = set()
    for g in table.listed_groups(table.has_metadata_table):
        slices = slicer(rule)(g, ct)
        in_slices.update(lf.name for s in slices for lf in s.log_files)
        for v in checks.check_slices(g, slices, ct):
            found.add(v.prop, f"{g.file_id}: {v.message}", evs(v.files), files=list(v.files), rule=rule.value)
    listed = {lf.name for g in table.groups for lf in g.log_files}
    for name, w in sorted(logs.items()):  # committed per the history, but not even listed
        if name not in listed and ct(w.log.instant) is not None and name not in in_slices:
            found.add(
                "membership",
                f"{w.log.file_id}: committed log {name} is in no file slice",
                [w.event],
                files=[name],
                rule=rule.value,
            )


def _check_plans(
    table: HudiTable, objects: Mapping[str, bytes], base: str, found: _Collector, evs: Any
) -> None:
    ct = table.timeline.completion_time
    for inst in table.timeline.instants:
        if inst.requested_action != "compaction":
            continue
        key = requested_key(base, inst.requested, "compaction")
        ops = {op.file_id: op for op in parse_plan(objects[key], key)}
        for g in table.groups:
            op = ops.get(g.file_id)
            if op is None:  # a group the plan leaves out is not compacted (see the module docstring)
                continue
            taken = [parse_log_file_name(n) for n in op.logs]
            for v in checks.check_plan(g, taken, ct, inst.requested):
                tc = ct(parse_log_file_name(v.files[0]).instant)
                found.add(
                    "plan",
                    f"{g.file_id}: compaction requested at {rel(inst.requested)} "
                    f"{'takes' if v.files[0] in op.logs else 'misses'} log "
                    f"{v.files[0]} completed at {rel(tc)}",
                    evs([*v.files, f"instant:{inst.requested}"]),
                    files=list(v.files),
                    compaction=inst.requested,
                )


def _diff(expected: Mapping[str, Row], got: Mapping[str, Row]) -> list[tuple[str, Row | None, Row | None]]:
    return [
        (k, expected.get(k), got.get(k))
        for k in sorted(set(expected) | set(got))
        if expected.get(k) != got.get(k)
    ]


def _file_of(logs: Mapping[str, WrittenLog], row: Row | None) -> list[str]:
    if row is None:
        return []
    return [n for n, w in logs.items() if w.log.instant == row.commit and row in w.rows]


def _check_views(
    table: HudiTable,
    logs: Mapping[str, WrittenLog],
    rows_of: Callable[[Any], list[Row]],
    rule: Rule,
    found: _Collector,
    evs: Any,
    metadata_table: bool = False,
) -> None:
    ct = table.timeline.completion_time
    completions = sorted({i.completed for i in table.timeline.completed() if i.completed is not None})
    times: list[int | None] = [None, *sorted({t for c in completions for t in (c - 1, c)})]
    groups = table.listed_groups(metadata_table)
    for t in times:
        view = latest_view(groups, ct, rule, t, metadata_table)
        got: dict[str, Row] = {}
        for s in view:
            shown: list[BaseFile | LogFile] = [s.base_file] if s.base_file else []
            for f in [*shown, *s.log_files]:
                tc = ct(f.instant)
                if t is not None and (tc is None or tc > t):
                    found.add(
                        "time-travel",
                        f"as of {rel(t)}: {f.name} is shown but completed at {rel(tc)}",
                        evs([f.name]),
                        as_of=t,
                    )
            got.update(read_slice_rows(s.base_file, s.log_files, ct, rows_of))
        want = spec_rows(logs.values(), ct, t)
        kind = "snapshot" if t is None else "time-travel"
        when = "snapshot" if t is None else f"as of {rel(t)}"
        for key, w, g in _diff(want, got):
            found.add(
                kind,
                f"{when}: key {key} should be {_row_text(w)} but reads {_row_text(g)}",
                evs(_file_of(logs, w) + _file_of(logs, g)),
                key=key,
                as_of=t,
                expected=w.rid if w else None,
                got=g.rid if g else None,
            )


def _row_text(r: Row | None) -> str:
    return "absent" if r is None else f"{r.rid} (ts={r.ts}, commit {rel(r.commit)})"


def _check_incremental(
    table: HudiTable,
    logs: Mapping[str, WrittenLog],
    rows_of: Callable[[Any], list[Row]],
    rule: Rule,
    found: _Collector,
    evs: Any,
    metadata_table: bool = False,
) -> None:
    ct = table.timeline.completion_time
    instants = [i.requested for i in table.timeline.instants]
    groups = table.listed_groups(metadata_table)
    completions = sorted({i.completed for i in table.timeline.completed() if i.completed is not None})
    if not completions:
        return
    all_writes: dict[tuple[int, str], tuple[int, str]] = {}
    for name, w in logs.items():
        tc = ct(w.log.instant)
        if tc is not None:
            for r in w.rows:
                all_writes[r.write] = (tc, name)
    for step in (1, 3):
        cuts = [completions[0] - 1, *completions[step - 1 :: step]]
        if cuts[-1] != completions[-1]:
            cuts.append(completions[-1])
        seen: dict[tuple[int, str], tuple[int, int]] = {}
        for t1, t2 in zip(cuts, cuts[1:], strict=False):
            got = incremental_writes(groups, ct, rule, instants, t1, t2, rows_of)
            want = {wr for wr, (tc, _) in all_writes.items() if t1 < tc <= t2}
            for wr in got:
                if wr in seen:
                    found.add(
                        "incremental",
                        f"write {wr[1]} of {rel(wr[0])} returned by ({rel(seen[wr][0])}, "
                        f"{rel(seen[wr][1])}] and again by ({rel(t1)}, {rel(t2)}]",
                        evs([all_writes[wr][1]] if wr in all_writes else []),
                        write=list(wr),
                    )
                seen[wr] = (t1, t2)
            for wr in sorted(set(got) ^ want):
                what = "returns a write not completed in the range" if wr in set(got) else "misses a write"
                name = all_writes.get(wr, (0, ""))[1]
                found.add(
                    "incremental",
                    f"({rel(t1)}, {rel(t2)}] {what}: {wr[1]} of {rel(wr[0])} "
                    f"(completed {rel(all_writes.get(wr, (None, ''))[0])})",
                    evs([name]),
                    write=list(wr),
                )


def _check_reads(
    events: Sequence[Event], table: HudiTable, logs: Mapping[str, WrittenLog], found: _Collector
) -> None:
    """Each in-run snapshot against the committed writes of the instants its reader saw completed."""
    ct = table.timeline.completion_time
    for e in events:
        if e.f != "read" or e.type != "ok" or not isinstance(e.value, dict):
            continue
        seen = {parse_instant(i) for i in e.value["completed"]}

        def lookup(instant: int, seen: set[int] = seen) -> int | None:
            return ct(instant) if instant in seen else None

        want = {k: (r.ts, r.rid) for k, r in spec_rows(logs.values(), lookup, None).items()}
        got = {k: (int(v[0]), str(v[1])) for k, v in e.value["rows"].items()}
        newest = max((tc for i in seen if (tc := ct(i)) is not None), default=None)
        for key in sorted(set(want) | set(got)):
            if want.get(key) != got.get(key):
                hidden = e.value.get("hidden") or []
                found.add(
                    "read",
                    f"{e.process}'s snapshot as of {rel(newest)}: key {key} should be "
                    f"{want.get(key, 'absent')} but reads {got.get(key, 'absent')}"
                    + (f" (file groups hidden: {', '.join(hidden)})" if hidden else ""),
                    [e.index],
                    key=key,
                    reader=e.process,
                    hidden=hidden,
                )


def _check_durability(events: Sequence[Event], table: HudiTable, found: _Collector) -> None:
    for e in events:
        if e.f in ("deltacommit", "compaction") and e.type == "ok" and isinstance(e.value, dict):
            requested, completion = parse_instant(e.value["instant"]), parse_instant(e.value["completion"])
            inst = table.timeline.get(requested)
            if inst is None or inst.completed != completion:
                found.add(
                    "durability",
                    f"{e.f} {rel(requested)} succeeded at {rel(completion)} "
                    f"but the store says {rel(inst.completed if inst else None)}",
                    [e.index],
                )


def snapshot_rows(
    events: Sequence[Event],
    objects: Mapping[str, bytes],
    base: str = "table",
    rule: Rule = Rule.COMPLETION_TIME,
) -> dict[str, tuple[int, str]]:
    """The snapshot a reader sees: key -> (ordering value, record id)."""
    table = load_table(objects, base)
    ct = table.timeline.completion_time
    rows: dict[str, Row] = {}
    rows_of = rows_reader(objects, base)
    mdt = table.has_metadata_table
    for s in latest_view(table.listed_groups(mdt), ct, rule, None, mdt):
        rows.update(read_slice_rows(s.base_file, s.log_files, ct, rows_of))
    return {k: (r.ts, r.rid) for k, r in sorted(rows.items())}


def check_same_outcome(snapshots: Sequence[tuple[int, Mapping[str, tuple[int, str]]]]) -> list[Violation]:
    """Interleaving independence: ``(seed, snapshot)`` pairs of one plan whose every batch committed
    must agree key by key (valid when ordering values are distinct per key)."""
    out: list[Violation] = []
    if not snapshots:
        return out
    seed0, first = snapshots[0]
    for seed, snap in snapshots[1:]:
        for key in sorted(set(first) | set(snap)):
            if first.get(key) != snap.get(key):
                out.append(
                    Violation(
                        "interleaving",
                        f"key {key}: seed {seed0} reads {first.get(key)}, seed {seed} reads {snap.get(key)}",
                        (),
                        {"key": key},
                    )
                )
                break
    return out
