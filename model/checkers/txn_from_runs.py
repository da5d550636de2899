"""The transactions of an OCC or NBCC run, as the Elle-style checker (``txn_check``) reads them.

A simulated run appends its writers' transaction records to its history after ``run-end`` (``txn``
events by the harness; ``model/timeline/run.py``, ``model/nbcc/sim_table.py``).  This module maps them,
with the run's own events, to rw-register histories (:class:`~model.checkers.txn_history.TxnHistory`):

**OCC, view ``records``** (a key is a record key).  An operation of a copy-on-write writer (Hudi's or the
v5 specification's) is one transaction: it reads the key it looked up (the value in the file group the
index found it in; ``nil`` when no base file it read holds or ever held it; the delete that removed it
when one did), then every other record of its merge target (the base file it rewrites), then writes its
key.  A value is the operation's own (``w1.3``; a delete writes its value as a tombstone, and a later
lookup that finds the key absent reads that tombstone), so values are unique per key; a value written
again by a restarted writer gets ``#2``.  Which write a read saw is not guessed from the value: each base
file's records are the merge of its lineage (the merge target it was written over, back to the first),
and a read is the write its lineage names (a read whose lineage is not recorded is left out).  The
preloaded table is one transaction that completed before the run.

**OCC, view ``file-groups``** (a key is a file group, a value a version of it: the base file's path).  A
transaction reads the version of every base file it read (Hudi: the index read the latest base file of
every file group of the key's partition; v5: its merge target, ``nil`` when the file group had none) and
writes its file group's new version.

In both views a transaction's write of a key follows its read of it (Elle's ``wfr-keys``: a
copy-on-write commit replaces the version it merged), the initial state precedes every value, and
nothing else orders versions: not the process order, not real time, not instant or completion times.
An operation runs from its ``op`` invoke to its completion event (the true times of the history); its
type is the record's outcome (a failure after its completed file was sent and not refused is ``info``;
an operation cut off by a crash is ``info``).

**NBCC, view ``records``.**  A deltacommit attempt writes its rows blind (a value is ``<record id>@<the
attempt's instant>``; rows of one key in one deltacommit are written in merge order, so the row that wins
is its last write); a compaction reads, per key, the row its base file keeps; a snapshot reader (the
run's ``read`` events) reads every key of the table (``nil``: absent), each row being the write of the
attempt its snapshot saw completed.  Writers read nothing, so Elle infers no order between their values
but the initial state's: no ``ww`` edge, ``rw`` edges only from reads of ``nil``.  An NBCC transaction
is invoked no later than the end of its process's previous one (or the run's start): a conservative
bound, since a deltacommit's own invoke event comes after its lock hold.

Pure: no I/O; the same history gives the same histories.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from model.checkers.txn_check import TxnVerdict, check_txns
from model.checkers.txn_history import FAIL, INFO, OK, READ, RW_REGISTER, WRITE, Mop, Txn, TxnHistory
from model.runtime.history import Event

RECORDS, FILE_GROUPS = "records", "file-groups"
PRELOAD = "preload"
DEFAULT_MODELS = ("strict-serializable",)


@dataclass
class RunView:
    """One view of a run's transactions: the history, the checker's version-order options, and notes on
    what the mapping left out."""

    view: str
    history: TxnHistory
    wfr_keys: bool
    about: str
    notes: list[str] = field(default_factory=list)

    def check(self, models: Sequence[str] = DEFAULT_MODELS) -> TxnVerdict:
        """Elle's check of the view, claiming ``models`` (strict-serializable: real-time edges too)."""
        return check_txns(self.history, models, wfr_keys=self.wfr_keys)

    def jsonl(self) -> str:
        """The view as ``hcc check-history`` reads it (``--model rw-register``, plus ``--wfr-keys`` when
        :attr:`wfr_keys`): an invoke and a completion line per transaction, in time order."""
        lines: list[tuple[float, int, int, dict[str, Any]]] = []
        for t in self.history.txns:
            invoke = [[f, k, None if f == READ else v] for f, k, v in t.mops]
            lines.append((t.invoke, 1, t.id, {"process": t.process, "type": "invoke", "value": invoke,
                                              "time": t.invoke}))
            done = t.complete if math.isfinite(t.complete) else t.invoke
            value = [list(m) for m in t.mops] if t.type == OK else invoke
            lines.append((done, 0 if t.type == OK else 2, t.id,
                          {"process": t.process, "type": t.type, "value": value, "time": done}))
        lines.sort(key=lambda x: (x[0], x[1], x[2]))
        return "".join(json.dumps(obj, sort_keys=True) + "\n" for *_, obj in lines)


class _Txns:
    """Builds a TxnHistory: transactions in invoke order, with their lines in the run's history."""

    def __init__(self) -> None:
        self.rows: list[tuple[float, int, Any, str, list[Mop], float, tuple[int, int | None]]] = []

    def add(self, process: Any, type_: str, mops: list[Mop], invoke: float, complete: float,
            lines: tuple[int, int | None]) -> None:
        if mops:
            self.rows.append((invoke, len(self.rows), process, type_, mops, complete, lines))

    def history(self) -> TxnHistory:
        txns, where = [], {}
        for i, (invoke, _, process, type_, mops, complete, lines) in enumerate(sorted(self.rows)):
            if type_ != OK:  # the reads of a transaction that did not commit are unknown
                mops = [(f, k, None if f == READ else v) for f, k, v in mops]
            txns.append(Txn(i, process, type_, tuple(mops), invoke, complete))
            where[i] = lines
        return TxnHistory(RW_REGISTER, txns, where)


def txn_records(events: Iterable[Event]) -> list[tuple[Event, dict[str, Any]]]:
    """The ``txn`` events a run appended after ``run-end``, with their records."""
    return [(e, e.value) for e in events
            if e.f == "txn" and e.process == "nemesis" and isinstance(e.value, dict)]


def _outcome(rec: Mapping[str, Any]) -> str:
    out = rec.get("outcome")
    return out if out in (OK, FAIL, INFO) else INFO


# ---------------------------------------------------------------- OCC


@dataclass
class _Op:
    rec: dict[str, Any]
    invoke: Event
    done: Event | None
    value: str  # the operation's unique value


def _pair_ops(events: Sequence[Event], recs: list[dict[str, Any]], notes: list[str]) -> list[_Op]:
    """Each operation's record with its ``op`` invoke and completion events (per process, in order)."""
    by_proc: dict[str, list[dict[str, Any]]] = {}
    for r in recs:
        by_proc.setdefault(str(r["process"]), []).append(r)
    invokes: dict[str, list[tuple[Event, Event | None]]] = {}
    pending: dict[str, int] = {}
    for e in events:
        if e.f != "op" or e.process in ("nemesis", "store"):
            continue
        mine = invokes.setdefault(e.process, [])
        if e.type == "invoke":
            pending[e.process] = len(mine)
            mine.append((e, None))
        elif e.process in pending:
            i = pending.pop(e.process)
            mine[i] = (mine[i][0], e)
    ops: list[_Op] = []
    seen: dict[str, int] = {}
    for proc, rs in sorted(by_proc.items()):
        pairs = invokes.get(proc, [])
        if len(pairs) != len(rs):
            notes.append(f"{proc}: {len(rs)} transaction records but {len(pairs)} operations; left out")
            continue
        for rec, (inv, done) in zip(rs, pairs, strict=True):
            if not isinstance(inv.value, dict) or inv.value.get("value") != rec.get("op"):
                notes.append(f"{proc}: the record of {rec.get('op')} does not match its operation "
                             f"(event {inv.index}); left out")
                continue
            raw = str(rec["op"])
            n = seen[raw] = seen.get(raw, 0) + 1
            ops.append(_Op(rec, inv, done, raw if n == 1 else f"{raw}#{n}"))
    return ops


class _Lineage:
    """File-group versions (base-file paths), who wrote them over which merge target, and the write each
    version holds for each key (the merge of its lineage)."""

    def __init__(self) -> None:
        self.writers: dict[str, list[int]] = {}  # path -> writer ids (normally one)
        self.target: dict[int, str | None] = {}  # writer id -> merge target path
        self.target_entries: dict[int, Mapping[str, str] | None] = {}  # the merge target's records as read
        self.key: dict[int, str] = {}
        self.raw: dict[int, str | None] = {}  # the value as stored (None: a delete)
        self.fg: dict[int, str] = {}
        self.memo: dict[tuple[str, int], dict[str, int] | None] = {}

    def add(self, wid: int, fg: str, path: str, target: str | None, target_entries: Mapping[str, str] | None,
            key: str, raw: str | None) -> None:
        self.writers.setdefault(path, []).append(wid)
        self.target[wid], self.target_entries[wid] = target, target_entries
        self.key[wid], self.raw[wid], self.fg[wid] = key, raw, fg

    def values_of(self, held: Mapping[str, int]) -> dict[str, str]:
        """The records a version holds (key -> value as stored), from :meth:`held`."""
        return {k: r for k, w in held.items() if (r := self.raw[w]) is not None}

    def resolve(self, path: str, entries: Mapping[str, str] | None) -> int | None:
        """The writer of the version ``path`` whose records are ``entries`` (None: unknown or ambiguous:
        several writers of one path, as colliding instants of the specification's writer can give)."""
        cands = self.writers.get(path, [])
        if len(cands) <= 1:
            return cands[0] if cands else None
        if entries is None:
            return None
        fit = [w for w in cands
               if (h := self.held(path, w)) is not None and self.values_of(h) == dict(entries)]
        return fit[0] if len(fit) == 1 else None

    def held(self, path: str, wid: int) -> dict[str, int] | None:
        """Key -> the writer whose write of it the version holds (a delete's id for a deleted key), or None
        when the lineage is not known (iteratively: lineages can be long)."""
        chain: list[tuple[str, int]] = []
        cur: tuple[str, int] | None = (path, wid)
        base: dict[str, int] | None = {}
        while cur is not None:
            if cur in self.memo:
                base = self.memo[cur]
                break
            chain.append(cur)
            w = cur[1]
            t = self.target[w]
            if t is None:
                base = {}
                cur = None
                break
            prev = self.resolve(t, self.target_entries[w])
            if prev is None:
                base = None
                cur = None
                break
            cur = (t, prev)
        for node in reversed(chain):
            if base is not None:
                base = {**base, self.key[node[1]]: node[1]}
            self.memo[node] = base
        return self.memo[(path, wid)]


def occ_views(events: Sequence[Event]) -> list[RunView]:
    """The ``records`` and ``file-groups`` views of an OCC run (none when it recorded no transaction)."""
    recs = [r for _, r in txn_records(events)]
    ops_recs = [r for r in recs if r.get("kind") in ("upsert", "delete")]
    preload = next((r for r in recs if r.get("kind") == PRELOAD), None)
    if not ops_recs:
        return []
    notes: list[str] = []
    ops = _pair_ops(events, ops_recs, notes)
    lin = _Lineage()
    values: dict[int, str] = {}  # writer id -> the value it wrote (unique per key)
    if preload is not None:
        for j, v in enumerate(preload.get("versions") or ()):
            wid = -2 - j
            lin.add(wid, str(v["fg"]), str(v["path"]), v.get("target"), None, str(v["key"]), str(v["value"]))
            values[wid] = str(v["value"])
    for i, op in enumerate(ops):
        w = op.rec.get("write")
        if isinstance(w, dict):
            target = op.rec.get("target")
            entries = next((r["entries"] for r in op.rec.get("reads") or () if r.get("path") == target), None)
            lin.add(i, str(w["fg"]), str(w["path"]), target, entries, str(w["key"]), w.get("value"))
            values[i] = op.value
    rec_txns, fg_txns = _Txns(), _Txns()
    if preload is not None:
        last: dict[str, tuple[str, int]] = {}
        for j, v in enumerate(preload.get("versions") or ()):
            last[str(v["fg"])] = (str(v["path"]), -2 - j)
        rec_mops: list[Mop] = [(WRITE, str(v["key"]), str(v["value"]))
                               for v in preload.get("versions") or ()]
        fg_mops: list[Mop] = [(WRITE, fg, _version(lin, path, wid, values))
                              for fg, (path, wid) in sorted(last.items())]
        rec_txns.add(PRELOAD, OK, rec_mops, -2.0, -1.0, (0, None))
        fg_txns.add(PRELOAD, OK, fg_mops, -2.0, -1.0, (0, None))
    skipped = 0
    for i, op in enumerate(ops):
        rec = op.rec
        typ = _outcome(rec)  # no outcome (cut off by a crash): info
        invoke = float(op.invoke.time)
        complete = float(op.done.time) if op.done is not None and typ == OK else math.inf
        lines = (op.invoke.index + 1, op.done.index + 1 if op.done is not None else None)
        r_mops, f_mops, missing = _occ_mops(i, op, lin, values)
        skipped += missing
        rec_txns.add(op.rec["process"], typ, r_mops, invoke, complete, lines)
        fg_txns.add(op.rec["process"], typ, f_mops, invoke, complete, lines)
    if skipped:
        notes.append(f"{skipped} read(s) left out: the write they saw could not be told from the records")
    about_rec = ("a key is a record key; a transaction reads the key it looked up and the other records of "
                 "its merge target, then writes its key (wfr-keys: a write follows the version it merged)")
    about_fg = ("a key is a file group, a value one of its base files; a transaction reads every base file "
                "it read (Hudi's index: the latest of each file group of the key's partition; v5: its merge "
                "target) and writes its file group's new base file")
    return [RunView(RECORDS, rec_txns.history(), True, about_rec, list(notes)),
            RunView(FILE_GROUPS, fg_txns.history(), True, about_fg, list(notes))]


def _version(lin: _Lineage, path: str, wid: int, values: Mapping[int, str]) -> str:
    """The file-group view's value of a version: its path, tagged with its writer when several wrote it."""
    return path if len(lin.writers.get(path, ())) <= 1 else f"{path}#{values.get(wid, wid)}"


def _occ_mops(i: int, op: _Op, lin: _Lineage, values: Mapping[int, str]) -> tuple[list[Mop], list[Mop], int]:
    """The micro-ops of operation ``i`` in both views, and how many reads were left out."""
    rec = op.rec
    key = str(rec["key"])
    v5 = rec.get("writer") == "v5"
    reads = [r for r in rec.get("reads") or () if isinstance(r, dict)]
    target = rec.get("target")
    w = rec.get("write")
    rec_mops: list[Mop] = []
    fg_mops: list[Mop] = []
    missing = 0
    held: dict[str, dict[str, int] | None] = {}
    for r in reads:
        path = str(r["path"])
        wid = lin.resolve(path, r.get("entries"))
        h = None if wid is None else lin.held(path, wid)
        if h is not None and lin.values_of(h) != dict(r.get("entries") or {}):
            h = None  # the lineage does not explain what was read: say nothing about it
        held[path] = h
        if wid is None or h is None:
            missing += 1
        else:
            fg_mops.append((READ, str(r["fg"]), _version(lin, path, wid, values)))
    if v5 and not reads and isinstance(w, dict):
        fg_mops.append((READ, str(w["fg"]), None))  # it read the timeline: no completed base file yet
    # the key it looked up: where the index found it, else absent from every base file it read
    if rec.get("instant") is not None:
        found = rec.get("found")
        known = [held.get(str(found))] if found is not None else list(held.values())
        if all(h is not None for h in known):
            writers = {h[key] for h in known if h is not None and key in h}
            if not writers:
                rec_mops.append((READ, key, None))
            elif len(writers) == 1:
                rec_mops.append((READ, key, values.get(writers.pop())))
            else:
                missing += 1  # deleted from several file groups: which delete it saw is not known
        else:
            missing += 1
    # the other records of its merge target
    if target is not None:
        h = held.get(str(target))
        entries = next((r.get("entries") for r in reads if r.get("path") == target), None) or {}
        for k in sorted(entries):
            if k == key:
                continue
            if h is None or k not in h or values.get(h[k]) is None:
                missing += 1
            else:
                rec_mops.append((READ, k, values[h[k]]))
    if isinstance(w, dict):
        rec_mops.append((WRITE, key, values.get(i, op.value)))
        fg_mops.append((WRITE, str(w["fg"]), _version(lin, str(w["path"]), i, values)))
    return rec_mops, fg_mops, missing


# ---------------------------------------------------------------- NBCC


def nbcc_views(events: Sequence[Event]) -> list[RunView]:
    """The ``records`` view of an NBCC run (none when it recorded no transaction)."""
    recs = [(e, r) for e, r in txn_records(events)]
    if not recs:
        return []
    notes: list[str] = []
    # the completion events of each process's deltacommits and compactions, in order
    dc_done: dict[str, list[Event]] = {}
    dc_invoke: dict[str, list[Event]] = {}
    open_: set[str] = set()
    compaction_ok: dict[str, Event] = {}
    reads: list[Event] = []
    for e in events:
        if e.process == "nemesis":
            continue
        if e.f == "deltacommit":
            if e.type == "invoke":
                dc_invoke.setdefault(e.process, []).append(e)
                open_.add(e.process)
            elif e.process in open_:
                open_.discard(e.process)
                dc_done.setdefault(e.process, []).append(e)
        elif e.f == "compaction" and e.type == "ok" and isinstance(e.value, dict):
            compaction_ok.setdefault(str(e.value.get("instant")), e)
        elif e.f == "read":
            reads.append(e)
    writes: dict[tuple[str, str], list[tuple[str, str]]] = {}  # (key, rid) -> [(instant, outcome)]
    txns = _Txns()
    last_end: dict[str, float] = {}
    counters: dict[str, int] = {}
    keys: set[str] = set()
    for _, rec in recs:
        if rec.get("kind") != "deltacommit":
            continue
        for key, _ts, rid, *_ in rec.get("rows") or ():
            writes.setdefault((str(key), str(rid)), []).append((str(rec["instant"]), _outcome(rec)))
            keys.add(str(key))
    for _, rec in recs:
        proc = str(rec["process"])
        kind = rec.get("kind")
        invoke = last_end.get(proc, 0.0)
        typ = _outcome(rec)
        if kind == "deltacommit":
            n = counters[proc] = counters.get(proc, 0) + 1
            inv_ev = dc_invoke.get(proc, [])[n - 1] if n <= len(dc_invoke.get(proc, [])) else None
            done_ev = next((d for d in dc_done.get(proc, []) if inv_ev is not None and d.index > inv_ev.index
                            and _same_attempt(d, inv_ev)), None)
            rows = sorted(rec.get("rows") or (), key=lambda r: (r[1], r[3], r[4]))
            mops: list[Mop] = [(WRITE, str(k), f"{rid}@{rec['instant']}") for k, _t, rid, *_ in rows]
            complete = float(done_ev.time) if done_ev is not None and typ == OK else math.inf
            lines = (inv_ev.index + 1 if inv_ev else 0, done_ev.index + 1 if done_ev else None)
        elif kind == "compaction":
            done_ev = compaction_ok.get(str(rec["instant"])) if typ == OK else None
            mops = []
            for k, (_ts, rid, commit) in sorted((rec.get("reads") or {}).items()):
                if (str(k), str(rid)) in writes and any(i == commit for i, _ in writes[(str(k), str(rid))]):
                    mops.append((READ, str(k), f"{rid}@{commit}"))
                else:
                    notes.append(f"compaction {rec['instant']} read {k} = {rid}@{commit}, "
                                 "written by no record")
            complete = float(done_ev.time) if done_ev is not None else math.inf
            lines = (done_ev.index + 1 if done_ev else 0, done_ev.index + 1 if done_ev else None)
        else:
            continue
        txns.add(proc, typ, mops, invoke, complete, lines)
        if math.isfinite(complete):
            last_end[proc] = complete
        elif done_ev is not None:
            last_end[proc] = max(invoke, float(done_ev.time))
    # snapshot readers: every key of the table, each row the write of the attempt its snapshot saw
    for e in reads:
        proc = e.process
        invoke = last_end.get(proc, 0.0)
        last_end[proc] = float(e.time)
        if e.type != "ok" or not isinstance(e.value, dict):
            continue
        completed = set(e.value.get("completed") or ())
        seen_rows: dict[str, Any] = e.value.get("rows") or {}
        mops = []
        for k in sorted(keys | set(seen_rows)):
            if k not in seen_rows:
                mops.append((READ, k, None))
                continue
            rid = str(seen_rows[k][1])
            attempts = writes.get((k, rid), [])
            seen = [i for i, _ in attempts if i in completed]
            if not seen:  # the snapshot saw no attempt of it completed: a failed one, if any
                seen = [i for i, o in attempts if o == FAIL] or [i for i, _ in attempts]
            if seen:
                mops.append((READ, k, f"{rid}@{seen[0]}"))
            else:
                notes.append(f"read at event {e.index}: {k} = {rid}, written by no record")
        txns.add(proc, OK, mops, invoke, float(e.time), (e.index + 1, e.index + 1))
    about = ("a key is a record key, a value one row write (record id @ deltacommit); deltacommits write "
             "blind, compactions and snapshot readers read; no version order but the initial state's")
    return [RunView(RECORDS, txns.history(), False, about, sorted(set(notes)))]


def _same_attempt(done: Event, inv: Event) -> bool:
    v = done.value if isinstance(done.value, dict) else {}
    w = inv.value if isinstance(inv.value, dict) else {}
    if "instant" in v:
        return bool(v["instant"] == w.get("instant"))
    return bool(v.get("batch") == w.get("batch") and v.get("attempt") == w.get("attempt"))


__all__ = ["DEFAULT_MODELS", "FILE_GROUPS", "RECORDS", "RunView", "nbcc_views", "occ_views", "txn_records"]
