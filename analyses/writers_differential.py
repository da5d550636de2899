"""The OCC model against Hudi's own Spark writers on the same plan: ``hcc differential writers``.

A run of Hudi's writers (:mod:`engines.hudi_spark.run`) cannot be made to interleave as a simulated run
does: JVM timing decides which commits overlap. So the model is asked about the schedule Hudi actually
ran, as ShardStore checks its model against its implementation on the implementation's own histories:

- **Conflicts.** For each write attempt that committed or aborted with ``HoodieWriteConflictException``,
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

import datetime as dt
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engines.hudi_spark.check import read_history
from model.nbcc.slices import Rule
from model.timeline.conflicts import Operation, candidate_instants, first_conflict, last_completed
from model.timeline.layout import Instant, State, is_base_file_name, parse_base_file_name, parse_instant_name

CONFLICT = "org.apache.hudi.exception.HoodieWriteConflictException"
_PROXY_PUT = re.compile(r"^\d+ (?P<node>\S+) PUT '(?P<key>[^']+)' forward 2\d\d$")
# HoodieWriteConflictException's message names both operations: the aborted one first
_OPERATION = (r"{} operation = ConcurrentOperation\(actionState=\w+, actionType=\w+, "
              r"instantTime=(?P<instant>\d{{17}})\)")
_INFLIGHT = re.compile(_OPERATION.format("first"))
_OTHER = re.compile(_OPERATION.format("second"))
# the fidelity rows the conflict check rests on (docs/fidelity.md)
CONFLICT_ROWS = "O3 (reference points), O5/O7 (candidates), O6 (pending at preWrite), O8 (hasConflict)"


@dataclass(frozen=True)
class Attempt:
    """One write attempt as Hudi ran it and as the model judges it."""

    process: str
    batch: int
    instant: int | None
    hudi: str  # "commit" or "abort"
    model: str  # "commit", "abort", or "unknown" (no instant to judge)
    candidates: tuple[int, ...]
    conflict_with: int | None  # the model's first conflicting candidate
    hudi_conflict_with: int | None  # the completed instant Hudi's exception names
    mutated: tuple[tuple[str, str], ...]

    @property
    def agrees(self) -> bool:
        """Whether the model decided as Hudi did."""
        return self.model == self.hudi


def timeline_instants(names: Iterable[str]) -> list[Instant]:
    """The instants of ``.hoodie/timeline`` file names (layout 2), one per instant, in its latest state."""
    latest: dict[int, Instant] = {}
    rank = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}
    for name in names:
        i = parse_instant_name(name, "v8")
        if i is not None and (i.requested not in latest or rank[i.state] > rank[latest[i.requested].state]):
            latest[i.requested] = i
    return sorted(latest.values(), key=lambda i: i.requested)


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


def judge(events: Sequence[Mapping[str, Any]], instants: Sequence[Instant],
          mutated: Mapping[int, frozenset[tuple[str, str]]], strategy: str = "simple") -> list[Attempt]:
    """The model's decision for each attempt of the history that committed or aborted on a conflict."""
    out: list[Attempt] = []
    for e in events:
        if e.get("f") != "write" or e.get("type") not in ("ok", "fail"):
            continue
        hudi_with = None
        if e["type"] == "ok":
            own = int(str(e["instant"]).partition("_")[0]) if e.get("instant") else None
            hudi = "commit"
        elif e["error"]["class"] == CONFLICT:
            m = _INFLIGHT.search(e["error"]["message"])
            own, hudi = (int(m["instant"]) if m else None), "abort"
            w = _OTHER.search(e["error"]["message"])
            hudi_with = int(w["instant"]) if w else None
        else:
            continue  # another failure: not a conflict decision
        batch = int(e["value"]["batch"])
        if own is None:
            out.append(Attempt(e["process"], batch, None, hudi, "unknown", (), None, hudi_with, ()))
            continue
        this = next((i for i in instants if i.requested == own), None)
        check_at = (this.completed or own) - 1 if hudi == "commit" and this else epoch_to_instant(e["time"])
        at_start = _known_at(instants, own)
        last = last_completed([i for i in at_start if i.requested != own])
        pending = frozenset(i.requested for i in at_start
                            if not i.is_completed and i.requested != own)
        cands = candidate_instants(strategy, _known_at(instants, check_at), own,
                                   None if last is None else last.requested, pending)
        cands = [c for c in cands if c.requested != own]
        op = Operation(own, "commit", "UPSERT", mutated.get(own, frozenset()))
        others = [Operation(c.requested, c.action, "UPSERT", mutated.get(c.requested, frozenset()))
                  for c in cands]
        hit = first_conflict(op, others)
        out.append(Attempt(e["process"], batch, own, hudi, "abort" if hit else "commit",
                           tuple(c.requested for c in cands), hit.instant if hit else None, hudi_with,
                           tuple(sorted(op.mutated))))
    return out


def model_rows(table_dir: Path, metadata_table: bool, rule: Rule | None = None) -> list[tuple[str, str, int]]:
    """(key, partition, value) of every record the model's reader reads from the table's latest slices (sliced
    by ``rule``; None: the table version's rule)."""
    from backends.hudi_table_source import open_table
    from model.nbcc.timeline_reader import slice_records

    table, read, _root = open_table(table_dir)
    rows = []
    for s in table.snapshot(rule, metadata_table=metadata_table and table.has_metadata_table):
        for rec in slice_records(table, s, read).values():
            rows.append((str(rec["key"]), str(rec["partition"]), int(rec["value"])))
    return sorted(rows)


def compare_run(run_dir: Path, *, strategy: str = "simple", metadata_table: bool = True) -> dict[str, Any]:
    """The differences between Hudi's run in ``run_dir`` and the model's judgement of it (see the module)."""
    events = read_history(run_dir / "history.jsonl")
    names = [p.name for p in (run_dir / "table" / ".hoodie" / "timeline").iterdir() if p.is_file()]
    instants = timeline_instants(names)
    prefix = _table_prefix(run_dir)
    mutated = mutated_by_instant((run_dir / "proxy.log").read_text().splitlines(), prefix)
    attempts = judge(events, instants, mutated, strategy)
    differences: list[dict[str, Any]] = []
    notes: list[str] = []
    for a in attempts:
        if not a.agrees:
            differences.append({"kind": "conflict-decision", "process": a.process, "batch": a.batch,
                                "instant": a.instant, "hudi": a.hudi, "model": a.model,
                                "model_conflict_with": a.conflict_with,
                                "hudi_conflict_with": a.hudi_conflict_with,
                                "candidates": list(a.candidates), "fidelity": CONFLICT_ROWS})
    final = final_read(events)
    hudi_rows = None if final is None else sorted((r[0], r[1], int(r[2])) for r in final["value"])
    ours = model_rows(run_dir / "table", metadata_table)
    if hudi_rows is not None and hudi_rows != ours:
        differences.append({"kind": "final-rows", "hudi_only": _minus(hudi_rows, ours),
                            "model_only": _minus(ours, hudi_rows),
                            "fidelity": "the snapshot reader (model/nbcc/timeline_reader.py)"})
    rs_rows, rs_note = hudi_rs_rows(run_dir / "table")
    if hudi_rows is not None and rs_rows is not None and hudi_rows != rs_rows:
        differences.append({"kind": "final-rows-hudi-rs", "hudi_only": _minus(hudi_rows, rs_rows),
                            "hudi_rs_only": _minus(rs_rows, hudi_rows),
                            "fidelity": "hudi-rs 0.5.0's snapshot read (a second reader, not the model)"})
    if hudi_rows is None:
        notes.append("no writer read after the last write ended: the final rows are not compared")
    return {"attempts": [a.__dict__ | {"agrees": a.agrees} for a in attempts], "notes": notes,
            "hudi_rows": hudi_rows, "model_rows": ours, "hudi_rs_rows": rs_rows, "hudi_rs": rs_note,
            "differences": differences, "agree": not differences}


Row = tuple[str, str, int]


def _minus(a: Sequence[Row], b: Sequence[Row]) -> list[Row]:
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
    plan = json.loads(next(run_dir.glob("plan-*.json")).read_text())
    return str(plan["base_path"]).split("/", 3)[3].rstrip("/") + "/"
