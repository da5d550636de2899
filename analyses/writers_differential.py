"""The OCC model against Hudi's own Spark writers on the same plan: ``hcc differential writers``.

A run of Hudi's writers (:mod:`engines.hudi_spark.run`) cannot be made to interleave as a simulated run
does: JVM timing decides which commits overlap. So the model is asked about the schedule Hudi actually
ran, as ShardStore checks its model against its implementation on the implementation's own histories:

- **Conflicts.** For each write attempt that committed (its call's failure after its instant completed
  too, :func:`engines.hudi_spark.check.outcome`) or aborted with ``HoodieWriteConflictException``,
  the model's conflict check (:mod:`model.timeline.conflicts`, fidelity rows O3, O5-O8) is run on the
  instants Hudi left in ``.hoodie/timeline``: the reference points at the attempt's instant time (the
  last completed commit and the pending instants then), the candidates completed before its check (its
  completion, or the failure's time), and each instant's mutated ``(partition, fileId)`` set read from
  the base files it wrote (the fault proxy's log of PUTs, which keeps the files a rollback deleted
  since). The model's answer (commit or abort) must be Hudi's.
- **Rows.** The final rows Hudi's Spark reader returned must be the rows the model's reader
  (:mod:`model.nbcc.timeline_reader`: the latest slice of each file group, Hudi's listing as the entry
  says) reads from the table Hudi wrote, and, where the ``oracle`` extra is installed, the rows of
  hudi-rs's snapshot read (the second oracle, :mod:`backends.hudi_rs`).

Declared approximation: Hudi takes its reference points in ``preWrite``, just after it draws the
instant time; the model takes them at the instant time. A commit completing between the two would be
a candidate for Hudi and not for the model; such an attempt is reported as a difference with the reason
"completed within the attempt's start".
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from engines.hudi_spark.check import REJECTED, commit_marks, outcome, with_failed_instants
from model.nbcc.slices import FileSlice, Rule
from model.nbcc.timeline_reader import HudiTable, ReadBytes
from model.run_format import PROXY_LOG
from model.timeline.conflicts import Operation, candidate_instants, first_conflict, last_completed
from model.timeline.layout import Instant, State, is_base_file_name, parse_base_file_name, parse_instant_name
from model.timeline.metadata import decode_instant_metadata, plan_file_groups
from model.timeline.modeldata import replaced_file_groups
from reports.load import RunDirError, load_writers_file, load_writers_history, load_writers_plan

CONFLICT = "org.apache.hudi.exception.HoodieWriteConflictException"
# SparkRejectUpdateStrategy#handleUpdate's refusal (check.REJECTED) names the HoodieFileGroupId; the
# HoodieUpsertException around it, the attempt's instant
_REJECTED_INSTANT = re.compile(r"Failed to upsert for commit time (?P<instant>\d{17})")
_REJECTED_GROUP = re.compile(r"clustering file group HoodieFileGroupId\(partitionPath=(?P<partition>[^,]*), "
                             r"fileId=(?P<file_id>[^)]*)\)")
_PROXY_PUT = re.compile(r"^\d+ (?P<node>\S+) PUT '(?P<key>[^']+)' forward 2\d\d$")
# HoodieWriteConflictException's message names both operations: the aborted one first
_OPERATION = (r"{} operation = ConcurrentOperation\(actionState=\w+, actionType=\w+, "
              r"instantTime=(?P<instant>\d{{17}})\)")
_INFLIGHT = re.compile(_OPERATION.format("first"))
_OTHER = re.compile(_OPERATION.format("second"))
# the fidelity rows the conflict check rests on (docs/fidelity.md)
CONFLICT_ROWS = "O3 (reference points), O5/O7 (candidates), O6 (pending at preWrite), O8 (hasConflict)"
# ... and those of the replacecommits: what a candidate mutated, the update strategy, clustering's commit
REPLACE_ROWS = "O14 (replaced ids, pending plans), O16 (SparkRejectUpdateStrategy), O17 (clustering's commit)"


@dataclass(frozen=True)
class Attempt:
    """One write attempt as Hudi ran it and as the model judges it."""

    process: str
    batch: int
    instant: int | None
    hudi: str  # "commit", "abort" (a write conflict) or "reject" (an update of a group being clustered)
    model: str  # "commit", "abort", "reject", or "unknown" (no instant to judge)
    candidates: tuple[int, ...]
    conflict_with: int | None  # the model's first conflicting candidate
    hudi_conflict_with: int | None  # the completed instant Hudi's exception names
    mutated: tuple[tuple[str, str], ...]

    @property
    def agrees(self) -> bool:
        """Whether the model decided as Hudi did."""
        return self.model == self.hudi


def timeline_instants(names: Iterable[str]) -> list[Instant]:
    """The instants of ``.hoodie/timeline`` file names (layout 2), one per instant, in its latest state (a
    replacecommit requested as a clustering keeps ``requested_action`` clustering)."""
    latest: dict[int, Instant] = {}
    clusterings: set[int] = set()
    rank = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}
    for name in names:
        i = parse_instant_name(name, "v8")
        if i is not None and i.action == "clustering":
            clusterings.add(i.requested)
        if i is not None and (i.requested not in latest or rank[i.state] > rank[latest[i.requested].state]):
            latest[i.requested] = i
    return sorted((i if i.requested not in clusterings or i.requested_action == "clustering"
                   else dataclasses.replace(i, requested_action="clustering") for i in latest.values()),
                  key=lambda i: i.requested)


@dataclass(frozen=True)
class Replaces:
    """The replacecommits' side of the timeline: each completed replacecommit's replaced file groups
    (``partitionToReplaceFileIds``) and each clustering's plan (its ``.clustering.requested`` file's input
    file groups), by instant time."""

    replaced: Mapping[int, frozenset[tuple[str, str]]]
    plans: Mapping[int, frozenset[tuple[str, str]]]

    @classmethod
    def read(cls, timeline_dir: Path) -> Replaces:
        """Read from a table's ``.hoodie/timeline`` folder."""
        replaced: dict[int, frozenset[tuple[str, str]]] = {}
        plans: dict[int, frozenset[tuple[str, str]]] = {}
        for f in sorted(timeline_dir.iterdir()):
            i = parse_instant_name(f.name, "v8") if f.is_file() else None
            if i is None:
                continue
            if i.is_completed and i.action == "replacecommit":
                replaced[i.requested] = frozenset(replaced_file_groups(decode_instant_metadata(
                    f.read_bytes(), str(f))))
            elif i.action == "clustering" and i.state is State.REQUESTED:
                md = decode_instant_metadata(f.read_bytes(), str(f))
                plans[i.requested] = frozenset(plan_file_groups(md))
        return cls(replaced, plans)


NO_REPLACES = Replaces({}, {})


def mutated_by_instant(proxy_log: Iterable[str], table_prefix: str) -> dict[int, frozenset[tuple[str, str]]]:
    """Each instant's ``(partition, fileId)`` set: the base files (not under ``.hoodie``) it PUT."""
    out: dict[int, set[tuple[str, str]]] = {}
    for line in proxy_log:
        m = _PROXY_PUT.match(line.strip())
        if not m or not m["key"].startswith(table_prefix):
            continue
        rel = m["key"][len(table_prefix):]
        if rel.startswith(".hoodie/"):
            continue
        partition, _, name = rel.rpartition("/")
        if is_base_file_name(name):
            b = parse_base_file_name(name)
            out.setdefault(b.instant, set()).add((partition, b.file_id))
    return {k: frozenset(v) for k, v in out.items()}


def epoch_to_instant(t: float) -> int:
    """Epoch seconds as an instant number (``yyyyMMddHHmmssSSS``, UTC, as the writers' JVMs here)."""
    d = dt.datetime.fromtimestamp(t, dt.UTC)
    return int(d.strftime("%Y%m%d%H%M%S") + f"{d.microsecond // 1000:03d}")


def _known_at(instants: Sequence[Instant], at: int) -> list[Instant]:
    """The timeline as read at instant ``at``: instants requested by then, completed only if by then."""
    out = []
    for i in instants:
        if i.requested > at:
            continue
        if i.completed is not None and i.completed > at:
            i = Instant(i.requested, i.requested_action, State.INFLIGHT)
        out.append(i)
    return out


def _candidate(c: Instant, mutated: Mapping[int, frozenset[tuple[str, str]]], rp: Replaces) -> Operation:
    """``ConcurrentOperation`` of a candidate (fidelity O14): a completed instant's written file groups and,
    for a replacecommit, its replaced ones; a pending clustering its plan's file groups; a pending
    insert_overwrite nothing (its requested file has no plan)."""
    if not c.is_completed:
        if c.requested_action == "clustering":
            return Operation(c.requested, c.action, "CLUSTER", rp.plans.get(c.requested, frozenset()))
        return Operation(c.requested, c.action, "UNKNOWN", frozenset())
    operation = "CLUSTER" if c.requested_action == "clustering" else "UPSERT"
    return Operation(c.requested, c.action, operation,
                     mutated.get(c.requested, frozenset()) | rp.replaced.get(c.requested, frozenset()))


def _being_clustered(instants: Sequence[Instant], rp: Replaces, group: tuple[str, str], start: int,
                     end: int) -> int | None:
    """A clustering whose plan holds ``group`` and that was pending from ``start`` to ``end`` (requested by
    ``start``, not completed by ``end``): Hudi's SparkRejectUpdateStrategy refuses an update of the group
    tagged in between (fidelity O16); its instant time, or None."""
    for i in instants:
        if (i.requested_action == "clustering" and group in rp.plans.get(i.requested, ())
                and i.requested <= start and (i.completed is None or i.completed > end)):
            return i.requested
    return None


def _existing_groups(instants: Sequence[Instant], mutated: Mapping[int, frozenset[tuple[str, str]]],
                     rp: Replaces, partitions: set[str], at: int) -> frozenset[tuple[str, str]]:
    """The file groups of ``partitions`` in a writer's view at ``at`` (written by instants completed by then,
    not replaced by then): what an insert_overwrite that aborted would have replaced (its metadata was
    never written; ``getAllExistingFileIds``, fidelity O18)."""
    done = [i for i in _known_at(instants, at) if i.is_completed]
    gone = {g for i in done for g in rp.replaced.get(i.requested, ())}
    return frozenset(g for i in done for g in mutated.get(i.requested, ())
                     if g[0] in partitions and g not in gone)


def judge(events: Sequence[Mapping[str, Any]], instants: Sequence[Instant],
          mutated: Mapping[int, frozenset[tuple[str, str]]], strategy: str = "simple",
          replaces: Replaces = NO_REPLACES) -> list[Attempt]:
    """The model's decision for each attempt of the history that committed, aborted on a conflict or was
    refused as an update of a file group in a pending clustering (SparkRejectUpdateStrategy).

    A clustering commits whatever its candidates (no conflict check at its completion under
    SimpleConcurrentFileWrites, fidelity O17); an insert_overwrite's own mutated set holds the file
    groups it replaced; a refused update is the model's when a clustering whose plan holds the group Hudi
    names was pending at some time between the attempt's invoke and its failure; a committed or aborted
    update whose written group was in a plan pending from its instant time to its check should have been
    refused (a difference)."""
    out: list[Attempt] = []
    invoked: dict[str, float] = {}
    completed = {f"{i.requested}_{i.completed}" for i in instants if i.is_completed}
    for e in events:
        if e.get("f") == "write" and e.get("type") == "invoke":
            invoked[e["process"]] = e["time"]
        if e.get("f") != "write" or e.get("type") not in ("ok", "fail"):
            continue
        hudi_with = None
        batch, op_kind = int(e["value"]["batch"]), e["value"].get("op", "upsert")
        if e["type"] == "ok" or outcome(e, completed) == "committed":  # a call failed after its commit too
            own = int(str(e["instant"]).partition("_")[0]) if e.get("instant") else None
            hudi = "commit"
        elif e["error"]["class"] == CONFLICT:
            m = _INFLIGHT.search(e["error"]["message"])
            own, hudi = (int(m["instant"]) if m else None), "abort"
            w = _OTHER.search(e["error"]["message"])
            hudi_with = int(w["instant"]) if w else None
        elif REJECTED in (e["error"]["class"], e["error"].get("root_class")):
            out.append(_judge_rejected(e, instants, replaces, invoked.get(e["process"], e["time"])))
            continue
        else:
            continue  # another failure: not a conflict decision
        if own is None:
            out.append(Attempt(e["process"], batch, None, hudi, "unknown", (), None, hudi_with, ()))
            continue
        this = next((i for i in instants if i.requested == own), None)
        check_at = (this.completed or own) - 1 if hudi == "commit" and this else epoch_to_instant(e["time"])
        if op_kind == "cluster":
            out.append(Attempt(e["process"], batch, own, hudi, "commit", (), None, hudi_with,
                               tuple(sorted(replaces.plans.get(own, frozenset())))))
            continue
        mine = mutated.get(own, frozenset())
        if op_kind == "insert_overwrite":
            parts = {str(r[1]) for r in e["value"]["rows"]}
            mine |= replaces.replaced.get(own) or _existing_groups(instants, mutated, replaces, parts, own)
        at_start = _known_at(instants, own)
        last = last_completed([i for i in at_start if i.requested != own])
        pending = frozenset(i.requested for i in at_start
                            if not i.is_completed and i.requested != own)
        cands = candidate_instants(strategy, _known_at(instants, check_at), own,
                                   None if last is None else last.requested, pending)
        cands = [c for c in cands if c.requested != own]
        op = Operation(own, "commit", "UPSERT", mine)
        hit = first_conflict(op, [_candidate(c, mutated, replaces) for c in cands])
        model = "abort" if hit else "commit"
        if op_kind != "insert_overwrite" and any(_being_clustered(instants, replaces, g, own, check_at)
                                                 for g in mutated.get(own, ())):
            model = "reject"
        out.append(Attempt(e["process"], batch, own, hudi, model,
                           tuple(c.requested for c in cands), hit.instant if hit else None, hudi_with,
                           tuple(sorted(op.mutated))))
    return out


def _judge_rejected(e: Mapping[str, Any], instants: Sequence[Instant], rp: Replaces,
                    invoked: float) -> Attempt:
    """A write Hudi refused (HoodieClusteringUpdateException): the model refuses it too when a clustering
    whose plan holds the file group Hudi names was pending at some time between the attempt's invoke and
    its failure (its record tagged in between)."""
    text = f"{e['error']['message']} {e['error'].get('root_message', '')}"
    m = _REJECTED_GROUP.search(text)
    group = (m["partition"], m["file_id"]) if m else None
    start, end = epoch_to_instant(invoked), epoch_to_instant(e["time"])
    # pending at some time in [start, end]: requested by end, not completed by start
    hit = None if group is None else next(
        (i.requested for i in instants if i.requested_action == "clustering" and group in rp.plans.get(
            i.requested, ()) and i.requested <= end and (i.completed is None or i.completed > start)), None)
    own = _REJECTED_INSTANT.search(text)
    return Attempt(e["process"], int(e["value"]["batch"]), int(own["instant"]) if own else None, "reject",
                   "reject" if hit is not None else ("unknown" if group is None else "commit"),
                   (), hit, None, (group,) if group else ())


def model_rows(table_dir: Path, metadata_table: bool, rule: Rule | None = None) -> list[tuple[str, str, int]]:
    """(key, partition, value) of every record the model's reader reads from the table's latest slices (sliced
    by ``rule``; None: the table version's rule)."""
    from backends.hudi_table_source import open_table

    table, read, _root = open_table(table_dir)
    return sorted(r[:3] for r in slice_rows(
        table, read, table.snapshot(rule, metadata_table=metadata_table and table.has_metadata_table)))


def slice_rows(table: HudiTable, read: ReadBytes,
               slices: Iterable[FileSlice]) -> list[tuple[str, str, int, str]]:
    """(key, partition, value, ``_hoodie_commit_time``) of every record the model's reader reads from
    ``slices`` of ``table`` (:func:`model.nbcc.timeline_reader.slice_records`), sorted."""
    from model.nbcc.timeline_reader import slice_records

    return sorted((str(rec["key"]), str(rec["partition"]), int(rec["value"]), str(rec["_hoodie_commit_time"]))
                  for s in slices for rec in slice_records(table, s, read).values())


def compare_run(run_dir: Path, *, strategy: str = "simple", metadata_table: bool = True) -> dict[str, Any]:
    """The differences between Hudi's run in ``run_dir`` and the model's judgement of it (see the module)."""
    timeline_dir = run_dir / "table" / ".hoodie" / "timeline"
    events = with_failed_instants(load_writers_history(run_dir), commit_marks(timeline_dir))
    names = [p.name for p in timeline_dir.iterdir() if p.is_file()]
    instants = timeline_instants(names)
    prefix = _table_prefix(run_dir)
    proxy_log = load_writers_file(run_dir, PROXY_LOG)
    if proxy_log is None:
        raise RunDirError(run_dir, f"missing {PROXY_LOG} (the fault proxy's log: which base files each "
                                   "attempt wrote)")
    mutated = mutated_by_instant(proxy_log.splitlines(), prefix)
    replaces = Replaces.read(timeline_dir)
    attempts = judge(events, instants, mutated, strategy, replaces)
    differences: list[dict[str, Any]] = []
    notes = committed_failed_notes(events, instants)
    for a in attempts:
        if not a.agrees:
            rows = CONFLICT_ROWS + ("; " + REPLACE_ROWS if replaces.replaced or replaces.plans else "")
            differences.append({"kind": "conflict-decision", "process": a.process, "batch": a.batch,
                                "instant": a.instant, "hudi": a.hudi, "model": a.model,
                                "model_conflict_with": a.conflict_with,
                                "hudi_conflict_with": a.hudi_conflict_with,
                                "candidates": list(a.candidates), "fidelity": rows})
    read_rows, row_differences, row_notes = compare_final_rows(events, run_dir / "table", metadata_table)
    return {"attempts": [a.__dict__ | {"agrees": a.agrees} for a in attempts], "notes": notes + row_notes,
            **read_rows, "differences": differences + row_differences,
            "agree": not differences and not row_differences}


def committed_failed_notes(events: Sequence[Mapping[str, Any]], instants: Sequence[Instant]) -> list[str]:
    """A note for each write whose call failed after its instant completed (check.outcome ``committed``):
    the writer's job reported failure while its data is visible, and the model counts it as committed."""
    completed = {f"{i.requested}_{i.completed}" for i in instants if i.is_completed}
    return [f"{e['process']} batch {e['value']['batch']}: committed as {e['instant']}, yet its call failed "
            f"({e['error']['class']} <- {e['error'].get('root_class')}): counted as a commit"
            for e in events if e.get("f") == "write" and e.get("type") == "fail"
            and outcome(e, completed) == "committed"]


Row = tuple[str, str, int]


def compare_final_rows(events: Sequence[Mapping[str, Any]], table_dir: Path, metadata_table: bool,
                       rule: Rule | None = None,
                       fidelity: str = "the snapshot reader (model/nbcc/timeline_reader.py)",
                       ) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """The final rows of Hudi's Spark reader (:func:`final_read`), of the model's reader (:func:`model_rows`
    with ``rule``) and of hudi-rs on ``table_dir``; the differences (the model's naming ``fidelity``) and
    notes."""
    differences: list[dict[str, Any]] = []
    notes: list[str] = []
    final = final_read(events)
    hudi_rows = None if final is None else sorted((r[0], r[1], int(r[2])) for r in final["value"])
    ours = model_rows(table_dir, metadata_table, rule)
    if hudi_rows is not None and hudi_rows != ours:
        differences.append({"kind": "final-rows", "hudi_only": minus(hudi_rows, ours),
                            "model_only": minus(ours, hudi_rows), "fidelity": fidelity})
    rs_rows, rs_note = hudi_rs_rows(table_dir)
    if hudi_rows is not None and rs_rows is not None and hudi_rows != rs_rows:
        why = hudi_rs_skips(table_dir, metadata_table, rule, rs_rows)
        differences.append({"kind": "final-rows-hudi-rs", "hudi_only": minus(hudi_rows, rs_rows),
                            "hudi_rs_only": minus(rs_rows, hudi_rows),
                            "fidelity": "hudi-rs 0.5.0's snapshot read (a second reader, not the model)",
                            **({"why": why} if why else {})})
    if hudi_rows is None:
        notes.append("no writer read after the last write ended: the final rows are not compared")
    rows = {"hudi_rows": hudi_rows, "model_rows": ours, "hudi_rs_rows": rs_rows, "hudi_rs": rs_note}
    return rows, differences, notes


_R = TypeVar("_R", bound=tuple[Any, ...])


def minus(a: Sequence[_R], b: Sequence[_R]) -> list[_R]:
    """The rows of ``a`` not in ``b``, counting copies (a row read twice where the other read it once)."""
    return sorted((Counter(a) - Counter(b)).elements())


def final_read(events: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """Hudi's read of the finished table: a read invoked after every write had ended (None: no writer
    read after the last write ended, so no read shows the table the other readers read)."""
    last_write = max((e["time"] for e in events if e.get("f") == "write" and e.get("type") in ("ok", "fail")),
                     default=0.0)
    invoked: dict[str, float] = {}
    for e in events:
        if e.get("f") == "read" and e.get("type") == "invoke":
            invoked[e["process"]] = e["time"]
        elif e.get("f") == "read" and e.get("type") == "ok" and invoked.get(e["process"], 0.0) > last_write:
            return e
    return None


def hudi_rs_skips(table_dir: Path, metadata_table: bool, rule: Rule | None,
                  rs_rows: Sequence[tuple[str, str, int]]) -> str | None:
    """Why hudi-rs read ``rs_rows`` when they are exactly the model's rows but for the file groups hudi-rs
    0.5.0 skips (:func:`backends.hudi_rs.groups_hudi_rs_skips`), naming them; else None."""
    from backends.hudi_rs import SKIPS_LOG_ONLY_GROUPS, groups_hudi_rs_skips
    from backends.hudi_table_source import open_table

    table, read, _root = open_table(table_dir)
    skipped = groups_hudi_rs_skips(table)
    if not skipped:
        return None
    kept = [s for s in table.snapshot(rule, metadata_table=metadata_table and table.has_metadata_table)
            if s.group_id not in skipped]
    if sorted(r[:3] for r in slice_rows(table, read, kept)) != sorted(rs_rows):
        return None
    names = ", ".join(sorted(f"{g.partition}/{g.file_id}" for g in skipped))
    return f"{SKIPS_LOG_ONLY_GROUPS} (here {len(skipped)}: {names})"


def hudi_rs_rows(table_dir: Path) -> tuple[list[tuple[str, str, int]] | None, str]:
    """(key, partition, value) of hudi-rs's snapshot read of the table and a note; None when it could not
    read (not installed, or its error, in the note)."""
    from backends.hudi_rs import Query, hudi_rs_available, read_with_hudi_rs

    if not hudi_rs_available():
        return None, "hudi-rs is not installed (pip install 'hudi-cc-harness[oracle]'): not compared"
    answer = read_with_hudi_rs(table_dir, [Query("snapshot", "snapshot")]).answer("snapshot")
    if "error" in answer:
        return None, f"hudi-rs 0.5.0 could not read the table: {answer['error']}"
    rows = sorted((str(r["key"]), str(r["partition"]), int(r["value"])) for r in answer["rows"])
    return rows, "hudi-rs 0.5.0's snapshot read"


def _table_prefix(run_dir: Path) -> str:
    """The object-key prefix of the run's table, from a writer's plan (``s3a://bucket/<prefix>``)."""
    return str(load_writers_plan(run_dir)["base_path"]).split("/", 3)[3].rstrip("/") + "/"
