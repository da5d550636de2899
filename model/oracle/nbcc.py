"""The read points of an NBCC run (a MERGE_ON_READ table written by ``model/nbcc``).

From the history and the final store (the model's encoding):

* **expected**: :func:`model.nbcc.sim_checks.spec_rows`, the committed writes applied in completion
  order, merged by the ordering field; as of ``T`` those completed at or before ``T``; an incremental
  read of ``(start, end]`` reads the rows of the snapshot as of ``end`` whose write completed in the
  range (a correct Hudi incremental query: the latest state of the records changed in the range);
* **model**: the model's reader, :func:`model.nbcc.sim_checks.latest_view` (``views.reader_view``) under
  the run's slicing rule and listing, each slice merged by :func:`model.nbcc.sim_layout.read_slice_rows`;
  incrementally, those rows of the view as of ``end`` whose write is among
  :func:`model.nbcc.sim_checks.incremental_writes` (the model's incremental file selection);
* **explained**: time travel by request time (the writes of instants requested at or before ``T`` and
  completed now, in completion order: what hudi-rs 0.5.0's ``read(as_of=T)`` is known to read), and for
  incremental reads the merge of the range's writes alone.

A value is ``rid@commit``: the write's id and the deltacommit that made it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from model.nbcc.sim_checks import WrittenLog, incremental_writes, latest_view, spec_rows, written_logs
from model.nbcc.sim_layout import Row, load_table, read_slice_rows, rows_reader
from model.nbcc.slicing import CompletionLookup, Rule
from model.oracle.points import (
    LATE_WRITES,
    MAX_AS_OF,
    MAX_WINDOWS,
    PENDING_COMPACTION,
    RANGE_ONLY,
    REQUEST_TIME,
    ReadPoint,
    evenly,
)
from model.runtime.history import Event
from model.timeline.layout import format_instant


def value(row: Row) -> str:
    """A row's value in a reading: ``rid@commit``."""
    return f"{row.rid}@{format_instant(row.commit)}"


def hudi_value(row: Mapping[str, Any]) -> str:
    """The same for a row hudi-rs returned."""
    return f"{row.get('rid')}@{row.get('_hoodie_commit_time')}"


def _reading(rows: Mapping[str, Row]) -> dict[str, str]:
    return {k: value(r) for k, r in sorted(rows.items())}


def _upto(ct: CompletionLookup, requested_by: int) -> CompletionLookup:
    def lookup(instant: int) -> int | None:
        return ct(instant) if instant <= requested_by else None

    return lookup


def _after(ct: CompletionLookup, start: int) -> CompletionLookup:
    def lookup(instant: int) -> int | None:
        return ct(instant) if instant > start else None

    return lookup


def _not_late(ct: CompletionLookup, compactions: Sequence[tuple[int, int | None]],
              end: int) -> CompletionLookup:
    """``ct`` without the instants whose logs are late for a compaction pending at ``end`` (requested
    after the instant, at or before its completion, and not completed by ``end``)."""

    def lookup(instant: int) -> int | None:
        tc = ct(instant)
        if tc is None:
            return None
        for c, done in compactions:
            if instant < c <= tc and (done is None or done > end):
                return None
        return tc

    return lookup


def _within(ct: CompletionLookup, start: int, end: int) -> CompletionLookup:
    def lookup(instant: int) -> int | None:
        tc = ct(instant)
        return tc if tc is not None and start < tc <= end else None

    return lookup


def nbcc_points(events: Sequence[Event], objects: Mapping[str, bytes], base: str, rule: Rule,
                metadata_table: bool | None = None) -> list[ReadPoint]:
    """Every read point of the run: the snapshot, time travel as of each completed instant's request
    and completion time, incremental reads of each range between consecutive completion times (at most
    :data:`~model.oracle.points.MAX_AS_OF` and :data:`~model.oracle.points.MAX_WINDOWS`, evenly chosen).
    ``metadata_table`` None: the readers list as the table records (as the checkers do)."""
    table = load_table(objects, base)
    if metadata_table is None:
        metadata_table = table.has_metadata_table
    ct = table.timeline.completion_time
    logs: list[WrittenLog] = list(written_logs(events).values())
    rows_of = rows_reader(objects, base)
    groups = table.listed_groups(metadata_table)
    instants = [i.requested for i in table.timeline.instants]

    def model_rows(t: int | None) -> dict[str, Row]:
        got: dict[str, Row] = {}
        for s in latest_view(groups, ct, rule, t, metadata_table):
            got.update(read_slice_rows(s.base_file, s.log_files, ct, rows_of))
        return got

    snapshot = spec_rows(logs, ct, None)
    points = [ReadPoint("snapshot", "snapshot", _reading(snapshot), _reading(model_rows(None)))]
    completed = table.timeline.completed()
    times = sorted({t for i in completed for t in (i.requested, i.completed) if t is not None})
    for t in evenly(times, MAX_AS_OF):
        text = format_instant(t)
        points.append(ReadPoint(
            f"as of {text}", "as_of", _reading(spec_rows(logs, ct, t)), _reading(model_rows(t)), as_of=text,
            explained={REQUEST_TIME: _reading(spec_rows(logs, _upto(ct, t), None))}))
    completions = sorted({i.completed for i in completed if i.completed is not None})
    compactions = [(i.requested, i.completed) for i in table.timeline.instants
                   if i.requested_action == "compaction"]
    cuts = [completions[0] - 1, *completions] if completions else []
    for start, end in evenly(list(zip(cuts, cuts[1:], strict=False)), MAX_WINDOWS):
        in_range = _within(ct, start, end)
        at_end = spec_rows(logs, ct, end)
        expected = {k: r for k, r in at_end.items() if in_range(r.commit) is not None}
        writes = set(incremental_writes(groups, ct, rule, instants, start, end, rows_of))
        model = {k: r for k, r in model_rows(end).items() if r.write in writes}
        s, e = format_instant(start), format_instant(end)
        points.append(ReadPoint(
            f"incremental ({s}, {e}]", "incremental", _reading(expected), _reading(model), start=s, end=e,
            explained={RANGE_ONLY: _reading(spec_rows(logs, in_range, None)),
                       LATE_WRITES: _reading(spec_rows(logs, _after(in_range, start), None)),
                       PENDING_COMPACTION: _reading(spec_rows(logs, _not_late(in_range, compactions, end),
                                                              None))}))
    return points


def hudi_reading(rows: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """hudi-rs's rows as a reading (key -> ``rid@commit``, duplicates joined)."""
    from model.oracle.points import reading

    return reading(list(rows), lambda r: r.get("_hoodie_record_key"), hudi_value)
