"""Time travel and incremental reads of a Hudi run's table: Hudi's own Spark reader against the model's reader
and hudi-rs 0.5.0, at the read points of :mod:`engines.hudi_spark.reads` (``reads.json``: at each sampled
completed instant, as of its completion time, and incrementally from the previous completion time to it).

At each point three readings, each the sorted rows ``(key, partition, value, _hoodie_commit_time)``:

- **Hudi**: Hudi 1.2.0's Spark datasource (``as.of.instant``; ``query.type=incremental``), or its refusal;
- **model**: the model's reader on the same table (:class:`model.nbcc.timeline_reader.HudiTable`, the run's
  listing and slicing rule): as of ``T``, :meth:`~model.nbcc.timeline_reader.HudiTable.as_of` (what completed
  by ``T``, fidelity NB23's model column); incrementally, :func:`model.nbcc.slicing.incremental` (the
  instants completed in ``(start, end]`` and the slices of their files, NB24), the latest slice of each group,
  rows whose commit time is one of those instants;
- **hudi-rs**: ``read(as_of=T)`` and the incremental read of ``(start, end]`` (a second reader: a difference
  it shows is a note about hudi-rs 0.5.0, not a difference of the model).

Hudi's time travel is not the model's (``docs/fidelity.md``: "Hudi's time-travel API (NB23) is not
transcribed"). Two of its behaviours are *declared*, named with their Java and left out of the differences:

- ``request time``: Hudi reads as of ``T`` the file slices keyed at or before ``T``
  (``AbstractTableFileSystemView#getLatestMergedFileSlicesBeforeOrOn``, 1072-1105, on the timeline of the
  instants completed now, ``BaseHoodieTableFileIndex#getActiveTimeline``, 450-462, and ``#filterFiles``,
  356-357), so a commit requested before ``T`` and completed after it is read; the model reads what completed
  by ``T``. A point where Hudi reads :func:`request_time_rows` is declared;
- ``refused``: Hudi refuses ``as.of.instant`` at or after the first pending commit
  (``TimelineUtils#validateTimestampAsOf``, 407-420: ``HoodieTimeTravelException``; clusterings excepted), a
  killed writer's instant among them; the model's reader reads on. A refusal where a pending commit was
  requested at or before ``T`` is declared.

One behaviour of Hudi's incremental read is declared too (the model's is RFC-66's, NB24):

- ``pending compaction``: the MOR incremental relation reads each group's latest slice keyed at or before
  the *request* time of the last instant in range (``MergeOnReadIncrementalRelationV2#listFileSplits``:
  ``fsView.getLatestMergedFileSlicesBeforeOrOn(partition, includedCommits.last.requestedTime)``, on a view
  of the range's files and the timeline's pending compactions), while Hudi 1.x puts a log in the slice of
  the compaction requested before the log *completed* (``HoodieFileGroup#getBaseInstantTime`` 129-140,
  the pending compaction's slice added first, ``AbstractTableFileSystemView#buildFileGroups`` 245-255). A
  deltacommit requested before a pending compaction of its group and completed after it is in range, but
  its log lies in a slice keyed after its request time (``HoodieFileGroup#getLatestFileSliceBeforeOrOn``
  214-216) and is not read. A point where Hudi reads :func:`hudi_incremental_rows` is declared.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from analyses.writers_differential import minus, slice_rows
from backends.hudi_rs import SKIPS_LOG_ONLY_GROUPS, groups_hudi_rs_skips
from model.nbcc.slices import FileSlice, Rule
from model.nbcc.slicing import incremental, slice_by_completion_time
from model.nbcc.timeline_reader import HudiTable, ReadBytes
from model.run_format import READS
from model.timeline.layout import Instant, format_instant
from reports.load import load_writers_file

Row = tuple[str, str, Any, str]  # key, partition, value (an int in Hudi's runs), _hoodie_commit_time
# the fidelity rows each kind of read rests on (docs/fidelity.md, NBCC "Readers")
FIDELITY = {"as_of": "NB23 (time travel: the model's as-of read, what completed by T)",
            "incremental": "NB24 (incremental reads: the instants completed in (start, end], their files)"}
REQUEST_TIME = ("request time: Hudi's time travel reads the slices keyed at or before T of the instants "
                "completed now (AbstractTableFileSystemView#getLatestMergedFileSlicesBeforeOrOn, 1072-1105); "
                "the model's, what completed by T (NB23: Hudi's time-travel API is not transcribed)")
REFUSED = ("refused: Hudi refuses time travel at or after the first pending commit "
           "(TimelineUtils#validateTimestampAsOf, 407-420); the model's reader has no refusal")
PENDING_COMPACTION = ("pending compaction: Hudi's MOR incremental read takes each group's latest slice keyed "
                      "at or before the request time of the last instant in range "
                      "(MergeOnReadIncrementalRelationV2#listFileSplits, AbstractTableFileSystemView"
                      "#getLatestMergedFileSlicesBeforeOrOn 1072-1105), so a deltacommit requested before a "
                      "pending compaction of its group and completed after it is not read; the model reads "
                      "every instant completed in the range (NB24)")
TIME_TRAVEL_EXCEPTION = "org.apache.hudi.exception.HoodieTimeTravelException"
# the actions of HoodieTableMetaClient#getCommitsTimeline whose pending instants stop time travel
COMMIT_ACTIONS = frozenset({"commit", "deltacommit", "replacecommit"})


def model_reading(table: HudiTable, read: ReadBytes, point: Mapping[str, Any], rule: Rule | None,
                  metadata_table: bool) -> list[Row]:
    """The model reader's rows at ``point`` (a ``reads.json`` point: ``as_of`` at ``at``, or ``incremental``
    over ``(start, end]``)."""
    if point["kind"] == "as_of":
        return slice_rows(table, read, table.as_of(int(point["at"]), rule, metadata_table))
    completed = [i.requested for i in table.timeline.instants if i.is_completed]
    view = incremental(table.listed_groups(metadata_table), table.completion_lookup(), completed,
                       int(point["start"]), int(point["end"]))
    latest: dict[tuple[str, str], FileSlice] = {}
    for s in view.slices:  # each group's slices in slicing order: the last is its latest
        latest[(s.partition, s.file_id)] = s
    admitted = {format_instant(i) for i in view.instants}
    return [r for r in slice_rows(table, read, latest.values()) if r[3] in admitted]


def request_time_rows(table: HudiTable, read: ReadBytes, at: int, rule: Rule | None,
                      metadata_table: bool) -> list[Row]:
    """What a time-travel read by request time reads as of ``at``: the latest slices of the files whose
    instant was requested at or before ``at``, of the instants completed now (Hudi's Spark time travel)."""
    groups = tuple(dataclasses.replace(
        g, base_files=tuple(b for b in g.base_files if b.instant <= at),
        log_files=tuple(lf for lf in g.log_files if lf.instant <= at),
        pending_compactions=tuple(p for p in g.pending_compactions if p <= at)) for g in table.groups)
    then = dataclasses.replace(table, groups=groups,
                               replaced={k: v for k, v in table.replaced.items() if v <= at})
    return slice_rows(table, read, then.snapshot(rule, metadata_table))


def hudi_incremental_rows(table: HudiTable, read: ReadBytes, start: int, end: int,
                          metadata_table: bool) -> list[Row]:
    """What Hudi 1.2.0's MOR incremental read over ``(start, end]`` reads: of the files the instants completed
    in the range wrote, sliced with the groups' pending compactions, each group's latest slice keyed at or
    before the last such instant's request time (merged with the slice before it when that is a pending
    compaction's, ``AbstractTableFileSystemView#fetchMergedFileSlice``); rows of those instants."""
    done = table.completion_lookup()

    def in_range(instant: int) -> int | None:
        tc = done(instant)
        return tc if tc is not None and start < tc <= end else None

    admitted = {i.requested for i in table.timeline.instants if i.is_completed and in_range(i.requested)}
    if not admitted:
        return []
    last = max(admitted)
    chosen: list[FileSlice] = []
    for g in table.listed_groups(metadata_table):
        slices = [s for s in slice_by_completion_time(g, in_range) if s.base_instant <= last]
        if not slices:
            continue
        s = slices[-1]
        if s.base_instant in g.pending_compactions and len(slices) > 1:
            prev = slices[-2]
            s = dataclasses.replace(s, base_file=prev.base_file, log_files=prev.log_files + s.log_files)
        chosen.append(s)
    names = {format_instant(i) for i in admitted}
    return [r for r in slice_rows(table, read, chosen) if r[3] in names]


def first_pending_commit(instants: Iterable[Instant]) -> int | None:
    """The request time of the first pending commit, deltacommit or replacecommit of ``instants`` (a pending
    clustering has its own action), ``TimelineUtils#validateTimestampAsOf``'s ``firstIncompleteCommit``; or
    None."""
    return min((i.requested for i in instants if not i.is_completed and i.action in COMMIT_ACTIONS),
               default=None)


def _rows(answer: Mapping[str, Any]) -> list[Row] | None:
    if "rows" not in answer:
        return None
    return sorted((str(r[0]), str(r[1]), r[2], str(r[3])) for r in answer["rows"])  # values: JSON's ints


def _rs_rows(answer: Mapping[str, Any]) -> list[Row] | None:
    if "rows" not in answer:
        return None
    return sorted((str(r["key"]), str(r["partition"]), int(r["value"]), str(r["_hoodie_commit_time"]))
                  for r in answer["rows"])


def judge_point(point: Mapping[str, Any], hudi: Mapping[str, Any], model: Sequence[Row],
                by_request_time: Sequence[Row] | None, pending: int | None) -> tuple[str, str | None]:
    """The outcome at one point: ``("agree", None)``, ``("declared", why)`` or ``("differs", why)``;
    ``by_request_time`` is the declared reading at the point (:func:`request_time_rows` as of ``T``,
    :func:`hudi_incremental_rows` over a range)."""
    rows = _rows(hudi)
    if rows is None:
        err = hudi.get("error", {})
        if (point["kind"] == "as_of" and err.get("class") == TIME_TRAVEL_EXCEPTION and pending is not None
                and pending <= int(point["at"])):
            return "declared", REFUSED
        return "differs", f"Hudi's reader failed: {err.get('class')}: {str(err.get('message'))[:300]}"
    if rows == sorted(model):
        return "agree", None
    if by_request_time is not None and rows == sorted(by_request_time):
        return "declared", REQUEST_TIME if point["kind"] == "as_of" else PENDING_COMPACTION
    return "differs", None


def compare_reads(run_dir: Path, metadata_table: bool, rule: Rule | None = None,
                  with_hudi_rs: bool = True) -> dict[str, Any]:
    """Hudi's, the model's and hudi-rs's rows at each point of ``run_dir/reads.json``: per point the readings
    and outcome, the differences (each naming the fidelity row it contradicts), the declared ones and notes
    about hudi-rs. No ``reads.json``: nothing compared (a note says so)."""
    from backends.hudi_table_source import open_table

    got = load_writers_file(run_dir, READS)
    if got is None:
        return {"reads": [], "read_differences": [], "read_declared": [],
                "read_notes": ["time travel and incremental reads not compared: no reads.json (hcc "
                               "differential writers under the hudi env reads the finished table)"]}
    table, read, _root = open_table(run_dir / "table")
    rs = _hudi_rs_answers(run_dir / "table", got["points"]) if with_hudi_rs else None
    return {**compare_points(table, read, got, metadata_table and table.has_metadata_table, rule, rs),
            "reads_seconds": got.get("seconds")}


def compare_points(table: HudiTable, read: ReadBytes, got: Mapping[str, Any], metadata_table: bool,
                   rule: Rule | None, rs: Mapping[str, Any] | None) -> dict[str, Any]:
    """:func:`compare_reads` on ``table`` with ``got`` (``reads.json``'s points and Hudi's answers) and ``rs``
    (hudi-rs's answers by point id, None: not read)."""
    pending = first_pending_commit(table.timeline.instants)
    reads, differences, declared, notes = [], [], [], []
    for p in got["points"]:
        hudi = got["answers"].get(p["id"], {"error": {"class": "missing", "message": "no answer"}})
        model = model_reading(table, read, p, rule, metadata_table)
        by_rt = (request_time_rows(table, read, int(p["at"]), rule, metadata_table) if p["kind"] == "as_of"
                 else hudi_incremental_rows(table, read, int(p["start"]), int(p["end"]), metadata_table))
        outcome, why = judge_point(p, hudi, model, by_rt, pending)
        rows = _rows(hudi)
        rec: dict[str, Any] = {"point": p["id"], "kind": p["kind"], "outcome": outcome,
                               "hudi": len(rows) if rows is not None else hudi.get("error", {}).get("class"),
                               "model": len(model)}
        if outcome == "declared":
            declared.append({"point": p["id"], "why": why})
        elif outcome == "differs":
            differences.append({"kind": p["kind"], "point": p["id"], "fidelity": FIDELITY[p["kind"]],
                                **({"why": why} if why else {}), "hudi_only": minus(rows or [], model),
                                "model_only": minus(model, rows or [])})
        if rs is not None:
            rec["hudi_rs"], note = _hudi_rs_note(p["id"], rs.get(p["id"], {}), rows, model)
            rec["hudi_rs_agrees"] = rows is not None and isinstance(rec["hudi_rs"], int) and note is None
            notes += [note] if note else []
        reads.append(rec)
    if rs is None:
        notes.append("hudi-rs is not installed: its time travel and incremental reads not compared")
    elif notes and (skipped := groups_hudi_rs_skips(table)):
        notes.append(f"{SKIPS_LOG_ONLY_GROUPS}: {len(skipped)} of this table's file groups")
    return {"reads": reads, "read_differences": differences, "read_declared": declared, "read_notes": notes}


def _hudi_rs_note(point: str, answer: Mapping[str, Any], rows: Sequence[Row] | None,
                  model: Sequence[Row]) -> tuple[int | str, str | None]:
    """hudi-rs's reading at ``point`` (its row count or error) and a note when its rows are not Hudi's."""
    rs_rows = _rs_rows(answer)
    if rs_rows is None:
        return str(answer.get("error"))[:200], None
    if rows is None or rs_rows == list(rows):
        return len(rs_rows), None
    like = " (the model's rows)" if rs_rows == sorted(model) else ""
    return len(rs_rows), (f"hudi-rs 0.5.0 at {point}: {len(rs_rows)} rows{like}, Hudi's reader {len(rows)}: "
                          f"hudi-rs only {minus(rs_rows, rows)}, Hudi only {minus(rows, rs_rows)}")


def _hudi_rs_answers(table_dir: Path, points: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """hudi-rs 0.5.0's answer at each point, by point id (one child process); None when not installed."""
    from backends.hudi_rs import Query, hudi_rs_available, read_with_hudi_rs

    if not hudi_rs_available():
        return None
    queries = [Query(p["id"], "as_of", as_of=p["at"]) if p["kind"] == "as_of"
               else Query(p["id"], "incremental", start=p["start"], end=p["end"]) for p in points]
    result = read_with_hudi_rs(table_dir, queries)
    return {q.id: result.answer(q.id) for q in queries}
