"""The commits of a Hudi Spark writers' run as transactions, for the Elle-style checker (``txn_check``).

The records view of :mod:`model.checkers.txn_from_runs`, read from what Hudi wrote instead of from the
model's records: a key is a record key, a value the write's own number (a delete writes a tombstone,
``del:<value>``). A committed copy-on-write commit reads every record of the base file it merged (its
write stat's ``prevBaseFile``, read from the table: what Hudi actually read), its own key included
(``nil`` when absent and never written in that file group's lineage; the tombstone of the delete that
removed it otherwise), then writes its key; Elle's ``wfr-keys`` holds (a commit replaces the version it
merged). A replacecommit's lineage goes through the file groups it replaced (their latest base files
before it completed): a clustering reads every record of them and writes nothing (it moves values, it
makes none); an insert_overwrite (a delete_partition) reads them too (the versions it supersedes) and
writes its key (none) and a tombstone of every other key they held. An aborted attempt writes its key and
reads nothing known (``fail``); a failed attempt whose instant completed all the same is a commit, one the
run does not tell about is ``info`` (:func:`engines.hudi_spark.check.outcome`). The final snapshot read is
one transaction reading every key it returned once; a key read twice (the duplicate-key checker's
finding) and a key not returned are left out, with a note. Process order is each writer's history; real
time is the history's wall-clock times.

Pure but for reading the run directory's files (the history through ``reports.load``, the table's).
"""

from __future__ import annotations

import math
import posixpath
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engines.hudi_spark.check import commit_marks, outcome, with_failed_instants
from model.checkers.txn_from_runs import RunView
from model.checkers.txn_history import FAIL, INFO, OK, READ, RW_REGISTER, WRITE, Mop, Txn, TxnHistory
from model.hudi_files.errors import HudiFileError
from model.hudi_files.records import read_data_file
from model.run_format import ISOLATION_RECORDS
from model.timeline.metadata import decode_instant_metadata
from model.timeline.modeldata import replaced_file_groups
from reports.load import load_writers_history

# the records view's history, beside the run's verdict (declared by the run directory's format)
RECORDS_VIEW = ISOLATION_RECORDS


def _value(row: list[Any], op: str) -> str | int:
    return f"del:{row[2]}" if op == "delete" else int(row[2])


class _Table:
    """The table Hudi wrote: each completed commit's (and replacecommit's) write stats, completion time and
    replaced file groups, each base file's records and lineage."""

    def __init__(self, table: Path) -> None:
        self.root = table
        self.stats: dict[str, list[dict[str, Any]]] = {}  # requested instant -> write stats
        self.completed: dict[str, str] = {}  # requested instant -> completion time
        self.replaced: dict[str, set[tuple[str, str]]] = {}  # requested -> (partition, fileId) it replaced
        timeline = table / ".hoodie" / "timeline"
        for f in sorted([*timeline.glob("*_*.commit"), *timeline.glob("*_*.replacecommit")]):
            md = decode_instant_metadata(f.read_bytes(), str(f))
            requested, _, rest = f.name.partition("_")
            self.stats[requested] = [st for sts in (md.get("partitionToWriteStats") or {}).values()
                                     for st in sts or ()]
            self.completed[requested] = rest.split(".", 1)[0]
            self.replaced[requested] = replaced_file_groups(md)
        self._records: dict[str, dict[str, Any]] = {}

    def replaced_files(self, requested: str) -> list[str]:
        """The base files (paths relative to the table) of the file groups replacecommit ``requested``
        replaced, each group's latest one committed before the replacecommit completed."""
        done = self.completed.get(requested, "")
        groups = self.replaced.get(requested, set())
        latest: dict[tuple[str, str], tuple[str, str]] = {}  # group -> (completion, path)
        for req, stats in self.stats.items():
            if self.completed[req] >= done:
                continue
            for st in stats:
                group = (str(st.get("partitionPath") or ""), str(st.get("fileId") or ""))
                if group in groups and self.completed[req] > latest.get(group, ("",))[0]:
                    latest[group] = (self.completed[req], str(st.get("path") or ""))
        return sorted(path for _done, path in latest.values())

    def records(self, path: str) -> dict[str, Any]:
        """Record key -> value of the base file at ``path`` (relative to the table)."""
        if path not in self._records:
            data = read_data_file(path, (self.root / path).read_bytes())
            self._records[path] = {str(r["key"]): int(r["value"]) for r in data.records}
        return self._records[path]


def view(run_dir: Path) -> RunView:
    """The records view of the run in ``run_dir`` (``history.jsonl`` and the table under ``table/``)."""
    table = _Table(run_dir / "table")
    timeline_dir = run_dir / "table" / ".hoodie" / "timeline"
    # a killed writer's torn last line left out; a failed write tied to its instant where it completed
    events = with_failed_instants(load_writers_history(run_dir), commit_marks(timeline_dir))
    completed = {f"{r}_{c}" for r, c in table.completed.items()}
    notes: list[str] = []
    tombstones: dict[str, dict[str, str]] = {}  # base file path -> key -> tombstone in its lineage
    pending: dict[str, dict[str, Any]] = {}
    txns: list[tuple[float, float, str, str, list[Mop]]] = []
    for e in events:
        if e.get("f") not in ("write", "read"):
            continue
        if e["type"] == "invoke":
            pending[e["process"]] = e
            continue
        inv = pending.pop(e["process"], None)
        start = inv["time"] if inv else e["time"]
        if e["f"] == "read":
            if e["type"] == "ok":
                txns.append((start, e["time"], e["process"], OK, _final_read(e["value"], notes)))
            continue
        op = e["value"].get("op", "upsert")
        rows = [] if op == "delete_partition" else e["value"]["rows"]  # its rows name partitions only
        writes = [(WRITE, str(r[0]), _value(r, op)) for r in rows]
        ended = e["type"] if e["type"] == "ok" else outcome(e, completed)
        if ended in ("aborted", "indeterminate"):
            txns.append((start, e["time"], e["process"], FAIL if ended == "aborted" else INFO, writes))
            continue
        requested = str(e.get("instant") or "").partition("_")[0]
        if op in REPLACES:
            if requested:  # a clustering Hudi planned nothing for is no transaction
                txns.append((start, e["time"], e["process"], OK,
                             REPLACES[op](table, requested, writes, tombstones)))
            continue
        reads = _commit_reads(table, requested, writes, tombstones, notes)
        txns.append((start, e["time"], e["process"], OK, reads + writes))
    txns.sort(key=lambda t: (t[0], t[1]))
    history = TxnHistory(RW_REGISTER, [Txn(i, p, typ, tuple(mops), s, d if math.isfinite(d) else math.inf)
                                       for i, (s, d, p, typ, mops) in enumerate(txns)], timed=True)
    return RunView("records", history, True, "Hudi's commits, read from the table it wrote", notes)


def _commit_reads(table: _Table, requested: str, writes: list[Mop],
                  tombstones: dict[str, dict[str, str]], notes: list[str]) -> list[Mop]:
    """What a committed commit read: every record of each base file it merged, then each key it writes
    that no merged file held (the tombstone of the delete that removed it from the lineage, or nil)."""
    stats = table.stats.get(requested)
    if stats is None:
        notes.append(f"commit {requested}: no completed commit file: its reads are left out")
        return []
    reads: dict[str, Any] = {}
    dead: dict[str, str] = {}
    deletes = {k: str(v) for _f, k, v in writes if isinstance(v, str)}
    for st in stats:
        path, prev = str(st.get("path") or ""), st.get("prevBaseFile")
        target = f"{posixpath.dirname(path)}/{prev}" if prev else None
        before = table.records(target) if target else {}
        lineage = tombstones.get(target, {}) if target else {}
        reads.update(before)
        dead.update(lineage)
        gone = {**lineage, **{k: v for k, v in deletes.items() if k in before}}
        tombstones[path] = {k: v for k, v in gone.items() if k not in table.records(path)}
    for _f, key, _v in writes:
        reads.setdefault(key, dead.get(key))
    return [(READ, k, v) for k, v in sorted(reads.items())]


def _cluster_mops(table: _Table, requested: str, _writes: list[Mop],
                  tombstones: dict[str, dict[str, str]]) -> list[Mop]:
    """A clustering reads every record of the base files it replaced and writes no new value (it rewrites
    them into its new file group, whose lineage keeps its inputs' tombstones)."""
    reads: dict[str, Any] = {}
    dead: dict[str, str] = {}
    for path in table.replaced_files(requested):
        reads.update(table.records(path))
        dead.update(tombstones.get(path, {}))
    for st in table.stats.get(requested, ()):
        path = str(st.get("path") or "")
        tombstones[path] = {k: v for k, v in dead.items() if k not in table.records(path)}
    return [(READ, k, v) for k, v in sorted(reads.items())]


def _overwrite_mops(table: _Table, requested: str, writes: list[Mop],
                    tombstones: dict[str, dict[str, str]]) -> list[Mop]:
    """An insert_overwrite reads every record of the file groups it replaced (the versions it supersedes:
    Hudi replaces the groups in its view, as an upsert replaces the base file it merged), then writes its
    keys and deletes every other key of them (tombstone ``del:<its value>``, kept in its new file group's
    lineage)."""
    own = {k for _f, k, _v in writes}
    value = writes[0][2] if writes else requested  # a delete_partition writes none: its instant tags them
    before: dict[str, Any] = {}
    for path in table.replaced_files(requested):
        before.update(table.records(path))
    gone = {k: f"del:{value}" for k in before if k not in own}
    for st in table.stats.get(requested, ()):
        tombstones[str(st.get("path") or "")] = dict(gone)
    return ([(READ, k, v) for k, v in sorted(before.items())] + writes
            + [(WRITE, k, v) for k, v in sorted(gone.items())])


# a replacecommit's operation -> its transaction's micro-operations
REPLACES = {"cluster": _cluster_mops, "insert_overwrite": _overwrite_mops,
            "delete_partition": _overwrite_mops}


def _final_read(rows: list[list[Any]], notes: list[str]) -> list[Mop]:
    seen: dict[str, list[int]] = {}
    for r in rows:
        seen.setdefault(str(r[0]), []).append(int(r[2]))
    twice = sorted(k for k, v in seen.items() if len(v) > 1)
    if twice:
        notes.append(f"the final read returned {', '.join(twice)} more than once (the duplicate-key "
                     "checker's finding): left out of its transaction")
    return [(READ, k, v[0]) for k, v in sorted(seen.items()) if len(v) == 1]


def isolation(run_dir: Path, write_text: Callable[[str, str], None]) -> dict[str, Any]:
    """Elle's verdict on the run's commits (strict serializability claimed), for ``verdict.json``; the
    view is also written beside it as ``isolation-records.jsonl`` (``hcc check-history`` reads it) by
    ``write_text`` (the run directory's writer, ``RunWriter.write_text``)."""
    try:
        v = view(run_dir)
    except (OSError, ValueError, HudiFileError) as e:  # a base file gone or unreadable: said, not raised
        return {"view": "records", "valid": "unknown", "error": f"{type(e).__name__}: {e}"}
    write_text(RECORDS_VIEW, v.jsonl())
    got = v.check()
    return {"view": v.view, "about": v.about, "valid": got.valid, "anomalies": got.anomaly_types,
            "not": got.not_models, "transactions": len(v.history.txns), "notes": v.notes}
