"""The read points of an OCC run (a COPY_ON_WRITE table written by ``model/timeline``).

* **expected**: the committed operations (each completed commit's ``hcc.aux``: key, kind, value, as the
  store recorded its completed file in the history, so a commit later unpublished by a rollback still
  counts) applied in completion order (table version 8: completion time; version 6, which has none:
  instant time); as of ``T`` those completed at or before ``T``; an incremental read of
  ``(start, end]`` reads the keys whose last operation by ``end`` completed in the range and is not a
  delete (what ``model/checkers/timeline.py``'s ConsistentRead requires of every read);
* **model**: the model's reader (:mod:`model.timeline.fsview`): the latest base file of each file group
  among the commits completed by ``T``, listed through the metadata table (the completed commits' write
  stats; a listed file that is gone reads as empty) or storage, as the run's readers list;
* **explained**: time travel by request time (the commits requested at or before ``T`` and completed
  now, listed from storage: hudi-rs 0.5.0's ``read(as_of=T)``), and, where the run's readers list the
  metadata table, the same reader listing storage (the simulated table writes no metadata table, so
  hudi-rs lists storage).

A value is the operation's value (unique per operation: it names the write); a key in two file groups
reads as both values.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from model.oracle.points import (
    MAX_AS_OF,
    MAX_WINDOWS,
    REPLACED_LATER,
    REQUEST_TIME,
    STORAGE_LISTING,
    ReadPoint,
    evenly,
    reading,
)
from model.runtime.history import Event
from model.timeline.fsview import BaseSlice, latest_states, slices_from_listing, slices_from_metadata
from model.timeline.hudi_writer import partition_of
from model.timeline.layout import Instant, format_instant, parse_instant_path
from model.timeline.metadata import decode_instant_metadata
from model.timeline.modeldata import instant_body, replaced_file_groups


@dataclass(frozen=True)
class Op:
    """A committed operation: when it counts (completion time, or instant time on v6), its order in the
    history, the instant, and what it did."""

    at: int
    index: int
    instant: int
    key: str
    kind: str
    value: str | None


def committed_ops(events: Sequence[Event], base: str, layout: str) -> list[Op]:
    """Every operation whose completed instant file the store recorded, in completion order."""
    ops: list[Op] = []
    seen: set[str] = set()
    for e in events:
        if e.process != "store" or e.f != "object" or not isinstance(e.value, dict) or "body" not in e.value:
            continue
        key = str(e.value["key"])
        inst = parse_instant_path(key, base, layout)
        if inst is None or not inst.is_completed or key in seen:
            continue
        seen.add(key)
        aux = instant_body(str(e.value["body"])).get("aux")
        if aux:
            at = inst.completed if inst.completed is not None else inst.requested
            value = aux.get("value")
            # an insert_overwrite is a replacecommit requested as such (a clustering's is requested as
            # clustering and carries no operation of a key)
            kind = "insert_overwrite" if inst.requested_action == "replacecommit" else str(aux["kind"])
            ops.append(Op(at, e.index, inst.requested, str(aux["key"]), kind,
                          None if value is None else str(value)))
    return sorted(ops, key=lambda o: (o.at, o.index))


def _state(ops: Iterable[Op], upto: int | None) -> dict[str, Op]:
    """Each key's last operation at or before ``upto`` (deletes included)."""
    out: dict[str, Op] = {}
    for o in ops:
        if upto is None or o.at <= upto:
            out[o.key] = o
    return out


class _Store:
    """The final store's table: completed commits and their metadata, base files' entries."""

    def __init__(self, objects: Mapping[str, bytes], base: str, layout: str) -> None:
        self.objects, self.base, self.layout = objects, base, layout
        found = (parse_instant_path(k, base, layout) for k in objects)
        self.completed = [i for i in latest_states(i for i in found if i is not None) if i.is_completed]
        self.metadata = {i.key: self._metadata(i) for i in self.completed}
        prefix = base + "/"
        self.data_keys = [k for k in objects
                          if k.startswith(prefix) and not k.startswith(prefix + ".hoodie/")]

    def _metadata(self, inst: Instant) -> dict[str, Any]:
        from model.timeline.layout import instant_path

        key = instant_path(self.base, self.layout, inst)
        return decode_instant_metadata(self.objects[key], key) if key in self.objects else {}

    def at(self, inst: Instant) -> int:
        """When a commit counts: its completion time (v8) or instant time (v6)."""
        return inst.completed if inst.completed is not None else inst.requested

    def entries(self, s: BaseSlice) -> dict[str, str]:
        """A base file's records (key -> value); a listed file that is gone reads as empty."""
        body = self.objects.get(f"{self.base}/{s.path}")
        if body is None:
            return {}
        return {str(k): str(v) for k, v in json.loads(body)["entries"].items()}

    def rows(self, commits: Sequence[Instant], metadata_table: bool,
             replaced_by: Sequence[Instant] | None = None) -> list[tuple[str, str]]:
        """The records (key, value) of the latest base file of each file group among ``commits``, listed
        as asked; a file group replaced by one of them (or of ``replaced_by``, when given) left out."""
        if metadata_table:
            slices = slices_from_metadata((i, self.metadata[i.key]) for i in commits)
        else:
            slices = slices_from_listing(self.data_keys, self.base, {i.requested for i in commits})
        # AbstractTableFileSystemView#isFileGroupReplaced: the file groups a replacecommit among them replaced
        replaced = set().union(*(replaced_file_groups(self.metadata[i.key])
                                 for i in (commits if replaced_by is None else replaced_by)
                                 if i.action == "replacecommit"))
        latest: dict[tuple[str, str], BaseSlice] = {}
        for s in slices:
            g = (s.partition, s.file_id)
            if g not in replaced and (g not in latest or s.instant > latest[g].instant):
                latest[g] = s
        return [(k, v) for g in sorted(latest) for k, v in self.entries(latest[g]).items()]


def _join(rows: Iterable[tuple[str, str]]) -> dict[str, str]:
    out: dict[str, list[str]] = {}
    for k, v in rows:
        out.setdefault(k, []).append(v)
    return {k: " | ".join(sorted(v)) for k, v in out.items()}


def overwritten(ops: Sequence[Op], partitions: int) -> list[Op]:
    """``ops`` with an insert_overwrite's replaced keys deleted at its commit: every other key of its
    partition (the overwrite replaces every file group there and writes only its own key)."""
    keys = sorted({o.key for o in ops})
    out: list[Op] = []
    for o in ops:
        if o.kind == "insert_overwrite":
            part = partition_of(o.key, partitions)
            out += [Op(o.at, o.index, o.instant, k, "delete", None) for k in keys
                    if k != o.key and partition_of(k, partitions) == part]
        out.append(o)
    return out


def occ_points(events: Sequence[Event], objects: Mapping[str, bytes], base: str, layout: str,
               metadata_table: bool, partitions: int = 1) -> list[ReadPoint]:
    """Every read point of the run: the snapshot, time travel as of each completed commit's instant and
    completion time, and (table version 8) incremental reads of each range between consecutive
    completion times (at most :data:`~model.oracle.points.MAX_AS_OF` and
    :data:`~model.oracle.points.MAX_WINDOWS`, evenly chosen)."""
    ops = overwritten(committed_ops(events, base, layout), partitions)
    store = _Store(objects, base, layout)

    def expected(upto: int | None) -> dict[str, str]:
        return {k: o.value or "" for k, o in _state(ops, upto).items() if o.kind != "delete"}

    def model_rows(upto: int | None, listing_mdt: bool = metadata_table) -> list[tuple[str, str]]:
        return store.rows([i for i in store.completed if upto is None or store.at(i) <= upto], listing_mdt)

    def model(upto: int | None, listing_mdt: bool = metadata_table) -> dict[str, str]:
        return _join(model_rows(upto, listing_mdt))

    def by_request(t: int) -> dict[str, str]:
        return _join(store.rows([i for i in store.completed if i.requested <= t], False))

    def storage(upto: int | None) -> dict[str, dict[str, str]]:
        return {STORAGE_LISTING: model(upto, False)} if metadata_table else {}

    points = [ReadPoint("snapshot", "snapshot", expected(None), model(None), explained=storage(None))]
    times = sorted({t for i in store.completed for t in (i.requested, i.completed) if t is not None})
    for t in evenly(times, MAX_AS_OF):
        text = format_instant(t)
        points.append(ReadPoint(f"as of {text}", "as_of", expected(t), model(t), as_of=text,
                                explained={REQUEST_TIME: by_request(t), **storage(t)}))
    if layout != "v8":
        return points
    written = {(o.key, o.value): o.at for o in ops if o.value is not None}
    completions = sorted({i.completed for i in store.completed if i.completed is not None})
    cuts = [completions[0] - 1, *completions] if completions else []
    for start, end in evenly(list(zip(cuts, cuts[1:], strict=False)), MAX_WINDOWS):
        def changed(rows: list[tuple[str, str]], start: int = start, end: int = end) -> dict[str, str]:
            return _join((k, v) for k, v in rows if start < written.get((k, v), -1) <= end)

        want = {k: o.value or "" for k, o in _state(ops, end).items()
                if o.kind != "delete" and start < o.at <= end}
        s, e = format_instant(start), format_instant(end)
        upto = [i for i in store.completed if store.at(i) <= end]
        hidden_later = changed(store.rows(upto, metadata_table, replaced_by=store.completed))
        points.append(ReadPoint(f"incremental ({s}, {e}]", "incremental", want, changed(model_rows(end)),
                                start=s, end=e,
                                explained={**({STORAGE_LISTING: changed(model_rows(end, False))}
                                              if metadata_table else {}),
                                           REPLACED_LATER: hidden_later}))
    return points


def hudi_reading(rows: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """hudi-rs's rows as a reading (key -> value, duplicates joined)."""
    return reading(list(rows), lambda r: r.get("_hoodie_record_key"), lambda r: r.get("value"))
